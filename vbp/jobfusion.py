"""JobFusion on vbp: carve hosts into the partition's container types, run DAG jobs, compare to bounds.

* **Carving is vector bin packing.** The ``Q`` container types become apps (counts proportional to
  the tasks each type was built for), the host types bins; :func:`carve_sweep` solves it with
  :func:`solvers.solve` (cost objective, proven lower bound) for the Fig. 12 sweep, and
  :func:`carve_cluster` fills a *fixed* cluster (after the online snapshot) with first-fit decreasing
  (:func:`solvers.greedy.ffd`). Every carving placement passes :func:`packing.checker.check`.
* **Idle share** (sweep): ``1 - task demand / capacity of the hosts opened``, each resource divided by
  the large host (92c288g) and averaged; host cost is measured in the same units, so the solver's
  cost bound gives a proven bound on the idle share: ``1 - task demand / cost bound``.
* **Bounds** (:func:`dag_bounds`): a job cannot finish sooner than its critical path plus, per stage
  on its longest (in stages) path, the least scheduling delay and container start every launch pays
  in :class:`packing.dag.engine.DagEngine`; the makespan is at least the longest of ``arrival +
  that`` and the work bound ``max_r sum(work_r) / offline capacity_r``.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from packing.checker import check
from packing.dag.engine import Cluster, DagEngine, Overheads, Surge
from packing.dag.model import Workload
from packing.dag.partition import Partition, partition
from packing.dag.policy import DagPolicy, run_dag
from packing.errors import input_error
from packing.loaders.tianchi import parse_fleet
from packing.model import App, HostType, Instance, Placement

HOST_SHAPES: dict[str, tuple[float, float]] = {"32c64g": (32.0, 64.0), "92c288g": (92.0, 288.0)}
"""The JobFusion paper's hosts: (cores, GB)."""

REF = np.array(HOST_SHAPES["92c288g"])
"""Normalisation of the idle share and host cost: the large host."""


def parse_hosts(text: str) -> list[tuple[str, tuple[float, float], int]]:
    """``"32c64g:8,92c288g:4"`` -> ``[(name, (cores, GB), count), ...]``; shapes ``<c>c<g>g`` are free.

    Each entry is read by :func:`packing.loaders.tianchi.parse_fleet` (the one parser of host
    specs); a missing count is 1.

    Raises:
        InputError: a malformed entry.
    """
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        f = parse_fleet(part, "--hosts")
        n = 1 if f.count is None else f.count
        if n > 100_000:
            raise input_error("--hosts", part, "count must be at most 100000")
        out.append((part.partition(":")[0], (f.cpu, f.mem), n))
    if not out:
        raise input_error("--hosts", text, "no host given")
    return out


def _norm(v: np.ndarray) -> np.ndarray:
    """Mean of the resources divided by the large host, shape ``(...)`` from ``(..., 2)``."""
    return np.asarray(v / REF).mean(axis=-1)


def container_counts(part: Partition, total: int) -> np.ndarray:
    """Containers per type, proportional to the tasks each type was built for, each >= 1, shape ``(Q,)``."""
    w = part.weight / part.weight.sum()
    return np.maximum(1, np.round(w * total)).astype(np.int64)


def member_demand(part: Partition) -> np.ndarray:
    """Task-weighted mean demand of each type's members, shape ``(Q, 2)``."""
    out = np.zeros_like(part.types)
    for q in range(part.n_types):
        sel = part.assign == q
        out[q] = np.average(part.points[sel], axis=0, weights=part.point_weight[sel])
    return out


def host_costs(shapes: list[tuple[float, float]]) -> tuple[list[int], int]:
    """Exact integer costs of host shapes, and the unit they are counted in.

    A host's cost is its capacity in large-host units (mean over resources of shape / ``REF``), a
    rational number; the costs are returned multiplied by ``scale``, the least common denominator,
    so that a solver's proof on the integer costs is a proof for the real ones (cost = integer /
    scale). Capped at a denominator of 10^6 (then the float costs are rounded to that unit and the
    solver's bound is only as exact as that rounding: this does not happen with whole-number shapes).
    """
    fr = [(Fraction(float(s[0])) / Fraction(float(REF[0])) + Fraction(float(s[1])) / Fraction(float(REF[1])))
          / 2 for s in shapes]
    scale = math.lcm(*(f.denominator for f in fr)) if fr else 1
    if scale > 10**6:
        fr = [f.limit_denominator(10**6) for f in fr]
        scale = math.lcm(*(f.denominator for f in fr))
    return [int(f * scale) for f in fr], scale


def carving_instance(part: Partition, counts: np.ndarray,
                     hosts: list[tuple[str, tuple[float, float], int]],
                     name: str = "carving") -> tuple[Instance, int]:
    """The carving problem: types as apps with ``counts`` (shape ``(Q,)``), host types as bins.

    Returns:
        The instance, whose host costs are whole numbers (see :func:`host_costs`), and the cost
        scale: a solution's cost in large-host units is its objective divided by the scale.
    """
    apps = tuple(App(f"type{q}:{part.types[q, 0]:g}c{part.types[q, 1]:g}g", tuple(map(float, part.types[q])),
                     int(counts[q])) for q in range(part.n_types))
    costs, scale = host_costs([shape for _, shape, _ in hosts])
    hts = tuple(HostType(n, shape, c, cost=float(k)) for (n, shape, c), k in zip(hosts, costs, strict=True))
    return Instance(name, ("cpu", "mem"), hts, apps), scale


@dataclass
class SweepRow:
    """One row of the partition sweep (see :func:`carve_sweep`)."""

    method: str
    q: int
    n_types: int
    reached: bool
    types: list[list[float]]
    containers: int
    hosts: dict[str, int]
    cost: float | None
    cost_bound: float
    idle_share: float | None
    idle_bound: float
    internal_idle: float
    status: str
    gap: float | None
    seconds: float


def carve_sweep(workload: Workload, qs: list[int], methods: list[str], *, containers: int = 400,
                host_shapes: list[str] | None = None, time_limit: float = 30.0,
                seed: int = 0) -> list[SweepRow]:
    """Idle share of the carving and its proven bound for each ``q`` and partition method.

    Args:
        workload: the jobs whose task demands are clustered.
        qs: numbers of types.
        methods: partition methods (``"single"`` is computed once).
        containers: containers to carve (split by the types' task shares).
        host_shapes: host type names (default both of the paper's).
        time_limit: seconds per solve.
        seed: solver seed.
    """
    from solvers import solve

    shapes = host_shapes or list(HOST_SHAPES)
    rows: list[SweepRow] = []
    for method in methods:
        for q in (qs[:1] if method == "single" else qs):
            part = partition(workload, q, method)
            counts = container_counts(part, containers)
            vol = (part.types * counts[:, None]).sum(axis=0)
            hosts = [(n, HOST_SHAPES[n], int(np.ceil((vol / np.array(HOST_SHAPES[n])).max())) + 2)
                     for n in shapes]
            inst, scale = carving_instance(part, counts, hosts, f"carving-{method}-q{q}")
            t = time.perf_counter()
            res = solve(inst, time_limit=time_limit, seed=seed, objective="cost", workers=1)
            sec = time.perf_counter() - t
            work = float((_norm(member_demand(part)) * counts).sum())
            used: dict[str, int] = {}
            if res.placement is not None:
                assert not check(inst, res.placement, require_all=True)
                ho = res.placement.host_array(inst)
                tys = inst.host_type_of[np.unique(ho[ho >= 0])]
                used = {inst.host_types[int(t)].name: int((tys == t).sum()) for t in np.unique(tys)}
            cost = None if res.objective is None else res.objective / scale
            low = float(res.lower_bound) / scale
            rows.append(SweepRow(method, q, part.n_types, part.reached, part.types.round(3).tolist(),
                                 int(counts.sum()), used, cost, low,
                                 None if cost is None else 1.0 - work / cost,
                                 1.0 - work / low if low > 0 else 0.0,
                                 part.internal_idle(), res.status, res.gap, round(sec, 3)))
    return rows


# -- the simulated cluster -----------------------------------------------------------------------
@dataclass
class Carved:
    """A fixed cluster carved for one partition.

    Attributes:
        cluster: the engine's cluster (slots, online-free capacity, surges).
        instance: online shapes + container types as apps on the hosts (for the checker).
        placement: where every online container and carved container is.
        online_share: share of the hosts' capacity (mean over resources) held by online containers.
        carved_share: share of the capacity left to offline that the containers cover.
    """

    cluster: Cluster
    instance: Instance
    placement: Placement
    online_share: float
    carved_share: float


def carve_cluster(part: Partition, hosts: list[tuple[str, tuple[float, float], int]], *,
                  online: np.ndarray | None = None, online_share: float = 0.0, surges: int = 0,
                  horizon: float = 3600.0, seed: int = 0) -> Carved:
    """Place online containers first, then carve the rest into the partition's types.

    Online containers (rows of ``online``, shape ``(N, 2)``, sampled with the seed until they request
    ``online_share`` of the CPU) are placed by first-fit decreasing; the free capacity is carved with
    the most containers in the types' proportions that first-fit decreasing still places (a search
    over the total). ``surges`` seeded online surges hit hosts with online containers in ``[0,
    horizon)`` for 60-600 s each.

    Raises:
        InputError: online containers that do not fit, or a type that fits no host.
    """
    from solvers.greedy import ffd

    rng = np.random.default_rng(seed)
    hts = tuple(HostType(n, shape, c) for n, shape, c in hosts)
    base = Instance("cluster", ("cpu", "mem"), hts, ())
    cap_total = base.host_capacity.sum(axis=0)
    on_apps: list[App] = []
    on_host = np.zeros(0, dtype=np.int64)
    if online is not None and online_share > 0:
        target = online_share * cap_total[0]
        idx: list[int] = []
        tot = 0.0
        while tot < target:
            i = int(rng.integers(len(online)))
            idx.append(i)
            tot += float(online[i, 0])
        shapes, cnt = np.unique(online[idx], axis=0, return_counts=True)
        on_apps = [App(f"online{k}:{s[0]:g}c{s[1]:g}g", (float(s[0]), float(s[1])), int(c))
                   for k, (s, c) in enumerate(zip(shapes, cnt, strict=True))]
        inst_on = base.replace(apps=tuple(on_apps), name="online")
        g = ffd(inst_on, "hosts")
        if not g.complete:
            raise input_error("--online-share", str(online_share), "the online containers do not fit "
                              "on the hosts; lower the share or add hosts")
        on_host = np.asarray(g.host_of, dtype=np.int64)
    on_load = np.zeros_like(base.host_capacity)
    if on_apps:
        dem = np.repeat(np.array([a.demand for a in on_apps]), [a.count for a in on_apps], axis=0)
        np.add.at(on_load, on_host, dem)
    resid = np.maximum(base.host_capacity - on_load, 0.0)
    res_types = tuple(HostType(f"h{h}", tuple(map(float, resid[h])), 1) for h in range(base.n_hosts))
    w = part.weight / part.weight.sum()

    def attempt(m: int) -> np.ndarray | None:
        counts = np.maximum(1, np.floor(w * m)).astype(np.int64)
        inst = Instance("carve", ("cpu", "mem"), res_types, tuple(
            App(f"t{q}", tuple(map(float, part.types[q])), int(counts[q])) for q in range(part.n_types)))
        gr = ffd(inst, "hosts")
        return np.asarray(gr.host_of, dtype=np.int64) if gr.complete else None

    hi = int(np.floor((resid.sum(axis=0) / (w[:, None] * part.types).sum(axis=0)).min())) + 1
    lo, best = 0, attempt(0)
    if best is None:
        raise input_error("--hosts", "", f"the container types {part.types.tolist()} do not fit on the "
                          "capacity the online containers leave")
    while lo < hi:  # most containers first-fit decreasing places (monotone in practice)
        mid = (lo + hi + 1) // 2
        got = attempt(mid)
        if got is not None:
            lo, best = mid, got
        else:
            hi = mid - 1
    counts = np.maximum(1, np.floor(w * lo)).astype(np.int64)
    assert best is not None
    off_apps = [App(f"type{q}:{part.types[q, 0]:g}c{part.types[q, 1]:g}g", tuple(map(float, part.types[q])),
                    int(counts[q])) for q in range(part.n_types)]
    full = base.replace(apps=tuple(on_apps + off_apps), name="carved")
    pl = Placement.from_arrays(full, np.concatenate([on_host, best]))
    viol = check(full, pl, require_all=True)
    if viol:  # pragma: no cover - ffd's placements pass the checker
        raise AssertionError(f"carving violates constraints: {viol[0]}")
    slot_type = np.repeat(np.arange(part.n_types), counts)
    offline_cap = cap_total - on_load.sum(axis=0)
    on_hosts = np.unique(on_host)
    sg: list[Surge] = []
    for _ in range(surges):
        h = int(rng.choice(on_hosts)) if len(on_hosts) else int(rng.integers(base.n_hosts))
        sg.append(Surge(float(rng.uniform(0, horizon)), h, float(rng.uniform(60, 600))))
    cluster = Cluster(part.types.copy(), slot_type, best.copy(), offline_cap,
                      tuple(sorted(sg, key=lambda s: s.time)))
    carved = (part.types * counts[:, None]).sum(axis=0)
    return Carved(cluster, full, pl, float(_norm(on_load.sum(axis=0)) / _norm(cap_total)),
                  float((carved / np.maximum(offline_cap, 1e-12)).mean()))


# -- bounds ---------------------------------------------------------------------------------------
def dag_bounds(workload: Workload, capacity: np.ndarray, overheads: Overheads | None) -> dict[str, Any]:
    """Lower bounds on each job's JCT and on the makespan (see the module docstring).

    Args:
        workload: the jobs.
        capacity: offline capacity per resource, shape ``(2,)`` (the largest over the compared
            clusters keeps the bound valid for all of them).
        overheads: the engine's overheads (None: none).

    Returns:
        ``{"jct": (J,) array, "critical_path_mean_jct": float, "makespan": float}``.
    """
    per_stage = 0.0 if overheads is None else overheads.min_per_stage
    jct = np.array([j.critical_path + per_stage * j.depth for j in workload.jobs])
    arr = np.array([j.arrival for j in workload.jobs])
    t0 = float(arr.min()) if len(arr) else 0.0
    work = np.sum([j.work for j in workload.jobs], axis=0) if workload.jobs else np.zeros(2)
    mk = max(float((arr + jct).max() - t0) if len(arr) else 0.0,
             float((work / np.maximum(capacity, 1e-12)).max()))
    return {"jct": jct, "critical_path_mean_jct": float(jct.mean()) if len(jct) else 0.0, "makespan": mk}


# -- policy names --------------------------------------------------------------------------------
def resolve_dag_policy(name: str, seed: int = 0) -> DagPolicy:
    """A DAG baseline by name, or a trained DAG agent from a model file (``*.pt``, weights-only read).

    Raises:
        InputError: an unknown name, an unreadable file, or an agent file that is not a DAG policy.
    """
    from policies.dag import DAG_POLICIES, make_dag_policy

    if name in DAG_POLICIES:
        return make_dag_policy(name, seed)
    if name.lower().endswith(".pt"):
        import os

        if not os.path.isfile(name):
            raise input_error("--policies", name, "no such model file")
        from policies.agents.files import load_agent

        pol: Any = load_agent(name)
        if not isinstance(pol, DagPolicy):
            raise input_error("--policies", name, "not a DAG scheduling agent (train one with "
                              "`vbp train gcn DATA --out MODEL.pt`)")
        return pol
    raise input_error("--policies", name, f"unknown DAG policy; known: {', '.join(DAG_POLICIES)} "
                      "or a model file (.pt)")


# -- the comparison -----------------------------------------------------------------------------
@dataclass
class PolicyRow:
    """One policy's result in :func:`compare_dag`."""

    name: str
    partition: str
    n_types: int
    containers: int
    mean_jct: float
    makespan: float
    utilisation: float
    idle_share: float
    decision_ms: float
    decisions: int
    jct_gap: float
    makespan_gap: float
    preempted: int
    jct: list[float]


def sample_jobs(workload: Workload, n: int | None, seed: int, interarrival: float | None) -> Workload:
    """A seeded sample of ``n`` jobs (all when ``n`` is None).

    With ``interarrival`` the arrivals are re-drawn as a Poisson stream of that mean (seconds) in a
    seeded random job order; else the trace's arrivals are kept, shifted to start at 0.
    """
    rng = np.random.default_rng(seed)
    w = workload
    if n is not None and n < w.n_jobs:
        w = w.subset(sorted(rng.choice(w.n_jobs, size=n, replace=False).tolist()))
    if interarrival is not None:
        from packing.dag.model import Job, make_workload

        gaps = np.concatenate([[0.0], rng.exponential(interarrival, size=max(w.n_jobs - 1, 0))])
        times = np.cumsum(gaps)
        order = rng.permutation(w.n_jobs)
        jobs = [Job(w.jobs[int(i)].name, float(times[k]), w.jobs[int(i)].stages) for k, i in enumerate(order)]
        return make_workload(w.name, jobs, w.name, dict(w.meta))
    return w.shifted()


def compare_dag(workload: Workload, policies: list[DagPolicy], *, q: int = 4,
                hosts: list[tuple[str, tuple[float, float], int]] | None = None,
                online: np.ndarray | None = None, online_share: float = 0.0, surges: int = 0,
                preempt: bool = False, overheads: Overheads | None = None, seed: int = 0) -> dict[str, Any]:
    """Run each policy on its partition's carved cluster; bounds and gaps.

    Returns:
        ``{"bounds": {...}, "policies": [PolicyRow as dict, ...], "clusters": {...}}``.
    """
    hosts = hosts or [("32c64g", HOST_SHAPES["32c64g"], 8), ("92c288g", HOST_SHAPES["92c288g"], 8)]
    oh = Overheads() if overheads is None else overheads
    horizon = max((j.arrival for j in workload.jobs), default=0.0) + 600.0
    carved: dict[str, Carved] = {}
    parts: dict[str, Partition] = {}
    for p in policies:
        if p.partition not in carved:
            parts[p.partition] = partition(workload, 1 if p.partition == "single" else q, p.partition)
            carved[p.partition] = carve_cluster(parts[p.partition], hosts, online=online,
                                                online_share=online_share, surges=surges,
                                                horizon=horizon, seed=seed)
    cap = np.max([c.cluster.capacity for c in carved.values()], axis=0)
    b = dag_bounds(workload, cap, oh)
    rows = []
    for p in policies:
        c = carved[p.partition]
        eng = DagEngine(workload, c.cluster, overheads=oh, seed=seed, preempt=preempt)
        res, secs = run_dag(eng, p)
        rows.append(asdict(PolicyRow(
            p.name, p.partition, c.cluster.n_types, int(len(c.cluster.slot_type)), res.mean_jct, res.makespan,
            res.utilisation, res.idle_share, float(secs.mean() * 1e3) if len(secs) else 0.0, res.decisions,
            res.mean_jct / b["critical_path_mean_jct"] - 1.0 if b["critical_path_mean_jct"] > 0 else 0.0,
            res.makespan / b["makespan"] - 1.0 if b["makespan"] > 0 else 0.0, res.preempted,
            res.jct.tolist())))
    return {
        "bounds": {"critical_path_mean_jct": b["critical_path_mean_jct"], "makespan": b["makespan"]},
        "policies": rows,
        "clusters": {k: {"types": v.cluster.types.round(3).tolist(), "containers": v.cluster.counts.tolist(),
                         "online_share": v.online_share, "carved_share": v.carved_share}
                     for k, v in carved.items()},
        "jobs": workload.n_jobs, "tasks": workload.n_tasks,
    }


__all__ = ["HOST_SHAPES", "Carved", "PolicyRow", "SweepRow", "carve_cluster", "carve_sweep",
           "carving_instance", "compare_dag", "container_counts", "dag_bounds", "parse_hosts",
           "resolve_dag_policy", "sample_jobs"]
