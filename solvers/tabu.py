"""Tabu search that frees one host at a time: packings on ``U`` hosts through overloaded ones.

From a packing on ``U + 1`` hosts, the lightest host is emptied and its containers go where they
overload the other hosts least. The search then moves containers between the ``U`` hosts to drive
the total *excess* to zero: the sum over hosts and resources of the load above the capacity,
relative to the capacity. Each iteration makes the best move that involves an overloaded host:

* shift one of its containers to another host;
* swap one of its containers with one on another host;
* swap two of its containers with one on another host, or one with two.

The best move is made even when it raises the excess (ties are broken at random). A container that
left a host may not return to it for a few iterations (its *tabu* tenure) unless that gives the
lowest excess met so far. Zero excess is a feasible packing on ``U`` hosts (it is verified by
:func:`packing.checker.check`); the search then empties the next host, until the target (a lower
bound) is met or the time is up. Anti-affinity caps and ``<A, B, k>`` rules (exclusions included)
are kept at every step, with the predicates and rule tables of :mod:`packing.feasibility`.

It suits instances whose cheap bound is tight while first fit is a few hosts above it (Caprara–Toth
classes 1: CL_1_200_1 goes from 55 to the optimum 50 in 0.2 s). It applies to one host type (or
identical ones) without GPU cards: :func:`applicable`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numba
import numpy as np

from packing.checker import check
from packing.feasibility import TOL, ClusterState, over_cap, rule_broken
from packing.model import UNPLACED, Instance, Placement

if TYPE_CHECKING:
    from solvers.base import Stop

CHUNK_SECONDS = 0.1
"""About this long between two looks at the clock (the chunk of iterations adapts to it)."""

PATIENCE = 20_000
"""Give up on a number of hosts after this many iterations without a lower total excess."""

TENURE = (5, 10)
"""A container that left a host may not return for ``TENURE[0] + U[0, TENURE[1])`` iterations."""

_over_cap = numba.njit(cache=True)(over_cap)
_rule_broken = numba.njit(cache=True)(rule_broken)

MAX_CELLS = 40_000_000
"""Largest ``containers x hosts`` the search takes on (its tabu table has that many cells)."""


def applicable(instance: Instance) -> bool:
    """Whether the search covers the instance (see the module docstring)."""
    inst = instance
    if inst.n_containers == 0 or inst.n_resources == 0 or inst.max_gpus:
        return False
    if bool(np.any(inst.gpu_cards > 0)):
        return False
    first = inst.host_types[0]
    return all(t.capacity == first.capacity and t.cost == first.cost for t in inst.host_types)


# ----------------------------------------------------------------------------------------------
# compiled core
@numba.njit(cache=True, inline="always")
def _rand(state):  # pragma: no cover - compiled
    """xorshift64*: the next number in [0, 1) from ``state[0]`` (updated in place)."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return float((x * np.uint64(2685821657736338717)) >> np.uint64(11)) / 9007199254740992.0


@numba.njit(cache=True, inline="always")
def _excess(load_b, size, m1, m2, p1, p2, limit, inv):  # pragma: no cover - compiled
    """Relative load above ``limit`` of ``load_b - size[m1, m2] + size[p1, p2]`` (-1: none)."""
    e = 0.0
    for r in range(size.shape[1]):
        v = load_b[r]
        if m1 >= 0:
            v -= size[m1, r]
        if m2 >= 0:
            v -= size[m2, r]
        if p1 >= 0:
            v += size[p1, r]
        if p2 >= 0:
            v += size[p2, r]
        if v > limit[r]:
            e += (v - limit[r]) * inv[r]
    return e


@numba.njit(cache=True, inline="always")
def _delta(c, col, app, m1, m2, p1, p2):  # pragma: no cover - compiled
    """Change of count column ``c`` on a host when ``m1, m2`` leave and ``p1, p2`` arrive."""
    d = 0
    for p in (p1, p2):
        if p >= 0 and col[app[p]] == c:
            d += 1
    for m in (m1, m2):
        if m >= 0 and col[app[m]] == c:
            d -= 1
    return d


@numba.njit(cache=True, inline="always")
def counts_ok(cnt_b, col, app, cap, rules, m1, m2, p1, p2):  # pragma: no cover - compiled
    """Whether caps and ``<A, B, k>`` rules hold on a host (counts ``cnt_b``) after the exchange.

    Only arriving containers can break a cap or a rule (fewer containers never do), so the apps
    of ``p1`` and ``p2`` are checked, with the predicates of :mod:`packing.feasibility`.
    """
    in_ptr, in_cols, in_k, out_ptr, out_cols, out_k = rules
    for p in (p1, p2):
        if p < 0:
            continue
        a = app[p]
        c = col[a]
        if c < 0:
            continue
        after = cnt_b[c] + _delta(c, col, app, m1, m2, p1, p2)
        if _over_cap(after, cap[a]):
            return False
        for i in range(in_ptr[a], in_ptr[a + 1]):  # <A, a, k>: a host running A takes <= k of a
            o = in_cols[i]
            if _rule_broken(cnt_b[o] + _delta(o, col, app, m1, m2, p1, p2), after, in_k[i]):
                return False
        for i in range(out_ptr[a], out_ptr[a + 1]):  # <a, B, k>
            o = out_cols[i]
            if _rule_broken(after, cnt_b[o] + _delta(o, col, app, m1, m2, p1, p2), out_k[i]):
                return False
    return True


@numba.njit(cache=True)
def _relocate(i, dst, bin_of, load, cnt, members, mlen, mpos, size, app,
              col):  # pragma: no cover - compiled
    """Move container ``i`` to host ``dst`` (member lists, loads and counts follow)."""
    src = bin_of[i]
    j = mpos[i]
    last = members[src, mlen[src] - 1]
    members[src, j] = last
    mpos[last] = j
    mlen[src] -= 1
    mpos[i] = mlen[dst]
    members[dst, mlen[dst]] = i
    mlen[dst] += 1
    bin_of[i] = dst
    for r in range(size.shape[1]):
        load[src, r] -= size[i, r]
        load[dst, r] += size[i, r]
    c = col[app[i]]
    if c >= 0:
        cnt[src, c] -= 1
        cnt[dst, c] += 1


@numba.njit(cache=True)
def _search(iters, n_bins, bin_of, load, cnt, members, mlen, mpos, size, app, cap, col, rules,
            use_counts, limit, inv, exc, tabu, it_box, best_total, rng, tenure_min,
            tenure_span):  # pragma: no cover - compiled
    """Up to ``iters`` iterations on hosts ``0..n_bins-1``; True when the excess is zero.

    ``exc`` (shape ``(n_bins,)``) holds every host's excess, ``it_box[0]`` the iteration counter
    and ``best_total[0]`` the lowest total excess met on this number of hosts; all are updated in
    place.
    """
    for _ in range(iters):
        total = 0.0
        for b in range(n_bins):
            total += exc[b]
        if total <= 0.0:
            return True
        it = it_box[0]
        best = 1e300
        ties = 0
        mi1 = -1
        mi2 = -1
        mj1 = -1
        mj2 = -1
        mdst = -1
        for b1 in range(n_bins):
            if exc[b1] <= 0.0:
                continue
            for x in range(mlen[b1]):
                i = members[b1, x]
                for x2 in range(x, mlen[b1]):  # x2 == x: i alone; else the pair (i, i2)
                    i2 = members[b1, x2] if x2 > x else -1
                    for b2 in range(n_bins):
                        if b2 == b1:
                            continue
                        t_out = tabu[i, b2] > it or (i2 >= 0 and tabu[i2, b2] > it)
                        # j1 == -1: shift (i, i2) to b2; else swap with j1 (and j2)
                        for y in range(-1, mlen[b2]):
                            j1 = members[b2, y] if y >= 0 else -1
                            for y2 in range(y, mlen[b2] if (y >= 0 and i2 < 0) else y + 1):
                                j2 = members[b2, y2] if y2 > y else -1
                                if use_counts and not (
                                        counts_ok(cnt[b1], col, app, cap, rules, i, i2, j1, j2)
                                        and counts_ok(cnt[b2], col, app, cap, rules, j1, j2, i,
                                                       i2)):
                                    continue
                                d = (_excess(load[b1], size, i, i2, j1, j2, limit, inv) - exc[b1]
                                     + _excess(load[b2], size, j1, j2, i, i2, limit, inv)
                                     - exc[b2])
                                is_tabu = t_out or (j1 >= 0 and tabu[j1, b1] > it) or (
                                    j2 >= 0 and tabu[j2, b1] > it)
                                if is_tabu and total + d >= best_total[0] - 1e-12:
                                    continue
                                if d < best - 1e-12:
                                    best = d
                                    ties = 1
                                elif d < best + 1e-12:
                                    ties += 1
                                    if _rand(rng) * ties >= 1.0:
                                        continue
                                else:
                                    continue
                                mi1, mi2, mj1, mj2, mdst = i, i2, j1, j2, b2
        it_box[0] = it + 1
        if mdst < 0:  # every move is tabu: wait for tenures to end
            continue
        src = bin_of[mi1]
        for k in (mi1, mi2):
            if k >= 0:
                _relocate(k, mdst, bin_of, load, cnt, members, mlen, mpos, size, app, col)
                tabu[k, src] = it + tenure_min + int(_rand(rng) * tenure_span)
        for k in (mj1, mj2):
            if k >= 0:
                _relocate(k, src, bin_of, load, cnt, members, mlen, mpos, size, app, col)
                tabu[k, mdst] = it + tenure_min + int(_rand(rng) * tenure_span)
        exc[src] = _excess(load[src], size, -1, -1, -1, -1, limit, inv)
        exc[mdst] = _excess(load[mdst], size, -1, -1, -1, -1, limit, inv)
        total += best
        if total < best_total[0]:
            best_total[0] = total
    total = 0.0
    for b in range(n_bins):
        total += exc[b]
    return total <= 0.0


@numba.njit(cache=True)
def _drop(b, n_bins, weight, bin_of, load, cnt, members, mlen, mpos, size, app, cap, col, rules,
          use_counts, limit, inv, exc, tabu):  # pragma: no cover - compiled
    """Empty host ``b`` onto hosts ``0..n_bins-2`` (least added excess first, heaviest first).

    Host ``n_bins - 1`` is renumbered ``b`` first, so the hosts in use stay ``0..n_bins-2``.
    """
    last = n_bins - 1
    if b != last:  # swap host b and the last host (lists, loads, counts, tabu columns)
        for k in range(mlen[b]):
            bin_of[members[b, k]] = last
        for k in range(mlen[last]):
            bin_of[members[last, k]] = b
        for k in range(max(mlen[b], mlen[last])):
            t = members[b, k]
            members[b, k] = members[last, k]
            members[last, k] = t
        t2 = mlen[b]
        mlen[b] = mlen[last]
        mlen[last] = t2
        for r in range(load.shape[1]):
            v = load[b, r]
            load[b, r] = load[last, r]
            load[last, r] = v
        if use_counts:
            for a in range(cnt.shape[1]):
                c = cnt[b, a]
                cnt[b, a] = cnt[last, a]
                cnt[last, a] = c
    for i in range(tabu.shape[0]):
        tabu[i, b] = 0
        tabu[i, last] = 0
    items = members[last, : mlen[last]].copy()
    items = items[np.argsort(-weight[items], kind="mergesort")]
    for i in items:
        best = 1e300
        dst = -1
        for h in range(last):
            if use_counts and not counts_ok(cnt[h], col, app, cap, rules, -1, -1, i, -1):
                continue
            d = _excess(load[h], size, -1, -1, i, -1, limit, inv) - _excess(
                load[h], size, -1, -1, -1, -1, limit, inv)
            if d < best:
                best = d
                dst = h
        if dst < 0:
            return False
        _relocate(i, dst, bin_of, load, cnt, members, mlen, mpos, size, app, col)
    for h in range(last):
        exc[h] = _excess(load[h], size, -1, -1, -1, -1, limit, inv)
    exc[last] = 0.0
    return True


def warm() -> bool:
    """Whether the compiled search is loaded in this process (its next call costs no compiling)."""
    return bool(_search.signatures) and bool(_drop.signatures)


# ----------------------------------------------------------------------------------------------
def tabu_pack(
    instance: Instance,
    host_of: np.ndarray,
    *,
    target: int,
    time_limit: float,
    seed: int = 0,
    on_improve: Callable[[int], None] | None = None,
    max_iters: int | None = None,
    patience: int = PATIENCE,
    stop: Stop | None = None,
) -> np.ndarray | None:
    """Search for a packing on fewer hosts than ``host_of`` uses, down to ``target`` hosts.

    Args:
        instance: the instance (:func:`applicable` must hold; otherwise ``None`` is returned).
        host_of: a complete feasible placement, host per container, shape ``(n_containers,)``.
        target: stop at this many hosts (a lower bound on the optimum).
        time_limit: seconds.
        seed: seed of the search's own random stream.
        on_improve: called with the number of hosts after every improvement.
        max_iters: stop after this many iterations in all (``None``: only the clock decides).
        patience: stop after this many iterations without progress on one number of hosts.
        stop: a stop request (:class:`solvers.base.StopFlag`), looked at between chunks of
            the compiled search (about ``CHUNK_SECONDS`` each).

    Returns:
        Host per container on the fewest hosts found, all fewer than ``host_of`` uses (checked
        by :func:`packing.checker.check`), shape ``(n_containers,)``; ``None`` if none was found.
        Hosts are taken from those ``host_of`` uses, in index order.
    """
    t0 = time.perf_counter()
    inst = instance
    host_of = np.asarray(host_of, dtype=np.int64)
    if time_limit <= 0 or not applicable(inst) or (host_of == UNPLACED).any():
        return None
    used = np.unique(host_of)
    n_bins = len(used)
    n = inst.n_containers
    if n_bins <= max(target, 1) or n * n_bins > MAX_CELLS:
        return None
    cap_vec = np.asarray(inst.host_types[0].capacity, dtype=np.float64)
    limit = cap_vec + TOL * np.maximum(1.0, np.abs(cap_vec))  # what fits() accepts
    inv = np.where(cap_vec > 0, 1.0 / np.where(cap_vec > 0, cap_vec, 1.0), 1.0)
    app = inst.container_app.astype(np.int64)
    size = np.ascontiguousarray(inst.demand[app], dtype=np.float64)  # (n, d)
    weight = size @ inv  # (n,)
    cap = np.asarray(inst.cap, dtype=np.int64)
    st = ClusterState(inst)  # the count columns and rule tables every feasibility test uses
    col = st.col.astype(np.int64)
    rules = tuple(np.asarray(t, dtype=np.int64) for t in st.rule_tables)
    use_counts = bool((col >= 0).any())
    bin_of = np.searchsorted(used, host_of).astype(np.int64)
    load = np.zeros((n_bins, inst.n_resources))
    np.add.at(load, bin_of, size)
    cnt = np.zeros((n_bins, max(int(col.max(initial=-1)) + 1, 1)), dtype=np.int64)
    counted = col[app] >= 0
    np.add.at(cnt, (bin_of[counted], col[app][counted]), 1)
    per_bin = np.bincount(bin_of, minlength=n_bins)
    members = np.full((n_bins, n), -1, dtype=np.int64)
    mlen = np.zeros(n_bins, dtype=np.int64)
    mpos = np.zeros(n, dtype=np.int64)
    order = np.argsort(bin_of, kind="stable")
    starts = np.concatenate([[0], np.cumsum(per_bin)[:-1]])
    mpos[order] = np.arange(n) - starts[bin_of[order]]
    members[bin_of[order], mpos[order]] = order
    mlen[:] = per_bin
    exc = np.zeros(n_bins)
    tabu = np.zeros((n, n_bins), dtype=np.int64)
    it_box = np.zeros(1, dtype=np.int64)
    rng = np.array([np.random.default_rng(seed).integers(1, 2**63, dtype=np.uint64)],
                   dtype=np.uint64)
    best: np.ndarray | None = None
    while n_bins > target:
        wsum = np.bincount(bin_of, weights=weight, minlength=n_bins)[:n_bins]
        b = int(np.argmin(wsum))  # the lightest host is the easiest to empty
        if not _drop(b, n_bins, weight, bin_of, load, cnt, members, mlen, mpos, size, app, cap,
                     col, rules, use_counts, limit, inv, exc, tabu):
            break  # the caps leave no host for one of its containers
        n_bins -= 1
        best_total = np.array([exc[:n_bins].sum()])
        solved = False
        step, last_best, since = 8, best_total[0], 0
        while not solved:
            now = time.perf_counter()
            if now - t0 >= time_limit or since >= patience or (
                    max_iters is not None and it_box[0] >= max_iters) or (
                    stop is not None and stop.is_set()):
                break
            if max_iters is not None:
                step = int(min(step, max_iters - it_box[0]))
            start = int(it_box[0])
            solved = bool(_search(step, n_bins, bin_of, load, cnt, members, mlen, mpos, size,
                                  app, cap, col, rules, use_counts, limit, inv, exc, tabu,
                                  it_box, best_total,
                                  rng, TENURE[0], TENURE[1]))
            done = int(it_box[0]) - start
            took = time.perf_counter() - now
            since = 0 if best_total[0] < last_best - 1e-12 else since + done
            last_best = min(last_best, best_total[0])
            # the next chunk takes about CHUNK_SECONDS, and not past the time limit
            per_it = took / max(done, 1)
            room = max(time_limit - (time.perf_counter() - t0), 0.0)
            step = int(max(1, min(CHUNK_SECONDS, room) / max(per_it, 1e-7)))
        if not solved:
            break
        out = used[bin_of]
        if check(inst, Placement.from_arrays(inst, out, None), require_all=True):
            break  # pragma: no cover - zero excess is feasible by construction
        best = out
        if on_improve is not None:
            on_improve(n_bins)
    return best


__all__ = ["applicable", "tabu_pack", "warm"]
