"""First-fit decreasing: the upper bound and the complete hint for the exact methods.

Containers are taken largest first and put on the first host (in a fixed host order) that
:meth:`packing.feasibility.predicates.ClusterState.mask` accepts, so every constraint (capacities, GPU cards
and models, anti-affinity caps, exclusions, ``<A, B, k>`` rules) is honoured by construction. A few
size measures are tried and the best result is kept. Each result is checked by
:func:`packing.feasibility.checker.check` (a load exactly on the limit can pass first fit's sum and fail the
checker's, summed in another order); one that fails is built again on capacities lowered by a
hair (:data:`MARGIN`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from packing.feasibility.predicates import TOL, ClusterState, over_cap
from packing.model.instance import UNPLACED, Instance, Placement
from solvers.base import objective_value, resolve_objective
from solvers.result import Objective

COMPILED_MIN_WORK = 20_000_000
"""First fit uses the compiled kernel only from this many container x host pairs on: loading it
(numba and the cached kernel) costs about a second once per process, more than the numpy path
takes on smaller instances (0.4 s for 5,000 containers on 829 hosts), and the built-in Sigma
instance must solve in well under a second."""

SIZE_MEASURES = ("max", "sum", "gpu")
"""How a container's size is measured to sort them: largest normalised resource, sum over
resources, or GPU cards first (then the sum)."""


@dataclass(frozen=True)
class Greedy:
    """A first-fit result.

    Attributes:
        host_of: host per container, shape ``(n_containers,)``; -1 = unplaced.
        cards_of: GPU cards per container (length ``n_containers``).
        objective: its value for ``kind``.
        kind: the objective it was built for.
        placed: containers placed.
        measure: the size measure that produced it.
    """

    host_of: np.ndarray
    cards_of: list[tuple[int, ...]]
    objective: float
    kind: Objective
    placed: int
    measure: str

    @property
    def complete(self) -> bool:
        """Whether every container is placed."""
        return self.placed == len(self.host_of)

    def placement(self, instance: Instance) -> Placement:
        """As a :class:`Placement` of ``instance``."""
        return Placement.from_arrays(instance, self.host_of, self.cards_of)


def _app_sizes(instance: Instance, measure: str) -> np.ndarray:
    """Size of one container per app, shape ``(n_apps,)``, normalised by the largest capacity."""
    cap = instance.type_capacity.max(axis=0) if len(instance.host_types) else np.ones(1)
    rel = instance.demand / np.where(cap > 0, cap, 1.0)
    size = rel.max(axis=1) if measure == "max" else rel.sum(axis=1)
    if measure == "gpu":
        size = size + 10.0 * instance.gpu_cards * np.array([a.gpu_whole for a in instance.apps])
        size = size + 2.0 * instance.gpu_cards
    return size


def type_order(instance: Instance, kind: Objective) -> np.ndarray:
    """The order first fit tries host types in, shape ``(n_types,)``.

    By decreasing capacity (normalised sum) for ``"hosts"`` and ``"deployed"``, and by increasing
    cost per unit of capacity for ``"cost"``.
    """
    cap = instance.type_capacity
    if not len(cap):  # no host types (manifests without hosts): nothing to order
        return np.zeros(0, dtype=np.int64)
    top = cap.max(axis=0)
    size = (cap / np.where(top > 0, top, 1.0)).sum(axis=1) + 1e-12
    key = instance.type_cost / size if kind == "cost" else -size
    return np.argsort(key, kind="stable")


def host_order(instance: Instance, kind: Objective) -> np.ndarray:
    """The order first fit tries hosts in, shape ``(n_hosts,)``.

    Types in :func:`type_order`, hosts of one type in index order.
    """
    types = type_order(instance, kind)
    starts = np.concatenate([[0], np.cumsum(instance.type_count)])
    return np.concatenate(
        [np.arange(starts[t], starts[t + 1]) for t in types] or [np.zeros(0, dtype=np.int64)]
    ).astype(np.int64)


def first_fit(instance: Instance, kind: Objective, measure: str = "max") -> Greedy:
    """First fit with containers sorted by decreasing ``measure`` (increasing for ``deployed``).

    Args:
        instance: the instance.
        kind: the objective (decides the host order and, for ``deployed``, smallest first).
        measure: one of :data:`SIZE_MEASURES`.
    """
    inst = instance
    size = _app_sizes(inst, measure)
    apps = np.argsort(size if kind == "deployed" else -size, kind="stable")
    order = host_order(inst, kind)
    if inst.n_containers * inst.n_hosts >= COMPILED_MIN_WORK:
        compiled = _first_fit_compiled(inst, kind, measure, apps)
        if compiled is not None:
            return compiled
    st = ClusterState(inst)
    if plain_applies(st):
        return _first_fit_plain(inst, kind, measure, apps, order)
    host_of = np.full(inst.n_containers, UNPLACED, dtype=np.int64)
    cards_of: list[tuple[int, ...]] = [()] * inst.n_containers
    for a in apps:
        lo, hi = int(inst.offsets[a]), int(inst.offsets[a + 1])
        for j in range(lo, hi):
            ok = st.mask(int(a))[order]
            hits = np.flatnonzero(ok)
            if len(hits) == 0:
                break  # no host takes another container of this app
            h = int(order[hits[0]])
            cs = st.choose_cards(int(a), h)
            st.place(int(a), h, cs)
            host_of[j] = h
            cards_of[j] = cs
    if st.topology_broken():
        # the online filter keeps spread only relative to the counts so far: the final state
        # breaks it, so first fit has no solution (an empty placement is still a valid one)
        host_of[:] = UNPLACED
        cards_of = [()] * inst.n_containers
    placed = int(np.count_nonzero(host_of != UNPLACED))
    return Greedy(host_of, cards_of, objective_value(inst, host_of, kind), kind, placed, measure)


def plain_applies(state: ClusterState) -> bool:
    """Whether only capacities and per-host caps bind (no rules, GPU cards, host-type limits, topology)."""
    return state.simple and len(state.instance.rule_arrays[0]) == 0


def _first_fit_plain(inst: Instance, kind: Objective, measure: str, apps: np.ndarray,
                     order: np.ndarray) -> Greedy:
    """:func:`first_fit` where only capacities and per-host caps bind: the same placement, faster.

    It serves instances without rules, GPU cards, host-type restrictions or topology. First fit
    opens hosts in ``order``, so only the hosts up to the last one used can hold containers; a
    container that fits none of them goes to the first later host it fits when empty. Loads
    are summed in the same order and compared with the same arithmetic as
    :meth:`packing.feasibility.predicates.ClusterState.mask` (``fits`` and ``over_cap``), so the
    result is the placement the general path gives.
    """
    cap = inst.host_capacity[order]  # (n_hosts, n_resources), in first fit's host order
    room = cap + TOL * np.maximum(1.0, np.abs(cap))  # fits(load, cap) is load <= room
    used = np.zeros_like(cap)
    host_of = np.full(inst.n_containers, UNPLACED, dtype=np.int64)
    n_open = 0  # hosts at positions >= n_open are empty
    caps = inst.cap
    for a in apps.tolist():
        lo, hi = int(inst.offsets[a]), int(inst.offsets[a + 1])
        d = inst.demand[a]
        limit = int(caps[a])
        count = np.zeros(len(order), dtype=np.int64) if limit < hi - lo else None
        fresh = np.flatnonzero((d <= room).all(axis=1))  # positions an empty host takes it at
        for j in range(lo, hi):
            ok = (used[:n_open] + d <= room[:n_open]).all(axis=1)
            if count is not None:
                ok &= ~over_cap(count[:n_open] + 1, limit)
            hits = np.flatnonzero(ok)
            if len(hits):
                p = int(hits[0])
            else:
                k = int(np.searchsorted(fresh, n_open))
                if k == len(fresh) or limit < 1:
                    break  # no host takes another container of this app
                p = int(fresh[k])
                n_open = p + 1
            used[p] += d
            if count is not None:
                count[p] += 1
            host_of[j] = order[p]
    placed = int(np.count_nonzero(host_of != UNPLACED))
    return Greedy(host_of, [()] * inst.n_containers, objective_value(inst, host_of, kind), kind,
                  placed, measure)


def _first_fit_compiled(inst: Instance, kind: Objective, measure: str, apps: np.ndarray
                        ) -> Greedy | None:
    """:func:`first_fit` in the compiled kernel (the same predicates); None where it does not apply.

    The kernel takes the lowest-index feasible host, so it runs on a view of the instance whose host
    types are rearranged into :func:`type_order`; host indices are mapped back afterwards. GPU
    demand is not covered by the kernel (the numpy path handles it).
    """
    from packing.feasibility import kernels

    if inst.max_gpus or inst.type_allowed is not None:
        return None
    types = type_order(inst, kind)
    view = inst.replace(host_types=tuple(inst.host_types[t] for t in types), initial=None,
                        requests=())
    st = ClusterState(view)
    if not kernels.supports(st):
        return None
    seq = np.repeat(apps, inst.counts[apps]).astype(np.int64)
    hosts = kernels.first_fit(st, seq)
    starts = np.concatenate([[0], np.cumsum(inst.type_count)])
    back = np.concatenate([np.arange(starts[t], starts[t + 1]) for t in types]
                          or [np.zeros(0, np.int64)]).astype(np.int64)
    host_of = np.full(inst.n_containers, UNPLACED, dtype=np.int64)
    pos = 0
    for a in apps:  # containers of an app are identical: fill its slots in order
        lo, n = int(inst.offsets[a]), int(inst.counts[a])
        hs = hosts[pos : pos + n]
        got = back[hs[hs >= 0]]
        host_of[lo : lo + len(got)] = got
        pos += n
    placed = int(np.count_nonzero(host_of != UNPLACED))
    return Greedy(host_of, [()] * inst.n_containers, objective_value(inst, host_of, kind), kind,
                  placed, measure)


MARGIN = 1e-11
"""Relative capacity (of ``max(1, |capacity|)``) given up when first fit runs again because a
placement failed the checker (see :func:`_checked`)."""


def _checked(instance: Instance, g: Greedy, kind: Objective, measure: str) -> Greedy:
    """``g`` if the checker accepts it, else first fit on capacities lowered by :data:`MARGIN`.

    First fit sums each host's load in its own order; the checker sums it in container order.
    A load that lands on the checker's limit can pass one sum and fail the other by an ulp. On
    capacities lowered by far more than that rounding, every host first fit fills passes the
    checker; if even that fails, nothing is placed.
    """
    from packing.feasibility.checker import check

    if not check(instance, g.placement(instance)):
        return g

    def lower(values: tuple[float, ...]) -> tuple[float, ...]:
        return tuple(float(v) - MARGIN * max(1.0, abs(float(v))) for v in values)

    tight = instance.replace(host_types=tuple(
        dataclasses.replace(t, capacity=lower(t.capacity), gpu_capacity=lower(t.gpu_capacity))
        for t in instance.host_types))
    g2 = first_fit(tight, kind, measure)
    if not check(instance, g2.placement(instance)):
        return Greedy(g2.host_of, g2.cards_of, objective_value(instance, g2.host_of, kind), kind,
                      g2.placed, measure)
    empty = np.full(instance.n_containers, UNPLACED, dtype=np.int64)
    return Greedy(empty, [()] * instance.n_containers, objective_value(instance, empty, kind),
                  kind, 0, measure)


def ffd(instance: Instance, objective: str | None = None) -> Greedy:
    """The best first-fit-decreasing result over :data:`SIZE_MEASURES`.

    Best means: most containers placed, then the lowest objective (highest for ``deployed``).

    Args:
        instance: the instance.
        objective: ``"hosts"``, ``"cost"``, ``"deployed"`` or ``None`` (see
            :func:`solvers.base.resolve_objective`).
    """
    kind = resolve_objective(instance, objective)
    measures: tuple[str, ...] = SIZE_MEASURES if instance.max_gpus else SIZE_MEASURES[:2]
    if instance.n_resources <= 1 and not instance.max_gpus:
        measures = measures[:1]  # one resource: every measure sorts the containers alike
    best: Greedy | None = None
    for m in measures:
        g = _checked(instance, first_fit(instance, kind, m), kind, m)
        sign = -1.0 if kind == "deployed" else 1.0
        if best is None or (-g.placed, sign * g.objective) < (-best.placed, sign * best.objective):
            best = g
    assert best is not None
    return best
