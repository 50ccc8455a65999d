"""What the autoscalers would do: scale-down, consolidation, and how both provision.

:func:`provision` (first fit decreasing onto the cheapest type) is the baseline of ``vbp plan``.

Baselines for ``vbp consolidate``, written from each project's published description of its
behaviour (not from its code), on the same :class:`packing.cluster.problem.ClusterProblem`, with
the same rules (every pod re-placed through :class:`packing.cluster.fit.ClusterFit`: capacity,
node selection, taints, anti-affinity, cordoned nodes) and the same move budget. Where the projects
simulate the scheduler, these baselines re-place a node's pods largest first, each on the node left
fullest (best fit), on the nodes that stay.

**cluster-autoscaler** (:func:`cluster_autoscaler`; kubernetes/autoscaler,
``cluster-autoscaler/FAQ.md``, "How does scale-down work?" and "What types of pods can prevent CA
from removing a node?"): a node is a candidate when the sum of its pods' cpu requests and the sum
of their memory requests (DaemonSet pods included, the default) are both below
``threshold`` (``--scale-down-utilization-threshold``, 0.5) of its allocatable, and every pod
on it can move: no pod that cannot be evicted (pinned: ``safe-to-evict: "false"``, no controller,
local storage, a budget that allows no disruption) and each fits elsewhere. Empty nodes (only
DaemonSet pods) are removed together; non-empty ones one at a time, the least utilised first,
each removal changing where the next one's pods can go (a node that runs nothing but DaemonSets
is unused, so removed). Scale-up of Pending pods is not a scale-down: they are placed first as in
:func:`packing.cluster.fit.start`.

**Karpenter** (:func:`karpenter`; Karpenter's "Disruption" page, section Consolidation,
https://karpenter.sh/docs/concepts/disruption/): three mechanisms in order, repeated while one
acts: *empty node consolidation* removes every node with no pod but DaemonSets (here: such a node
is unused, so removed); *multi-node consolidation* removes two or more nodes at once, possibly
launching a single replacement whose price is lower than theirs together, found among the
candidates sorted by disruption cost (fewest pods first; Karpenter's heuristic tries the longest
such prefix that works, searched here by bisection over at most 100 candidates); *single-node
consolidation* removes one node, or replaces it with one cheaper node, each candidate in turn. A
node with a pod that cannot be evicted (``karpenter.sh/do-not-disrupt``, the pinned pods) is no
candidate. Replacements are new nodes of the offered types (``--replace``): the cheapest type that
takes the pods left over.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from packing.cluster.answer import Outcome, outcome
from packing.cluster.fit import ClusterFit, start
from packing.cluster.problem import ClusterProblem
from packing.feasibility.predicates import ClusterState
from packing.model.instance import UNPLACED, Instance, Placement
from packing.sim.autoscale import new_node

THRESHOLD = 0.5
"""cluster-autoscaler's default ``--scale-down-utilization-threshold``."""
MULTI_NODE_CANDIDATES = 100
"""Most candidates Karpenter's multi-node consolidation considers at once."""


def utilisation(problem: ClusterProblem, x: np.ndarray) -> np.ndarray:
    """cluster-autoscaler's utilisation per host, shape ``(H,)``.

    The larger of the cpu and memory request shares of allocatable, DaemonSet pods included.
    """
    P = problem
    res = list(P.resources)
    load = P.load(x) + P.daemon_load
    alloc = P.capacity + P.daemon_load
    share = [load[:, res.index(r)] / np.maximum(alloc[:, res.index(r)], 1) for r in ("cpu", "memory")]
    return np.maximum(share[0], share[1])


def cluster_autoscaler(problem: ClusterProblem, max_moves: int | None = None,
                       threshold: float = THRESHOLD) -> Outcome:
    """cluster-autoscaler's scale-down (see the module docstring)."""
    P = problem
    x0 = start(P)
    if x0 is None:
        return outcome(P, P.orig, "cluster-autoscaler", "Pending pods fit nowhere: no scale-down")
    fit = ClusterFit(P, x0)
    removed = np.zeros(P.n_hosts, dtype=bool)
    while True:
        used = fit.used()
        util = utilisation(P, fit.x)
        cand = [h for h in np.flatnonzero(used & P.existing & ~P.keep & (util < threshold)).tolist()]
        cand.sort(key=lambda h: (float(util[h]), h))
        for h in cand:
            if fit.drain(h, removed | ~fit.used(), max_moves, prefer=fit.used()):
                removed[h] = True
                break
        else:
            break
    return outcome(P, fit.x, "cluster-autoscaler",
                   f"scale-down below {threshold:g} utilisation, one node at a time")


def _cheapest_replacement(P: ClusterProblem, fit: ClusterFit, nodes: Sequence[int],
                          away: np.ndarray, budget: int | None) -> bool:
    """Empty ``nodes`` onto the others plus at most one new node cheaper than them together."""
    limit = float(P.price[list(nodes)].sum())
    slots = [h for h in np.argsort(P.price, kind="stable").tolist()
             if not P.existing[h] and not fit.used()[h] and P.price[h] < limit]
    seen: set[str] = set()
    for s in [None, *slots]:
        if s is not None:
            if P.host_type[s] in seen:
                continue
            seen.add(P.host_type[s])
        before = fit.cost()
        at = fit.mark()
        ex = away | ~fit.used()  # removed nodes and new nodes not launched
        ex[list(nodes)] = True
        allow = np.zeros(P.n_hosts, dtype=bool)
        if s is not None:
            allow[s] = True
        ok = all(fit.drain(h, ex & ~allow, budget, prefer=fit.used() | allow) for h in nodes)
        if ok and fit.cost() < before:
            return True
        fit.rollback(at)
    return False


def karpenter(problem: ClusterProblem, max_moves: int | None = None) -> Outcome:
    """Karpenter's consolidation (see the module docstring)."""
    P = problem
    x0 = start(P)
    if x0 is None:
        return outcome(P, P.orig, "karpenter", "Pending pods fit nowhere: no consolidation")
    fit = ClusterFit(P, x0)
    while True:
        used = fit.used()
        on = fit.x.sum(axis=0)
        cand = [h for h in np.flatnonzero(used & P.existing & ~P.keep).tolist()]
        cand.sort(key=lambda h: (int(on[h]), -float(P.price[h]), h))
        away = ~used & P.existing  # removed nodes stay removed; new slots may be launched
        acted = False
        lo, hi = 2, min(len(cand), MULTI_NODE_CANDIDATES)
        best = 0
        while lo <= hi:  # the longest prefix of candidates that consolidates
            mid = (lo + hi) // 2
            at = fit.mark()
            if _cheapest_replacement(P, fit, cand[:mid], away, max_moves):
                best, lo = mid, mid + 1
            else:
                hi = mid - 1
            fit.rollback(at)
        if best:
            acted = _cheapest_replacement(P, fit, cand[:best], away, max_moves)
        if not acted:
            for h in cand:
                if _cheapest_replacement(P, fit, [h], away, max_moves):
                    acted = True
                    break
        if not acted:
            break
    return outcome(P, fit.x, "karpenter", "empty, multi-node and single-node consolidation")




def provision(instance: Instance, initial: Placement | None = None) -> Placement | None:
    """How cluster-autoscaler and Karpenter provision: first fit decreasing onto the cheapest type.

    The containers not placed by ``initial`` (Pending pods), largest first (their largest share
    of the largest capacity of any type), each on the first open host that takes it (a host in
    use, or one of ``initial``'s), else on a new host of the cheapest type whose empty host takes
    it, the simulator's scale-up rule (:func:`packing.sim.autoscale.new_node`: cheapest, then least
    waste): cluster-autoscaler's scale-up simulates the pending pods on a new node of a node group
    (its FAQ, "How does scale-up work?"; the ``price`` expander picks the cheapest group), and
    Karpenter launches the cheapest instance type that fits the pending pods ("Scheduling",
    https://karpenter.sh/docs/concepts/scheduling/). Every rule is the one feasibility logic's
    (:class:`packing.feasibility.predicates.ClusterState`).

    Returns:
        The placement, or ``None`` when a container fits on no host left.
    """
    inst = instance
    host_of = (initial.host_array(inst) if initial is not None
               else np.full(inst.n_containers, UNPLACED, dtype=np.int64))
    st = ClusterState.from_placement(inst, host_of)
    open_ = st.used_hosts().copy()
    top = np.maximum(inst.type_capacity.max(axis=0), 1e-12) if inst.host_types else np.ones(0)
    size = (inst.demand / top).max(axis=1) if inst.n_resources else np.zeros(inst.n_apps)
    apps = inst.container_app
    todo = sorted(np.flatnonzero(host_of == UNPLACED).tolist(), key=lambda c: (-size[apps[c]], c))
    for c in todo:
        a = int(apps[c])
        ok = st.mask(a)
        here = np.flatnonzero(ok & open_)
        if len(here):
            h = int(here[0])
        else:
            new = new_node(inst, ok & ~open_, a)
            if new is None:
                return None
            h = new
            open_[h] = True
        st.place(a, h)
        host_of[c] = h
    return Placement.from_arrays(inst, host_of)


__all__ = ["MULTI_NODE_CANDIDATES", "THRESHOLD", "cluster_autoscaler", "karpenter", "provision",
           "utilisation"]
