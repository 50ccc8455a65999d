"""GPU fragmentation of a node and of a cluster, as defined by the FGD paper.

Q. Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
Gradient Descent", USENIX ATC '23 (Sec. 3-4). The definitions below were read from the authors'
public simulator, github.com/hkust-adsl/kubernetes-scheduler-simulator @ 8f3d641 (Apache-2.0):
``pkg/utils/frag.go`` (``GetNodePodFrag``, ``NodeGpuShareFragAmount``, ``GetTypicalPods``),
``pkg/type/resource.go`` (``PodResource``, ``NodeResource.Sub``) and ``pkg/simulator/analysis.go``
(``ClusterGpuFragReport``). The code here is written from those definitions, not copied.

Definitions
-----------
A **task shape** is what a task asks for: its demand on the *fit resources* (the simulator uses
CPU only: its ``PodResource`` has no memory), ``k`` GPU cards, a per-card GPU share ``g`` (a whole
card when the task takes its cards whole) and the card models it accepts. A CPU-only shape has
``k = 0``.

The **fragmentation of a node with respect to one shape** (``F_n(m)`` in the paper) is the part of
the node's idle GPU capacity that a task of this shape cannot use. With ``free_c`` the free GPU
share of card ``c`` and ``idle = sum_c free_c``:

* the shape asks for no GPU (CPU-only task): ``idle`` — no idle GPU can serve it (the simulator's
  ``XL``/``XR`` cases);
* the node's GPU model is not accepted by the shape: ``idle`` (``NoAccess``);
* the node cannot host the task — its free fit resources are below the demand (``Q4``), or fewer
  than ``k`` cards have ``free_c >= g`` (``Q1``/``Q2``): ``idle``;
* otherwise the task fits (``Q3``): ``sum of free_c over the cards with free_c < g`` — the partial
  cards too small for it.

A whole-card shape needs ``free_c >=`` the card's capacity (an empty card), so partially used cards
are fragments for it.

The **expected fragmentation of a node** is the popularity-weighted mean over the workload's shapes,
``F_n = sum_m p_m F_n(m)``, and the **cluster fragmentation** is ``sum_n F_n``. The **fragmentation
rate** is cluster fragmentation / cluster idle GPU. All amounts are in the unit of the first GPU
resource (``gpu_milli`` in openb: 1000 per card).

**Shape distribution** (``GetTypicalPods`` with the paper's experiment settings: CPU-only pods
included, popularity threshold 95%, step 1, no GPU weighting): tasks of the pod list are grouped by
shape and counted; shapes are ranked by count, most popular first (ties: the larger shape first,
compared by demand, per-card share, cards, models); the most popular shapes are kept until they
cover at least ``threshold`` of the tasks, and their counts are normalised to sum to 1.

The FGD policy itself (:mod:`policies.gpu`) places each task on the node and cards that minimise
the increase of ``F_n``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np

from packing.feasibility.kernels import fits_c, gpu_arrays
from packing.feasibility.predicates import ClusterState, fits
from packing.model.instance import Instance

DEFAULT_THRESHOLD = 0.95
"""Popularity threshold of the shape distribution (the paper's experiments: 95%)."""


@dataclass(frozen=True)
class ShapeDistribution:
    """The workload's task shapes and their popularity (see the module docstring).

    Attributes:
        fit_resources: indices of the host resources a task must fit on, shape ``(n_fit,)``.
        demand: demand of each shape on the fit resources, shape ``(n_shapes, n_fit)``.
        gpu_cards: GPU cards per task, shape ``(n_shapes,)`` int64 (0: CPU-only shape).
        gpu_share: per-card GPU share (first GPU resource), shape ``(n_shapes,)``; ``inf`` for a
            shape that takes its cards whole, 0 for a CPU-only shape.
        type_ok: whether each host type's card model is accepted, shape ``(n_shapes, n_types)`` bool.
        weight: popularity of each shape, shape ``(n_shapes,)``, summing to 1.
        apps: the apps of each shape (indices into ``instance.apps``).
    """

    fit_resources: np.ndarray
    demand: np.ndarray
    gpu_cards: np.ndarray
    gpu_share: np.ndarray
    type_ok: np.ndarray
    weight: np.ndarray
    apps: tuple[tuple[int, ...], ...]

    @property
    def n_shapes(self) -> int:
        """Number of shapes kept."""
        return len(self.weight)


def resource_indices(instance: Instance, names: Sequence[str] | None) -> np.ndarray:
    """Indices of the named host resources (``None``: all of them), shape ``(n,)`` int64.

    Raises:
        ValueError: a name that is not a resource of the instance.
    """
    if names is None:
        return np.arange(instance.n_resources, dtype=np.int64)
    idx = []
    for n in names:
        if n not in instance.resources:
            raise ValueError(f"unknown resource {n!r}; the instance has {', '.join(instance.resources)}")
        idx.append(instance.resources.index(n))
    return np.array(idx, dtype=np.int64)


def shape_distribution(instance: Instance, counts: np.ndarray | None = None, *,
                       threshold: float = DEFAULT_THRESHOLD,
                       fit_resources: Sequence[str] | None = None) -> ShapeDistribution:
    """The shape distribution of a workload (see the module docstring).

    Args:
        instance: the instance (apps give the shapes).
        counts: tasks per app, shape ``(n_apps,)`` (default: ``instance.counts``, the pod list).
        threshold: keep the most popular shapes until they cover this share of the tasks, in (0, 1].
        fit_resources: names of the resources a task must fit on (default: all); the FGD simulator
            uses ``("cpu_milli",)``.

    Raises:
        ValueError: a bad threshold or counts of the wrong shape. A workload without tasks has
            no shape (an empty distribution: every node's fragmentation is 0).
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    inst = instance
    c = np.asarray(inst.counts if counts is None else counts, dtype=np.float64)
    if c.shape != (inst.n_apps,):
        raise ValueError(f"counts must have shape ({inst.n_apps},), got {c.shape}")
    fit = resource_indices(inst, fit_resources)
    gdem = inst.gpu_demand[:, 0] if inst.gpu_resources else np.zeros(inst.n_apps)
    model_ok = inst.type_allowed
    groups: dict[tuple[object, ...], list[int]] = {}
    for a, app in enumerate(inst.apps):
        if c[a] <= 0:
            continue
        per_card = float(gdem[a]) if app.gpu_cards else 0.0
        key = (tuple(float(x) for x in inst.demand[a, fit]), per_card, int(app.gpu_cards),
               tuple(model_ok[a].tolist()) if model_ok is not None else ())
        groups.setdefault(key, []).append(a)
    total = float(c.sum())
    items = [(float(c[members].sum()), key, members) for key, members in groups.items()]
    # most popular first; ties: the larger shape first (the simulator's reverse sort)
    items.sort(key=lambda t: (t[0], t[1]), reverse=True)
    kept: list[tuple[float, tuple[object, ...], list[int]]] = []
    cum = 0.0
    for it in items:
        kept.append(it)
        cum += it[0]
        if cum >= threshold * total - 1e-9 * total:
            break
    n_types = len(inst.host_types)
    demand = np.array([k[0] for _, k, _ in kept], dtype=np.float64).reshape(len(kept), len(fit))
    share = np.array([k[1] for _, k, _ in kept], dtype=np.float64)
    cards = np.array([k[2] for _, k, _ in kept], dtype=np.int64)
    type_ok = np.ones((len(kept), n_types), dtype=bool)
    if model_ok is not None:
        for i, (_, _, members) in enumerate(kept):
            type_ok[i] = model_ok[members[0]]
    weight = np.array([n for n, _, _ in kept], dtype=np.float64)
    if len(weight):
        weight /= weight.sum()
    apps = tuple(tuple(m) for _, _, m in kept)
    for arr in (fit, demand, share, cards, type_ok, weight):
        arr.setflags(write=False)
    return ShapeDistribution(fit, demand, cards, share, type_ok, weight, apps)


def shape_fragmentation(free: np.ndarray, card_free: np.ndarray, card_cap: np.ndarray,
                        host_type: np.ndarray, dist: ShapeDistribution) -> np.ndarray:
    """Fragmentation of each node state with respect to each shape, ``F_n(m)``.

    Args:
        free: free capacity on the fit resources, shape ``(m, n_fit)``.
        card_free: free GPU share per card (0 for cards the node does not have), shape ``(m, G)``.
        card_cap: per-card GPU capacity of each node, shape ``(m,)``.
        host_type: host type index of each node, shape ``(m,)``.
        dist: the shape distribution.

    Returns:
        Shape ``(m, n_shapes)``: the idle GPU of the node that a task of the shape cannot use.
    """
    card_free = np.asarray(card_free, dtype=np.float64)
    m = card_free.shape[0]
    idle = card_free.sum(axis=1)  # (m,)
    if dist.n_shapes == 0 or m == 0:
        return np.zeros((m, dist.n_shapes))
    share = dist.gpu_share
    need = np.where(np.isinf(share)[None, :], np.asarray(card_cap, np.float64)[:, None],
                    share[None, :])  # (m, S)
    card_ok = fits(need[:, :, None], card_free[:, None, :]) & (card_free[:, None, :] > 0)  # (m, S, G)
    n_ok = card_ok.sum(axis=2)  # (m, S)
    small = np.where(card_ok, 0.0, card_free[:, None, :]).sum(axis=2)  # (m, S)
    res_ok = fits(dist.demand[None, :, :], np.asarray(free, np.float64)[:, None, :]).all(axis=2)
    access = dist.type_ok[:, np.asarray(host_type, dtype=np.int64)].T  # (m, S)
    satisfied = (dist.gpu_cards[None, :] > 0) & access & res_ok & (n_ok >= dist.gpu_cards[None, :])
    return np.where(satisfied, small, idle[:, None])


@numba.njit(cache=True, inline="always")
def node_frag(free, card_free, n_cards, card_cap, htype, s_demand, s_cards, s_share, s_type_ok,
              s_weight):  # pragma: no cover - compiled
    """Expected fragmentation of one node state (compiled; the one definition of ``F_n``).

    ``free`` ``(n_fit,)`` and ``card_free`` ``(>= n_cards,)`` are the node's free fit resources and
    free share per card, ``n_cards`` its card count, ``card_cap`` its per-card capacity, ``htype`` its
    host type; the ``s_*`` arrays are the :class:`ShapeDistribution` fields (``demand``, ``gpu_cards``,
    ``gpu_share``, ``type_ok``, ``weight``). Shapes are summed in order: ``sum_m p_m F_n(m)``.
    """
    idle = 0.0
    for c in range(n_cards):
        idle += card_free[c]
    total = 0.0
    for m in range(s_weight.shape[0]):
        f = idle
        k = s_cards[m]
        if k > 0 and s_type_ok[m, htype]:
            res_ok = True
            for r in range(free.shape[0]):
                if not fits_c(s_demand[m, r], free[r]):
                    res_ok = False
                    break
            if res_ok:
                need = card_cap if np.isinf(s_share[m]) else s_share[m]
                n_ok = 0
                small = 0.0
                for c in range(n_cards):
                    fc = card_free[c]
                    if fc > 0 and fits_c(need, fc):
                        n_ok += 1
                    else:
                        small += fc
                if n_ok >= k:
                    f = small
        total += s_weight[m] * f
    return total


@numba.njit(cache=True, inline="always")
def node_frag_mix(free, card_free, n_cards, card_cap, htype, s_demand, s_cards, s_share, s_type_ok,
                  s_weight, params):  # pragma: no cover - compiled
    """A blend of FGD's ``F_n`` and the *packed* fragmentation of one node state (compiled).

    ``params`` = ``(lam, check_0, ..., check_{n_fit-1})``. The result is
    ``sum_m p_m ((1 - lam) F_n(m) + lam P_n(m))`` where ``F_n(m)`` is :func:`node_frag`'s term,
    with the single-task fit tested only on the fit resources whose ``check_r`` is nonzero (FGD:
    CPU only), and ``P_n(m)`` is the idle GPU that a stream of tasks of shape ``m`` alone could not
    use: ``idle - n k g``, where ``n`` is how many such tasks the node can still take counting every
    fit resource (``floor(free_r / d_r)``) and its cards (``sum_c floor(free_c / g)``, whole cards:
    the empty ones, divided by ``k``); ``idle`` when the shape cannot use the node. ``P_n`` sees GPU
    stranded by CPU or memory that ``F_n`` misses (a node with four free cards and CPU for one task).
    ``lam = 0`` with only CPU checked is exactly :func:`node_frag` on a CPU-only distribution.
    """
    lam = params[0]
    idle = 0.0
    for c in range(n_cards):
        idle += card_free[c]
    total = 0.0
    for m in range(s_weight.shape[0]):
        f = idle
        p = idle
        k = s_cards[m]
        if k > 0 and s_type_ok[m, htype]:
            res_ok = True
            n_res = np.inf
            for r in range(free.shape[0]):
                if params[1 + r] != 0.0 and not fits_c(s_demand[m, r], free[r]):
                    res_ok = False
                if s_demand[m, r] > 0:
                    q = np.floor((free[r] + 1e-9 * max(1.0, abs(free[r]))) / s_demand[m, r])
                    if q < n_res:
                        n_res = q
            whole = np.isinf(s_share[m])
            need = card_cap if whole else s_share[m]
            n_ok = 0
            small = 0.0
            slots = 0.0
            for c in range(n_cards):
                fc = card_free[c]
                if fc > 0 and fits_c(need, fc):
                    n_ok += 1
                    if whole:
                        slots += 1.0
                    elif need > 0:
                        slots += np.floor((fc + 1e-9 * max(1.0, need)) / need)
                else:
                    small += fc
            if res_ok and n_ok >= k:
                f = small
            n_task = min(np.floor(slots / k), n_res)
            if n_task > 0 and need > 0:  # a zero share uses no idle GPU: p stays idle
                p = max(idle - n_task * k * need, 0.0)
        total += s_weight[m] * ((1.0 - lam) * f + lam * p)
    return total


@numba.njit(cache=True)
def _fragmentation_mix(free, card_free, n_cards, card_cap, host_type, s_demand, s_cards, s_share,
                       s_type_ok, s_weight, params):  # pragma: no cover - compiled
    out = np.empty(free.shape[0])
    for i in range(free.shape[0]):
        out[i] = node_frag_mix(free[i], card_free[i], n_cards[i], card_cap[i], host_type[i], s_demand,
                               s_cards, s_share, s_type_ok, s_weight, params)
    return out


def fragmentation_mix(free: np.ndarray, card_free: np.ndarray, card_cap: np.ndarray,
                      host_type: np.ndarray, dist: ShapeDistribution, params: np.ndarray) -> np.ndarray:
    """:func:`node_frag_mix` of each node state, shape ``(m,)``.

    Args:
        free: free fit resources per node, shape ``(m, n_fit)``.
        card_free: free share per card, shape ``(m, G)``.
        card_cap: per-card capacity per node, shape ``(m,)``.
        host_type: host type per node, shape ``(m,)``.
        dist: the shape distribution.
        params: ``(lam, check per fit resource)``, shape ``(1 + n_fit,)``.
    """
    card_free = np.ascontiguousarray(card_free, dtype=np.float64)
    m = card_free.shape[0]
    if m == 0:
        return np.zeros(0)
    free = np.ascontiguousarray(np.asarray(free, dtype=np.float64).reshape(m, -1))
    n_cards = np.full(m, card_free.shape[1], dtype=np.int64)
    f = _fragmentation_mix(free, card_free, n_cards,  # type: ignore[call-arg]
                           np.ascontiguousarray(card_cap, dtype=np.float64),
                           np.ascontiguousarray(host_type, dtype=np.int64), *dist_arrays(dist),
                           np.array(params, dtype=np.float64))
    return np.asarray(f)


@numba.njit(cache=True)
def _fragmentation(free, card_free, n_cards, card_cap, host_type, s_demand, s_cards, s_share,
                   s_type_ok, s_weight):  # pragma: no cover - compiled
    out = np.empty(free.shape[0])
    for i in range(free.shape[0]):
        out[i] = node_frag(free[i], card_free[i], n_cards[i], card_cap[i], host_type[i], s_demand,
                           s_cards, s_share, s_type_ok, s_weight)
    return out


def dist_arrays(dist: ShapeDistribution) -> tuple[np.ndarray, ...]:
    """``(demand, gpu_cards, gpu_share, type_ok, weight)`` of ``dist`` as writable contiguous copies.

    Copies give the compiled functions one array type, whatever the distribution's flags.
    """
    return (np.array(dist.demand, dtype=np.float64, order="C"),
            np.array(dist.gpu_cards, dtype=np.int64, order="C"),
            np.array(dist.gpu_share, dtype=np.float64, order="C"),
            np.array(dist.type_ok, dtype=np.bool_, order="C"),
            np.array(dist.weight, dtype=np.float64, order="C"))


@numba.njit(cache=True)
def _record(seq, hosts, cards, fit, demand, capacity, used, card_used, card_cap, n_cards, card_load,
            whole, host_type, s_demand, s_cards, s_share, s_type_ok, s_weight, alloc,
            frag):  # pragma: no cover - compiled
    n_h = capacity.shape[0]
    g_max = max(card_used.shape[1], 1)
    cf = np.zeros(g_max)
    free = np.zeros(fit.shape[0])
    nf = np.zeros(n_h)
    total_alloc = 0.0
    for h in range(n_h):
        for c in range(card_used.shape[1]):
            cf[c] = card_cap[h, 0] - card_used[h, c, 0] if c < n_cards[h] else 0.0
            if c < n_cards[h]:
                total_alloc += card_used[h, c, 0]
        for i in range(fit.shape[0]):
            free[i] = capacity[h, fit[i]] - used[h, fit[i]]
        nf[h] = node_frag(free, cf, n_cards[h], card_cap[h, 0], host_type[h], s_demand, s_cards, s_share,
                          s_type_ok, s_weight)
    for t in range(seq.shape[0]):
        h = hosts[t]
        a = seq[t]
        if h >= 0:
            for r in range(used.shape[1]):
                used[h, r] += demand[a, r]
            for j in range(cards.shape[1]):
                c = cards[t, j]
                if c < 0:
                    continue
                for r in range(card_used.shape[2]):
                    ld = card_cap[h, r] if whole[a] else card_load[a, r]
                    card_used[h, c, r] += ld
                    if r == 0:
                        total_alloc += ld
            for c in range(card_used.shape[1]):
                cf[c] = card_cap[h, 0] - card_used[h, c, 0] if c < n_cards[h] else 0.0
            for i in range(fit.shape[0]):
                free[i] = capacity[h, fit[i]] - used[h, fit[i]]
            nf[h] = node_frag(free, cf, n_cards[h], card_cap[h, 0], host_type[h], s_demand, s_cards,
                              s_share, s_type_ok, s_weight)
        alloc[t] = total_alloc
        acc = 0.0
        for hh in range(n_h):
            acc += nf[hh]
        frag[t] = acc


def placement_record(state: ClusterState, seq: np.ndarray, hosts: np.ndarray, cards: np.ndarray,
                     dist: ShapeDistribution) -> tuple[np.ndarray, np.ndarray]:
    """Allocated GPU and cluster fragmentation after each arrival of a replayed episode.

    Args:
        state: the start state (not modified).
        seq: app per arrival, shape ``(n,)``.
        hosts: host per arrival (-1: rejected), shape ``(n,)``.
        cards: cards per arrival, shape ``(n, G')`` (-1 padded).
        dist: the shape distribution.

    Returns:
        ``(allocated, frag)``: allocated share of the first GPU resource and cluster fragmentation
        (:func:`cluster_fragmentation`) after each arrival, both shape ``(n,)``.
    """
    n = len(seq)
    alloc = np.zeros(n)
    frag = np.zeros(n)
    inst = state.instance
    if n == 0 or not inst.gpu_resources or not inst.max_gpus:
        return alloc, frag
    st = state.copy()
    card_used, card_cap, n_cards, _, load, whole, _, host_type = gpu_arrays(st)
    _record(np.ascontiguousarray(seq, dtype=np.int64),  # type: ignore[call-arg]
            np.ascontiguousarray(hosts, dtype=np.int64),
            np.ascontiguousarray(cards, dtype=np.int64), np.array(dist.fit_resources, dtype=np.int64),
            np.ascontiguousarray(inst.demand), np.ascontiguousarray(st.capacity), st.used, card_used,
            card_cap, n_cards, load, whole, host_type, *dist_arrays(dist), alloc, frag)
    return alloc, frag


def fragmentation(free: np.ndarray, card_free: np.ndarray, card_cap: np.ndarray,
                  host_type: np.ndarray, dist: ShapeDistribution) -> np.ndarray:
    """Expected fragmentation ``F_n = sum_m p_m F_n(m)`` of each node state, shape ``(m,)``.

    Arguments as in :func:`shape_fragmentation` (its values, weighted); computed by the compiled
    :func:`node_frag`, which the compiled GPU policies call too, so both paths agree to the bit.
    Cards with zero free share count as absent (they add nothing to either sum).
    """
    card_free = np.ascontiguousarray(card_free, dtype=np.float64)
    m = card_free.shape[0]
    if m == 0:
        return np.zeros(0)
    free = np.ascontiguousarray(np.asarray(free, dtype=np.float64).reshape(m, -1))
    n_cards = np.full(m, card_free.shape[1], dtype=np.int64)
    f = _fragmentation(free, card_free, n_cards,
                       np.ascontiguousarray(card_cap, dtype=np.float64),
                       np.ascontiguousarray(host_type, dtype=np.int64), *dist_arrays(dist))
    return np.asarray(f)


def node_arrays(state: ClusterState, fit: np.ndarray,
                hosts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The arrays :func:`fragmentation` takes, read from a cluster state.

    Args:
        state: the cluster state.
        fit: indices of the fit resources, shape ``(n_fit,)``.
        hosts: host indices, shape ``(m,)`` (default: every host).

    Returns:
        ``(free, card_free, card_cap, host_type)`` of shapes ``(m, n_fit)``, ``(m, G)``, ``(m,)``,
        ``(m,)``; ``card_free`` is 0 on cards a host does not have and without GPU resources.
    """
    inst = state.instance
    h = np.arange(inst.n_hosts) if hosts is None else np.asarray(hosts, dtype=np.int64)
    free = state.capacity[h][:, fit] - state.used[h][:, fit]
    if inst.gpu_resources and inst.max_gpus:
        cap = state.card_capacity[h, 0]
        card_free = np.where(state.card_exists[h], cap[:, None] - state.card_used[h, :, 0], 0.0)
    else:
        cap = np.zeros(len(h))
        card_free = np.zeros((len(h), max(inst.max_gpus, 1)))
    return free, card_free, cap, inst.host_type_of[h]


def node_fragmentation(state: ClusterState, dist: ShapeDistribution,
                       hosts: np.ndarray | None = None) -> np.ndarray:
    """Expected fragmentation ``F_n`` of each host of a cluster state, shape ``(m,)``.

    Args:
        state: the cluster state.
        dist: the shape distribution.
        hosts: host indices (default: every host).
    """
    return fragmentation(*node_arrays(state, dist.fit_resources, hosts), dist)


def idle_gpu(state: ClusterState) -> np.ndarray:
    """Idle GPU share (first GPU resource) of each host, shape ``(n_hosts,)``."""
    return node_arrays(state, np.zeros(0, dtype=np.int64))[1].sum(axis=1)


def cluster_fragmentation(state: ClusterState, dist: ShapeDistribution) -> float:
    """Cluster fragmentation: the sum of :func:`node_fragmentation` over all hosts."""
    return float(node_fragmentation(state, dist).sum())


def fragmentation_rate(state: ClusterState, dist: ShapeDistribution) -> float:
    """Cluster fragmentation / cluster idle GPU (0 when no GPU is idle)."""
    idle = float(idle_gpu(state).sum())
    return cluster_fragmentation(state, dist) / idle if idle > 0 else 0.0


__all__ = ["DEFAULT_THRESHOLD", "ShapeDistribution", "cluster_fragmentation", "dist_arrays",
           "fragmentation", "fragmentation_mix", "fragmentation_rate", "idle_gpu", "node_arrays", "node_frag",
           "node_frag_mix",
           "node_fragmentation", "placement_record", "resource_indices", "shape_distribution",
           "shape_fragmentation"]
