"""Free hosts of a large packing by ejection chains (a consistent-neighbourhood search).

From a feasible packing, the lightest host is emptied: its containers go to a *pool* and the host
is closed. Each iteration takes the heaviest container of the pool and inserts it into an open host,
ejecting back into the pool, when it does not fit as it is, one or two of that host's containers
or every container of the host whose app a rule ties to the inserted one's;
the move chosen ejects the least weight (a container weighs its squared weighted size, so small
containers are cheap to eject and easy to place again), direct insertions (no ejection) first, the
fullest host first among them. A container ejected from a host may not return to it for a few
iterations (a *tabu* tenure kept per container: one host and one iteration, so the table has one
entry per container instead of one per container and host). Every intermediate state is a feasible
partial packing: a move is checked with :func:`packing.feasibility.kernels.feasible` on the host's state
after the ejections, so caps, exclusions and ``<A, B, k>`` rules hold at every step.

When the pool is empty, the packing uses one host fewer; it is recorded and the next host is
emptied. When the pool's weight has not dropped for ``patience`` iterations the search returns to
the best packing and tries the next lightest host instead.

The search scales with the hosts in use times the containers on a host (no table of containers
times hosts): on the Tianchi 2018 data (68,224 containers, about 5,100 hosts on the uniform fleet)
an iteration takes 3 to 30 ms. It frees few hosts there (about 3 in 6 minutes after the filling of
:mod:`solvers.search.spread`): the emptied host's containers are usually tied by rules to containers
spread over every other host, and two ejections rarely untie them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numba
import numpy as np

from packing.feasibility.checker import check
from packing.feasibility.kernels import feasible, fits_c, place
from packing.feasibility.predicates import ClusterState
from packing.model.instance import UNPLACED, Instance, Placement
from solvers.search.spread import applicable, weighted_capacity, work_arrays
from solvers.search.tabu import xorshift_next  # the one xorshift64* of the compiled searches

if TYPE_CHECKING:
    from solvers.base import Stop

CHUNK_SECONDS = 0.2
"""About this long between two looks at the clock."""

PATIENCE = 400
"""Iterations without a lighter pool before the search gives up on the host it empties."""

TENURE = (7, 10)
"""An ejected container may not return to its host for ``TENURE[0] + U[0, TENURE[1])`` iterations."""


@numba.njit(cache=True, inline="always")
def _take(i, h, app, demand, used, count, col, n_on, members, mlen, mpos,
          host_of):  # pragma: no cover - compiled
    """Take container ``i`` off host ``h`` (loads, counts and member lists follow)."""
    a = app[i]
    for r in range(demand.shape[1]):
        used[h, r] -= demand[a, r]
    if col[a] >= 0:
        count[h, col[a]] -= 1
    n_on[h] -= 1
    j = mpos[i]
    last = members[h, mlen[h] - 1]
    members[h, j] = last
    mpos[last] = j
    mlen[h] -= 1
    host_of[i] = -1
    if n_on[h] == 0:
        for r in range(demand.shape[1]):
            used[h, r] = 0.0


@numba.njit(cache=True, inline="always")
def _put(i, h, app, demand, used, count, col, n_on, members, mlen, mpos,
         host_of):  # pragma: no cover - compiled
    """Put container ``i`` on host ``h`` (no check: callers test :func:`feasible` first)."""
    a = app[i]
    place(h, a, demand, used, count, col, n_on)
    mpos[i] = mlen[h]
    members[h, mlen[h]] = i
    mlen[h] += 1
    host_of[i] = h


@numba.njit(cache=True, inline="always")
def _adjust(i, h, sign, app, demand, used, count, col, n_on):  # pragma: no cover - compiled
    """Add (``sign`` 1) or remove (-1) container ``i``'s load and count on ``h``; lists unchanged."""
    a = app[i]
    for r in range(demand.shape[1]):
        used[h, r] += sign * demand[a, r]
    if col[a] >= 0:
        count[h, col[a]] += sign
    n_on[h] += sign


@numba.njit(cache=True, inline="always")
def _room(h, a, e1, e2, app, demand, capacity, used):  # pragma: no cover - compiled
    """Whether the capacities alone let ``a`` in once ``e1`` (and ``e2``, if >= 0) left ``h``.

    A filter before the full test (same predicate, :func:`packing.feasibility.kernels.fits_c`).
    """
    for r in range(demand.shape[1]):
        v = used[h, r] + demand[a, r] - demand[app[e1], r]
        if e2 >= 0:
            v -= demand[app[e2], r]
        if not fits_c(v, capacity[h, r]):
            return False
    return True


@numba.njit(cache=True, inline="always")
def rel_any(ce, a, col, in_ptr, in_cols, out_ptr, out_cols):  # pragma: no cover - compiled
    """Whether count column ``ce`` belongs to app ``a`` or an app a rule ties to ``a``."""
    if ce == col[a]:
        return True
    for q in range(in_ptr[a], in_ptr[a + 1]):
        if in_cols[q] == ce:
            return True
    for q in range(out_ptr[a], out_ptr[a + 1]):
        if out_cols[q] == ce:
            return True
    return False


@numba.njit(cache=True)
def _search(iters, it_box, pool, pool_len, open_hosts, n_open, app, weight, demand, capacity, used,
            count, col, cap, in_ptr, in_cols, in_k, out_ptr, out_cols, out_k, n_on, members, mlen,
            mpos, host_of, wcap, tabu_host, tabu_it, rng, tenure_min, tenure_span,
            rel):  # pragma: no cover - compiled
    """Up to ``iters`` insertions from the pool; returns the pool's new length (0: all placed).

    ``pool[:pool_len]`` holds the containers to place, ``open_hosts[:n_open]`` the hosts they may
    go to. ``it_box[0]`` counts iterations. Arrays are updated in place.
    """
    K = members.shape[1]
    n_r = demand.shape[1]
    for _ in range(iters):
        if pool_len == 0:
            return 0
        it = it_box[0]
        it_box[0] = it + 1
        # the heaviest container of the pool (ties at random)
        pi = 0
        for q in range(1, pool_len):
            if weight[pool[q]] > weight[pool[pi]] + 1e-12 or (
                    weight[pool[q]] > weight[pool[pi]] - 1e-12 and xorshift_next(rng) < 0.5):
                pi = q
        c = pool[pi]
        a = app[c]
        ca = col[a]
        if ca >= 0:  # the count columns of every app a rule ties to a
            for q in range(in_ptr[a], in_ptr[a + 1]):
                rel[in_cols[q]] = True
            for q in range(out_ptr[a], out_ptr[a + 1]):
                rel[out_cols[q]] = True
            rel[ca] = True
        best_cost = 1e300
        best_h = -1
        best_e1 = -1
        best_e2 = -1
        ties = 0
        for oi in range(n_open):
            h = open_hosts[oi]
            if tabu_host[c] == h and tabu_it[c] > it:
                continue
            if mlen[h] < K and feasible(h, a, demand, capacity, used, count, col, cap, in_ptr,
                                        in_cols, in_k, out_ptr, out_cols, out_k):
                # direct insertion: the fullest host (after the insertion) wins
                s = 0.0
                for r in range(n_r):
                    s += (used[h, r] + demand[a, r]) * wcap[h, r]
                cost = -s
                if cost < best_cost:
                    best_cost = cost
                    best_h = h
                    best_e1 = -1
                    best_e2 = -1
                continue
            if best_cost <= 0.0 or mlen[h] == 0:
                continue  # a direct insertion exists: ejections cost more
            m = mlen[h]
            if ca >= 0:
                # eject every container a rule ties to a (then the capacities may suffice)
                wr = 0.0
                n_rel = 0
                for x in range(m):
                    e = members[h, x]
                    ce = col[app[e]]
                    if ce >= 0 and rel[ce]:
                        wr += weight[e]
                        n_rel += 1
                if 1 < n_rel < m and wr < best_cost:
                    for x in range(m):
                        e = members[h, x]
                        ce = col[app[e]]
                        if ce >= 0 and rel[ce]:
                            _adjust(e, h, -1, app, demand, used, count, col, n_on)
                    ok = feasible(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols,
                                  in_k, out_ptr, out_cols, out_k)
                    for x in range(m):
                        e = members[h, x]
                        ce = col[app[e]]
                        if ce >= 0 and rel[ce]:
                            _adjust(e, h, 1, app, demand, used, count, col, n_on)
                    if ok:
                        best_cost = wr
                        best_h = h
                        best_e1 = -2  # -2: the related set
                        best_e2 = -1
            for x in range(m):
                e1 = members[h, x]
                w1 = weight[e1]
                if w1 >= best_cost:
                    continue
                if _room(h, a, e1, -1, app, demand, capacity, used):
                    _adjust(e1, h, -1, app, demand, used, count, col, n_on)
                    ok = feasible(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols,
                                  in_k, out_ptr, out_cols, out_k)
                    _adjust(e1, h, 1, app, demand, used, count, col, n_on)
                    if ok:
                        if w1 < best_cost - 1e-12:
                            best_cost = w1
                            ties = 1
                        else:
                            ties += 1
                            if xorshift_next(rng) * ties >= 1.0:
                                continue
                        best_h = h
                        best_e1 = e1
                        best_e2 = -1
                    continue
                for y in range(x + 1, m):
                    e2 = members[h, y]
                    w2 = w1 + weight[e2]
                    if w2 >= best_cost:
                        continue
                    if not _room(h, a, e1, e2, app, demand, capacity, used):
                        continue
                    # both leave, test, both return
                    _adjust(e1, h, -1, app, demand, used, count, col, n_on)
                    _adjust(e2, h, -1, app, demand, used, count, col, n_on)
                    ok = feasible(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols,
                                  in_k, out_ptr, out_cols, out_k)
                    _adjust(e1, h, 1, app, demand, used, count, col, n_on)
                    _adjust(e2, h, 1, app, demand, used, count, col, n_on)
                    if ok:
                        if w2 < best_cost - 1e-12:
                            best_cost = w2
                            ties = 1
                        else:
                            ties += 1
                            if xorshift_next(rng) * ties >= 1.0:
                                continue
                        best_h = h
                        best_e1 = e1
                        best_e2 = e2
        if ca >= 0:
            for q in range(in_ptr[a], in_ptr[a + 1]):
                rel[in_cols[q]] = False
            for q in range(out_ptr[a], out_ptr[a + 1]):
                rel[out_cols[q]] = False
            rel[ca] = False
        if best_h < 0:
            continue  # every move is tabu: wait for tenures to end
        h = best_h
        pool_len -= 1
        pool[pi] = pool[pool_len]
        if best_e1 == -2:
            x = 0
            while x < mlen[h]:
                e = members[h, x]
                ce = col[app[e]]
                if ce >= 0 and rel_any(ce, a, col, in_ptr, in_cols, out_ptr, out_cols):
                    _take(e, h, app, demand, used, count, col, n_on, members, mlen, mpos, host_of)
                    pool[pool_len] = e
                    pool_len += 1
                    tabu_host[e] = h
                    tabu_it[e] = it + tenure_min + int(xorshift_next(rng) * tenure_span)
                else:
                    x += 1
            best_e1 = -1
        for e in (best_e1, best_e2):
            if e >= 0:
                _take(e, h, app, demand, used, count, col, n_on, members, mlen, mpos, host_of)
                pool[pool_len] = e
                pool_len += 1
                tabu_host[e] = h
                tabu_it[e] = it + tenure_min + int(xorshift_next(rng) * tenure_span)
        _put(c, h, app, demand, used, count, col, n_on, members, mlen, mpos, host_of)
    return pool_len


class _State:
    """The arrays of the search, built from a complete placement."""

    def __init__(self, inst: Instance, demand: np.ndarray, capacity: np.ndarray,
                 host_of: np.ndarray, slots: int) -> None:
        st = ClusterState.from_placement(inst, host_of)
        self.host_of = host_of.astype(np.int64).copy()
        app = inst.container_app.astype(np.int64)
        self.used = np.zeros_like(capacity)
        np.add.at(self.used, self.host_of, demand[app])
        self.count = st.count
        self.n_on = st.n_on
        n_h = inst.n_hosts
        self.members = np.full((n_h, slots), -1, dtype=np.int64)
        self.mlen = np.zeros(n_h, dtype=np.int64)
        self.mpos = np.zeros(inst.n_containers, dtype=np.int64)
        order = np.argsort(self.host_of, kind="stable")
        per = np.bincount(self.host_of, minlength=n_h)
        starts = np.concatenate([[0], np.cumsum(per)[:-1]])
        self.mpos[order] = np.arange(len(order)) - starts[self.host_of[order]]
        self.members[self.host_of[order], self.mpos[order]] = order
        self.mlen[:] = per


def repack(
    instance: Instance,
    host_of: np.ndarray,
    *,
    time_limit: float,
    target: int = 0,
    seed: int = 0,
    patience: int = PATIENCE,
    max_iters: int | None = None,
    on_improve: Callable[[int], None] | None = None,
    stop: Stop | None = None,
    use_surrogate: bool = False,
) -> np.ndarray | None:
    """Free hosts of ``host_of`` by ejection chains (see the module docstring).

    Args:
        instance: the instance (:func:`solvers.search.spread.applicable` must hold; else ``None``).
        host_of: a complete feasible placement, host per container, shape ``(n_containers,)``.
        time_limit: seconds.
        target: stop at this many hosts (a lower bound).
        seed: seed of the search's own random stream.
        patience: iterations without a lighter pool before giving up on the host being emptied.
        max_iters: stop after this many iterations in all (``None``: only the clock decides).
        on_improve: called with the number of hosts after every improvement.
        stop: a stop request (:class:`solvers.base.StopFlag`), looked at between chunks.
        use_surrogate: search on the peak surrogate of time-indexed resources (faster, safe).

    Returns:
        Host per container on the fewest hosts found, fewer than ``host_of`` uses (checked by
        :func:`packing.feasibility.checker.check`), shape ``(n_containers,)``; ``None`` if none was found.
    """
    t0 = time.perf_counter()
    inst = instance
    host_of = np.asarray(host_of, dtype=np.int64)
    if time_limit <= 0 or not applicable(inst) or (host_of == UNPLACED).any():
        return None
    demand, capacity = work_arrays(inst, use_surrogate)
    app = inst.container_app.astype(np.int64)
    wcap = weighted_capacity(demand, capacity, inst.counts)
    top = capacity.max(axis=0)
    wvec = wcap.max(axis=0) * top  # the resource weights (w_r)
    size = (demand[app] / np.where(top > 0, top, 1.0)) @ wvec
    weight = np.ascontiguousarray(size * size + 1e-9)
    per = np.bincount(host_of, minlength=inst.n_hosts)
    slots = int(min(inst.n_containers, max(64, 2 * int(per.max()))))
    st0 = ClusterState(inst)
    cap = inst.cap.astype(np.int64)
    tables = st0.rule_tables
    col = st0.col
    rng = np.array([np.random.default_rng(seed).integers(1, 2**63, dtype=np.uint64)],
                   dtype=np.uint64)
    tabu_host = np.full(inst.n_containers, -1, dtype=np.int64)
    tabu_it = np.zeros(inst.n_containers, dtype=np.int64)
    it_box = np.zeros(1, dtype=np.int64)
    best = host_of.copy()
    best_hosts = int((per > 0).sum())
    failures = np.zeros(inst.n_hosts, dtype=np.int64)
    found: np.ndarray | None = None
    rel = np.zeros(max(col.max(initial=-1) + 1, 1), dtype=np.bool_)

    def done() -> bool:
        return (time.perf_counter() - t0 >= time_limit
                or (stop is not None and stop.is_set())
                or (max_iters is not None and it_box[0] >= max_iters))

    while best_hosts > target and not done():
        s = _State(inst, demand, capacity, best, slots)
        open_mask = s.n_on > 0
        fr = np.where(capacity > 0, s.used / np.where(capacity > 0, capacity, 1.0), 0.0)
        load = fr.max(axis=1) + fr.mean(axis=1) + failures
        cand = np.flatnonzero(open_mask)
        h = int(cand[np.argmin(load[cand])])
        failures[h] += 1
        pool = np.empty(inst.n_containers, dtype=np.int64)
        items = s.members[h, :s.mlen[h]].copy()
        for i in items:
            _take(int(i), h, app, demand, s.used, s.count, col, s.n_on, s.members, s.mlen, s.mpos,
                  s.host_of)
        pool[:len(items)] = items
        pool_len = len(items)
        open_mask[h] = False
        open_hosts = np.flatnonzero(open_mask).astype(np.int64)
        best_w = float(weight[items].sum())
        since = 0
        step = 16
        while pool_len > 0 and not done() and since < patience:
            now = time.perf_counter()
            start = int(it_box[0])
            if max_iters is not None:
                step = int(max(1, min(step, max_iters - it_box[0])))
            pool_len = int(_search(  # type: ignore[call-arg]
                step, it_box, pool, pool_len, open_hosts, len(open_hosts), app,
                                   weight, demand, capacity, s.used, s.count, col, cap, *tables,
                                   s.n_on, s.members, s.mlen, s.mpos, s.host_of, wcap, tabu_host,
                                   tabu_it, rng, TENURE[0], TENURE[1], rel))
            n_done = int(it_box[0]) - start
            w = float(weight[pool[:pool_len]].sum())
            if w < best_w - 1e-12:
                best_w, since = w, 0
            else:
                since += n_done
            took = time.perf_counter() - now
            room = max(time_limit - (time.perf_counter() - t0), 0.0)
            step = int(max(1, min(CHUNK_SECONDS, room) / max(took / max(n_done, 1), 1e-7)))
        if pool_len > 0:
            continue
        out = s.host_of
        n_used = int(len(np.unique(out)))
        if n_used >= best_hosts:
            continue  # pragma: no cover - the emptied host stays closed
        if check(inst, Placement.from_arrays(inst, out, None), require_all=True):
            break  # pragma: no cover - every move keeps the packing feasible
        best = out.copy()
        best_hosts = n_used
        found = best
        failures[:] = 0
        if on_improve is not None:
            on_improve(best_hosts)
    return found


__all__ = ["repack"]
