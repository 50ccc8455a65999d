"""Carving hosts into a DAG partition's container types, solved: a proven sweep and a fixed cluster.

* :func:`carve_sweep` solves the carving problem (:func:`packing.dag.carving.carving_instance`)
  with :func:`solvers.solve` (cost objective, proven lower bound) for each number of types and
  partition method (the JobFusion paper's Fig. 12): the idle share ``1 - task demand / capacity of
  the hosts opened`` (each resource divided by the large host and averaged) and its proven bound
  ``1 - task demand / cost bound``.
* :func:`carve_cluster` fills a *fixed* cluster (after the online snapshot) with first-fit
  decreasing (:func:`solvers.search.greedy.ffd`), either in the types' task proportions or *nested* (the
  large types first, as the one-type cluster would, then smaller ones on what is left).

Every carving placement passes :func:`packing.feasibility.checker.check`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from packing.dag.carving import (
    HOST_SHAPES,
    carving_instance,
    container_counts,
    large_host_units,
    member_demand,
)
from packing.dag.engine import Cluster, Surge
from packing.dag.model import Workload
from packing.dag.partition import Partition, partition
from packing.errors import input_error
from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance, Placement


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
                seed: int = 0, progress: Callable[[SweepRow], None] | None = None) -> list[SweepRow]:
    """Idle share of the carving and its proven bound for each ``q`` and partition method.

    Args:
        workload: the jobs whose task demands are clustered.
        qs: numbers of types.
        methods: partition methods (``"single"`` is computed once).
        containers: containers to carve (split by the types' task shares).
        host_shapes: host type names (default both of the paper's).
        time_limit: seconds per solve.
        seed: solver seed.
        progress: called with each row when it is done.
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
            work = float((large_host_units(member_demand(part)) * counts).sum())
            used: dict[str, int] = {}
            if res.placement is not None:
                assert not check(inst, res.placement, require_all=True)
                ho = res.placement.host_array(inst)
                tys = inst.host_type_of[np.unique(ho[ho >= 0])]
                used = {inst.host_types[int(t)].name: int((tys == t).sum()) for t in np.unique(tys)}
            cost = None if res.objective is None else res.objective / scale
            low = float(res.bound) / scale
            rows.append(SweepRow(method, q, part.n_types, part.reached, part.types.round(3).tolist(),
                                 int(counts.sum()), used, cost, low,
                                 None if cost is None else 1.0 - work / cost,
                                 1.0 - work / low if low > 0 else 0.0,
                                 part.internal_idle(), res.status, res.gap, round(sec, 3)))
            if progress is not None:
                progress(rows[-1])
    return rows


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
    from solvers.search.greedy import ffd

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
    left = np.maximum(resid - _load(len(resid), types, counts, first), 0.0)  # no -1e-13 residues
    others = np.flatnonzero(~is_max)
    size = _type_size(types)

    def add(got: tuple[np.ndarray, np.ndarray] | None) -> None:
        nonlocal left
        if got is not None and got[0].sum():
            stages.append(got[0])
            hosts_of.append(got[1])
            left = np.maximum(left - _load(len(left), types, got[0], got[1]), 0.0)

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
    each. Every carving goes through :func:`packing.feasibility.checker.check`.

    Raises:
        InputError: online containers that do not fit, a type that fits no host, an unknown carving
            or a ``large_share`` outside ``[0, 1]``.
    """
    from solvers.search.greedy import ffd

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
    alone = np.all(part.types[:, None, :] <= resid[None, :, :] + 1e-9, axis=2).any(axis=1)  # (Q,)
    if not alone.all():
        q = int(np.flatnonzero(~alone)[0])
        offered = "; ".join(f"{n} x{c}: {list(shape)}" for n, shape, c in hosts)
        raise input_error("--hosts", "", f"container type {part.types[q].round(3).tolist()} (cpu, mem) is "
                          f"larger than every host ({offered}"
                          + (", less the online containers" if on_apps else "") + "); give larger hosts")
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
    online_share = float(large_host_units(on_load.sum(axis=0)) / large_host_units(cap_total))
    return Carved(cluster, full, pl, online_share,
                  float((carved / np.maximum(offline_cap, 1e-12)).mean()))


__all__ = ["CARVINGS", "Carved", "SweepRow", "carve_cluster", "carve_sweep", "maximal_types"]
