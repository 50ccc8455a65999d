"""Set partitioning by CBC in a child process (``python -m solvers.exact.arcflow_partition``).

At most ``hosts`` patterns (rows of ``pats``, shape ``(P, n_apps)``) whose sum is exactly
``counts`` (shape ``(n_apps,)``): integer multiplicities, one equality per app, one row for the
number of hosts. LP-based search suits set partitioning (CBC finds covers that CP-SAT does not,
see :mod:`solvers.exact.cover`). CBC overruns its own time limit on large partitioning problems
(measured: 115 s for a 40 s limit on 5,000 patterns) and cannot be interrupted in-process, so
:func:`partition_stoppable` runs it in a child process (arrays in and out as ``.npz``, no
pickles) that is terminated at the time limit or on a stop request. This module imports only
NumPy and OR-Tools, so the child starts quickly.

With ``levels`` (:func:`partition_levels`) the child solves a sequence of growing problems,
the patterns of at most ``k`` containers for every ``k`` of ``levels``, and stops at the first
partition: one child process for the whole sequence, ended like a single solve.
"""

from __future__ import annotations

import io
import sys
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from solvers.base import Stop

CBC_SHARE = 0.85
"""Share of the time limit given to CBC's own limit (the child is terminated at the full limit)."""

LEVEL_SHARE = 0.3
"""Share of the time left for each problem of :func:`partition_levels` but the last."""


def partition(pats: np.ndarray, counts: np.ndarray, hosts: int, time_limit: float
              ) -> tuple[str, np.ndarray | None]:
    """At most ``hosts`` patterns summing to ``counts``, by CBC in this process.

    Args:
        pats: the patterns, shape ``(P, n_apps)``.
        counts: containers of every app, shape ``(n_apps,)``.
        hosts: most patterns used.
        time_limit: CBC's time limit in seconds.

    Returns:
        ``(status, use)``: status ``"found"``, ``"infeasible"`` or ``"unknown"``; ``use`` holds
        the multiplicity of every pattern, shape ``(P,)``, when found.
    """
    from ortools.linear_solver import pywraplp

    mip = pywraplp.Solver.CreateSolver("CBC")
    if mip is None:  # pragma: no cover - CBC ships with OR-Tools
        return "unknown", None
    with np.errstate(divide="ignore"):
        most = np.where(pats > 0, counts[None, :] // np.maximum(pats, 1), hosts).min(axis=1)
    most = np.minimum(most, hosts)
    x = [mip.IntVar(0.0, float(u), f"p{p}") for p, u in enumerate(most.tolist())]
    for a in range(pats.shape[1]):
        row = mip.Constraint(float(counts[a]), float(counts[a]))
        for p in np.flatnonzero(pats[:, a]).tolist():
            row.SetCoefficient(x[p], float(pats[p, a]))
    every = mip.Constraint(0.0, float(hosts))
    for v in x:
        every.SetCoefficient(v, 1.0)
    mip.SetTimeLimit(max(1, int(1000 * time_limit)))
    st = mip.Solve()
    if st == pywraplp.Solver.INFEASIBLE:
        return "infeasible", None
    if st not in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
        return "unknown", None
    return "found", np.rint([v.solution_value() for v in x]).astype(np.int64)


def partition_levels(pats: np.ndarray, counts: np.ndarray, hosts: int, time_limit: float,
                     levels: np.ndarray) -> tuple[str, np.ndarray | None]:
    """:func:`partition` over growing subsets of the patterns; the first partition found.

    Level ``k`` uses the patterns of at most ``k`` containers (row sums of ``pats``); every
    level but the last gets :data:`LEVEL_SHARE` of the time left, the last (which should hold
    every pattern) the rest. Small problems first: a partition among them is found at once.

    Args:
        pats: the patterns, shape ``(P, n_apps)``.
        counts: containers of every app, shape ``(n_apps,)``.
        hosts: most patterns used.
        time_limit: seconds for all the levels.
        levels: the container limits, increasing, shape ``(L,)``.

    Returns:
        ``(status, use)`` as for :func:`partition`, ``use`` over all ``P`` patterns;
        ``"infeasible"`` only when the last level is proven infeasible.
    """
    import time

    t0 = time.perf_counter()
    items = pats.sum(axis=1)
    ks = [int(k) for k in np.asarray(levels).tolist()]
    for j, k in enumerate(ks):
        last = j == len(ks) - 1
        left = time_limit - (time.perf_counter() - t0)
        if left <= 0.05:
            return "unknown", None
        rows = np.flatnonzero(items <= k)
        st, use = partition(pats[rows], counts, hosts, left if last else LEVEL_SHARE * left)
        if use is not None:
            full = np.zeros(len(pats), dtype=np.int64)
            full[rows] = use
            return "found", full
        if last:
            return ("infeasible" if st == "infeasible" else "unknown"), None
    return "unknown", None


def partition_stoppable(pats: np.ndarray, counts: np.ndarray, hosts: int, time_limit: float,
                        stop: Stop | None, levels: np.ndarray | None = None
                        ) -> tuple[str, np.ndarray | None]:
    """:func:`partition` in a child process, ended by ``stop`` or the time limit.

    A stopped, timed-out or failed child gives ``("unknown", None)``; arguments and result as
    for :func:`partition`. With ``levels`` the child runs :func:`partition_levels` instead
    (``use`` then covers all the patterns).
    """
    from solvers.exact.arcflow import run_child

    if stop is not None and stop.is_set():
        return "unknown", None
    buf = io.BytesIO()
    np.savez(buf, pats=pats.astype(np.int32), counts=counts.astype(np.int64),
             hosts=np.array(hosts), limit=np.array(CBC_SHARE * time_limit),
             levels=np.zeros(0, np.int64) if levels is None else np.asarray(levels, np.int64))
    got = run_child("solvers.exact.arcflow_partition", buf.getvalue(), time_limit, stop, standalone=True)
    if got is None:
        return "unknown", None
    data = np.load(io.BytesIO(got), allow_pickle=False)
    use = data["use"] if bool(data["has"]) else None
    return str(data["status"]), use


def _child_main() -> None:
    """Read a partitioning problem (npz) on stdin, write the answer (npz) on stdout."""
    data = np.load(io.BytesIO(sys.stdin.buffer.read()), allow_pickle=False)
    args = (data["pats"], data["counts"], int(data["hosts"]), float(data["limit"]))
    levels = data["levels"] if "levels" in data.files else np.zeros(0, np.int64)
    status, use = partition_levels(*args, levels) if len(levels) else partition(*args)
    buf = io.BytesIO()
    np.savez(buf, status=np.array(status), has=np.array(use is not None),
             use=use if use is not None else np.zeros(0, np.int64))
    sys.stdout.buffer.write(buf.getvalue())
    sys.stdout.buffer.flush()


__all__ = ["partition", "partition_levels", "partition_stoppable"]


if __name__ == "__main__":  # pragma: no cover - the child process of partition_stoppable
    _child_main()
