"""Compiled (numba) scoring kernels: whole episodes of a scoring policy in one compiled loop.

Feasibility is not decided here: every candidate host goes through
:func:`packing.feasibility.kernels.feasible`,
the compiled form of the predicates of :mod:`packing.feasibility.predicates` (one definition). The kernels
cover
the common case: no GPU cards and no GPU-model constraints (any number of rules), see
:func:`packing.feasibility.kernels.supports`. The engine falls back to the general numpy path
(``ClusterState.mask`` + ``ScoringPolicy.scores``) otherwise, and for policies without a kernel.

Score formulas (higher is better), with ``c`` the host capacity, ``u`` its load, ``d`` the demand and
every ratio taken per resource (a resource with zero capacity contributes 0):

===========  ==============================================================
code         score
===========  ==============================================================
FF           0 (ties to the lowest index: first fit)
BF           ``-sum((c - u - d) / c)``  (least normalised residual after placing)
BF_BOTTLE    ``-max((c - u - d) / c)``
WF           ``+sum((c - u - d) / c)``
DOT          ``sum(d / c * (c - u) / c)``  (Panigrahy et al. dot product)
L2           ``-sum(((c - u) / c - d / c) ** 2)``  (Panigrahy et al. L2 norm)
SWARM        ``w . phi`` over the features of :mod:`policies.swarm.features` (same arithmetic order)
===========  ==============================================================

Among hosts with no container, only the first of each host type is scored: the others of that type are
identical, and ties go to the lowest index anyway. Hosts that cannot take even the smallest demand of any
app are skipped. The result is exactly the same as scoring every host (tested against the numpy path).
"""

from __future__ import annotations

import numba
import numpy as np

from packing.feasibility.kernels import feasible as _feasible
from packing.feasibility.kernels import init_candidates as _init_candidates
from packing.feasibility.kernels import min_demand as _min_demand
from packing.feasibility.kernels import rule_tables, supports
from packing.feasibility.kernels import update_candidates as _update_candidates
from packing.feasibility.predicates import ClusterState
from packing.model.instance import Instance
from policies.swarm.features import exclusion_partners

FF, BF, BF_BOTTLE, WF, DOT, L2, SWARM = range(7)


@numba.njit(cache=True, inline="always")
def _sums(h, a, demand, capacity, used):  # pragma: no cover - compiled
    """Per-host sums over resources after placing: (sum resid, max resid, dot, L2, sum util)."""
    s_sum = 0.0
    s_max = -np.inf
    s_dot = 0.0
    s_l2 = 0.0
    u_sum = 0.0
    for r in range(demand.shape[1]):
        c = capacity[h, r]
        if c > 0:
            resid = (c - used[h, r] - demand[a, r]) / c
            dn = demand[a, r] / c
            fb = (c - used[h, r]) / c
        else:
            resid = 0.0
            dn = 0.0
            fb = 0.0
        s_sum += resid
        if resid > s_max:
            s_max = resid
        s_dot += dn * fb
        s_l2 += (fb - dn) ** 2
        u_sum += 1.0 - resid
    return s_sum, s_max, s_dot, s_l2, u_sum


@numba.njit(cache=True, inline="always")
def _score(kind, params, h, a, demand, capacity, used, is_open):  # pragma: no cover - compiled
    if kind == FF:
        return 0.0
    s_sum, s_max, s_dot, s_l2, _ = _sums(h, a, demand, capacity, used)
    if kind == BF:
        return -s_sum
    if kind == BF_BOTTLE:
        return -s_max
    if kind == WF:
        return s_sum
    if kind == DOT:
        return s_dot
    return -s_l2  # L2 (the SWARM kind is scored by _swarm_score)


@numba.njit(cache=True, inline="always")
def _swarm_score(params, h, a, demand, capacity, used, count, col, cap, n_on, pending, p_ptr, p_idx,
                 n_h, coming, free_open):  # pragma: no cover - compiled
    """``params . phi(h)`` with phi as in :func:`policies.swarm.features.host_features`."""
    n_r = demand.shape[1]
    s_sum, s_max, s_dot, s_l2, u_sum = _sums(h, a, demand, capacity, used)
    mean = u_sum / n_r
    var = 0.0
    for r in range(n_r):
        c = capacity[h, r]
        resid = (c - used[h, r] - demand[a, r]) / c if c > 0 else 0.0
        var += ((1.0 - resid) - mean) ** 2
    std = np.sqrt(var / n_r)
    cnt = count[h, col[a]] if col[a] >= 0 else 0
    capf = float(cap[a])
    slots = (capf - cnt - 1.0) / capf if capf > 0 else 0.0
    lost = 0.0
    for i in range(p_ptr[a], p_ptr[a + 1]):
        b = p_idx[i]
        size = 0.0
        for r in range(n_r):
            c = capacity[h, r]
            size += demand[b, r] / c if c > 0 else 0.0
        lost = lost + (size / n_r) * float(pending[b])
    pressure = 0.0
    if cnt == 0:
        pressure = min(max(s_sum / n_r, 0.0), lost)
    need = 0.0
    if n_on[h] == 0:
        best = -np.inf
        for r in range(n_r):
            c = capacity[h, r]
            if c > 0:
                v = (coming[r] - free_open[r]) / c
                if v > best:
                    best = v
        if best > -np.inf:
            need = min(max(best, -1.0), 1.0)
    f = (-s_sum, -s_max, 1.0 - std, s_dot, -s_l2, slots, pressure,
         1.0 if n_on[h] == 0 else 0.0, -float(h) / max(n_h, 1), need)
    s = 0.0
    for i in range(10):
        s = s + f[i] * params[i]
    return s


@numba.njit(cache=True, inline="always")
def _better(open_first, h, s, is_open, best, best_s, best_open):  # pragma: no cover - compiled
    if best < 0:
        return True
    if open_first and is_open != best_open:
        return is_open
    if s > best_s:
        return True
    return s == best_s and h < best


@numba.njit(cache=True)
def run_episode(kind, params, open_first, seq, demand, capacity, used, count, n_on, col, cap,
                in_ptr, in_cols, in_k, out_ptr, out_cols, out_k, host_type, n_types,
                host_out, hosts_used_out, pending, p_ptr, p_idx):  # pragma: no cover - compiled
    """Place every container of ``seq`` in order; mutates ``used``, ``count`` and ``n_on``.

    ``seq`` holds app indices, shape ``(n,)``; ``host_out[t]`` receives the host (or -1: rejected) and
    ``hosts_used_out[t]`` the hosts in use after step t, both shape ``(n,)``.

    Candidates per decision are the hosts in use that can still take the smallest demand of any app
    (loads only grow here, so a host that cannot is dropped for good) and, per host type, the
    lowest-index unused host (the highest-index one for a SWARM score with a negative ``first_fit``
    weight, which prefers later hosts). Ties break explicitly to the lowest index, so the result equals
    scoring every host in index order.
    """
    n_h = capacity.shape[0]
    n_r = demand.shape[1]
    dmin = _min_demand(demand)
    active = np.empty(n_h, dtype=np.int64)
    next_empty = np.empty(n_types, dtype=np.int64)
    last_empty = np.empty(n_types, dtype=np.int64)
    use_last = kind == SWARM and params[8] < 0  # empty hosts differ only by index: the last wins
    n_active, n_used = _init_candidates(dmin, capacity, used, n_on, host_type, active, next_empty,
                                        last_empty)
    coming = np.zeros(n_r)
    free_open = np.zeros(n_r)
    for t in range(seq.shape[0]):
        a = seq[t]
        pending[a] -= 1
        if kind == SWARM:  # aggregates of the open_need feature, summed in index order
            for r in range(n_r):
                acc = 0.0
                for b in range(demand.shape[0]):
                    acc += pending[b] * demand[b, r]
                coming[r] = acc + demand[a, r]
                acc = 0.0
                for hh in range(n_h):
                    if n_on[hh] > 0:
                        acc += capacity[hh, r] - used[hh, r]
                free_open[r] = acc
        best = -1
        best_s = -np.inf
        best_open = False
        for i in range(n_active + n_types):
            if i < n_active:
                h = active[i]
            else:
                h = last_empty[i - n_active] if use_last else next_empty[i - n_active]
                if h < 0 or h >= n_h:
                    continue
            is_open = n_on[h] > 0
            if open_first and best_open and not is_open:
                continue
            if not _feasible(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k,
                             out_ptr, out_cols, out_k):
                continue
            if kind == SWARM:
                s = _swarm_score(params, h, a, demand, capacity, used, count, col, cap, n_on, pending,
                                 p_ptr, p_idx, n_h, coming, free_open)
            else:
                s = _score(kind, params, h, a, demand, capacity, used, is_open)
            if s != s:  # NaN never wins
                s = -np.inf
            if _better(open_first, h, s, is_open, best, best_s, best_open):
                best = h
                best_s = s
                best_open = is_open
        h = best
        host_out[t] = h
        if h >= 0:
            for r in range(n_r):
                used[h, r] += demand[a, r]
            if col[a] >= 0:
                count[h, col[a]] += 1
            was_empty = n_on[h] == 0
            n_used += 1 if was_empty else 0
            n_on[h] += 1
            n_active = _update_candidates(h, was_empty, dmin, capacity, used, n_on, host_type, active,
                                          n_active, next_empty, last_empty)
        hosts_used_out[t] = n_used


def _partner_tables(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    """CSR of :func:`policies.swarm.features.exclusion_partners`: ``(ptr (n_apps+1,), idx)``."""
    parts = exclusion_partners(inst)
    ptr = np.zeros(inst.n_apps + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(p) for p in parts])
    idx = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)
    return ptr, idx


def episode(state: ClusterState, seq: np.ndarray, kind: int, params: np.ndarray,
            open_first: bool) -> tuple[np.ndarray, np.ndarray]:
    """Run a whole episode with a compiled kernel, updating ``state`` in place.

    Args:
        state: the starting cluster state (modified: containers are placed on it).
        seq: app index per arrival, shape ``(n,)``.
        kind: kernel code (``FF``, ``BF``, ...).
        params: kernel parameters, shape ``(n_params,)``.
        open_first: prefer hosts already in use.

    Returns:
        ``(host, hosts_used)``: host per arrival (-1: rejected) and hosts in use after each arrival,
        both shape ``(n,)``.
    """
    inst = state.instance
    n = len(seq)
    host_out = np.empty(n, dtype=np.int64)
    used_out = np.empty(n, dtype=np.int64)
    if n == 0:
        return host_out, used_out
    count = state.count  # int32 (n_hosts, n_tracked), updated in place: no copy of a large table
    seq = np.ascontiguousarray(seq, dtype=np.int64)
    pending = np.bincount(seq, minlength=inst.n_apps).astype(np.int64)
    p_ptr, p_idx = _partner_tables(inst) if kind == SWARM else (np.zeros(inst.n_apps + 1, np.int64),
                                                                np.zeros(0, np.int64))
    run_episode(kind, np.ascontiguousarray(params, dtype=np.float64), open_first,  # type: ignore[call-arg]
                seq, np.ascontiguousarray(inst.demand),
                np.ascontiguousarray(state.capacity), state.used, count, state.n_on, state.col,
                inst.cap.astype(np.int64), *rule_tables(state),
                np.ascontiguousarray(inst.host_type_of), len(inst.host_types), host_out, used_out,
                pending, p_ptr, p_idx)
    return host_out, used_out


__all__ = ["BF", "BF_BOTTLE", "DOT", "FF", "L2", "SWARM", "WF", "episode", "supports"]
