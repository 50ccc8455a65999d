"""``auto``: first fit and cheap bounds, then column generation and CP-SAT in one time budget.

1. First-fit decreasing (:func:`solvers.greedy.ffd`) and the cheap bounds
   (:func:`packing.bounds.lower_bounds` / :func:`packing.bounds.cost_lower_bound`). If they meet,
   the result is proven optimal at once (``proofs = {"solution": "ffd", "bound": "volume"}``, or
   whichever cheap bound met it). A cheap bound above the hosts proves infeasibility.
2. A first, short CP-SAT run (:data:`CPSAT_FIRST` of the budget, at most
   :data:`CPSAT_FIRST_MAX` s): the cheap bound is often tight and CP-SAT then proves it quickly.
3. Column generation (:func:`solvers.colgen.solve_colgen`, when importable and the objective is
   the instance's natural one, hosts or cost) for up to :data:`COLGEN_SHARE` of the budget: its
   Gilmore–Gomory LP bound is far stronger than CP-SAT's own when several resources bind, and its
   restricted-master solution is a good start.
4. CP-SAT (:func:`solvers.cpsat.solve_cpsat`) for the rest of the budget, with the best solution
   so far as hint and the best bound so far as a constraint.

``proofs`` names which method found the returned solution and which proved the bound.
``"deployed"`` skips column generation (it does not support it).
"""

from __future__ import annotations

import numpy as np

from packing.model import Instance, Placement
from solvers.base import (
    EPS,
    Clock,
    bound_infeasible,
    cheap_lower_bound,
    infeasible_result,
    notify,
    resolve_objective,
)
from solvers.greedy import ffd
from solvers.result import Progress, ProgressCallback, SolveResult

CPSAT_FIRST = 0.3
"""Share of the budget for the first, short CP-SAT run."""

CPSAT_FIRST_MAX = 5.0
"""At most this many seconds for the first CP-SAT run."""

COLGEN_SHARE = 0.4
"""Share of the remaining budget column generation may use before CP-SAT takes over again."""


def solve_auto(
    instance: Instance,
    *,
    time_limit: float = 60.0,
    workers: int = 2,
    seed: int = 0,
    objective: str | None = None,
    callback: ProgressCallback | None = None,
    hint: Placement | None = None,
) -> SolveResult:
    """Solve with the best combination of methods (see the module docstring).

    Args:
        instance: the instance (solved offline: ``initial`` and request times are ignored).
        time_limit: wall-time budget in seconds for everything.
        workers: worker threads for CP-SAT.
        seed: random seed passed to every method.
        objective: ``"hosts"``, ``"cost"``, ``"deployed"`` or ``None`` (auto).
        callback: receives :class:`Progress` events from every stage.
        hint: a placement to start from.

    Returns:
        The result, with ``method == "auto"`` and ``proofs`` naming the parts.
    """
    from solvers.cpsat import solve_cpsat

    clock = Clock(time_limit)
    inst = instance
    kind = resolve_objective(inst, objective)
    history: list[Progress] = []

    def relay(p: Progress) -> None:
        notify(callback, history, clock, p.objective, p.bound, p.method, p.message)

    greedy = ffd(inst, kind)
    lb, lb_name = cheap_lower_bound(inst, kind)
    if bound_infeasible(inst, kind, lb):
        return infeasible_result(inst, kind, "auto", clock, lb_name, history)
    done = greedy.complete or kind == "deployed"
    notify(callback, history, clock, greedy.objective if done else None, lb, "ffd", "first fit")
    if done and _closed(greedy.objective, lb, kind):
        return SolveResult("optimal", greedy.objective, greedy.objective, greedy.placement(inst),
                           _n_hosts(greedy.host_of), "auto", clock.elapsed, kind,
                           {"solution": "ffd", "bound": lb_name}, None, tuple(history))

    best: SolveResult | None = None  # best solution so far (any stage)
    bound_by = lb_name
    hint_pl = hint

    def take(r: SolveResult) -> None:
        nonlocal best, lb, bound_by, hint_pl
        if kind == "deployed":
            if r.lower_bound < lb - EPS:
                lb, bound_by = r.lower_bound, r.proofs.get("bound", r.method)
        elif r.lower_bound > lb + EPS:
            lb, bound_by = r.lower_bound, r.proofs.get("bound", r.method)
        if r.placement is not None and r.objective is not None and (
                best is None or _better(r.objective, best.objective, kind)):
            best = r
            hint_pl = r.placement

    def finish() -> SolveResult:
        if best is None or best.objective is None:
            if greedy.complete or kind == "deployed":
                return SolveResult("optimal" if _closed(greedy.objective, lb, kind) else
                                   "feasible", greedy.objective, lb, greedy.placement(inst),
                                   _n_hosts(greedy.host_of), "auto", clock.elapsed, kind,
                                   {"solution": "ffd", "bound": bound_by}, None,
                                   tuple(history))
            return SolveResult("unknown", None, lb, None, None, "auto", clock.elapsed, kind,
                               {"bound": bound_by}, None, tuple(history))
        value = best.objective
        closed = _closed(value, lb, kind)
        return SolveResult("optimal" if closed else "feasible", value, value if closed else lb,
                           best.placement, best.hosts, "auto", clock.elapsed, kind,
                           {"solution": best.proofs.get("solution", best.method),
                            "bound": bound_by}, None, tuple(history))

    def infeasible(r: SolveResult) -> SolveResult:
        return SolveResult("infeasible", None, r.lower_bound, None, None, "auto", clock.elapsed,
                           kind, {"bound": r.proofs.get("bound", r.method)}, r.reason,
                           tuple(history))

    def cpsat(budget: float) -> SolveResult:
        return solve_cpsat(inst, time_limit=budget, workers=workers, seed=seed, objective=kind,
                           callback=relay, hint=hint_pl,
                           lower_bound=lb if kind != "deployed" else None, start=greedy)

    # stage 1: a short CP-SAT run settles the easy cases (the cheap bound is often tight)
    r = cpsat(min(max(CPSAT_FIRST * time_limit, min(0.6 * time_limit, 2.0)), CPSAT_FIRST_MAX))
    if r.status == "infeasible":
        return infeasible(r)
    take(r)
    if r.status == "optimal" and best is r:
        bound_by = "cpsat" if r.proofs.get("bound") == "cpsat" else bound_by
        return finish()
    # stage 2: column generation for the strong LP bound and a restricted-master solution
    if kind != "deployed" and kind == resolve_objective(inst, None) and _colgen_available():
        from solvers.colgen import solve_colgen

        cg = solve_colgen(inst, time_limit=COLGEN_SHARE * clock.left(), workers=workers,
                          seed=seed, objective=kind, callback=relay, hint=hint_pl)
        if cg.status == "infeasible":
            return infeasible(cg)
        take(cg)
        if best is not None and best.objective is not None and _closed(best.objective, lb, kind):
            return finish()
    # stage 3: CP-SAT with the rest of the budget, the best bound as a constraint
    if clock.time_limit - clock.elapsed > 0.2:
        r = cpsat(clock.left())
        if r.status == "infeasible":
            return infeasible(r)
        take(r)
        if r.status == "optimal" and best is not None and best.objective is not None:
            if not _closed(best.objective, lb, kind):
                lb, bound_by = best.objective, "cpsat"
    return finish()


def _colgen_available() -> bool:
    try:
        import solvers.colgen  # noqa: F401
    except ImportError:
        return False
    return True


def _better(value: float, other: float | None, kind: str) -> bool:
    if other is None:
        return True
    return value > other + EPS if kind == "deployed" else value < other - EPS


def _closed(value: float, bound: float, kind: str) -> bool:
    if kind == "deployed":
        return value >= bound - EPS
    return value <= bound + EPS * max(1.0, abs(bound))


def _n_hosts(host_of: np.ndarray) -> int:
    return int(len(np.unique(host_of[host_of >= 0])))
