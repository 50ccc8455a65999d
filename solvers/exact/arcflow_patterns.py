"""Set partitioning over the patterns of small reduced cost: a packing on ``U`` hosts, or none.

The arc-flow LP (:func:`solvers.exact.arcflow.lp_solution`) gives item duals ``pi >= 0``, shape
``(n_apps,)``. Scaled by ``rho``, the largest ``pi @ n`` over every pattern ``n`` (what one host
may hold: load at most ``W``, at most ``b[a]`` copies of app ``a``; a bounded knapsack on the
capacity grid), they are dual feasible: every pattern has reduced cost ``1 - pi @ n / rho >= 0``.
For any packing on ``Y <= U`` hosts, whose hosts hold the patterns ``n_1 ... n_Y``::

    sum_j (1 - pi @ n_j / rho) = Y - pi @ b / rho <= U - pi @ b / rho =: gap

so every host of such a packing holds a pattern of reduced cost at most ``gap`` (each term is
``>= 0``). When ``U`` is the rounded-up LP bound, ``gap < 1`` and often tiny (0.005 on the
`uniform` instance 1018 of :mod:`packing.generators.hard1d`: 7,649 patterns of about 10^9).
These patterns are enumerated (compiled depth-first search over the apps, largest first, pruned
by the knapsack bound of what the apps left can add), and CBC looks for at most ``U`` of them
that hold every container exactly once (:func:`solvers.exact.arcflow_partition.partition_stoppable`,
in a child process). Two outcomes matter:

* a partition is a packing on ``U`` hosts (optimal when ``U`` is a lower bound);
* when the enumeration was complete and CBC proves that no partition exists, no packing on
  ``U`` hosts exists, so ``U + 1`` is a lower bound.

When there are more than ``max_patterns`` such patterns, the threshold shrinks (by 0.6) until they
fit:
the partition may still find a packing (the hosts of a packing on ``U`` hosts have a *total*
reduced cost of at most ``gap``, so most of them are far below it) but proves nothing.

Exactness: the sizes and the capacity are the exact integers of the arc-flow graph; the duals are
floats, but any ``pi >= 0`` works in the argument above as long as ``rho`` is the true maximum;
the enumeration keeps every pattern within ``1e-7`` of the threshold (far above the rounding of
sums of a few hundred floats), so it is a superset of the patterns the argument allows. Every
packing found passes :func:`packing.feasibility.checker.check` before it is returned.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numba
import numpy as np

from solvers.exact.arcflow import ArcGraph
from solvers.exact.arcflow_partition import partition_stoppable
from solvers.search.jit import ready

if TYPE_CHECKING:
    from solvers.base import Stop

MAX_PATTERNS = 25_000
"""Most patterns handed to the set partitioning."""

MAX_CELLS = 8_000_000
"""Most entries of the pattern buffer (patterns x most items per pattern)."""

NODES_PER_SECOND = 20_000_000
"""Search nodes the enumeration may visit per second of its time limit."""

MARGIN = 1e-7
"""Patterns within this of the reduced-cost threshold are kept too (float rounding)."""


@dataclass(frozen=True)
class PatternResult:
    """What the partition over small-reduced-cost patterns found for ``hosts`` hosts.

    Attributes:
        hosts: the number of hosts asked for.
        counts: containers per host and app when a packing was found, shape ``(n_bins, n_apps)``
            with ``n_bins <= hosts`` (``None`` otherwise).
        infeasible: no packing on ``hosts`` hosts exists (complete enumeration, CBC proof).
        patterns: patterns handed to CBC.
        complete: whether every pattern of reduced cost up to ``gap`` was enumerated.
        gap: ``hosts - pi @ b / rho`` (the reduced-cost allowance).
        seconds: wall time.
    """

    hosts: int
    counts: np.ndarray | None
    infeasible: bool
    patterns: int
    complete: bool
    gap: float
    seconds: float


def dual_bound(g: ArcGraph, duals: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """Scaled duals, their bound and the knapsack table (see the module docstring).

    Args:
        g: the graph (sizes, counts, capacity).
        duals: item duals from the LP, shape ``(n_apps,)`` (negative entries count as 0).

    Returns:
        ``(pi, bound, best)``: the duals divided by ``rho`` (shape ``(n_apps,)``), the bound
        ``pi @ b`` on the hosts, and ``best[i, c]``, the largest ``pi @ n`` of copies ``i ...``
        (apps by non-increasing size, see :func:`_copies`) within capacity ``c``, shape
        ``(n_copies + 1, W + 1)``.
    """
    pi = np.where(g.size > 0, np.maximum(np.asarray(duals, dtype=np.float64), 0.0), 0.0)
    order, u, _first = _copies(g)
    cw = np.repeat(g.size[order], u)
    cp = np.repeat(pi[order], u)
    W = int(g.capacity)
    best = np.zeros((len(cw) + 1, W + 1))
    for i in range(len(cw) - 1, -1, -1):
        w = int(cw[i])
        best[i] = best[i + 1]
        np.maximum(best[i + 1, w:], cp[i] + best[i + 1, : W + 1 - w], out=best[i, w:])
    rho = float(best[0, W])
    if rho <= 0:
        return pi, 0.0, best
    pi = pi / rho
    best /= rho
    return pi, float(pi @ g.need), best


def _copies(g: ArcGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Apps of positive size by non-increasing size, their most copies per host, first copy."""
    pos = np.flatnonzero((g.size > 0) & (g.need > 0))
    order = pos[np.argsort(-g.size[pos], kind="stable")]
    u = np.minimum(g.need[order], int(g.capacity) // g.size[order]).astype(np.int64)
    first = np.concatenate(([0], np.cumsum(u)[:-1])).astype(np.int64)
    return order.astype(np.int64), u, first


@numba.njit(cache=True)
def _enumerate(w, p, u, first, cap, need, best, out, max_nodes):  # pragma: no cover - compiled
    """Every pattern with ``p @ c >= need`` and ``w @ c <= cap``, ``0 <= c <= u``.

    Depth-first over the apps (index ``k``), counts from the most down to 0, pruned by
    ``best[first[k], room]``. Patterns go to ``out`` as app indices (padded with -1).

    Returns:
        The number found; -1 when ``out`` is full, -2 when ``max_nodes`` are used up.
    """
    n = len(w)
    c = np.zeros(n, np.int64)
    load = np.zeros(n + 1, np.int64)
    val = np.zeros(n + 1)
    found = 0
    nodes = 0
    k = 0
    c[0] = min(u[0], cap // w[0]) + 1
    while k >= 0:
        c[k] -= 1
        if c[k] < 0:
            k -= 1
            continue
        nodes += 1
        if nodes > max_nodes:
            return -2
        ld = load[k] + c[k] * w[k]
        v = val[k] + c[k] * p[k]
        if k == n - 1:
            if v >= need:
                if found >= out.shape[0]:
                    return -1
                m = 0
                for j in range(n):
                    for _ in range(c[j]):
                        out[found, m] = j
                        m += 1
                for j in range(m, out.shape[1]):
                    out[found, j] = -1
                found += 1
            continue
        if v + best[first[k + 1], cap - ld] < need:
            continue
        k += 1
        load[k] = ld
        val[k] = v
        c[k] = min(u[k], (cap - ld) // w[k]) + 1
    return found


def warm(on_disk: bool = False) -> bool:
    """Whether the compiled enumeration runs without compiling (in this process or numba's disk cache).

    With ``on_disk`` only the disk cache counts (see :func:`solvers.search.jit.ready`).
    """
    return ready(_enumerate, on_disk=on_disk)


def small_rc_patterns(g: ArcGraph, pi: np.ndarray, best: np.ndarray, threshold: float, *,
                      max_patterns: int = MAX_PATTERNS, time_limit: float = 10.0
                      ) -> tuple[np.ndarray, str]:
    """The patterns of reduced cost at most ``threshold`` (plus :data:`MARGIN`).

    Args:
        g: the graph.
        pi: scaled duals, shape ``(n_apps,)`` (from :func:`dual_bound`).
        best: the knapsack table of :func:`dual_bound`.
        threshold: the reduced-cost allowance.
        max_patterns: most patterns returned.
        time_limit: the enumeration's work is bounded by :data:`NODES_PER_SECOND` times this.

    Returns:
        ``(patterns, outcome)``: count vectors, shape ``(P, n_apps)``, and ``"complete"``,
        ``"full"`` (more than ``max_patterns``: none returned) or ``"time"`` (work used up: none
        returned).
    """
    order, u, first = _copies(g)
    if len(order) == 0:
        return np.zeros((0, len(g.need)), dtype=np.int32), "complete"
    most = int(min(u.sum(), int(g.capacity) // int(g.size[order].min())))
    rows = max(1, min(max_patterns, MAX_CELLS // max(most, 1)))
    out = np.full((rows, most), -1, dtype=np.int32)
    found = _enumerate(g.size[order].astype(np.int64), pi[order].astype(np.float64), u, first,
                       int(g.capacity), 1.0 - threshold - MARGIN, best, out,
                       int(NODES_PER_SECOND * time_limit) + 1000)
    if found < 0:
        return np.zeros((0, len(g.need)), dtype=np.int32), "full" if found == -1 else "time"
    pats = np.zeros((found, len(g.need)), dtype=np.int32)
    idx = out[:found]
    r, k = np.nonzero(idx >= 0)
    np.add.at(pats, (r, order[idx[r, k]]), 1)
    return pats, "complete"


def solve_patterns(g: ArcGraph, duals: np.ndarray, hosts: int, *, time_limit: float = 10.0,
                   incomplete_limit: float | None = None, max_patterns: int = MAX_PATTERNS,
                   stop: Stop | None = None) -> PatternResult:
    """Look for a packing on at most ``hosts`` hosts among the small-reduced-cost patterns.

    Args:
        g: the arc-flow graph of the instance (:func:`solvers.exact.arcflow.build_graph`).
        duals: the LP's item duals, shape ``(n_apps,)`` (:func:`solvers.exact.arcflow.lp_solution`).
        hosts: the number of hosts (usually the rounded-up LP bound).
        time_limit: seconds for the enumeration and CBC together.
        incomplete_limit: when the enumeration is incomplete (the partition can then only find
            a packing, not prove that none exists), at most this many seconds in all, the
            enumerations included (``None``: ``time_limit``).
        max_patterns: most patterns handed to CBC.
        stop: a stop request, looked at between the enumerations and before CBC; CBC runs in
            a child process that the stop ends.

    Returns:
        The packing (as counts per host and app) or the proof that none exists.
    """
    t0 = time.perf_counter()
    pi, bound, best = dual_bound(g, duals)
    gap = hosts - bound

    def result(counts: np.ndarray | None, infeasible: bool, n: int, complete: bool) -> PatternResult:
        return PatternResult(hosts, counts, infeasible, n, complete, gap, time.perf_counter() - t0)

    if gap < -MARGIN:  # the dual bound alone rules ``hosts`` out
        return result(None, True, 0, True)
    pos = (g.size > 0) & (g.need > 0)
    threshold = max(gap, 0.0)
    complete = True
    pats = np.zeros((0, len(g.need)), dtype=np.int32)
    # an incomplete list only finds packings: from the first incomplete enumeration on, the
    # whole call (that enumeration included) keeps within ``incomplete_limit``
    short = time_limit if incomplete_limit is None else min(time_limit, incomplete_limit)
    for _ in range(12):
        left = (time_limit if complete else short) - (time.perf_counter() - t0)
        if left <= 0.05 or (stop is not None and stop.is_set()):
            return result(None, False, 0, False)
        work = min(0.3 * left, short) if complete else 0.3 * left
        pats, outcome = small_rc_patterns(g, pi, best, threshold, max_patterns=max_patterns,
                                          time_limit=work)
        if outcome == "complete":
            break
        complete = False
        threshold *= 0.3 if outcome == "time" else 0.6
    else:
        return result(None, False, 0, False)
    if len(pats) == 0 or (pats[:, pos].sum(axis=0) == 0).any():  # a container no pattern holds
        return result(None, complete, len(pats), complete)
    if not complete:
        time_limit = short
    left = time_limit - (time.perf_counter() - t0)
    if left <= 0.05 or (stop is not None and stop.is_set()):
        return result(None, False, len(pats), complete)
    status, use = partition_stoppable(pats[:, pos], g.need[pos], hosts, left, stop)
    if status == "infeasible":
        return result(None, complete, len(pats), complete)
    if use is None:
        return result(None, False, len(pats), complete)
    counts = np.repeat(pats, use, axis=0).astype(np.int64)
    zero = ~pos
    if len(counts) == 0:
        counts = np.zeros((1, len(g.need)), dtype=np.int64)
    counts[0, zero] = g.need[zero]
    return result(counts, False, len(pats), complete)


__all__ = ["MAX_PATTERNS", "PatternResult", "dual_bound", "small_rc_patterns", "solve_patterns",
           "warm"]
