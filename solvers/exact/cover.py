"""Exact cover by tight patterns: is there a packing on exactly ``U`` hosts when ``U`` is the bound?

On ``U`` hosts of one type the total free capacity of resource ``r`` is
``S[r] = U * C[r] - total[r]``, so every host of such a packing is filled to at least
``C[r] - S[r]`` in every resource. When ``U`` is the volume bound, ``S`` is small and the *tight
patterns* (what one host may hold with load in ``[C - S, C]``) are few. They are enumerated
(compiled depth-first search over the apps, largest first, fewest containers first), and an
integer programme looks for ``U`` of them that hold every container exactly once (integer
multiplicities, one equality per app). The programme is a set partitioning, where LP-based search
wins: CBC finds the cover of CL_10_201_3 in 2.5 s where CP-SAT finds none in 15 s. CBC runs in
a child process (:func:`solvers.exact.arcflow_partition.partition_stoppable`), so the time limit and a
stop request end it at once.
Two outcomes matter:

* a cover is a packing on ``U`` hosts, optimal when ``U`` is a lower bound;
* when the enumeration was complete and CBC proves that no cover exists, no packing on ``U``
  hosts exists either, so ``U + 1`` is a lower bound.

Exact arithmetic: the enumeration runs on the integer data of :mod:`solvers.exact.scaling` (decimals
read exactly, the checker's tolerance in the capacity, integer-valued floats below ``2**53``, so
every sum is exact): a host of a packing on ``U`` hosts holds at most ``C`` (the integer capacity
with tolerance) and so at least ``total - (U - 1) * C``, and the enumeration lists every pattern
within these limits. The list is reported complete (and so can prove ``U + 1``) only when the
scaling is exact; otherwise the relaxed integers find covers but prove nothing. Every cover is
checked by :func:`packing.feasibility.checker.check` before it is returned.

This settles the perfect packings of Caprara–Toth class 10 (67 hosts filled exactly in one
resource), where local search and the general models stall one host above the bound. It applies
to one host type (or identical ones) without GPU cards (:func:`applicable`); anti-affinity caps
and ``<A, B, k>`` rules limit the patterns (checked as the tabu search checks them, with the
predicates and rule tables of :mod:`packing.feasibility.predicates`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numba
import numpy as np

from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState, over_cap, rule_broken
from packing.model.instance import App, HostType, Instance
from solvers.exact.arcflow_partition import partition_stoppable
from solvers.exact.pricing import placement_from_counts
from solvers.exact.scaling import CBC_LIMIT, scale_columns
from solvers.search import tabu
from solvers.search.jit import ready

if TYPE_CHECKING:
    from solvers.base import Stop

_over_cap = numba.njit(cache=True)(over_cap)
_rule_broken = numba.njit(cache=True)(rule_broken)


@numba.njit(cache=True, inline="always")
def _pattern_takes(cnt_col, c, cap_a, rules, a):  # pragma: no cover - compiled
    """Whether a pattern takes one more container of app ``a`` under its cap and the rules.

    ``cnt_col`` holds the pattern's counts per :class:`ClusterState` column, shape ``(n_col,)``;
    ``c`` is the app's column (-1 for an app no cap or rule names); ``rules`` are the
    ``<A, B, k>`` CSR tables. The predicates are those of :mod:`packing.feasibility.predicates`.
    """
    if c < 0:
        return True
    in_ptr, in_cols, in_k, out_ptr, out_cols, out_k = rules
    after = cnt_col[c] + 1
    if _over_cap(after, cap_a):
        return False
    for i in range(in_ptr[a], in_ptr[a + 1]):  # <A, a, k>: a host running A takes <= k of a
        o = in_cols[i]
        if _rule_broken(cnt_col[o] + (1 if o == c else 0), after, in_k[i]):
            return False
    for i in range(out_ptr[a], out_ptr[a + 1]):  # <a, B, k>
        o = out_cols[i]
        if _rule_broken(after, cnt_col[o] + (1 if o == c else 0), out_k[i]):
            return False
    return True


MAX_PATTERNS = 60_000
"""Most tight patterns enumerated (fewer containers per pattern are enumerated first)."""

NODES_PER_SECOND = 20_000_000
"""Candidate apps the enumeration may try per second of its time limit (it tries 50-100 million
per second on Caprara-Toth; the margin keeps it within its time with rules to check)."""


@dataclass(frozen=True)
class CoverResult:
    """What the exact cover found for ``hosts`` hosts.

    Attributes:
        hosts: the number of hosts asked for.
        host_of: host per container when a cover was found, shape ``(n_containers,)``.
        infeasible: no packing on ``hosts`` hosts exists (complete enumeration, CBC proof).
        patterns: tight patterns enumerated.
        complete: whether every tight pattern was enumerated.
        seconds: wall time.
    """

    hosts: int
    host_of: np.ndarray | None
    infeasible: bool
    patterns: int
    complete: bool
    seconds: float


@numba.njit(cache=True)
def _enumerate(size, ub, lo, hi, suffix, depth_max, out, order, col, cap, rules, use_rules,
               max_nodes):  # pragma: no cover - compiled
    """Tight patterns of at most ``depth_max`` containers, app indices non-decreasing.

    Args:
        size: demand per app, shape ``(m, d)``, apps sorted largest first.
        ub: most containers of each app per host, shape ``(m,)``.
        lo: least load of a tight pattern per resource, shape ``(d,)``.
        hi: most load per resource (the capacity with tolerance), shape ``(d,)``.
        suffix: ``suffix[a] = sum over apps >= a of size * ub``, shape ``(m + 1, d)``.
        depth_max: most containers per pattern.
        out: buffer for the patterns, shape ``(P, depth_max)``; rows padded with -1.
        order: the instance's app index of every sorted app, shape ``(m,)``.
        col: count column of every app of the instance (``ClusterState.col``), shape ``(n,)``.
        cap: anti-affinity cap of every app of the instance, shape ``(n,)``.
        rules: ``ClusterState.rule_tables``.
        use_rules: check the rules (a pattern never holds two apps a rule keeps apart).
        max_nodes: most candidate apps tried (the search's work, so its time, is bounded).

    Returns:
        ``(patterns found, deeper)``: found is -1 when ``out`` overflowed or ``max_nodes`` ran
        out; ``deeper`` is True when some pattern could take one more container than
        ``depth_max`` allows.
    """
    m, d = size.shape
    pick = np.full(depth_max, -1, dtype=np.int64)
    nxt = np.zeros(depth_max + 1, dtype=np.int64)
    load = np.zeros(d)
    cnt = np.zeros(m, dtype=np.int64)
    n_col = 1
    for c in col:
        n_col = max(n_col, c + 1)
    cnt_col = np.zeros(n_col, dtype=np.int64)  # the pattern's counts in ClusterState columns
    depth = 0
    found = 0
    deeper = False
    nodes = 0
    while True:
        a = nxt[depth]
        ok = False
        while a < m:
            nodes += 1
            if nodes > max_nodes:
                return -1, deeper
            low = False
            for r in range(d):
                if load[r] + suffix[a, r] < lo[r]:
                    low = True
                    break
            if low:
                a = m
                break
            if cnt[a] < ub[a]:
                fit = True
                for r in range(d):
                    if load[r] + size[a, r] > hi[r]:
                        fit = False
                        break
                if fit and use_rules:
                    fit = _pattern_takes(cnt_col, col[order[a]], cap[order[a]], rules, order[a])
                if fit:
                    ok = True
                    break
            a += 1
        if not ok or depth == depth_max:
            if ok:  # a container would still fit: the depth limit cut this branch
                deeper = True
            if depth == 0:
                break
            depth -= 1
            b = pick[depth]
            for r in range(d):
                load[r] -= size[b, r]
            cnt[b] -= 1
            if col[order[b]] >= 0:
                cnt_col[col[order[b]]] -= 1
            pick[depth] = -1
            nxt[depth] = b + 1
            continue
        pick[depth] = a
        for r in range(d):
            load[r] += size[a, r]
        cnt[a] += 1
        if col[order[a]] >= 0:
            cnt_col[col[order[a]]] += 1
        tight = True
        for r in range(d):
            if load[r] < lo[r]:
                tight = False
                break
        if tight:
            if found >= out.shape[0]:
                return -1, deeper
            for k in range(depth_max):
                out[found, k] = pick[k] if k <= depth else -1
            found += 1
        depth += 1
        nxt[depth] = a
    return found, deeper


def applicable(instance: Instance) -> bool:
    """Whether the cover applies: identical host types, no GPU cards, no restricted app."""
    return tabu.applicable(instance)


def load() -> None:
    """Load the compiled enumeration now (from numba's disk cache, or by compiling it).

    Enumerates the tight patterns of a tiny instance with a cap and an exclusion, so that a
    caller can start the cover's clock after the loading (about a second of CPU in a new
    process, numba's import included).
    """
    tiny = Instance("load-cover", ("s",), (HostType("h", (10.0,), 4),),
                    (App("a", (2.0,), 2, max_per_host=1), App("b", (2.0,), 2)),
                    exclusions=(("a", "b"),))
    tight_patterns(tiny, 2)


def warm(on_disk: bool = False) -> bool:
    """Whether the compiled enumeration runs without compiling (in this process or numba's disk cache).

    With ``on_disk`` only the disk cache counts (see :func:`solvers.search.jit.ready`).
    """
    return ready(_enumerate, on_disk=on_disk)


def tight_patterns(instance: Instance, hosts: int, *, max_patterns: int = MAX_PATTERNS,
                   time_limit: float = 10.0, stop: Stop | None = None
                   ) -> tuple[np.ndarray, bool]:
    """The tight patterns for a packing on ``hosts`` hosts (see the module docstring).

    Capacities, caps and ``<A, B, k>`` rules are modelled (with :mod:`packing.feasibility.predicates`'s
    predicates and rule tables).

    Returns:
        ``(patterns, complete)``: count vectors of shape ``(P, n_apps)`` and whether they are
        all the tight patterns (``False`` when ``max_patterns`` or the time cut the enumeration:
        then the patterns with the fewest containers are returned). The time limit is kept by
        bounding the search's work (:data:`NODES_PER_SECOND`). A ``stop`` request
        (:class:`solvers.base.StopFlag`) ends the enumeration after the current depth
        (incomplete).
    """
    inst = instance
    t0 = time.perf_counter()
    cap = np.asarray(inst.host_types[0].capacity, dtype=np.float64)
    # integer data (solvers.exact.scaling): a host holds a load up to ``hi`` (the capacity with the
    # checker's tolerance); on ``hosts`` hosts the loads sum to ``total``, so each host holds at
    # least ``total - (hosts - 1) * hi``. Integer-valued floats below 2**53 add up exactly, so
    # the enumeration decides exactly; without an exact scaling the list may miss patterns
    # and is never reported complete.
    sc = scale_columns(inst.demand, cap[None, :], inst.counts, limit=CBC_LIMIT,
                       fallback="relaxed")
    dem = sc.demand.astype(np.float64)
    hi = sc.capacity[0].astype(np.float64)
    total = [int(v) for v in (sc.demand * inst.counts[:, None]).sum(axis=0).tolist()]
    least = np.array([t - (hosts - 1) * int(h) for t, h in zip(total, sc.capacity[0].tolist(),
                                                               strict=True)], dtype=np.float64)
    lo = np.where(least <= 0, -np.inf, least)
    if any(t > hosts * int(h) for t, h in zip(total, sc.capacity[0].tolist(), strict=True)):
        return np.zeros((0, inst.n_apps), dtype=np.int64), sc.exact
    order = np.argsort(-(inst.demand / np.where(cap > 0, cap, 1.0)).sum(axis=1), kind="stable")
    size = np.ascontiguousarray(dem[order], dtype=np.float64)
    per = np.where(size > 0, np.floor(hi / np.where(size > 0, size, 1.0)), np.inf).min(axis=1)
    ub = np.minimum(np.minimum(inst.cap, inst.counts)[order], per).astype(np.int64)
    st = ClusterState(inst)
    col = st.col.astype(np.int64)
    rules = tuple(np.asarray(t, dtype=np.int64) for t in st.rule_tables)
    use_rules = bool(len(inst.rule_arrays[0]))
    app_cap = np.asarray(inst.cap, dtype=np.int64)
    suffix = np.zeros((len(order) + 1, inst.n_resources))
    suffix[:-1] = np.cumsum((size * ub[:, None])[::-1], axis=0)[::-1]
    best = np.zeros((0, inst.n_apps), dtype=np.int64)
    depth = 1
    while True:
        out = np.full((max_patterns, depth), -1, dtype=np.int64)
        left = max(time_limit - (time.perf_counter() - t0), 0.0)
        found, deeper = _enumerate(size, ub, lo, hi, suffix, depth, out, order.astype(np.int64),
                                   col, app_cap, rules, use_rules,
                                   int(NODES_PER_SECOND * left) + 1000)
        if found < 0:
            return best, False
        counts = np.zeros((found, inst.n_apps), dtype=np.int64)
        rows = np.repeat(np.arange(found), depth)
        idx = out[:found].ravel()
        keep = idx >= 0
        np.add.at(counts, (rows[keep], order[idx[keep]]), 1)
        best = counts
        if not deeper:
            return best, sc.exact
        if time.perf_counter() - t0 > time_limit or depth >= inst.n_containers or (
                stop is not None and stop.is_set()):
            return best, False
        depth += 1


def solve_cover(instance: Instance, hosts: int, *, time_limit: float = 10.0, workers: int = 2,
                seed: int = 0, max_patterns: int = MAX_PATTERNS,
                stop: Stop | None = None) -> CoverResult:
    """Look for a packing on exactly ``hosts`` hosts made of tight patterns.

    Args:
        instance: the instance (:func:`applicable` must hold; otherwise nothing is found).
        hosts: the number of hosts, usually the best lower bound.
        time_limit: seconds for enumeration and CBC together.
        workers: unused (CBC runs on one thread); kept for the common signature.
        seed: CBC random seed.
        max_patterns: most patterns enumerated.
        stop: a stop request (:class:`solvers.base.StopFlag`), looked at between the
            enumeration's depths; CBC runs in a child process
            (:func:`solvers.exact.arcflow_partition.partition_stoppable`) that is terminated within
            about 50 ms of the stop or at ``time_limit``. A stopped cover proves nothing.

    Returns:
        The cover (host per container, hosts in index order) or the proof that none exists.
    """
    t0 = time.perf_counter()
    inst = instance
    if not applicable(inst) or hosts < 1 or hosts > inst.n_hosts:
        return CoverResult(hosts, None, False, 0, False, time.perf_counter() - t0)
    pats, complete = tight_patterns(inst, hosts, max_patterns=max_patterns,
                                    time_limit=0.5 * time_limit, stop=stop)
    n_pat = len(pats)

    def result(host_of: np.ndarray | None, infeasible: bool) -> CoverResult:
        return CoverResult(hosts, host_of, infeasible, n_pat, complete, time.perf_counter() - t0)

    if n_pat == 0 or (pats.sum(axis=0) == 0).any():  # an app no tight pattern holds
        return result(None, complete)
    # patterns with few containers first: small partitioning problems are solved at once when
    # a cover exists among them; only the last (all patterns) can prove that none exists. CBC
    # runs in a child process, ended at the time limit or on a stop request.
    items = pats.sum(axis=1)
    levels = np.array([int(k) for k in np.unique(items)
                       if (pats[items <= k].sum(axis=0) > 0).all()], dtype=np.int64)
    left = time_limit - (time.perf_counter() - t0)
    if len(levels) == 0 or left <= 0.05 or (stop is not None and stop.is_set()):
        return result(None, False)
    st, use = partition_stoppable(pats, inst.counts, hosts, left, stop, levels=levels)
    if st == "infeasible":
        return result(None, complete)
    if use is not None:
        rows = np.repeat(pats, use, axis=0)  # one row per host
        host_counts = np.zeros((inst.n_hosts, inst.n_apps), dtype=np.int64)
        host_counts[: len(rows)] = rows
        placement = placement_from_counts(inst, host_counts)
        if check(inst, placement, require_all=True):  # a relaxed or boundary pattern
            return result(None, False)
        return result(placement.host_array(inst), False)
    return result(None, False)


__all__ = ["CoverResult", "applicable", "load", "solve_cover", "tight_patterns", "warm"]
