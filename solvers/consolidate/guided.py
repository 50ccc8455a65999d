"""The relaxation as a guide: keep the hosts it keeps (with room to spare), then fit every pod on them.

The relaxation of :mod:`solvers.consolidate.bound` chooses the cheapest hosts whose capacity holds
the demand, per resource and class of hosts, forgetting which pod goes where. On a cluster of many
small pods its cost is close to the best packing's, and the hosts it keeps are a good answer to the
hard half of the problem (which nodes to keep); the other half (where each pod goes) is then a
feasibility problem on far fewer hosts than the whole model has.

:func:`guided` asks the relaxation for hosts with :data:`SLACKS` more capacity than the demand
(a packing needs some room to spare; the first slack that leads to a solution wins), builds the
whole model of :mod:`solvers.consolidate.model` on those hosts and the ones ``x`` uses, every
other host left empty (``avoid``), and runs CP-SAT's local search (one worker, deterministic time:
the same seed gives the same answer) from ``x``. The search also closes hosts of the chosen set
when the pods fit on fewer. The model's bound proves nothing (the hosts are restricted); the
solution, when cheaper (cost, then moves) than ``x``, is returned.
"""

from __future__ import annotations

import numpy as np
from ortools.sat.python import cp_model

from packing.cluster.fit import ClusterFit
from packing.cluster.problem import ClusterProblem
from solvers.base import Clock, run_cpsat
from solvers.consolidate.bound import relaxation_hosts
from solvers.consolidate.model import build_model
from solvers.consolidate.search import improved, key

SLACKS = (1.05, 1.15)
"""Capacity asked of the relaxation's hosts, as multiples of the demand, tried in order."""
SKIP_FACTOR = 3
"""With ``max_vars``, no try when the hosts ``x`` uses carry more than this many times as many
pod-count variables (the hosts kept are rarely fewer than a third of them)."""
CHOOSE_SHARE = 0.1
"""Of each try's work, at most this share (and :data:`CHOOSE_SECONDS`) for choosing the hosts."""
CHOOSE_SECONDS = 5.0


def fill(problem: ClusterProblem, x: np.ndarray, keep: np.ndarray, budget: int | None) -> np.ndarray:
    """``x`` with the hosts outside ``keep`` drained onto ``keep`` where they can be (the search's hint).

    The emptiest first; a host whose pods do not all fit keeps them (shape ``(A, H)``).
    """
    P = problem
    fit = ClusterFit(P, x)
    share = (P.load(x) / np.maximum(P.capacity, 1)).sum(axis=1)
    for h in np.argsort(share, kind="stable").tolist():
        if fit.used()[h] and not keep[h]:
            fit.drain(h, ~keep, budget)
    return fit.x


def guided(problem: ClusterProblem, x: np.ndarray, budget: int | None, clock: Clock, *,
           work: float, seed: int = 0, max_vars: int | None = None) -> tuple[np.ndarray | None, float]:
    """A solution on the hosts the relaxation keeps, cheaper than ``x`` (or ``None``), and the work used.

    Args:
        problem: the problem.
        x: the incumbent, shape ``(A, H)`` (the search's start and its hint).
        budget: the move budget (the relaxation and the model keep it).
        clock: the wall time of the whole step.
        work: its deterministic time (CP-SAT's), shared among the slacks tried.
        seed: seeds the local search.
        max_vars: skip a try whose model would have more pod-count variables than this.

    Returns:
        ``(solution or None, deterministic time used)``.
    """
    P = problem
    best, best_key = None, key(P, x)
    total = float(work)
    if max_vars is not None and int(P.allowed[:, P.used(x)][~P.pinned].sum()) > SKIP_FACTOR * max_vars:
        return None, 0.0  # far too large even on a fraction of the hosts in use: not worth choosing

    for i, slack in enumerate(SLACKS):
        left = len(SLACKS) - i
        part_work = work / left
        if clock.left(0.0) <= 0.05 or part_work <= 0.01:
            break
        choose = min(CHOOSE_SECONDS, CHOOSE_SHARE * part_work)  # from the work: the same every run
        keep = relaxation_hosts(P, budget, slack, time_limit=max(0.05, choose), seed=seed,
                                stop=clock.stop)
        if keep is None:
            continue
        if max_vars is not None and int(P.allowed[:, keep][~P.pinned].sum()) > max_vars:
            continue
        x0 = fill(P, x, keep, budget)
        hosts = np.flatnonzero(keep | P.used(x0))
        mm = build_model(P, x0, hosts, budget, avoid=~keep)
        if not mm.feasible:
            continue
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.use_ls_only = True
        solver.parameters.random_seed = int(seed)
        solver.parameters.max_deterministic_time = max(0.05, part_work)
        solver.parameters.max_time_in_seconds = max(0.05, clock.left(0.0) / left)
        status = run_cpsat(solver, mm.model, stop=clock.stop)
        work -= float(solver.deterministic_time) + choose
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            continue
        better = improved(P, mm, solver, best_key, budget)
        if better is not None:
            best, best_key = better
        break
    return best, max(0.0, total - work)


__all__ = ["CHOOSE_SECONDS", "CHOOSE_SHARE", "SKIP_FACTOR", "SLACKS", "fill", "guided"]
