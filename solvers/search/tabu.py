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
:func:`packing.feasibility.checker.check`); the search then empties the next host, until the target (a lower
bound) is met or the time is up. Anti-affinity caps and ``<A, B, k>`` rules (exclusions included)
are kept at every step, with the predicates and rule tables of :mod:`packing.feasibility.predicates`.

The containers of the emptied host go, heaviest first, where they add the least excess among the
hosts whose caps and rules take them; when none does, a container of some host that blocks it moves
to another host that takes it (an *ejection*: on Tianchi the lightest hosts hold an app that excludes
1,244 others). Given open hosts (``hosts``), the search also starts from a partial placement: the
unplaced containers are inserted the same way and the excess is first driven to zero on exactly
those hosts (a packing on a fixed number of hosts; :func:`solvers.search.curves.settle`).

While settling, and on large packings (more than ``SAMPLE_FROM`` hosts) once an iteration of the
full neighbourhood is estimated above ``FOCUS_WORK`` excess terms an overloaded host, an iteration
with more than ``FOCUS`` overloaded hosts moves containers from ``FOCUS`` of them drawn at random,
with shifts and one-for-one swaps only, except after ``FOCUS_STALL`` iterations without a lower
excess (then every move from every overloaded host, until the excess falls below its lowest): on the
Tianchi full view (200 resources, about 30 containers a host) an iteration of the full neighbourhood
over a dozen overloaded hosts takes seconds, and the focused search frees a host every 3 to 15 s.

It suits instances whose cheap bound is tight while first fit is a few hosts above it (Caprara–Toth
classes 1: CL_1_200_1 goes from 55 to the optimum 50 in 0.2 s). It applies to one host type (or
identical ones) without GPU cards: :func:`applicable`.

Its tables are sparse, so memory grows with the containers plus the hosts, not their product:

* the tabu memory is a ring of ``RING = TENURE[0] + TENURE[1]`` (host, until) entries per
  container, written at slot ``iteration % RING``: a container moves at most once an iteration
  and no tenure is longer than the ring, so an entry is overwritten only once it has expired;
* a host's members are a row of slots, widened when a host comes within 2 of its row's length;
* an app's count on a host is counted over the host's members, and the rules ``<A, B, k>`` of an
  arriving app are looked up (by bisection in its rules sorted by the other app) only for the
  apps on the host: a rule whose other app is absent holds, as that count is zero;
* a move is checked against caps and rules only when its excess would make it the chosen one, and
  a host without excess is skipped for containers whose leaving alone keeps more excess than the
  best move found (adding containers never lowers the excess).

None of this changes a move: on up to ``SAMPLE_FROM`` hosts the search makes the same moves, with the
same random ties, as with dense tables (a tabu table containers x hosts, app counts apps x hosts;
``tests/solvers/search/test_tabu.py`` pins their results). On more hosts an iteration only looks at
``SAMPLE`` destination hosts besides the overloaded ones (half with the most room, half at random):
on the Tianchi 2018 data set B on the uniform fleet (68,224 containers, 24,078 cross-app rules) it
goes from the 5,106 or 5,107 hosts of :mod:`solvers.search.spread` to the volume bound 5,087 (so an
optimum) in 30 to 70 s, and from the 5,724 of first fit to 5,087 in 266 s
(``benchmarks/bench_tabu_large.py``; the ejection chains of :mod:`solvers.search.repack` free 4 and 2
hosts from the same starts in 300 s).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numba
import numpy as np

from packing.feasibility.checker import check
from packing.feasibility.predicates import TOL, ClusterState, over_cap, rule_broken
from packing.model.instance import UNPLACED, App, HostType, Instance, Placement
from solvers.search.jit import ready
from solvers.search.tabu_scope import applicable

if TYPE_CHECKING:
    from solvers.base import SolveOptions, Stop

CHUNK_SECONDS = 0.1
"""About this long between two looks at the clock (the chunk of iterations adapts to it)."""

PATIENCE = 20_000
"""Give up on a number of hosts after this many iterations without a lower total excess."""

TENURE = (5, 10)
"""A container that left a host may not return for ``TENURE[0] + U[0, TENURE[1])`` iterations."""

_over_cap = numba.njit(cache=True)(over_cap)
_rule_broken = numba.njit(cache=True)(rule_broken)

RING = TENURE[0] + TENURE[1]
"""Tabu entries kept per container (more than the longest tenure: see the module docstring)."""

SLOTS = 8
"""Member slots per host beyond the fullest host's containers at the start (doubled as needed)."""

SAMPLE = 100
"""Destination hosts an iteration looks at on large packings (see :func:`tabu_pack`)."""

SAMPLE_FROM = 1000
"""Packings on more hosts than this are searched with a sample of destinations by default.

On the Tianchi uniform fleet (about 5,100 hosts), samples of 100 reached the bound from 5,107 hosts
in about 33 s, 200 in 41 s, 400 in 50 s (one run each), and 50 stalled one host above it.
"""

NO_RULE = 1 << 62
"""The ``k`` of a pair of apps without a rule (no count reaches it)."""


# ----------------------------------------------------------------------------------------------
# compiled core
@numba.njit(cache=True, inline="always")
def xorshift_next(state):  # pragma: no cover - compiled
    """xorshift64*: the next number in [0, 1) from ``state[0]`` (updated in place).

    The one generator of the compiled searches (tabu, repack): ``state`` is a ``uint64`` array of
    shape ``(1,)``, seeded by the caller.
    """
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
def _is_tabu(i, b, it, t_host, t_until, t_max):  # pragma: no cover - compiled
    """Whether container ``i`` (-1: none) may not go to host ``b`` at iteration ``it``."""
    if i < 0 or t_max[i] <= it:
        return False
    for s in range(t_host.shape[1]):
        if t_host[i, s] == b and t_until[i, s] > it:
            return True
    return False


@numba.njit(cache=True, inline="always")
def _set_tabu(i, b, it, until, t_host, t_until, t_max):  # pragma: no cover - compiled
    """Container ``i`` may not go back to host ``b`` before iteration ``until`` (set at ``it``)."""
    s = it % t_host.shape[1]
    t_host[i, s] = b
    t_until[i, s] = until
    if until > t_max[i]:
        t_max[i] = until


@numba.njit(cache=True, inline="always")
def _count(c, row, n, col, app, m1, m2, p1, p2):  # pragma: no cover - compiled
    """Containers of count column ``c`` on a host (members ``row[:n]``) after the exchange."""
    k = 0
    for x in range(n):
        q = row[x]
        if q != m1 and q != m2 and col[app[q]] == c:
            k += 1
    if p1 >= 0 and col[app[p1]] == c:
        k += 1
    if p2 >= 0 and col[app[p2]] == c:
        k += 1
    return k


@numba.njit(cache=True, inline="always")
def _rule_k(ptr, cols, ks, a, o):  # pragma: no cover - compiled
    """The smallest ``k`` of app ``a``'s rules with column ``o`` (``cols`` sorted per app)."""
    lo = ptr[a]
    hi = ptr[a + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if cols[mid] < o:
            lo = mid + 1
        else:
            hi = mid
    k = NO_RULE
    while lo < ptr[a + 1] and cols[lo] == o:
        if ks[lo] < k:
            k = ks[lo]
        lo += 1
    return k


@numba.njit(cache=True)
def counts_ok(row, n, col, app, cap, rules, m1, m2, p1, p2):  # pragma: no cover - compiled
    """Whether caps and ``<A, B, k>`` rules hold on a host after an exchange.

    The host's members are ``row[:n]``; ``m1, m2`` (-1: none) leave it and ``p1, p2`` arrive.
    Only arriving containers can break a cap or a rule (fewer containers never do), so the apps
    of ``p1`` and ``p2`` are checked, with the predicates of :mod:`packing.feasibility.predicates`, against
    every app on the host after the exchange (a rule with an absent app holds: its count is 0).
    ``rules`` are the CSR tables of :func:`packing.feasibility.predicates._rule_tables` with each app's
    columns sorted.
    """
    in_ptr, in_cols, in_k, out_ptr, out_cols, out_k = rules
    for p in (p1, p2):
        if p < 0:
            continue
        a = app[p]
        c = col[a]
        if c < 0:
            continue
        after = _count(c, row, n, col, app, m1, m2, p1, p2)
        if _over_cap(after, cap[a]):
            return False
        if in_ptr[a + 1] == in_ptr[a] and out_ptr[a + 1] == out_ptr[a]:
            continue
        for x in range(-2, n):  # every container on the host after the exchange
            q = p1 if x == -2 else (p2 if x == -1 else row[x])
            if q < 0 or (x >= 0 and (q == m1 or q == m2)):
                continue
            o = col[app[q]]
            if o < 0:
                continue
            there = _count(o, row, n, col, app, m1, m2, p1, p2)
            # <A, a, k>: a host running A takes <= k of a; <a, B, k>: the other way round
            if _rule_broken(there, after, _rule_k(in_ptr, in_cols, in_k, a, o)):
                return False
            if _rule_broken(after, there, _rule_k(out_ptr, out_cols, out_k, a, o)):
                return False
    return True


@numba.njit(cache=True)
def _relocate(i, dst, bin_of, load, members, mlen, mpos, size):  # pragma: no cover - compiled
    """Move container ``i`` to host ``dst`` (member lists and loads follow)."""
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


@numba.njit(cache=True)
def _candidates(n_bins, sample, load, src, limit, inv, cand, mark, it,
                rng):  # pragma: no cover - compiled
    """The hosts an iteration moves containers to, ascending in ``cand``; returns their number.

    Every host when ``sample`` is 0 or covers them; else the source hosts (``src``, shape
    ``(n_bins,)``: the overloaded hosts the iteration moves containers from), the
    ``sample // 2`` with the most room (the least relative free capacity over the resources)
    and ``sample // 2`` drawn at random. ``mark`` (shape ``(n_bins,)``) is scratch.
    """
    if sample <= 0 or n_bins <= sample:
        for b in range(n_bins):
            cand[b] = b
        return n_bins
    room = np.empty(n_bins)
    for b in range(n_bins):
        v = 1e300
        for r in range(load.shape[1]):
            f = (limit[r] - load[b, r]) * inv[r]
            if f < v:
                v = f
        room[b] = -v
    stamp = it + 1
    n = 0
    for b in np.argsort(room)[: sample // 2]:
        mark[b] = stamp
        cand[n] = b
        n += 1
    for b in range(n_bins):
        if src[b] and mark[b] != stamp:
            mark[b] = stamp
            cand[n] = b
            n += 1
    for _ in range(sample - sample // 2):
        b = min(int(xorshift_next(rng) * n_bins), n_bins - 1)
        if mark[b] != stamp:
            mark[b] = stamp
            cand[n] = b
            n += 1
    cand[:n].sort()
    return n


@numba.njit(cache=True)
def _search(iters, n_bins, bin_of, load, members, mlen, mpos, size, app, cap, col, rules,
            use_counts, limit, inv, exc, t_host, t_until, t_max, it_box, best_total, rng,
            tenure_min, tenure_span, sample, cand, mark, focus, source, stall,
            focus_stall):  # pragma: no cover - compiled
    """Up to ``iters`` iterations on hosts ``0..n_bins-1``.

    ``exc`` (shape ``(n_bins,)``) holds every host's excess, ``it_box[0]`` the iteration counter
    and ``best_total[0]`` the lowest total excess met on this number of hosts; all are updated in
    place. Containers move from the overloaded hosts to the hosts :func:`_candidates` picks
    (``sample``; ``cand``, ``mark`` and ``source`` are scratch, shape ``(n_bins,)``). With
    ``focus`` > 0 and more overloaded hosts than that, an iteration moves from ``focus`` of them
    drawn at random and makes only shifts and one-for-one swaps, unless ``stall[0]`` (iterations
    since the lowest total excess last fell, updated in place) has reached ``focus_stall``.
    Returns 1 when the excess is zero, 2 when a host has fewer than 2 free member slots (grow
    ``members``, then go on), else 0.
    """
    slots = members.shape[1]
    for _ in range(iters):
        total = 0.0
        for b in range(n_bins):
            total += exc[b]
        if total <= 0.0:
            return 1
        it = it_box[0]
        n_over = 0
        for b in range(n_bins):
            source[b] = exc[b] > 0.0
            if source[b]:
                n_over += 1
        wide = not 0 < focus < n_over or stall[0] >= focus_stall
        if not wide:  # sources: `focus` overloaded hosts drawn at random; shifts and 1-1 swaps
            for b in range(n_bins):
                source[b] = False
            picked = 0
            while picked < focus:
                k = min(int(xorshift_next(rng) * n_over), n_over - 1)
                for b in range(n_bins):
                    if exc[b] > 0.0:
                        if k == 0:
                            if not source[b]:
                                source[b] = True
                                picked += 1
                            break
                        k -= 1
        n_cand = _candidates(n_bins, sample, load, source, limit, inv, cand, mark, it, rng)
        best = 1e300
        ties = 0
        mi1 = -1
        mi2 = -1
        mj1 = -1
        mj2 = -1
        mdst = -1
        for b1 in range(n_bins):
            if not source[b1]:
                continue
            for x in range(mlen[b1]):
                i = members[b1, x]
                for x2 in range(x, mlen[b1] if wide else x + 1):  # x2 == x: i alone, else (i, i2)
                    i2 = members[b1, x2] if x2 > x else -1
                    # what b1 keeps at least: containers arriving only add excess
                    base1 = _excess(load[b1], size, i, i2, -1, -1, limit, inv) - exc[b1]
                    for q in range(n_cand):
                        b2 = cand[q]
                        full = exc[b2] <= 0.0  # then b2's excess can only grow: d >= b1's part
                        if b2 == b1 or (full and base1 >= best + 1e-12):
                            continue
                        t_out = -1  # whether i or i2 may not go to b2 (looked up when needed)
                        # j1 == -1: shift (i, i2) to b2; else swap with j1 (and j2)
                        for y in range(-1, mlen[b2]):
                            j1 = members[b2, y] if y >= 0 else -1
                            if y >= 0 and full and _excess(load[b1], size, i, i2, j1, -1, limit,
                                                           inv) - exc[b1] >= best + 1e-12:
                                continue  # and with a second container j2 even more
                            for y2 in range(y, mlen[b2] if (y >= 0 and i2 < 0 and wide) else y + 1):
                                j2 = members[b2, y2] if y2 > y else -1
                                d = (_excess(load[b1], size, i, i2, j1, j2, limit, inv) - exc[b1]
                                     + _excess(load[b2], size, j1, j2, i, i2, limit, inv)
                                     - exc[b2])
                                if not d < best + 1e-12:
                                    continue
                                if t_out < 0:
                                    t_out = 1 if (
                                        _is_tabu(i, b2, it, t_host, t_until, t_max)
                                        or _is_tabu(i2, b2, it, t_host, t_until, t_max)) else 0
                                is_tabu = t_out == 1 or _is_tabu(
                                    j1, b1, it, t_host, t_until, t_max) or _is_tabu(
                                    j2, b1, it, t_host, t_until, t_max)
                                if is_tabu and total + d >= best_total[0] - 1e-12:
                                    continue
                                if use_counts and not (
                                        counts_ok(members[b1], mlen[b1], col, app, cap, rules,
                                                  i, i2, j1, j2)
                                        and counts_ok(members[b2], mlen[b2], col, app, cap,
                                                      rules, j1, j2, i, i2)):
                                    continue
                                if d < best - 1e-12:
                                    best = d
                                    ties = 1
                                else:
                                    ties += 1
                                    if xorshift_next(rng) * ties >= 1.0:
                                        continue
                                mi1, mi2, mj1, mj2, mdst = i, i2, j1, j2, b2
        it_box[0] = it + 1
        if mdst < 0:  # every move is tabu: wait for tenures to end
            continue
        src = bin_of[mi1]
        for k in (mi1, mi2):
            if k >= 0:
                _relocate(k, mdst, bin_of, load, members, mlen, mpos, size)
                _set_tabu(k, src, it, it + tenure_min + int(xorshift_next(rng) * tenure_span),
                          t_host, t_until, t_max)
        for k in (mj1, mj2):
            if k >= 0:
                _relocate(k, src, bin_of, load, members, mlen, mpos, size)
                _set_tabu(k, mdst, it, it + tenure_min + int(xorshift_next(rng) * tenure_span),
                          t_host, t_until, t_max)
        exc[src] = _excess(load[src], size, -1, -1, -1, -1, limit, inv)
        exc[mdst] = _excess(load[mdst], size, -1, -1, -1, -1, limit, inv)
        total += best
        stall[0] += 1
        if total < best_total[0] - 1e-12:
            stall[0] = 0
        if total < best_total[0]:
            best_total[0] = total
        if mlen[src] > slots - 2 or mlen[mdst] > slots - 2:
            return 2
    total = 0.0
    for b in range(n_bins):
        total += exc[b]
    return 1 if total <= 0.0 else 0


@numba.njit(cache=True)
def _drop(b, n_bins, weight, bin_of, load, members, mlen, mpos, size, app, cap, col, rules,
          use_counts, limit, inv, exc, t_host, t_until, eject):  # pragma: no cover - compiled
    """Empty host ``b`` onto hosts ``0..n_bins-2`` (heaviest first, by :func:`_insert`).

    Host ``n_bins - 1`` is renumbered ``b`` first, so the hosts in use stay ``0..n_bins-2``.
    ``members`` must have room for every container of host ``b`` on any host, and 3 more.
    Returns whether every container found a host (else the state is partial: restore it).
    """
    last = n_bins - 1
    if b != last:  # swap host b and the last host (lists and loads)
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
    for i in range(t_host.shape[0]):  # tabu entries of both hosts end
        for s in range(t_host.shape[1]):
            if t_host[i, s] == b or t_host[i, s] == last:
                t_until[i, s] = 0
    items = members[last, : mlen[last]].copy()
    items = items[np.argsort(-weight[items], kind="mergesort")]
    for i in items:
        bin_of[i] = -1
    mlen[last] = 0
    for r in range(load.shape[1]):
        load[last, r] = 0.0
    for h in range(last):
        exc[h] = _excess(load[h], size, -1, -1, -1, -1, limit, inv)
    exc[last] = 0.0
    done, failed = _insert(items, 0, last, bin_of, load, members, mlen, mpos, size, app, cap,
                           col, rules, use_counts, limit, inv, exc, eject)
    return done == items.shape[0] and failed == 0


@numba.njit(cache=True)
def _insert(items, pos, n_bins, bin_of, load, members, mlen, mpos, size, app, cap, col, rules,
            use_counts, limit, inv, exc, eject):  # pragma: no cover - compiled
    """Place the unplaced containers ``items[pos:]`` (shape ``(k,)``) on hosts ``0..n_bins-1``.

    Each goes where it adds the least excess among the hosts whose caps and rules take it. When
    none does and ``eject`` holds, one container ``j`` of a host ``h`` moves to another host ``g``
    so that ``h`` takes it (an ejection: the pair with the least added excess on ``h`` and ``g``,
    caps and rules kept on both). ``exc`` (shape ``(n_bins,)``) follows.

    Returns:
        ``(next, failed)``: the position reached (``len(items)`` when done; less when a host came
        within 2 of its member slots: grow ``members`` and call again from there) and the number
        of containers neither way placed (left with ``bin_of == -1``).
    """
    slots = members.shape[1]
    failed = 0
    for t in range(pos, items.shape[0]):
        i = items[t]
        best = 1e300
        dst = -1
        ej = -1
        eg = -1
        for h in range(n_bins):
            d = _excess(load[h], size, -1, -1, i, -1, limit, inv) - exc[h]
            if not d < best:
                continue
            if use_counts and not counts_ok(members[h], mlen[h], col, app, cap, rules, -1, -1,
                                            i, -1):
                continue
            best = d
            dst = h
        if dst < 0 and use_counts and eject:  # caps or rules keep it off every host: eject one
            for h in range(n_bins):
                for x in range(mlen[h]):
                    j = members[h, x]
                    dh = _excess(load[h], size, j, -1, i, -1, limit, inv) - exc[h]
                    if not dh < best:
                        continue
                    if not counts_ok(members[h], mlen[h], col, app, cap, rules, j, -1, i, -1):
                        continue
                    for g in range(n_bins):
                        if g == h:
                            continue
                        dg = _excess(load[g], size, -1, -1, j, -1, limit, inv) - exc[g]
                        if not dh + dg < best:
                            continue
                        if not counts_ok(members[g], mlen[g], col, app, cap, rules, -1, -1, j,
                                         -1):
                            continue
                        best = dh + dg
                        dst, ej, eg = h, j, g
            if ej >= 0:
                _relocate(ej, eg, bin_of, load, members, mlen, mpos, size)
                exc[eg] = _excess(load[eg], size, -1, -1, -1, -1, limit, inv)
        if dst < 0:
            failed += 1
            continue
        mpos[i] = mlen[dst]
        members[dst, mlen[dst]] = i
        mlen[dst] += 1
        bin_of[i] = dst
        for r in range(size.shape[1]):
            load[dst, r] += size[i, r]
        exc[dst] = _excess(load[dst], size, -1, -1, -1, -1, limit, inv)
        if mlen[dst] > slots - 2 or (ej >= 0 and mlen[eg] > slots - 2):
            return t + 1, failed
    return items.shape[0], failed


DROP_TRIES = 8
"""Hosts tried, lightest first, when emptying one fails (a container with no host left)."""

DROP_TRIES_LARGE = 256
"""The same on packings searched with a sample of destinations; a host that fails is not tried
again (on Tianchi the lightest hosts hold an app that excludes 1,244 others)."""

FOCUS = 2
"""Overloaded hosts an iteration moves containers from while settling unplaced containers, and on
large packings (see :func:`_search`)."""

FOCUS_WORK = 1e7
"""An iteration of the full neighbourhood estimated above this many excess terms per overloaded host
(:func:`_work`) switches a large packing to the focused search for good (Tianchi: about 5e8 on the
full view of the contest machines, 5e7 on the full view of 64c128g hosts, 1.5e6 on the reduced
view of 64c128g hosts)."""

FOCUS_STALL = 1000
"""Iterations without a lower excess after which the focused search makes every move again."""

EJECT = True
"""A container that caps or rules keep off every host takes the place of one that moves away."""


def _work(mlen: np.ndarray, n_resources: int, sample: int) -> float:
    """Excess terms an iteration of the full neighbourhood evaluates per overloaded host, roughly.

    ``resources x (containers a host)^3 x destinations``: pairs of containers out of the
    overloaded host against one or two of each destination's (``mlen`` ``(n,)``: containers per
    host). Deterministic, unlike a clock.
    """
    per = float(mlen.mean()) if len(mlen) else 0.0
    dest = min(len(mlen), sample) if sample > 0 else len(mlen)
    return float(n_resources) * per ** 3 * dest


def load() -> None:
    """Load the compiled search now (from numba's disk cache, or by compiling it).

    Runs the search a few iterations on a tiny packing, so that a caller can start its clock
    after the loading (about 0.7 s of CPU in a new process, most of it numba's own registries).
    """
    tight = Instance("load-search", ("s",), (HostType("h", (10.0,), 3),),
                     (App("a", (3.0,), 4), App("b", (4.0,), 2)))
    tabu_pack(tight, np.array([0, 0, 0, 1, 1, 2]), target=2, time_limit=600, max_iters=50)


def warm(on_disk: bool = False) -> bool:
    """Whether the compiled search runs without compiling (in this process or numba's disk cache).

    With ``on_disk`` only the disk cache counts (see :func:`solvers.search.jit.ready`).
    """
    return ready(_search, _drop, on_disk=on_disk)


# ----------------------------------------------------------------------------------------------
def _sorted_rules(tables: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """The rule tables of :class:`packing.feasibility.predicates.ClusterState`, each app's columns sorted.

    Args:
        tables: ``(in_ptr, in_cols, in_k, out_ptr, out_cols, out_k)``, pointers of shape
            ``(n_apps + 1,)``, the others ``(n_rules,)``.

    Returns:
        The same tables (int64) with ``cols`` ascending within each app (``k`` follows).
    """
    out: list[np.ndarray] = []
    for ptr, cols, ks in (tables[:3], tables[3:]):
        ptr = np.asarray(ptr, dtype=np.int64)
        owner = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
        order = np.lexsort((np.asarray(cols), owner))
        out += [ptr, np.asarray(cols, dtype=np.int64)[order], np.asarray(ks, dtype=np.int64)[order]]
    return tuple(out)


def _room(members: np.ndarray, slots: int) -> np.ndarray:
    """``members`` (shape ``(hosts, s)``, -1 where empty) with at least ``slots`` columns."""
    if members.shape[1] >= slots:
        return members
    grown = np.full((members.shape[0], max(slots, 2 * members.shape[1])), -1, dtype=np.int64)
    grown[:, : members.shape[1]] = members
    return grown


# ----------------------------------------------------------------------------------------------
def tabu_pack(
    instance: Instance,
    host_of: np.ndarray,
    *,
    target: int,
    time_limit: float | None = None,
    seed: int = 0,
    on_improve: Callable[[int], None] | None = None,
    max_iters: int | None = None,
    patience: int = PATIENCE,
    stop: Stop | None = None,
    sample: int | None = None,
    options: SolveOptions | None = None,
    hosts: np.ndarray | None = None,
    settle_limit: float | None = None,
    focus: int | None = None,
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
        sample: with more hosts than this, an iteration moves containers only to the overloaded
            hosts, the ``sample // 2`` with the most room and ``sample // 2`` drawn at random
            (0: always every host; ``None``: ``SAMPLE`` when ``host_of`` uses more than
            ``SAMPLE_FROM`` hosts, else 0).
        options: the common options (:class:`solvers.base.SolveOptions`); when given, its
            ``time_limit``, ``seed`` and ``stop`` replace the keywords of those names.
        hosts: open hosts, shape ``(k,)``. With them ``host_of`` may leave containers unplaced
            (``UNPLACED``): they go on these hosts and those ``host_of`` uses (where they add the
            least excess; a container that caps or rules keep off every host takes the place of
            one that moves to another host: :func:`_insert`), and the search first drives the
            excess to zero on exactly these hosts, a packing on a fixed number of hosts, before
            it frees hosts as usual. Without them an unplaced container returns ``None``.
        settle_limit: seconds for that first stage (``None``: ``time_limit``); ``None`` is
            returned when it does not reach zero excess in that time.
        focus: in that first stage, and on packings searched with a sample of destinations once
            an iteration of every move is estimated above ``FOCUS_WORK`` terms, an iteration with more
            overloaded hosts than this moves containers from this many of them, drawn at random,
            by shifts and one-for-one swaps, except after ``FOCUS_STALL`` iterations without a
            lower excess (0: from every overloaded host, every move; ``None``: ``FOCUS``).

    Raises:
        TypeError: neither ``time_limit`` nor ``options`` is given.

    Returns:
        Host per container on the fewest hosts found, all fewer than ``host_of`` uses (with
        ``hosts``: at most as many as the open hosts), checked by :func:`packing.feasibility.checker.check`,
        shape ``(n_containers,)``; ``None`` if none was found. Hosts are taken from those
        ``host_of`` uses (and ``hosts``), in index order.
    """
    t0 = time.perf_counter()
    if options is not None:
        time_limit, seed, stop = options.time_limit, options.seed, options.stop
    if time_limit is None:
        raise TypeError("tabu_pack needs time_limit or options")
    inst = instance
    host_of = np.asarray(host_of, dtype=np.int64)
    placed = host_of != UNPLACED
    if time_limit <= 0 or not applicable(inst) or (hosts is None and not placed.all()):
        return None
    used = np.flatnonzero(np.bincount(host_of[placed]))  # np.unique imports numpy.ma (20 ms)
    if hosts is not None:
        used = np.union1d(used, np.asarray(hosts, dtype=np.int64))
    n_bins = len(used)
    n = inst.n_containers
    settle = hosts is not None
    if focus is None:
        focus = FOCUS
    if n_bins <= max(target, 1) and not settle:
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
    rules = _sorted_rules(st.rule_tables)
    use_counts = bool((col >= 0).any())
    bin_of = np.full(n, -1, dtype=np.int64)
    bin_of[placed] = np.searchsorted(used, host_of[placed])
    load = np.zeros((n_bins, inst.n_resources))
    np.add.at(load, bin_of[placed], size[placed])
    per_bin = np.bincount(bin_of[placed], minlength=n_bins)
    members = np.full((n_bins, int(per_bin.max(initial=0)) + SLOTS), -1, dtype=np.int64)
    mlen = np.zeros(n_bins, dtype=np.int64)
    mpos = np.zeros(n, dtype=np.int64)
    idx = np.flatnonzero(placed)
    order = idx[np.argsort(bin_of[idx], kind="stable")]
    starts = np.concatenate([[0], np.cumsum(per_bin)[:-1]])
    mpos[order] = np.arange(len(order)) - starts[bin_of[order]]
    members[bin_of[order], mpos[order]] = order
    mlen[:] = per_bin
    exc = np.zeros(n_bins)
    t_host = np.full((n, RING), -1, dtype=np.int64)  # tabu ring: (host, until) per container
    t_until = np.zeros((n, RING), dtype=np.int64)
    t_max = np.zeros(n, dtype=np.int64)  # the latest until per container
    it_box = np.zeros(1, dtype=np.int64)
    if sample is None:
        sample = SAMPLE if n_bins > SAMPLE_FROM else 0
    cand = np.zeros(n_bins, dtype=np.int64)
    mark = np.zeros(n_bins, dtype=np.int64)
    rng = np.array([np.random.default_rng(seed).integers(1, 2**63, dtype=np.uint64)],
                   dtype=np.uint64)
    best: np.ndarray | None = None
    if settle:  # the unplaced containers go on the open hosts, overloading them
        for b in range(n_bins):
            exc[b] = _excess(load[b], size, -1, -1, -1, -1, limit, inv)
        items = np.flatnonzero(~placed)
        items = items[np.argsort(-weight[items], kind="mergesort")]
        pos, failed = 0, 0
        while pos < len(items):
            pos, lost = _insert(items, pos, n_bins, bin_of, load, members, mlen, mpos, size, app,
                                cap, col, rules, use_counts, limit, inv, exc, EJECT)
            failed += lost
            if pos < len(items):  # a host is close to its member slots
                members = _room(members, 2 * members.shape[1])
        if failed:
            return None
    src = np.zeros(n_bins, dtype=np.bool_)
    costly = settle  # whether the full neighbourhood is too slow here (settling starts focused)
    stuck = np.zeros(n_bins, dtype=np.bool_)  # hosts that could not be emptied (large packings)
    tries = DROP_TRIES if sample <= 0 else DROP_TRIES_LARGE
    while n_bins > target or settle:
        wsum = np.bincount(bin_of, weights=weight, minlength=n_bins)[:n_bins]
        dropped = settle
        # the lightest host is the easiest to empty; when the caps or rules leave one of its
        # containers no host, the state is restored and the next lightest is tried (on large
        # packings the host is marked and not tried again)
        light = np.argsort(wsum, kind="stable")
        light = light[~stuck[light]][:tries] if sample > 0 else light[:tries]
        for b in ([] if settle else light.tolist()):
            members = _room(members, int(mlen[:n_bins].max() + mlen[b]) + 5)
            saved = (bin_of.copy(), load.copy(), members.copy(), mlen.copy(), mpos.copy(),
                     exc.copy(), t_host.copy(), t_until.copy())
            if _drop(b, n_bins, weight, bin_of, load, members, mlen, mpos, size, app, cap,
                     col, rules, use_counts, limit, inv, exc, t_host, t_until, EJECT):
                dropped = True
                stuck[b] = stuck[n_bins - 1]  # host n_bins - 1 is now host b
                break
            stuck[b] = True
            for arr, old in zip((bin_of, load, members, mlen, mpos, exc, t_host, t_until), saved,
                                strict=True):
                arr[...] = old
        if not dropped:
            break  # no host among the lightest can be emptied
        if not settle:
            n_bins -= 1
        stage_end = time_limit if not settle or settle_limit is None else min(settle_limit,
                                                                            time_limit)
        best_total = np.array([exc[:n_bins].sum()])
        solved = False
        if focus > 0 and (settle or sample > 0) and not costly:  # decided where a stage starts
            costly = _work(mlen[:n_bins], inst.n_resources, sample) > FOCUS_WORK
        narrow = focus if costly else 0
        stall = np.zeros(1, dtype=np.int64)
        step, last_best, since = 8, best_total[0], 0
        while not solved:
            now = time.perf_counter()
            if now - t0 >= stage_end or since >= patience or (
                    max_iters is not None and it_box[0] >= max_iters) or (
                    stop is not None and stop.is_set()):
                break
            if max_iters is not None:
                step = int(min(step, max_iters - it_box[0]))
            start = int(it_box[0])
            code = _search(step, n_bins, bin_of, load, members, mlen, mpos, size, app, cap, col,
                           rules, use_counts, limit, inv, exc, t_host, t_until, t_max, it_box,
                           best_total, rng, TENURE[0], TENURE[1], sample, cand, mark, narrow,
                           src, stall, FOCUS_STALL)
            solved = code == 1
            if code == 2:  # a host is close to its member slots
                members = _room(members, 2 * members.shape[1])
            done = int(it_box[0]) - start
            took = time.perf_counter() - now
            since = 0 if best_total[0] < last_best - 1e-12 else since + done
            last_best = min(last_best, best_total[0])
            # the next chunk takes about CHUNK_SECONDS, and not past the time limit
            per_it = took / max(done, 1)
            room = max(stage_end - (time.perf_counter() - t0), 0.0)
            step = int(max(1, min(CHUNK_SECONDS, room) / max(per_it, 1e-7)))
        if not solved:
            break
        settle = False
        best = used[bin_of]
        if on_improve is not None:
            on_improve(n_bins)
    # zero excess is feasible by construction; the checker confirms the packing returned (once:
    # it takes about 0.5 s on 68,000 containers)
    if best is not None and check(inst, Placement.from_arrays(inst, best, None),
                                  require_all=True):
        return None  # pragma: no cover
    return best


__all__ = ["applicable", "load", "tabu_pack", "warm", "xorshift_next"]
