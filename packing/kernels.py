"""Compiled (numba) feasibility: the predicates of :mod:`packing.feasibility` over all hosts, fast.

The functions here call the *same* predicates as :meth:`packing.feasibility.ClusterState.mask` —
:func:`packing.feasibility.fits`, :func:`~packing.feasibility.over_cap` and
:func:`~packing.feasibility.rule_broken`, compiled with ``numba.njit`` — so feasibility keeps one
definition. They cover the common case: no GPU cards and no GPU-model constraints (any number of
rules); :func:`supports` tells. Callers fall back to ``ClusterState.mask`` otherwise.

* :func:`feasible` — one (host, app) pair; the building block of every compiled loop (the policies'
  scoring kernels call it too);
* :func:`fast_mask` / :func:`host_checker` — the mask of one app, or a checker for one pair;
* :func:`first_fit` — the lowest-index feasible host for each container of a sequence (a pure
  feasibility scan: the solvers' first-fit-decreasing uses it on large instances).
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

from packing.feasibility import ClusterState, fits, over_cap, rule_broken

fits_c = numba.njit(cache=True)(fits)
""":func:`packing.feasibility.fits`, compiled."""
over_cap_c = numba.njit(cache=True)(over_cap)
""":func:`packing.feasibility.over_cap`, compiled."""
rule_broken_c = numba.njit(cache=True)(rule_broken)
""":func:`packing.feasibility.rule_broken`, compiled."""


def supports(state: ClusterState) -> bool:
    """Whether the compiled path covers this instance (no GPU cards, no GPU-model constraints)."""
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
def can_take_any(h, dmin, capacity, used):  # pragma: no cover - compiled
    """False only if no container of any app can fit on ``h`` (some resource lacks even ``dmin``)."""
    for r in range(dmin.shape[0]):
        if not fits_c(used[h, r] + dmin[r], capacity[h, r]):
            return False
    return True


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
def _feasible_host(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k, out_ptr,
                   out_cols, out_k):  # pragma: no cover - compiled
    return feasible(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k,
                    out_ptr, out_cols, out_k)


@numba.njit(cache=True)
def _first_fit(seq, demand, capacity, used, count, n_on, col, cap, in_ptr, in_cols, in_k,
               out_ptr, out_cols, out_k, host_type, n_types, host_out):  # pragma: no cover - compiled
    """Lowest-index feasible host per container of ``seq``; mutates ``used``, ``count``, ``n_on``.

    Candidates are the hosts in use that can still take the smallest demand (loads only grow, so a
    host that cannot is dropped for good) and the lowest-index unused host of each type: the result
    equals scanning every host in index order.
    """
    n_h = capacity.shape[0]
    n_r = demand.shape[1]
    dmin = np.empty(n_r)
    for r in range(n_r):
        dmin[r] = demand[:, r].min()
    active = np.empty(n_h, dtype=np.int64)
    n_active = 0
    next_empty = np.full(n_types, n_h, dtype=np.int64)
    for h in range(n_h):
        if n_on[h] > 0:
            if can_take_any(h, dmin, capacity, used):
                active[n_active] = h
                n_active += 1
        elif next_empty[host_type[h]] == n_h:
            next_empty[host_type[h]] = h
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
        for r in range(n_r):
            used[h, r] += demand[a, r]
        if col[a] >= 0:
            count[h, col[a]] += 1
        if n_on[h] == 0:
            active[n_active] = h
            n_active += 1
            ty = host_type[h]
            nxt = h + 1
            while nxt < n_h and (host_type[nxt] != ty or n_on[nxt] > 0):
                nxt += 1
            next_empty[ty] = nxt
        n_on[h] += 1
        if not can_take_any(h, dmin, capacity, used):
            for i in range(n_active):
                if active[i] == h:
                    active[i] = active[n_active - 1]
                    n_active -= 1
                    break


def host_checker(state: ClusterState) -> Callable[[int, int], bool]:
    """A function ``(app, host) -> bool``: can ``host`` take one more container of ``app`` now?

    Equal to ``state.mask(app)[host]`` (compiled when :func:`supports` holds, else through the mask),
    but costs one host instead of all. It reads ``state`` live, so placements made afterwards count.
    """
    if not supports(state):
        return lambda app, host: bool(state.mask(app)[host])
    inst = state.instance
    demand = np.ascontiguousarray(inst.demand)
    capacity = np.ascontiguousarray(state.capacity)
    cap = inst.cap.astype(np.int64)
    tables = rule_tables(state)

    def ok(app: int, host: int) -> bool:
        return bool(_feasible_host(host, app, demand, capacity, state.used, state.count, state.col, cap,
                                   *tables))

    return ok


def fast_mask(state: ClusterState, app: int) -> np.ndarray:
    """The compiled feasibility mask for one container of ``app``, shape ``(n_hosts,)`` bool.

    Equal to ``state.mask(app)`` whenever :func:`supports` holds (tested).
    """
    inst = state.instance
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
        _first_fit(seq, np.ascontiguousarray(inst.demand), np.ascontiguousarray(state.capacity),  # type: ignore[call-arg]
                   state.used, state.count, state.n_on, state.col, inst.cap.astype(np.int64),
                   *rule_tables(state), np.ascontiguousarray(inst.host_type_of), len(inst.host_types),
                   out)
    return out


__all__ = ["can_take_any", "fast_mask", "feasible", "first_fit", "fits_c", "host_checker",
           "over_cap_c", "rule_broken_c", "rule_tables", "supports"]
