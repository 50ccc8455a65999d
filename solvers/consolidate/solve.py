"""``consolidate``: the cheapest cluster reachable with a move budget, its evictions in waves, proven.

**A ladder of budgets.** The search climbs the move budgets ``0, 1, ..., 8, 12, 18, 27, ...``
(up by half, below the pods that can move) and then no limit (:func:`ladder`); each rung starts
from the answer of the rung below (which stays within its larger budget) and gets the same share of the time
limit (:func:`shares`), whatever budget was asked. The answer for a budget ``M`` is the answer of
the highest rung at most ``M``. So **more moves never cost more**, in one run and across runs: the run for a
larger budget passes through the same rungs, with the same seeded, deterministic work, and may
only climb further. Every budget of work inside the climb is deterministic (CP-SAT's
deterministic time, shared out from ``work``, by default the time limit in seconds; never the wall
time left), so the same ``seed`` gives the same answer, unless the wall clock (on a loaded
machine, or on a cluster so large that a rung's fixed costs add up) stops a rung before its
deterministic work is done or the climb before its last rung. Several budgets in one run
(:func:`consolidate_budgets`) share one climb. Other solutions (``starts``: an autoscaler's
answer) join the climb at the first rung whose budget admits their moves. When the wall clock
runs short, the rungs below the highest one asked are skipped so that it keeps its share (on a
cluster of thousands of nodes each rung's drains cost seconds whatever its share).

Each rung (:func:`search_rung`), in its share of the time:

1. start from the rung below, or from :func:`packing.cluster.fit.start` (the running cluster,
   Pending pods placed);
2. :func:`solvers.consolidate.search.drain_nodes` from both (the better is kept);
3. on the last rung (no limit), when the whole model has more than :data:`FULL_MODEL_VARS`
   variables, :data:`GUIDED_SHARE` of its time and work for
   :func:`solvers.consolidate.guided.guided`: the hosts the relaxation keeps with room to spare,
   every pod fitted on them by CP-SAT's local search (deterministic);
4. large neighbourhood search (:func:`solvers.consolidate.search.improve`): all the rung's time
   when the whole model is large, :data:`LNS_SHARE` of it when mid-sized, none when small;
5. on the first and the last rung, the whole CP-SAT model (:mod:`solvers.consolidate.model`, on
   the hosts a cheaper solution may use, :func:`useful_hosts`), when it has at most
   :data:`FULL_MODEL_VARS` variables (:data:`LARGE_MODEL_VARS` on the last rung), in CP-SAT's
   deterministic mode: its solution when better, and its proven bound for the rung's budget. The rungs between
   search only, until :data:`PATIENCE` neighbourhoods in a row bring nothing; the time the rungs
   below the last did not need goes to the last rung (no limit).

**The proof for the budget asked**: the relaxation of
:func:`solvers.consolidate.bound.relaxation_bound` with that budget, and the whole model's bound
with that budget (the last rung's, or a solve for the bound alone when the budget is no rung);
"optimal" when the cost meets it. The answer is checked (:func:`packing.feasibility.checker.check` on the
problem's instance, and :func:`packing.feasibility.transition.check_transition`: pinned pods
stay, cordoned nodes take no new pod, the budget) and its evictions ordered in waves that keep
every PodDisruptionBudget (:func:`packing.cluster.waves.plan_waves`); if some evictions cannot
be ordered, the cheapest solution found whose evictions can is returned instead.

A budget with no solution on any rung gets a proof: the relaxation or the whole model proves it
infeasible (the reason names the nodes and resources over), or the status is ``unknown``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

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
from solvers.consolidate.guided import guided
from solvers.consolidate.model import build_model, cost_bound, read_solution
from solvers.consolidate.search import Front, drain_nodes, improve, key

FULL_MODEL_VARS = 20_000
"""The whole model is solved when it has at most this many pod-count variables (apps x hosts
they may use); larger problems use the neighbourhood search only."""
LARGE_MODEL_VARS = 120_000
"""On the last rung the whole model is solved up to this many variables (cost first)."""
SMALL_MODEL_VARS = 2_000
"""Up to this many variables the whole model is solved at once; above, the neighbourhood search
takes :data:`LNS_SHARE` of the rung's time first."""
LNS_SHARE = 0.6
LARGE_LNS_SHARE = 0.5
"""Before a large whole model (the last rung), the neighbourhood search's share of its time."""
PATIENCE = 12
"""A rung between the first and the last stops after this many neighbourhoods without progress."""
GUIDED_SHARE = 0.3
"""Of the last rung's time and work, the share for the relaxation-guided search (after the drains)."""
BUILD_SECONDS_PER_VAR = 1e-4
"""About what building the whole model costs per variable (57,000 variables: 4.6 s at a load of 4);
a rung solves it only with three times that left (twice after its neighbourhood search), so the
build cannot overrun the rung's time."""
LATE = 0.5
"""The rungs below the highest one asked may take this share of its time at most (their node drains
cost seconds each on thousands of nodes, whatever their share); then they are skipped."""
BOUND_SHARE = 0.15
"""Share of the time limit the relaxation bound may take (at most :data:`BOUND_SECONDS`)."""
BOUND_SECONDS = 30.0
ANSWER_SECONDS_PER_POD = 0.005
"""Time kept back from the climb per pod for checking the answers and ordering their evictions
(at most :data:`BOUND_SHARE` of the time limit)."""


def ladder(problem: ClusterProblem) -> tuple[int | None, ...]:
    """The budgets the search climbs: :func:`budget_ladder` of the pods that can move."""
    return budget_ladder(int(problem.orig[~problem.pinned].sum()) if problem.n_apps else 0)


def budget_ladder(n: int) -> tuple[int | None, ...]:
    """Move budgets to climb when ``n`` containers can move.

    0 to 8, then up by half (12, 18, 27, ...) below ``n``, then no limit.
    """
    out: list[int | None] = list(range(min(n, 9)))
    r = 12
    while r < n:
        out.append(r)
        r = math.ceil(r * 1.5)
    if not out:
        out.append(0)
    out.append(None)
    return tuple(out)


def within(r: int | None, budget: int | None) -> bool:
    """Whether ``r`` moves (``None``: any number) keep within ``budget`` (``None``: no limit)."""
    return budget is None or (r is not None and r <= budget)


def useful_hosts(problem: ClusterProblem, x: np.ndarray) -> np.ndarray:
    """The hosts a solution at most as cheap as ``x`` may use, shape ``(m,)``.

    Every node of the cluster, and of each new type ``t`` its first ``floor(cost(x) / price_t)``
    slots (the slots of a type are alike, and a cheaper solution cannot pay for more); the slots
    ``x`` uses are among them.
    """
    P = problem
    upper = int(P.scaled_price[P.used(x)].sum())
    keep = P.existing | P.used(x)
    for t in sorted({P.host_type[h] for h in np.flatnonzero(~P.existing).tolist()}):
        hs = [h for h in np.flatnonzero(~P.existing).tolist() if P.host_type[h] == t]
        p = int(P.scaled_price[hs[0]])
        k = len(hs) if p <= 0 else min(len(hs), upper // p)
        keep[hs[:k]] = True
    return np.flatnonzero(keep)


def model_size(problem: ClusterProblem, hosts: np.ndarray | None = None) -> int:
    """Pod-count variables of the whole model: pairs (movable app, host it may use)."""
    P = problem
    allowed = P.allowed if hosts is None else P.allowed[:, hosts]
    return int(allowed[~P.pinned].sum())


def verify(problem: ClusterProblem, x: np.ndarray, max_moves: int | None) -> list[str]:
    """What a solution breaks: the checker's violations and the running cluster's rules."""
    P = problem
    inst = P.instance
    out = [str(v) for v in check(inst, P.placement(x), require_all=True)]
    pinned = np.repeat(P.pinned, P.counts)
    out += [str(v) for v in check_transition(inst, P.assign(P.orig), P.assign(x), fixed=pinned,
                                             closed=P.limited, max_moves=max_moves)]
    return out


@dataclass
class Rung:
    """What one rung of the ladder found.

    Attributes:
        budget: the rung's move budget (``None``: none).
        x: its solution, or ``None``.
        found: which part found it.
        bound: a proven lower bound on the cost with the rung's budget (0 when none is proven).
        optimal: CP-SAT proved ``x`` optimal for the rung's budget.
        spare: seconds of its share the rung did not need (deterministic: it ended by a proof or
            by :data:`PATIENCE`), passed to the last rung (no limit).
    """

    budget: int | None
    x: np.ndarray | None
    found: str = ""
    bound: float = 0.0
    optimal: bool = False
    spare: float = 0.0


def _full_model(P: ClusterProblem, x: np.ndarray | None, hosts: np.ndarray | None, budget: int | None,
                clock: Clock, threads: int, seed: int, work: float | None = None
                ) -> tuple[Any, np.ndarray | None, float]:
    """Solve the whole model from ``x``: ``(status, solution or None, bound on the cost)``.

    ``clock`` bounds the wall time, ``work`` CP-SAT's deterministic time (``None``: the clock's
    time limit).

    CP-SAT minimises ``W * cost + moves`` in its deterministic (interleaved) mode, so the same
    seed and work give the same solution.
    """
    mm = build_model(P, P.orig if x is None else x, hosts, budget, hint=x is not None)
    if not mm.feasible:
        return cp_model.INFEASIBLE, None, math.inf
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = max(1, int(threads))
    solver.parameters.interleave_search = True
    solver.parameters.random_seed = int(seed)
    solver.parameters.max_time_in_seconds = max(0.05, clock.left())
    solver.parameters.max_deterministic_time = max(0.05, clock.time_limit if work is None else float(work))
    st = run_cpsat(solver, mm.model, stop=clock.stop)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return st, None, (cost_bound(mm, solver) if st != cp_model.INFEASIBLE else math.inf)
    return st, read_solution(mm, solver), cost_bound(mm, solver)


def search_rung(problem: ClusterProblem, budget: int | None, below: np.ndarray | None, clock: Clock, *,
                threads: int, seed: int, front: Front, full: bool = True,
                work: float | None = None) -> Rung:
    """The best solution found with at most ``budget`` moves, from the rung below (module docstring).

    Args:
        problem: the problem.
        budget: the rung's move budget.
        below: the answer of the rung below (or a start), or ``None``.
        clock: the rung's wall time.
        threads: CP-SAT workers of the whole model.
        seed: seeds the neighbourhood search and CP-SAT.
        front: receives every solution found.
        full: end with the whole model (when small enough); the rungs between the first and the
            last search only, and stop when :data:`PATIENCE` neighbourhoods in a row bring nothing
            (their unused time goes to the last rung: :attr:`Rung.spare`).
        work: the rung's deterministic work (CP-SAT's deterministic time; ``None``: the clock's
            time limit): the LNS's share and the whole model's, whatever the wall clock says.
    """
    P = problem
    work = clock.time_limit if work is None else float(work)
    fresh = start(P, budget)
    x0 = fresh
    if below is not None and (x0 is None or key(P, below) < key(P, x0)):
        x0 = below.copy()
    if x0 is None:  # nothing to start from: the whole model alone (small problems) may find one
        if model_size(P) > FULL_MODEL_VARS:
            return Rung(budget, None)
        st, x, b = _full_model(P, None, None, budget, clock, threads, seed, work)
        if x is not None:
            front.add(x)
        return Rung(budget, x, "cpsat", b, st == cp_model.OPTIMAL)
    front.add(x0)
    if budget == 0 and P.moves(x0) == 0 and (x0.sum(axis=1) == P.orig.sum(axis=1)).all():
        return Rung(budget, x0, "start", P.cost(x0), True, work)  # nothing can change
    found = "start"
    x = x0
    for y0 in (x0, fresh) if fresh is not None and fresh is not x0 else (x0,):
        y = drain_nodes(P, y0, budget, front, stop=lambda: clock.left(0.0) <= 0.02)
        if key(P, y) < key(P, x):
            x, found = y, "drain"
    if full and budget is None and clock.left(0.0) > 0.05 and \
            model_size(P, useful_hosts(P, x)) > FULL_MODEL_VARS:
        # the hosts the relaxation keeps, every pod fitted on them (solvers.consolidate.guided);
        # a smaller whole model is solved in the deterministic mode, which proves it better
        part = Clock(GUIDED_SHARE * clock.left(0.0), clock.stop)
        g, used = guided(P, x, budget, part, work=GUIDED_SHARE * work, seed=seed, max_vars=LARGE_MODEL_VARS)
        work = max(0.05, work - used)
        if g is not None:
            front.add(g)
            if key(P, g) < key(P, x):
                x, found = g, "guided"
    size = model_size(P, useful_hosts(P, x))
    solve_whole = full and size <= (LARGE_MODEL_VARS if budget is None else FULL_MODEL_VARS)
    build = BUILD_SECONDS_PER_VAR * size
    if solve_whole and size > SMALL_MODEL_VARS and clock.left(0.0) < 3 * build:
        solve_whole = False  # no time to build it: the neighbourhood search takes the rung
    spare = 0.0
    if size > SMALL_MODEL_VARS or not solve_whole:
        share = (LNS_SHARE if size <= FULL_MODEL_VARS else LARGE_LNS_SHARE) if solve_whole else 1.0
        part = Clock(share * clock.left(0.0), clock.stop)
        x2, stats = improve(P, x, budget, part, work=share * work, seed=seed, front=front,
                            patience=None if full else PATIENCE)
        if key(P, x2) < key(P, x):
            x, found = x2, "lns"
        if stats.stalled:
            spare = max(0.0, share * work - stats.det_time)
        work = max(0.05, work - stats.det_time)
    if not solve_whole or clock.left(0.0) <= max(0.02, 2 * build if size > SMALL_MODEL_VARS else 0.0):
        return Rung(budget, x, found, spare=spare)
    hosts = useful_hosts(P, x)
    st, cand, b = _full_model(P, x, hosts if len(hosts) < P.n_hosts else None, budget, clock,
                              threads, seed, work)
    if cand is not None:
        front.add(cand)
        if key(P, cand) < key(P, x):
            x, found = cand, "cpsat"
    return Rung(budget, x, found, b if math.isfinite(b) else 0.0, st == cp_model.OPTIMAL)


def shares(rungs: Sequence[int | None], first: float = 0.1, last: float = 2.0) -> list[float]:
    """Each rung's share of the climb's time, normalised.

    Weight ``first * n`` for rung 0, ``last * n`` for the last (no limit), 1 for the others
    (``n`` rungs).
    """
    n = len(rungs)
    w = [1.0] * n
    w[0] = first * n if n > 1 else 1.0
    if n > 1:
        w[-1] = last * n
    total = sum(w)
    return [x / total for x in w]


def consolidate_budgets(problem: ClusterProblem, budgets: Sequence[int | None], *,
                        time_limit: float = 60.0, threads: int = 2, seed: int = 0,
                        stop: Stop | None = None, start_from: np.ndarray | None = None,
                        first: float = 0.1, last: float = 2.0,
                        work: float | None = None, starts: Sequence[np.ndarray] = (),
                        progress: Callable[[str], None] | None = None) -> list[Consolidation]:
    """The answers for several move budgets from one climb of the ladder (see the module docstring).

    Args:
        problem: the cluster and the offers.
        budgets: move budgets (``None``: no limit; 0: no pod moves), answered in the order given.
        time_limit: wall-time budget of the whole climb to no limit, seconds; rung ``i`` gets
            its share of it (:func:`shares`, also as deterministic work); the last rung (no
            limit) also what the rungs below did not need (ended by a proof or stalled); a
            climb that stops lower takes less.
        threads: CP-SAT workers for the whole model.
        seed: seeds the search.
        stop: ends the search early (Ctrl-C); the best answers so far are returned.
        start_from: a solution to start the first rung it fits from (its moves within the
            rung's budget).
        first: the weight of rung 0 (:func:`shares`): a plan on a running cluster, whose new
            containers are placed with no move, weighs it more than a consolidation does.
        last: the weight of the last rung (no limit).
        work: the deterministic work of the climb, shared out as the time is (CP-SAT's
            deterministic time; ``None``: ``time_limit``). Less work than wall time leaves a
            margin for a loaded machine, where the same seed then repeats the same answers.
        starts: other solutions (an autoscaler's answer, say): each joins the climb at the
            first rung whose budget admits its moves, when it is cheaper than the rung below's
            answer there. A caller that passes the same starts whatever budgets it asks keeps
            "more moves never cost more" across runs.
        progress: called with one line per rung climbed (its budget, cost, bound, seconds).

    Returns:
        One answer per budget (checked; its evictions in waves).
    """
    P = problem
    t0 = time.perf_counter()
    rungs = ladder(P)
    split = shares(rungs, first, last)
    W = float(time_limit if work is None else work)
    # the bounds first (wall-time limited), then the climb takes the time left but the answers'
    # (checks and waves: ANSWER_SECONDS_PER_POD); its deterministic work is set apart from it
    relax = {b: relaxation_bound(P, b, time_limit=min(BOUND_SECONDS, max(0.5, BOUND_SHARE * time_limit)),
                                 seed=seed, stop=stop) for b in dict.fromkeys(budgets)}
    margin = min(BOUND_SHARE * time_limit, ANSWER_SECONDS_PER_POD * int(P.counts.sum()))
    whole = max(0.5 * (1.0 - BOUND_SHARE) * time_limit,
                time_limit - (time.perf_counter() - t0) - margin)
    whole_work = (1.0 - BOUND_SHARE) * W
    t1 = time.perf_counter()
    top = None if any(b is None for b in budgets) else max(int(b) for b in budgets if b is not None)
    front = Front(P)
    climbed: list[Rung] = []
    below: np.ndarray | None = None
    carry = carry_work = 0.0
    waiting = [s for s in starts if not verify(P, s, None)]
    top_i = max(i for i, r in enumerate(rungs) if within(r, top))
    for i, (r, share) in enumerate(zip(rungs, split, strict=True)):
        if not within(r, top):
            break
        elapsed = time.perf_counter() - t1
        late = elapsed > whole * (1.0 - LATE * split[top_i]) or Clock(1.0, stop).stopped
        if 0 < i < top_i and late:
            continue  # the highest rung keeps most of its share: at scale the rungs' fixed costs add up
        last = r is None  # the time the rungs below did not need goes to the last rung only
        seconds = whole * share + (carry if last else 0.0)
        if i and i == top_i:  # late (a rung below overran): what is left of the climb's time
            seconds = min(seconds, max(0.05, whole - elapsed))
        if start_from is not None and below is None and within(P.moves(start_from), r):
            below = start_from
        for s in [s for s in waiting if within(P.moves(s), r)]:
            waiting = [w for w in waiting if w is not s]
            front.add(s)
            if below is None or key(P, s) < key(P, below):
                below = s
        rung = search_rung(P, r, below, Clock(seconds, stop), threads=threads,
                           seed=seed, front=front, full=i == 0 or r is None,
                           work=whole_work * share + (carry_work if last else 0.0))
        carry_work += (whole_work * share) if rung.optimal else rung.spare
        carry = carry_work * whole / max(whole_work, 1e-9)
        climbed.append(rung)
        below = rung.x if rung.x is not None else below
        if progress is not None:
            cost = "none found" if rung.x is None else f"cost {P.cost(rung.x):g} ({rung.found})"
            progress(f"[{time.perf_counter() - t0:7.1f}s] max moves {'all' if r is None else r}: {cost}, "
                     f"bound {rung.bound:g}{', optimal' if rung.optimal else ''}")
    out = []
    for b in budgets:
        got = [g for g in climbed if within(g.budget, b)]
        last_x = next((g for g in reversed(got) if g.x is not None), None)
        out.append(_answer(P, b, relax[b], last_x, got[-1] if got else None, front, time_limit,
                           threads, seed, stop, t0, W))
    return out


def consolidate(problem: ClusterProblem, max_moves: int | None = None, *, time_limit: float = 60.0,
                threads: int = 2, seed: int = 0, stop: Stop | None = None,
                work: float | None = None) -> Consolidation:
    """The cheapest consolidation found with at most ``max_moves`` evictions, and its proof.

    Args:
        problem: the cluster and the offers.
        max_moves: most pods evicted (``None``: no limit; 0: no pod moves).
        time_limit: wall-time budget of a climb to no limit, seconds (see :func:`consolidate_budgets`).
        threads: CP-SAT workers for the whole model.
        seed: seeds the search.
        stop: ends the search early (Ctrl-C); the best answer so far is returned.
        work: deterministic work (see :func:`consolidate_budgets`).
    """
    return consolidate_budgets(problem, [max_moves], time_limit=time_limit, threads=threads,
                               seed=seed, stop=stop, work=work)[0]


def _answer(P: ClusterProblem, budget: int | None, relaxed: tuple[float, bool], last: Rung | None,
            top: Rung | None, front: Front, time_limit: float, threads: int, seed: int,
            stop: Stop | None, t0: float, work: float | None = None) -> Consolidation:
    """The answer for ``budget``: the highest rung's solution, checked, in waves, with its proof.

    ``relaxed`` is the relaxation's bound with that budget and whether it proved it infeasible.
    """
    bound, infeasible = relaxed
    proofs = {"bound": "relaxation"}
    if top is not None and top.budget == budget and top.bound > bound:
        bound, proofs = top.bound, {"bound": "cpsat"}
    elif last is not None and last.x is not None and model_size(
            P, useful_hosts(P, last.x)) <= FULL_MODEL_VARS:
        # the budget is no rung: the whole model with this budget, for its bound only (its
        # solution is not used: the answer stays the ladder's, so more moves never cost more)
        hosts = useful_hosts(P, last.x)
        left = max(BOUND_SHARE * time_limit, time_limit - (time.perf_counter() - t0))
        _st, _x, b = _full_model(P, last.x, hosts if len(hosts) < P.n_hosts else None, budget,
                                 Clock(left, stop), threads, seed,
                                 BOUND_SHARE * (time_limit if work is None else work))
        if math.isfinite(b) and b > bound:
            bound, proofs = b, {"bound": "cpsat"}
    if last is None or last.x is None:
        return _no_answer(P, budget, infeasible, threads, seed, stop, time_limit, t0)
    x = last.x
    proofs["solution"] = last.found
    bad = verify(P, x, budget)
    if bad:
        raise RuntimeError(f"consolidate: a solution breaks the rules: {bad[:3]}")
    waves = plan_waves(P, x)
    if waves.stuck:
        for _k, y in sorted(front.points, key=lambda t: t[0]):
            if y is not x and not verify(P, y, budget):
                w = plan_waves(P, y)
                if not w.stuck:
                    x, waves = y, w
                    proofs["solution"] += " (waves)"
                    break
    cost = P.cost(x)
    bound = min(bound, cost)
    proven = top is not None and last is top and top.optimal and top.budget == budget and x is last.x
    status = "feasible"
    if proven or cost - bound <= 1e-9 * max(1.0, cost):
        status, bound = "optimal", cost
    return consolidation_of(P, x, status=status, bound=bound, max_moves=budget, proofs=proofs,
                            seconds=time.perf_counter() - t0, waves=waves)


def _no_answer(P: ClusterProblem, budget: int | None, infeasible: bool, threads: int, seed: int,
               stop: Stop | None, time_limit: float, t0: float) -> Consolidation:
    """No solution on any rung: prove infeasibility (naming what is over) or report nothing found."""
    reason = _over_reason(P, budget)
    if not infeasible and model_size(P) <= FULL_MODEL_VARS:
        st, _x, _b = _full_model(P, None, None, budget, Clock(BOUND_SHARE * time_limit, stop),
                                 threads, seed)
        infeasible = st == cp_model.INFEASIBLE
    if infeasible:
        return consolidation_of(P, None, status="infeasible", bound=math.inf, max_moves=budget,
                                reason=reason, proofs={"bound": "relaxation or cpsat"},
                                seconds=time.perf_counter() - t0)
    return consolidation_of(P, None, status="unknown", bound=0.0, max_moves=budget,
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


__all__ = ["FULL_MODEL_VARS", "LATE", "Rung", "budget_ladder", "consolidate", "consolidate_budgets", "ladder",
           "model_size", "search_rung", "shares", "useful_hosts", "verify", "within"]
