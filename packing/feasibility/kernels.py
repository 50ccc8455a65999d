"""Compiled (numba) feasibility: the predicates of :mod:`packing.feasibility.predicates` over all hosts, fast.

The functions here call the *same* predicates as :meth:`packing.feasibility.predicates.ClusterState.mask` —
:func:`packing.feasibility.predicates.fits`, :func:`~packing.feasibility.predicates.over_cap` and
:func:`~packing.feasibility.predicates.rule_broken`, compiled with ``numba.njit`` — so feasibility keeps one
definition. The episode kernels cover the common case: no GPU cards and no host-type restriction
(any number of rules); :func:`supports` tells. GPU cards and host-type restrictions
(``Instance.type_allowed``: card models, node selection, taints) are covered by
:func:`feasible_gpu` (card-level fit: each of a container's ``k`` cards must take its per-card share,
a whole-card container needs empty cards) with the arrays of :func:`gpu_arrays`; :func:`fast_mask`
and :func:`host_checker` use it for every instance without topology rules (``App.domain_caps``,
``App.spreads``); with them they use :meth:`packing.feasibility.predicates.ClusterState.mask` itself.

* :func:`feasible` — one (host, app) pair; the building block of every compiled loop (the policies'
  scoring kernels call it too);
* :func:`feasible_gpu` — the same plus GPU cards and allowed host types (the GPU episode kernels
  call it);
* :func:`fast_mask` / :func:`host_checker` — the mask of one app, or a checker for one pair;
* :func:`first_fit` — the lowest-index feasible host for each container of a sequence (a pure
  feasibility scan: the solvers' first-fit-decreasing uses it on large instances).
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

from packing.feasibility.predicates import ClusterState, fits, over_cap, rule_broken

fits_c = numba.njit(cache=True)(fits)
""":func:`packing.feasibility.predicates.fits`, compiled."""
over_cap_c = numba.njit(cache=True)(over_cap)
""":func:`packing.feasibility.predicates.over_cap`, compiled."""
rule_broken_c = numba.njit(cache=True)(rule_broken)
""":func:`packing.feasibility.predicates.rule_broken`, compiled."""


def supports(state: ClusterState) -> bool:
    """Whether the compiled path covers this instance (no GPU cards, no host-type restriction)."""
    return state.simple


def rule_tables(state: ClusterState) -> tuple[np.ndarray, ...]:
    """CSR tables of the rules per app: the state's own (see ``ClusterState.rule_tables``)."""
    return state.rule_tables


@numba.njit(cache=True, inline="always")
def feasible(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k,
             out_ptr, out_cols, out_k):  # pragma: no cover - compiled
    """Whether host ``h`` can take one more container of app ``a`` (``ClusterState.mask(a)[h]``).

    Arrays: ``demand`` ``(n_apps, n_resources)``, ``capacity`` and ``used`` ``(n_hosts, n_resources)``,
    ``count`` ``(n_hosts, n_tracked)``, ``col`` and ``cap`` ``(n_apps,)``, then the six CSR rule
    tables of :attr:`ClusterState.rule_tables`.
    """
    for r in range(demand.shape[1]):
        if not fits_c(used[h, r] + demand[a, r], capacity[h, r]):
            return False
    c = col[a]
    if c >= 0:
        after = count[h, c] + 1
        if over_cap_c(after, cap[a]):
            return False
        for i in range(in_ptr[a], in_ptr[a + 1]):
            if rule_broken_c(count[h, in_cols[i]], after, in_k[i]):
                return False
        for i in range(out_ptr[a], out_ptr[a + 1]):
            if rule_broken_c(after, count[h, out_cols[i]], out_k[i]):
                return False
    return True


@numba.njit(cache=True, inline="always")
def place(h, a, demand, used, count, col, n_on):  # pragma: no cover - compiled
    """Put one container of app ``a`` on host ``h`` (``ClusterState.place`` without its checks).

    Arrays as in :func:`feasible`, and ``n_on`` ``(n_hosts,)``, containers per host. Callers test
    :func:`feasible` first.
    """
    for r in range(demand.shape[1]):
        used[h, r] += demand[a, r]
    c = col[a]
    if c >= 0:
        count[h, c] += 1
    n_on[h] += 1


def gpu_arrays(state: ClusterState) -> tuple[np.ndarray, ...]:
    """The GPU arrays :func:`feasible_gpu` takes, read from ``state`` (live views where mutable).

    Returns:
        ``(card_used, card_cap, n_cards, k, card_load, whole, type_ok, host_type)``: load per host,
        card and GPU resource ``(n_hosts, G, n_gpu_res)`` (the state's own array, updated in place by
        kernels), per-card capacity per host ``(n_hosts, n_gpu_res)``, cards per host ``(n_hosts,)``,
        cards per container of each app ``(n_apps,)``, per-card load of each app ``(n_apps, n_gpu_res)``
        (ignored for whole-card apps), whole-card flag per app ``(n_apps,)`` bool, whether each app
        may run on each host type (``Instance.type_allowed``) ``(n_apps, n_types)`` bool, host
        type per host ``(n_hosts,)``.
    """
    inst = state.instance
    n_g = len(inst.gpu_resources)
    load = np.where(np.isfinite(inst.gpu_demand), inst.gpu_demand, 0.0).reshape(inst.n_apps, n_g)
    whole = np.array([a.gpu_whole for a in inst.apps], dtype=np.bool_)
    ok = inst.type_allowed
    type_ok = np.ones((inst.n_apps, len(inst.host_types)), dtype=np.bool_) if ok is None else ok
    return (state.card_used, np.ascontiguousarray(state.card_capacity, dtype=np.float64),
            np.ascontiguousarray(inst.host_gpus, dtype=np.int64),
            np.ascontiguousarray(inst.gpu_cards, dtype=np.int64), np.ascontiguousarray(load),
            whole, np.ascontiguousarray(type_ok, dtype=np.bool_),
            np.ascontiguousarray(inst.host_type_of, dtype=np.int64))


@numba.njit(cache=True, inline="always")
def card_fits(h, c, a, card_used, card_cap, card_load, whole):  # pragma: no cover - compiled
    """Whether card ``c`` of host ``h`` can take one card-share of app ``a`` (every GPU resource)."""
    for r in range(card_used.shape[2]):
        load = card_cap[h, r] if whole[a] else card_load[a, r]
        if not fits_c(card_used[h, c, r] + load, card_cap[h, r]):
            return False
    return True


@numba.njit(cache=True, inline="always")
def feasible_gpu(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k, out_ptr,
                 out_cols, out_k, card_used, card_cap, n_cards, k, card_load, whole, type_ok,
                 host_type):  # pragma: no cover - compiled
    """:func:`feasible` plus GPU cards and allowed host types: ``ClusterState.mask(a)[h]`` always.

    The first fourteen arguments are :func:`feasible`'s, the last eight :func:`gpu_arrays`'.
    """
    if not type_ok[a, host_type[h]]:
        return False
    if not feasible(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k, out_ptr,
                    out_cols, out_k):
        return False
    need = k[a]
    if need == 0:
        return True
    n_ok = 0
    for c in range(n_cards[h]):
        if card_fits(h, c, a, card_used, card_cap, card_load, whole):
            n_ok += 1
            if n_ok >= need:
                return True
    return False


@numba.njit(cache=True, inline="always")
def can_take_any(h, dmin, capacity, used):  # pragma: no cover - compiled
    """False only if no container of any app can fit on ``h`` (some resource lacks even ``dmin``)."""
    for r in range(dmin.shape[0]):
        if not fits_c(used[h, r] + dmin[r], capacity[h, r]):
            return False
    return True


@numba.njit(cache=True, inline="always")
def min_demand(demand):  # pragma: no cover - compiled
    """The smallest demand of any app per resource, shape ``(n_resources,)``."""
    n_r = demand.shape[1]
    dmin = np.empty(n_r)
    for r in range(n_r):
        dmin[r] = demand[:, r].min()
    return dmin


@numba.njit(cache=True, inline="always")
def init_candidates(dmin, capacity, used, n_on, host_type, active, next_empty,
                    last_empty):  # pragma: no cover - compiled
    """Candidate hosts of the compiled loops, set up from the state.

    The candidates are the hosts in use that can take ``dmin``, and per host type the lowest- and
    highest-index unused host (``n_hosts`` / -1 when a type has none). Fills ``active`` (its first
    ``n_active`` entries), ``next_empty`` and ``last_empty`` (shape ``(n_types,)``) and returns
    ``(n_active, n_used)``. Loads only grow in these loops, so a host that cannot take ``dmin`` is
    dropped for good, and unused hosts of a type differ only by index.
    """
    n_h = capacity.shape[0]
    n_active = 0
    n_used = 0
    next_empty[:] = n_h
    last_empty[:] = -1
    for h in range(n_h):
        if n_on[h] > 0:
            n_used += 1
            if can_take_any(h, dmin, capacity, used):
                active[n_active] = h
                n_active += 1
        else:
            last_empty[host_type[h]] = h
            if next_empty[host_type[h]] == n_h:
                next_empty[host_type[h]] = h
    return n_active, n_used


@numba.njit(cache=True, inline="always")
def update_candidates(h, was_empty, dmin, capacity, used, n_on, host_type, active, n_active,
                      next_empty, last_empty):  # pragma: no cover - compiled
    """Keep the candidates of :func:`init_candidates` after a container was placed on ``h``.

    Call after ``used`` and ``n_on`` were updated; ``was_empty`` says whether ``h`` ran nothing
    before. Returns the new ``n_active``.
    """
    n_h = capacity.shape[0]
    if was_empty:
        active[n_active] = h
        n_active += 1
        ty = host_type[h]
        if next_empty[ty] == h:
            nxt = h + 1
            while nxt < n_h and (host_type[nxt] != ty or n_on[nxt] > 0):
                nxt += 1
            next_empty[ty] = nxt
        if last_empty[ty] == h:
            prv = h - 1
            while prv >= 0 and (host_type[prv] != ty or n_on[prv] > 0):
                prv -= 1
            last_empty[ty] = prv
    if not can_take_any(h, dmin, capacity, used):
        for i in range(n_active):
            if active[i] == h:
                active[i] = active[n_active - 1]
                n_active -= 1
                break
    return n_active


@numba.njit(cache=True)
def _mask(a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k, out_ptr, out_cols,
          out_k):  # pragma: no cover - compiled
    n_h = capacity.shape[0]
    out = np.zeros(n_h, dtype=np.bool_)
    for h in range(n_h):
        out[h] = feasible(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k,
                          out_ptr, out_cols, out_k)
    return out


@numba.njit(cache=True)
def _mask_gpu(a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k, out_ptr, out_cols,
              out_k, card_used, card_cap, n_cards, k, card_load, whole, type_ok,
              host_type):  # pragma: no cover - compiled
    n_h = capacity.shape[0]
    out = np.zeros(n_h, dtype=np.bool_)
    for h in range(n_h):
        out[h] = feasible_gpu(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k,
                              out_ptr, out_cols, out_k, card_used, card_cap, n_cards, k, card_load,
                              whole, type_ok, host_type)
    return out


@numba.njit(cache=True)
def _feasible_host_gpu(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k, out_ptr,
                       out_cols, out_k, card_used, card_cap, n_cards, k, card_load, whole, type_ok,
                       host_type):  # pragma: no cover - compiled
    return feasible_gpu(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k, out_ptr,
                        out_cols, out_k, card_used, card_cap, n_cards, k, card_load, whole, type_ok,
                        host_type)


@numba.njit(cache=True)
def _feasible_host(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k, out_ptr,
                   out_cols, out_k):  # pragma: no cover - compiled
    return feasible(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k,
                    out_ptr, out_cols, out_k)


@numba.njit(cache=True)
def first_fit_kernel(seq, demand, capacity, used, count, n_on, col, cap, in_ptr, in_cols, in_k,
               out_ptr, out_cols, out_k, host_type, n_types, host_out):  # pragma: no cover - compiled
    """Lowest-index feasible host per container of ``seq``; mutates ``used``, ``count``, ``n_on``.

    The compiled core of :func:`first_fit`, on the arrays of a :class:`ClusterState` (callers that
    keep their own arrays, e.g. ``solvers.search.spread``, call it directly).

    Candidates are the hosts in use that can still take the smallest demand (loads only grow, so a
    host that cannot is dropped for good) and the lowest-index unused host of each type: the result
    equals scanning every host in index order.
    """
    n_h = capacity.shape[0]
    dmin = min_demand(demand)
    active = np.empty(n_h, dtype=np.int64)
    next_empty = np.empty(n_types, dtype=np.int64)
    last_empty = np.empty(n_types, dtype=np.int64)
    n_active, _ = init_candidates(dmin, capacity, used, n_on, host_type, active, next_empty, last_empty)
    for t in range(seq.shape[0]):
        a = seq[t]
        best = n_h
        for i in range(n_active + n_types):
            h = active[i] if i < n_active else next_empty[i - n_active]
            if h >= best:
                continue
            if feasible(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k,
                        out_ptr, out_cols, out_k):
                best = h
        if best == n_h:
            host_out[t] = -1
            continue
        h = best
        host_out[t] = h
        was_empty = n_on[h] == 0
        place(h, a, demand, used, count, col, n_on)
        n_active = update_candidates(h, was_empty, dmin, capacity, used, n_on, host_type, active,
                                     n_active, next_empty, last_empty)


def host_checker(state: ClusterState) -> Callable[[int, int], bool]:
    """A function ``(app, host) -> bool``: can ``host`` take one more container of ``app`` now?

    Equal to ``state.mask(app)[host]`` (compiled; GPU cards through :func:`feasible_gpu`), but costs
    one host instead of all. It reads ``state`` live, so placements made afterwards count.
    """
    inst = state.instance
    if inst.has_topology:  # domain caps and spread: the step-by-step path

        def ok_topology(app: int, host: int) -> bool:
            return state.can_place(app, host)

        return ok_topology
    demand = np.ascontiguousarray(inst.demand)
    capacity = np.ascontiguousarray(state.capacity)
    cap = inst.cap.astype(np.int64)
    tables = rule_tables(state)
    if not supports(state):
        gpu = gpu_arrays(state)

        def ok_gpu(app: int, host: int) -> bool:
            return bool(_feasible_host_gpu(host, app, demand,  # type: ignore[call-arg]
                                           capacity, state.used, state.count, state.col, cap, *tables,
                                           state.card_used, *gpu[1:]))

        return ok_gpu

    def ok(app: int, host: int) -> bool:
        return bool(_feasible_host(host, app, demand, capacity, state.used, state.count, state.col, cap,
                                   *tables))

    return ok


def fast_mask(state: ClusterState, app: int) -> np.ndarray:
    """The compiled feasibility mask for one container of ``app``, shape ``(n_hosts,)`` bool.

    Equal to ``state.mask(app)`` (tested; GPU cards and models through :func:`feasible_gpu`).
    """
    inst = state.instance
    if inst.has_topology:  # domain caps and spread: the step-by-step path
        return state.mask(app)
    if not supports(state):
        return _mask_gpu(app, np.ascontiguousarray(inst.demand),  # type: ignore[call-arg]
                         np.ascontiguousarray(state.capacity),
                         state.used, state.count, state.col, inst.cap.astype(np.int64),
                         *rule_tables(state), state.card_used, *gpu_arrays(state)[1:])
    return _mask(app, np.ascontiguousarray(inst.demand), np.ascontiguousarray(state.capacity),
                 state.used, state.count, state.col, inst.cap.astype(np.int64),
                 *rule_tables(state))


def first_fit(state: ClusterState, seq: np.ndarray) -> np.ndarray:
    """Place each container of ``seq`` on the lowest-index feasible host, updating ``state``.

    Requires :func:`supports`. Equal to taking ``np.flatnonzero(state.mask(a))[0]`` container by
    container (tested).

    Args:
        state: the start state (modified in place).
        seq: app index per container, shape ``(n,)``.

    Returns:
        The host per container (-1: fits nowhere), shape ``(n,)`` int64.
    """
    if not supports(state):
        raise ValueError("first_fit: the compiled path does not cover GPU cards or GPU models")
    inst = state.instance
    seq = np.ascontiguousarray(seq, dtype=np.int64)
    out = np.empty(len(seq), dtype=np.int64)
    if len(seq):
        first_fit_kernel(seq, np.ascontiguousarray(inst.demand), np.ascontiguousarray(state.capacity),  # type: ignore[call-arg]
                   state.used, state.count, state.n_on, state.col, inst.cap.astype(np.int64),
                   *rule_tables(state), np.ascontiguousarray(inst.host_type_of), len(inst.host_types),
                   out)
    return out


__all__ = ["can_take_any", "card_fits", "fast_mask", "feasible", "feasible_gpu", "first_fit",
           "first_fit_kernel", "fits_c", "gpu_arrays", "host_checker",
           "init_candidates", "min_demand", "over_cap_c", "rule_broken_c", "rule_tables", "supports",
           "update_candidates"]
