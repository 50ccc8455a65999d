"""JobFusion on vbp: carve hosts into the partition's container types, run DAG jobs, compare to bounds.

* **Carving is vector bin packing.** The ``Q`` container types become apps (counts proportional to
  the tasks each type was built for), the host types bins; :func:`carve_sweep` solves it with
  :func:`solvers.solve` (cost objective, proven lower bound) for the Fig. 12 sweep, and
  :func:`carve_cluster` fills a *fixed* cluster (after the online snapshot) with first-fit decreasing
  (:func:`solvers.greedy.ffd`), either in the types' task proportions or *nested* (the large types
  first, as the one-type cluster would, then smaller ones on what is left; :func:`tune_large_share`
  picks how much of the large types to keep by simulated mean JCT on training samples). Every
  carving placement passes :func:`packing.checker.check`.
* **Idle share** (sweep): ``1 - task demand / capacity of the hosts opened``, each resource divided by
  the large host (92c288g) and averaged; host cost is measured in the same units, so the solver's
  cost bound gives a proven bound on the idle share: ``1 - task demand / cost bound``.
* **Bounds** (:mod:`packing.dag.bounds`): the critical-path bound (:func:`dag_bounds`: a job
  cannot finish sooner than its longest path of durations plus the least scheduling delay and
  container start per stage; the makespan is at least the longest ``arrival + that`` and the work
  bound ``max_r sum(work_r) / offline capacity_r``) and the capacity bound
  (:func:`packing.dag.bounds.capacity_bound`: slot-limited critical paths and the cluster's slots and
  resources as single machines under SRPT), computed on each carved cluster; the comparison reports
  the least over the clusters compared, valid for every policy in it.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from packing.checker import check
from packing.dag.bounds import capacity_bound
from packing.dag.bounds import critical_path_bounds as dag_bounds
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


CARVINGS = ("proportional", "nested")
"""How :func:`carve_cluster` chooses the container counts (see there)."""


def _type_size(types: np.ndarray) -> np.ndarray:
    """Size of each type relative to the largest per resource, summed, shape ``(Q,)`` from ``(Q, 2)``."""
    return (types / np.maximum(types.max(axis=0), 1e-12)).sum(axis=1)


def _place(resid: np.ndarray, types: np.ndarray, counts: np.ndarray) -> np.ndarray | None:
    """First-fit decreasing of ``counts[q]`` containers of ``types[q]`` on hosts with ``resid`` free.

    Args:
        resid: free capacity per host, shape ``(H, 2)``.
        types: container shapes, shape ``(Q, 2)``.
        counts: containers per type, shape ``(Q,)`` (zeros allowed).

    Returns:
        The host of each container in type order, shape ``(counts.sum(),)``, or None when first-fit
        decreasing does not place them all.
    """
    from solvers.greedy import ffd

    if int(counts.sum()) == 0:
        return np.zeros(0, dtype=np.int64)
    keep = np.flatnonzero(counts > 0)
    hts = tuple(HostType(f"h{h}", tuple(map(float, resid[h])), 1) for h in range(len(resid)))
    inst = Instance("carve", ("cpu", "mem"), hts, tuple(
        App(f"t{q}", tuple(map(float, types[q])), int(counts[q])) for q in keep))
    gr = ffd(inst, "hosts")
    return np.asarray(gr.host_of, dtype=np.int64) if gr.complete else None


def _max_proportional(resid: np.ndarray, types: np.ndarray, w: np.ndarray, minimum: np.ndarray | int = 0
                      ) -> tuple[np.ndarray, np.ndarray] | None:
    """The most containers in the proportions ``w`` (shape ``(Q,)``) that first-fit decreasing places.

    Counts are ``max(minimum, floor(w * m))`` (``minimum`` a number or shape ``(Q,)``), ``m`` found
    by bisection (monotone in practice). Returns ``(counts (Q,), host of each container in type
    order)``, or None when even ``m = 0`` does not fit.
    """
    def counts_of(m: int) -> np.ndarray:
        return np.maximum(minimum, np.floor(w * m)).astype(np.int64)

    best = _place(resid, types, counts_of(0))
    if best is None:
        return None
    use = w > 0
    if not use.any():
        return counts_of(0), best
    per_m = np.maximum((w[use, None] * types[use]).sum(axis=0), 1e-12)  # capacity per unit of m, (2,)
    hi = int(np.floor((resid.sum(axis=0) / per_m).min())) + 1
    lo = 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        got = _place(resid, types, counts_of(mid))
        if got is not None:
            lo, best = mid, got
        else:
            hi = mid - 1
    return counts_of(lo), best


def _load(n_hosts: int, types: np.ndarray, counts: np.ndarray, host_of: np.ndarray) -> np.ndarray:
    """Capacity used per host by containers in type order, shape ``(n_hosts, 2)``."""
    out = np.zeros((n_hosts, 2))
    if len(host_of):
        np.add.at(out, host_of, np.repeat(types, counts, axis=0))
    return out


def maximal_types(types: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Types no other type dominates, and the maximal type that serves each type.

    Args:
        types: container shapes, shape ``(Q, 2)``.

    Returns:
        ``(is_maximal (Q,) bool, server (Q,) int)``: ``server[q]`` is the smallest (by size relative
        to the largest per resource) maximal type that dominates ``q`` (``q`` itself when maximal).
    """
    nq = len(types)
    dom = np.all(types[:, None, :] >= types[None, :, :] - 1e-9, axis=2)  # dom[p, q]: p dominates q
    strict = dom & ~np.all(np.abs(types[:, None, :] - types[None, :, :]) <= 1e-9, axis=2)
    is_max = ~strict.any(axis=0)
    # identical types: keep the first as maximal
    for q in range(nq):
        if is_max[q] and any(is_max[p] and dom[p, q] and dom[q, p] for p in range(q)):
            is_max[q] = False
    size = _type_size(types)
    server = np.array([q if is_max[q] else
                       int(min(np.flatnonzero(is_max & dom[:, q]), key=lambda p: (size[p], p)))
                       for q in range(nq)], dtype=np.int64)
    return is_max, server


def _carve_nested(resid: np.ndarray, part: Partition, large_share: float) -> tuple[np.ndarray, np.ndarray]:
    """Nested carving: the large (maximal) types first, then the smaller types on what they leave.

    1. the maximal types (no other type dominates them; with the constrained partition usually one,
       the component-wise maximum of all tasks): ``large_share`` of the most that first-fit
       decreasing places in proportion to the tasks each would serve alone (every task counted at
       the smallest maximal type dominating its own type), at least one each. With one maximal type
       and ``large_share = 1`` that is the one-type cluster's count of it;
    2. the other types in proportion to their task counts, the most first-fit decreasing places on
       the capacity left;
    3. top-up: each other type, largest first, as many more as still fit.

    Returns:
        counts per type, shape ``(Q,)``, and the host of each container in type order.
    """
    types = part.types
    nq = part.n_types
    is_max, server = maximal_types(types)
    wm = np.bincount(server, weights=part.weight, minlength=nq)
    wm = wm / wm.sum()
    alone = _max_proportional(resid, types, wm, is_max.astype(np.int64))
    if alone is None:
        raise input_error("--hosts", "", f"the container types {types[is_max].tolist()} do not fit "
                          "on the capacity the online containers leave")
    counts = alone[0] if nq == 1 else np.where(
        is_max, np.maximum(1, np.floor(large_share * alone[0] + 1e-9)), 0).astype(np.int64)
    stages: list[np.ndarray] = [counts]
    first = _place(resid, types, counts)
    assert first is not None
    hosts_of: list[np.ndarray] = [first]
    left = resid - _load(len(resid), types, counts, first)
    others = np.flatnonzero(~is_max)
    size = _type_size(types)

    def add(got: tuple[np.ndarray, np.ndarray] | None) -> None:
        nonlocal left
        if got is not None and got[0].sum():
            stages.append(got[0])
            hosts_of.append(got[1])
            left = left - _load(len(left), types, got[0], got[1])

    if len(others):
        fits = np.array([bool(np.all(left >= types[q] - 1e-9, axis=1).any()) for q in range(nq)])
        w = np.where(~is_max & fits, part.weight, 0.0)
        if w.sum() > 0:
            add(_max_proportional(left, types, w / w.sum()))
        for q in others[np.argsort(-size[others], kind="stable")]:
            add(_max_proportional(left, types, (np.arange(nq) == q).astype(np.float64)))
    total = np.sum(stages, axis=0).astype(np.int64)
    per_type: list[list[int]] = [[] for _ in range(nq)]
    for c, h in zip(stages, hosts_of, strict=True):
        o = 0
        for q in range(nq):
            per_type[q].extend(h[o:o + c[q]].tolist())
            o += int(c[q])
    return total, np.array([x for lst in per_type for x in lst], dtype=np.int64)


def carve_cluster(part: Partition, hosts: list[tuple[str, tuple[float, float], int]], *,
                  online: np.ndarray | None = None, online_share: float = 0.0, surges: int = 0,
                  horizon: float = 3600.0, seed: int = 0, carving: str = "proportional",
                  large_share: float = 1.0) -> Carved:
    """Place online containers first, then carve the rest into the partition's types.

    Online containers (rows of ``online``, shape ``(N, 2)``, sampled with the seed until they request
    ``online_share`` of the CPU) are placed by first-fit decreasing. The free capacity is carved by
    ``carving``:

    * ``"proportional"``: the most containers in the types' task-count proportions that first-fit
      decreasing still places (a search over the total);
    * ``"nested"``: ``large_share`` of the most containers of the largest type that fit (1.0: as many
      as the one-type cluster gets), then the other types on the capacity left (see
      :func:`_carve_nested`), so the memory-heavy tasks keep the one-type cluster's large containers
      and the small tasks get extra small ones. With one type both carvings are the same.

    ``surges`` seeded online surges hit hosts with online containers in ``[0, horizon)`` for 60-600 s
    each. Every carving goes through :func:`packing.checker.check`.

    Raises:
        InputError: online containers that do not fit, a type that fits no host, an unknown carving
            or a ``large_share`` outside ``[0, 1]``.
    """
    from solvers.greedy import ffd

    if carving not in CARVINGS:
        raise input_error("--carving", carving, f"expected one of {', '.join(CARVINGS)}")
    if not 0.0 <= large_share <= 1.0:
        raise input_error("--large-share", str(large_share), "expected a share in [0, 1]")
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
    if carving == "nested":
        counts, best = _carve_nested(resid, part, large_share)
    else:
        got = _max_proportional(resid, part.types, part.weight / part.weight.sum(), 1)
        if got is None:
            raise input_error("--hosts", "", f"the container types {part.types.tolist()} do not fit on the "
                              "capacity the online containers leave")
        counts, best = got
    keep = np.flatnonzero(counts > 0)
    off_apps = [App(f"type{q}:{part.types[q, 0]:g}c{part.types[q, 1]:g}g", tuple(map(float, part.types[q])),
                    int(counts[q])) for q in keep]
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


def tune_large_share(samples: list[Workload], hosts: list[tuple[str, tuple[float, float], int]], *,
                     q: int = 4, method: str = "constrained", policy: str = "sjf",
                     grid: tuple[float, ...] = (0.25, 0.5, 0.6, 0.75, 0.9, 1.0),
                     overheads: Overheads | None = None, seed: int = 0) -> tuple[float, dict[float, float]]:
    """The nested carving's ``large_share`` with the least simulated mean JCT on ``samples``.

    Pass TRAINING samples only: the share is a setting of the cluster, chosen like any other
    hyper-parameter. Each sample is partitioned (``q``, ``method``), carved nested with every share of
    ``grid`` and run by the DAG baseline ``policy`` (engine seed ``seed``).

    Returns:
        ``(best share, {share: mean JCT over the samples})`` (ties: the larger share).
    """
    from policies.dag import make_dag_policy

    oh = Overheads() if overheads is None else overheads
    parts = [partition(s, q, method) for s in samples]
    means: dict[float, float] = {}
    for f in grid:
        jct = []
        for s, part in zip(samples, parts, strict=True):
            c = carve_cluster(part, hosts, carving="nested", large_share=f, seed=seed)
            res, _ = run_dag(DagEngine(s, c.cluster, overheads=oh, seed=seed), make_dag_policy(policy, seed))
            jct.append(res.mean_jct)
        means[float(f)] = float(np.mean(jct))
    best = min(sorted(means, reverse=True), key=lambda f: means[f])
    return best, means


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
    capacity_gap: float
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
                preempt: bool = False, overheads: Overheads | None = None, seed: int = 0,
                carving: str = "proportional", large_share: float = 1.0) -> dict[str, Any]:
    """Run each policy on its partition's carved cluster; bounds and gaps.

    ``carving`` and ``large_share`` choose the container counts (see :func:`carve_cluster`).

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
                                                horizon=horizon, seed=seed, carving=carving,
                                                large_share=large_share)
    cap = np.max([c.cluster.capacity for c in carved.values()], axis=0)
    b = dag_bounds(workload, cap, oh)
    cb = {k: capacity_bound(workload, c.cluster, oh) for k, c in carved.items()}
    cap_jct = min(v.mean_jct for v in cb.values())
    makespan = max(b["makespan"], min(v.makespan for v in cb.values()))
    rows = []
    for p in policies:
        c = carved[p.partition]
        eng = DagEngine(workload, c.cluster, overheads=oh, seed=seed, preempt=preempt)
        res, secs = run_dag(eng, p)
        rows.append(asdict(PolicyRow(
            p.name, p.partition, c.cluster.n_types, int(len(c.cluster.slot_type)), res.mean_jct, res.makespan,
            res.utilisation, res.idle_share, float(secs.mean() * 1e3) if len(secs) else 0.0, res.decisions,
            res.mean_jct / b["critical_path_mean_jct"] - 1.0 if b["critical_path_mean_jct"] > 0 else 0.0,
            res.mean_jct / cb[p.partition].mean_jct - 1.0 if cb[p.partition].mean_jct > 0 else 0.0,
            res.makespan / makespan - 1.0 if makespan > 0 else 0.0, res.preempted,
            res.jct.tolist())))
    return {
        "bounds": {"critical_path_mean_jct": b["critical_path_mean_jct"], "capacity_mean_jct": cap_jct,
                   "capacity_by_partition": {k: v.mean_jct for k, v in cb.items()},
                   "capacity_parts": {k: v.parts for k, v in cb.items()}, "makespan": makespan},
        "policies": rows,
        "carving": {"method": carving, "large_share": large_share},
        "clusters": {k: {"types": v.cluster.types.round(3).tolist(), "containers": v.cluster.counts.tolist(),
                         "online_share": v.online_share, "carved_share": v.carved_share}
                     for k, v in carved.items()},
        "jobs": workload.n_jobs, "tasks": workload.n_tasks,
    }


__all__ = ["CARVINGS", "HOST_SHAPES", "Carved", "PolicyRow", "SweepRow", "carve_cluster", "carve_sweep",
           "carving_instance", "compare_dag", "container_counts", "dag_bounds", "maximal_types",
           "parse_hosts", "resolve_dag_policy", "sample_jobs", "tune_large_share"]
