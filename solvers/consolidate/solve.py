"""``consolidate``: the cheapest cluster reachable with a move budget, its evictions in waves, proven.

The steps, in one budget of wall time (and, for repeatability, of CP-SAT's deterministic time):

1. :func:`packing.cluster.fit.start`: the running cluster, Pending pods placed;
2. the proven bound of :func:`solvers.consolidate.bound.relaxation_bound`;
3. :func:`solvers.consolidate.search.drain_nodes`, then, while time is left, either the whole
   CP-SAT model (:mod:`solvers.consolidate.model`; when it is small: its solution is optimal
   when CP-SAT proves it, and its bound joins the relaxation's) or large neighbourhood search
   (:func:`solvers.consolidate.search.improve`);
4. the answer is checked (:func:`packing.feasibility.checker.check` on the problem's instance,
   and :func:`packing.feasibility.transition.check_transition`: pinned pods stay, cordoned nodes
   take no new pod, the move budget), and its evictions ordered in waves that keep every
   PodDisruptionBudget (:func:`packing.cluster.waves.plan_waves`); if some evictions cannot be
   ordered, the cheapest solution found with fewer moves whose evictions can is returned (the
   running cluster, with no move, always can).

**More moves never cost more.** :func:`consolidate_budgets` solves several budgets in increasing
order, each search starting from the answer of the budget before (which stays within the larger
budget), so its costs never increase with the budget. The same ``seed`` gives the same answer
when the search ends on its deterministic work budget or a proof (not cut by the wall clock).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np
from ortools.sat.python import cp_model

from packing.cluster.answer import Consolidation, consolidation_of
from packing.cluster.fit import start
from packing.cluster.problem import ClusterProblem
from packing.cluster.waves import plan_waves
from packing.feasibility.checker import check
from packing.feasibility.transition import check_transition
from solvers.base import Clock, Stop, run_cpsat
from solvers.consolidate.bound import relaxation_bound
from solvers.consolidate.model import build_model, cost_bound, read_solution
from solvers.consolidate.search import Front, drain_nodes, improve, key

FULL_MODEL_VARS = 20_000
"""The whole model is solved when it has at most this many pod-count variables (apps x hosts
they may use); larger problems use the neighbourhood search."""
BOUND_SHARE = 0.15
"""Share of the time limit the relaxation bound may take (at most :data:`BOUND_SECONDS`)."""
BOUND_SECONDS = 30.0


def model_size(problem: ClusterProblem) -> int:
    """Pod-count variables of the whole model: pairs (movable app, host it may use)."""
    P = problem
    return int((P.allowed[~P.pinned]).sum())


def verify(problem: ClusterProblem, x: np.ndarray, max_moves: int | None) -> list[str]:
    """What a solution breaks: the checker's violations and the running cluster's rules."""
    P = problem
    inst = P.instance
    out = [str(v) for v in check(inst, P.placement(x), require_all=True)]
    pinned = np.repeat(P.pinned, P.counts)
    out += [str(v) for v in check_transition(inst, P.assign(P.orig), P.assign(x), fixed=pinned,
                                             closed=P.limited, max_moves=max_moves)]
    return out


def consolidate(problem: ClusterProblem, max_moves: int | None = None, *, time_limit: float = 60.0,
                threads: int = 2, seed: int = 0, stop: Stop | None = None,
                start_from: np.ndarray | None = None) -> Consolidation:
    """The cheapest consolidation found with at most ``max_moves`` evictions, and its proof.

    Args:
        problem: the cluster and the offers.
        max_moves: most pods evicted (``None``: no limit; 0: no pod moves).
        time_limit: wall-time budget, seconds (also the deterministic work budget).
        threads: CP-SAT workers for the whole model.
        seed: seeds the search.
        stop: ends the search early (Ctrl-C); the best answer so far is returned.
        start_from: a solution within the budget to start from (the answer of a smaller budget).

    Returns:
        The answer (checked; its evictions in waves).
    """
    P = problem
    t0 = time.perf_counter()
    clock = Clock(time_limit, stop)
    front = Front(P)
    x0 = start(P, max_moves)
    if start_from is not None and (x0 is None or key(P, start_from) < key(P, x0)):
        x0 = start_from.copy()
    bound, infeasible = relaxation_bound(P, max_moves, time_limit=min(
        BOUND_SECONDS, max(0.5, BOUND_SHARE * time_limit)), seed=seed, stop=stop)
    proofs = {"bound": "relaxation"}
    if x0 is None or infeasible:
        return _no_start(P, max_moves, clock, threads, seed, infeasible, t0)
    front.add(x0)
    found = "start"
    x = drain_nodes(P, x0, max_moves, front, stop=lambda: clock.left(0.0) <= 0.05)
    if key(P, x) < key(P, x0):
        found = "drain"
    status = "feasible"
    if model_size(P) <= FULL_MODEL_VARS:
        mm = build_model(P, x, None, max_moves)
        if mm.feasible:
            solver = cp_model.CpSolver()
            solver.parameters.num_workers = max(1, int(threads))
            solver.parameters.interleave_search = True
            solver.parameters.random_seed = int(seed)
            solver.parameters.max_deterministic_time = max(0.1, clock.left())
            solver.parameters.max_time_in_seconds = max(0.1, clock.left())
            st = run_cpsat(solver, mm.model, stop=stop)
            if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                cand = read_solution(mm, solver)
                if key(P, cand) < key(P, x):
                    x, found = cand, "cpsat"
                front.add(cand)
                b = cost_bound(mm, solver)
                if b > bound:
                    bound, proofs = b, {"bound": "cpsat"}
                if st == cp_model.OPTIMAL:
                    status = "optimal"
            elif st == cp_model.INFEASIBLE:  # never: x is a solution; kept as it is
                pass
    else:
        x2, _stats = improve(P, x, max_moves, clock, work=clock.left(), seed=seed, front=front)
        if key(P, x2) < key(P, x):
            x, found = x2, "lns"
    return _answer(P, x, front, max_moves, bound, status, {"solution": found, **proofs}, t0)


def _answer(P: ClusterProblem, x: np.ndarray, front: Front, max_moves: int | None, bound: float,
            status: str, proofs: dict[str, str], t0: float) -> Consolidation:
    """Check ``x``, order its evictions; fall back to a front point whose evictions can be ordered."""
    bad = verify(P, x, max_moves)
    if bad:
        raise RuntimeError(f"consolidate: a solution breaks the rules: {bad[:3]}")
    waves = plan_waves(P, x)
    if waves.stuck:
        for _k, y in sorted(front.points, key=lambda t: t[0]):
            if y is not x and not verify(P, y, max_moves):
                w = plan_waves(P, y)
                if not w.stuck:
                    x, waves, status = y, w, "feasible"
                    proofs = dict(proofs, solution=proofs["solution"] + " (waves)")
                    break
    cost = P.cost(x)
    bound = min(bound, cost)
    tol = 1e-9 * max(1.0, cost)
    if cost - bound <= tol:
        status, bound = "optimal", cost
    return consolidation_of(P, x, status=status, bound=bound, max_moves=max_moves, proofs=proofs,
                            seconds=time.perf_counter() - t0, waves=waves)


def _no_start(P: ClusterProblem, max_moves: int | None, clock: Clock, threads: int, seed: int,
              infeasible: bool, t0: float) -> Consolidation:
    """No start solution: prove infeasibility (naming what is over) or report nothing found."""
    reason = _over_reason(P, max_moves)
    if infeasible:
        return consolidation_of(P, None, status="infeasible", bound=math.inf, max_moves=max_moves,
                                reason=reason, proofs={"bound": "relaxation"},
                                seconds=time.perf_counter() - t0)
    mm = build_model(P, P.orig, None, max_moves, hint=False)
    if not mm.feasible:
        return consolidation_of(P, None, status="infeasible", bound=math.inf, max_moves=max_moves,
                                reason=reason, proofs={"bound": "model"},
                                seconds=time.perf_counter() - t0)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = max(1, int(threads))
    solver.parameters.random_seed = int(seed)
    solver.parameters.max_time_in_seconds = max(0.1, clock.left())
    st = run_cpsat(solver, mm.model, stop=clock.stop)
    if st == cp_model.INFEASIBLE:
        return consolidation_of(P, None, status="infeasible", bound=math.inf, max_moves=max_moves,
                                reason=reason, proofs={"bound": "cpsat"},
                                seconds=time.perf_counter() - t0)
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        x = read_solution(mm, solver)
        front = Front(P)
        front.add(x)
        return _answer(P, x, front, max_moves, cost_bound(mm, solver),
                       "optimal" if st == cp_model.OPTIMAL else "feasible",
                       {"solution": "cpsat", "bound": "cpsat"}, t0)
    return consolidation_of(P, None, status="unknown", bound=0.0, max_moves=max_moves,
                            reason="no consolidation found within the time limit",
                            seconds=time.perf_counter() - t0)


def _over_reason(P: ClusterProblem, max_moves: int | None) -> str:
    """Which hosts and resources are over, and what the pods ask beyond the capacity."""
    parts = []
    over = P.describe_over(P.orig)
    if over:
        parts.append(f"running now: {over}")
    pin = P.orig[P.pinned].T @ P.demand[P.pinned] if P.pinned.any() else None
    if pin is not None:
        short = [(h, r) for h, r in zip(*np.nonzero(pin > P.capacity), strict=True)]
        if short:
            parts.append("pinned pods alone: " + "; ".join(
                f"{P.host_names[h]} {P.resources[r]}" for h, r in short[:5]))
    need = (P.demand * P.counts[:, None]).sum(axis=0)
    have = P.capacity.sum(axis=0)
    for r, (n, c) in enumerate(zip(need.tolist(), have.tolist(), strict=True)):
        if n > c:
            parts.append(f"the pods ask for {P.resources[r]} {n} and every host together has {c}")
    if max_moves is not None:
        parts.append(f"with at most {max_moves} moves")
    return "; ".join(parts) or "no placement keeps every rule"


def consolidate_budgets(problem: ClusterProblem, budgets: Sequence[int | None], *,
                        time_limit: float = 60.0, threads: int = 2, seed: int = 0,
                        stop: Stop | None = None) -> list[Consolidation]:
    """:func:`consolidate` for each budget, in increasing order, each starting from the last answer.

    Args:
        problem: the cluster and the offers.
        budgets: move budgets (``None``: no limit); answered in the order given.
        time_limit: per budget.
        threads: CP-SAT workers.
        seed: seeds each search.
        stop: ends the searches early.

    Returns:
        One answer per budget, in the order of ``budgets``.
    """
    order = sorted(range(len(budgets)), key=lambda i: (budgets[i] is None, budgets[i] or 0))
    out: dict[int, Consolidation] = {}
    prev: np.ndarray | None = None
    for i in order:
        r = consolidate(problem, budgets[i], time_limit=time_limit, threads=threads, seed=seed,
                        stop=stop, start_from=prev)
        out[i] = r
        if r.outcome is not None:
            prev = r.outcome.x
    return [out[i] for i in range(len(budgets))]


__all__ = ["FULL_MODEL_VARS", "consolidate", "consolidate_budgets", "model_size", "verify"]
