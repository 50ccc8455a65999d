"""Compiled (numba) whole episodes of the GPU-sharing policies of :mod:`policies.gpu`, cards included.

Feasibility is not decided here: every host goes through :func:`packing.feasibility.kernels.feasible_gpu` (the
compiled predicates of :mod:`packing.feasibility.predicates` with card-level fit and card models), and FGD's
fragmentation through :func:`packing.gpu.fragmentation.node_frag`, the one compiled definition of ``F_n``
that the numpy path calls too. Each kernel reproduces the numpy policy decision by decision (host and
cards; tested on GPU instances): the same integer scores, evaluated in the same arithmetic order, the
same tie-break (highest score, then the lowest rank of the policy's host order, then the lowest card),
and the same card choice.

Kinds: :data:`DOTPROD`, :data:`BESTFIT`, :data:`PACKING`, :data:`CLUSTERING`, :data:`FGD`,
:data:`FGD_LOOK` (FGD with the lookahead term of :class:`policies.gpu.FGDPack`). Random stays on
the numpy path (its NumPy Generator cannot be replayed in numba).

FGD caches the best (score, card) per host and app, invalidated when the host changes, and per host
type and app for empty hosts (identical by type); nothing else is cached, so results equal the
uncached scan.
"""

from __future__ import annotations

import numba
import numpy as np

from packing.feasibility.kernels import feasible_gpu, fits_c, gpu_arrays, rule_tables
from packing.feasibility.predicates import ClusterState
from packing.gpu.fragmentation import node_frag, node_frag_mix

DOTPROD, BESTFIT, PACKING, CLUSTERING, FGD, FGD_LOOK = range(6)


@numba.njit(cache=True, inline="always")
def fgd_score(delta, card):  # pragma: no cover - compiled
    """FGD's integer score ``trunc(100 sigmoid(-delta / card))`` of a fragmentation increase."""
    x = -delta / card
    return np.trunc(1.0 / (1.0 + np.exp(-x)) * 100.0)


@numba.njit(cache=True)
def fgd_scores(delta, card):  # pragma: no cover - compiled
    """:func:`fgd_score` of each entry of ``delta``, shape ``(c,)`` (the numpy path calls this)."""
    out = np.empty(delta.shape[0])
    for i in range(delta.shape[0]):
        out[i] = fgd_score(delta[i], card)
    return out


@numba.njit(cache=True, inline="always")
def _card_free(h, card_used, card_cap, n_cards, out):  # pragma: no cover - compiled
    """Free share of the first GPU resource per card of ``h`` into ``out`` (0 beyond its cards)."""
    for c in range(out.shape[0]):
        out[c] = card_cap[h, 0] - card_used[h, c, 0] if c < n_cards[h] else 0.0


@numba.njit(cache=True, inline="always")
def _fitting(h, free_c, c, need, n_cards):  # pragma: no cover - compiled
    """``GpuPolicy.fitting`` for one card: it exists, has free share and takes ``need``."""
    return c < n_cards[h] and fits_c(need, free_c) and free_c > 0


@numba.njit(cache=True, inline="always")
def _best_fit_cards(h, cf, need, whole, k, n_cards, out):  # pragma: no cover - compiled
    """``GpuPolicy.best_fit_cards``: fitting cards by least free (index on ties), whole: by index.

    Writes the chosen cards (ascending) into ``out[:k]`` and returns how many were found.
    """
    taken = np.zeros(cf.shape[0], dtype=np.bool_)
    n = 0
    for _ in range(k):
        best = -1
        for c in range(cf.shape[0]):
            if taken[c] or not _fitting(h, cf[c], c, need, n_cards):
                continue
            if best < 0 or (not whole and cf[c] < cf[best]):
                best = c
        if best < 0:
            break
        taken[best] = True
        n += 1
    j = 0
    for c in range(cf.shape[0]):
        if taken[c]:
            out[j] = c
            j += 1
    return n


@numba.njit(cache=True, inline="always")
def _simple_score(kind, h, a, k, g, whole, cf, demand, capacity, used, n_cards, card_cap, max_cpu,
                  max_gpu, card_unit, aff):  # pragma: no cover - compiled
    """The integer node score of DOTPROD, BESTFIT, PACKING or CLUSTERING (see :mod:`policies.gpu`)."""
    gpu = 0.0
    for c in range(cf.shape[0]):
        gpu += cf[c]
    cpu = capacity[h, 0] - used[h, 0]
    if kind == DOTPROD:
        dot = (cpu / max_cpu) * (demand[a, 0] / max_cpu) + (gpu / max_gpu) * (k * g / max_gpu)
        return np.trunc(100.0 * (1.0 - dot / 2.0))
    if kind == BESTFIT:
        s = (cpu - demand[a, 0]) / max_cpu * 0.5
        s = s + (gpu - k * g) / max_gpu * 0.5
        return np.trunc((1.0 - s) * 100.0)
    if k == 0:
        return 0.0
    if kind == CLUSTERING:
        lab = k if whole else 0
        base = np.floor(25.0 * (max_gpu - gpu) / max_gpu)
        n_lab = 0
        for j in range(aff.shape[1]):
            if aff[h, j] > 0:
                n_lab += 1
        if aff[h, lab] > 0:
            bonus = 75.0 if n_lab == 1 else 50.0
        else:
            bonus = 25.0 if n_lab == 0 else 0.0
        return base + bonus
    # PACKING
    cap = card_cap[h, 0]
    n_full = 0
    for c in range(cf.shape[0]):
        if c < n_cards[h] and fits_c(cap, cf[c]):
            n_full += 1
    idle = n_full == n_cards[h]
    need = cap if whole else g
    taken = np.zeros(cf.shape[0], dtype=np.bool_)
    n_used = 0
    f2 = 0
    pct = 0.0
    for _ in range(k):
        best = -1
        for c in range(cf.shape[0]):
            if taken[c] or not _fitting(h, cf[c], c, need, n_cards):
                continue
            if best < 0 or cf[c] < cf[best]:
                best = c
        if best < 0:
            break
        taken[best] = True
        n_used += 1
        if fits_c(cap, cf[best]):
            f2 += 1
        pct += np.floor(cf[best] * 100.0 / card_unit)
    enough = n_used >= k
    if idle:
        out = float(max(33 - n_full, n_full))
    elif f2 > 0:
        out = float(max(50 - f2, 33))
    else:
        out = max(100.0 - np.floor(pct / 10.0), 50.0)
    return out if (idle or enough) else 0.0


@numba.njit(cache=True, inline="always")
def _frag(kind, params, free, card_free, n_cards, card_cap, htype, s_demand, s_cards, s_share, s_type_ok,
          s_weight):  # pragma: no cover - compiled
    """The node fragmentation the FGD kinds descend: ``node_frag``, or ``node_frag_mix`` (FGD_LOOK)."""
    if kind == FGD_LOOK:
        return node_frag_mix(free, card_free, n_cards, card_cap, htype, s_demand, s_cards, s_share,
                             s_type_ok, s_weight, params)
    return node_frag(free, card_free, n_cards, card_cap, htype, s_demand, s_cards, s_share, s_type_ok,
                     s_weight)


@numba.njit(cache=True, inline="always")
def _fgd_best(kind, params, h, a, k, g, whole, cf, fit, demand, capacity, used, n_cards, card_cap, host_type,
              before, card_unit, s_demand, s_cards, s_share, s_type_ok, s_weight, free_a,
              after):  # pragma: no cover - compiled
    """FGD's best (score, card) on host ``h`` for app ``a`` (card -1: several cards or none)."""
    for i in range(fit.shape[0]):
        free_a[i] = capacity[h, fit[i]] - used[h, fit[i]] - demand[a, fit[i]]
    for c in range(cf.shape[0]):
        after[c] = cf[c]
    cap = card_cap[h, 0]
    ty = host_type[h]
    if k == 1 and not whole:
        best_s = -np.inf
        best_c = -1
        for c in range(cf.shape[0]):
            if not _fitting(h, cf[c], c, g, n_cards):
                continue
            after[c] = cf[c] - g
            f = _frag(kind, params, free_a, after, n_cards[h], cap, ty, s_demand, s_cards, s_share,
                      s_type_ok, s_weight)
            after[c] = cf[c]
            s = fgd_score(f - before, card_unit)
            if s > best_s:
                best_s = s
                best_c = c
        return best_s, best_c
    if k > 0:
        need = cap if whole else g
        tmp = np.empty(k, dtype=np.int64)
        n = _best_fit_cards(h, cf, need, whole, k, n_cards, tmp)
        for j in range(n):
            c = tmp[j]
            after[c] = 0.0 if whole else cf[c] - g
    f = _frag(kind, params, free_a, after, n_cards[h], cap, ty, s_demand, s_cards, s_share, s_type_ok,
              s_weight)
    return fgd_score(f - before, card_unit), -1


@numba.njit(cache=True)
def rank_pos(rank):  # pragma: no cover - compiled
    """Position of each host in the order of ``rank`` (a permutation of ``0..n-1`` of any values)."""
    order = np.argsort(rank, kind="mergesort")
    pos = np.empty(rank.shape[0], dtype=np.int64)
    for i in range(order.shape[0]):
        pos[order[i]] = i
    return pos


@numba.njit(cache=True)
def run_gpu_episode(kind, params, seq, rank, card_unit, max_cpu, max_gpu, fit,
                    demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k, out_ptr, out_cols,
                    out_k, card_used, card_cap, n_cards, kk, card_load, whole, type_ok, host_type,
                    s_demand, s_cards, s_share, s_type_ok, s_weight, aff, n_on,
                    host_out, used_out, cards_out):  # pragma: no cover - compiled
    """Place every arrival of ``seq`` (app indices, ``(n,)``) with policy ``kind``; mutates the state.

    ``rank`` ``(n_hosts,)`` is the tie-break key (lower wins); ``fit`` the fit resources of FGD's
    shape distribution ``s_*``; ``aff`` ``(n_hosts, max_gpus + 1)`` the clustering labels (updated).
    Fills ``host_out`` (-1: rejected), ``used_out`` (hosts in use after each arrival), both ``(n,)``,
    and ``cards_out`` ``(n, G)`` (the cards, ascending, then -1).
    """
    n_h = capacity.shape[0]
    n_a = demand.shape[0]
    n_t = s_type_ok.shape[1]
    g_max = max(card_used.shape[1], 1)
    n_r = demand.shape[1]
    cf = np.zeros(g_max)
    after = np.zeros(g_max)
    free_h = np.zeros(fit.shape[0])
    free_a = np.zeros(fit.shape[0])
    picked = np.empty(g_max, dtype=np.int64)
    is_fgd = kind == FGD or kind == FGD_LOOK
    before = np.zeros(n_h)
    ver = np.zeros(n_h, dtype=np.int64)
    c_ver = np.full((n_h, n_a), -1, dtype=np.int64) if is_fgd else np.full((1, 1), -1, dtype=np.int64)
    c_score = np.zeros(c_ver.shape)
    c_card = np.zeros(c_ver.shape, dtype=np.int64)
    t_ok = np.zeros((n_t, n_a), dtype=np.bool_)
    t_score = np.zeros((n_t, n_a))
    t_card = np.zeros((n_t, n_a), dtype=np.int64)
    # candidates: hosts in use, and per host type its empty host of lowest rank (empty hosts of a
    # type are identical, so the others can only tie and lose on rank); loads only grow, so an app
    # that fits nowhere never fits again
    by_type = np.argsort(host_type * (n_h + 1) + rank_pos(rank))
    t_ptr = np.searchsorted(host_type[by_type], np.arange(n_t + 1))
    t_pos = t_ptr[:-1].copy()
    active = np.empty(n_h, dtype=np.int64)
    n_active = 0
    dead = np.zeros(n_a, dtype=np.bool_)
    n_used = 0
    for h in range(n_h):
        if n_on[h] > 0:
            n_used += 1
            active[n_active] = h
            n_active += 1
        if is_fgd:
            _card_free(h, card_used, card_cap, n_cards, cf)
            for i in range(fit.shape[0]):
                free_h[i] = capacity[h, fit[i]] - used[h, fit[i]]
            before[h] = _frag(kind, params, free_h, cf, n_cards[h], card_cap[h, 0], host_type[h],
                              s_demand, s_cards, s_share, s_type_ok, s_weight)
    for t in range(seq.shape[0]):
        a = seq[t]
        k = kk[a]
        w = whole[a]
        g = card_unit if w else (card_load[a, 0] if k > 0 else 0.0)
        best = -1
        best_s = -np.inf
        best_c = -1
        for ty in range(n_t):  # skip the used hosts at the front of each type's rank order
            while t_pos[ty] < t_ptr[ty + 1] and n_on[by_type[t_pos[ty]]] > 0:
                t_pos[ty] += 1
        for i in range(0 if dead[a] else n_active + n_t):
            if i < n_active:
                h = active[i]
            else:
                ty = i - n_active
                if t_pos[ty] >= t_ptr[ty + 1]:
                    continue
                h = by_type[t_pos[ty]]
            if not feasible_gpu(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k,
                                out_ptr, out_cols, out_k, card_used, card_cap, n_cards, kk, card_load,
                                whole, type_ok, host_type):
                continue
            c = -1
            if is_fgd:
                ty = host_type[h]
                if n_on[h] == 0 and t_ok[ty, a]:
                    s = t_score[ty, a]
                    c = t_card[ty, a]
                elif n_on[h] > 0 and c_ver[h, a] == ver[h]:
                    s = c_score[h, a]
                    c = c_card[h, a]
                else:
                    _card_free(h, card_used, card_cap, n_cards, cf)
                    s, c = _fgd_best(kind, params, h, a, k, g, w, cf, fit, demand, capacity, used,
                                     n_cards, card_cap, host_type, before[h], card_unit, s_demand,
                                     s_cards, s_share, s_type_ok, s_weight, free_a, after)
                    if n_on[h] == 0:
                        t_ok[ty, a] = True
                        t_score[ty, a] = s
                        t_card[ty, a] = c
                    else:
                        c_ver[h, a] = ver[h]
                        c_score[h, a] = s
                        c_card[h, a] = c
            else:
                _card_free(h, card_used, card_cap, n_cards, cf)
                s = _simple_score(kind, h, a, k, g, w, cf, demand, capacity, used, n_cards, card_cap,
                                  max_cpu, max_gpu, card_unit, aff)
            if best < 0 or s > best_s or (s == best_s and rank[h] < rank[best]):
                best = h
                best_s = s
                best_c = c
        host_out[t] = best
        cards_out[t, :] = -1
        if best < 0:
            dead[a] = True
            used_out[t] = n_used
            continue
        h = best
        n_k = 0
        if k > 0:
            if best_c >= 0:
                picked[0] = best_c
                n_k = 1
            else:
                _card_free(h, card_used, card_cap, n_cards, cf)
                n_k = _best_fit_cards(h, cf, card_cap[h, 0] if w else g, w, k, n_cards, picked)
            for j in range(n_k):
                cc = picked[j]
                cards_out[t, j] = cc
                for r in range(card_used.shape[2]):
                    card_used[h, cc, r] += card_cap[h, r] if w else card_load[a, r]
        for r in range(n_r):
            used[h, r] += demand[a, r]
        if col[a] >= 0:
            count[h, col[a]] += 1
        if n_on[h] == 0:
            n_used += 1
            active[n_active] = h
            n_active += 1
        n_on[h] += 1
        ver[h] += 1
        if kind == CLUSTERING and k > 0:
            aff[h, k if w else 0] += 1
        if is_fgd:
            _card_free(h, card_used, card_cap, n_cards, cf)
            for i in range(fit.shape[0]):
                free_h[i] = capacity[h, fit[i]] - used[h, fit[i]]
            before[h] = _frag(kind, params, free_h, cf, n_cards[h], card_cap[h, 0], host_type[h],
                              s_demand, s_cards, s_share, s_type_ok, s_weight)
        used_out[t] = n_used


def gpu_episode(state: ClusterState, seq: np.ndarray, kind: int, rank: np.ndarray, card_unit: float,
                max_cpu: float, max_gpu: float, dist_fit: np.ndarray | None = None,
                dist: tuple[np.ndarray, ...] | None = None, params: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run a whole episode of a GPU policy compiled, updating ``state`` (loads and cards) in place.

    Args:
        state: the start state (modified).
        seq: app index per arrival, shape ``(n,)``.
        kind: :data:`DOTPROD`, :data:`BESTFIT`, :data:`PACKING`, :data:`CLUSTERING` or :data:`FGD`.
        rank: tie-break key per host (lower wins), shape ``(n_hosts,)``.
        card_unit: the largest card capacity (a whole card's nominal share).
        max_cpu: the largest host CPU capacity.
        max_gpu: the largest host GPU capacity.
        dist_fit: fit resources of the shape distribution ``(n_fit,)`` (FGD).
        dist: :func:`packing.gpu.fragmentation.dist_arrays` of the shape distribution (FGD).
        params: :func:`packing.gpu.fragmentation.node_frag_mix`'s parameters (FGD_LOOK).

    Returns:
        ``(host, hosts_used, cards)``: shapes ``(n,)``, ``(n,)`` and ``(n, G)`` (-1 padded).
    """
    inst = state.instance
    n = len(seq)
    g_max = max(inst.max_gpus, 1)
    host_out = np.empty(n, dtype=np.int64)
    used_out = np.empty(n, dtype=np.int64)
    cards_out = np.full((n, g_max), -1, dtype=np.int64)
    if n == 0:
        return host_out, used_out, cards_out
    if dist is None or dist_fit is None:
        n_t = len(inst.host_types)
        dist = (np.zeros((0, 0)), np.zeros(0, np.int64), np.zeros(0), np.zeros((0, n_t), np.bool_),
                np.zeros(0))
        dist_fit = np.zeros(0, dtype=np.int64)
    aff = np.zeros((inst.n_hosts, inst.max_gpus + 1), dtype=np.int64)
    par = np.zeros(1) if params is None else np.array(params, dtype=np.float64)
    run_gpu_episode(kind, par, np.ascontiguousarray(seq, dtype=np.int64),  # type: ignore[call-arg]
                    np.ascontiguousarray(rank, dtype=np.int64), float(card_unit), float(max_cpu),
                    float(max_gpu), np.array(dist_fit, dtype=np.int64, order="C"),
                    np.ascontiguousarray(inst.demand), np.ascontiguousarray(state.capacity), state.used,
                    state.count, state.col, inst.cap.astype(np.int64), *rule_tables(state),
                    *gpu_arrays(state), *dist, aff, state.n_on, host_out, used_out, cards_out)
    return host_out, used_out, cards_out


__all__ = ["BESTFIT", "CLUSTERING", "DOTPROD", "FGD", "FGD_LOOK", "PACKING", "fgd_score", "fgd_scores",
           "gpu_episode", "run_gpu_episode"]
