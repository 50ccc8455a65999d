"""Column generation (Gilmore–Gomory) over placement patterns: the strong LP bound, and solutions.

Master LP (OR-Tools GLOP, columns added in place so each solve starts from the last basis)::

    min  sum_p cost[t(p)] * lam[p]
    s.t. sum_p n[p, a] * lam[p] >= count[a]         for every app a        (duals pi >= 0)
         sum_{p of type t} lam[p] <= hosts[t]       for every host type t  (duals mu <= 0)
         lam >= 0

A pattern ``n[p]`` (shape ``(n_apps,)``) is what one host of type ``t(p)`` holds (see
:mod:`solvers.exact.pricing`). Pricing per host type maximises ``pi @ n`` over the patterns: first a
greedy by dual density, and exactly with CP-SAT (:func:`solvers.exact.pricing.price_exact`) only when the
greedy finds no improving column. Every iteration yields a valid lower bound even when the run is
cut short: Farley's ``pi @ count / rho`` with ``rho = max_t best_price[t] / cost[t]`` (Farley
1990), and the Lagrangian bound ``LP + sum_t hosts[t] * min(0, reduced cost[t])`` (host counts
capped by what a solution at least as good as the incumbent may use). Once exact pricing proves
that no column improves, the Lagrangian bound of that pricing is within ``RC_EPS`` per host of
the LP value. Artificial columns (one per app, at a large cost) keep the master feasible; they
only relax it, so the bounds stay valid. When GLOP answers ``ABNORMAL`` (numerical trouble) the
master is solved again from scratch (dual, then primal simplex); if that fails too, the loop stops
with the bound of the pricings done so far (:class:`MasterLPFailed`, ``ColgenBound.lp_failed``)
and the placement comes from the columns generated until then.

Bounds on any data: both bounds hold for *any* duals ``pi >= 0, mu <= 0`` as long as the price
of each host type is a proven upper bound on ``pi @ n`` over every pattern the checker accepts,
so the float LP only has to be good, not exact. Price bounds come from the DP or the CP-SAT
pricing on the integer rows of :class:`solvers.exact.pricing.TypeRows`: exactly scaled, or a
relaxation when the data cannot be scaled exactly (then ``converged`` is never claimed, but the
Farley bound still holds); the greedy pricing never enters a bound. Bounds are shaved before
they are rounded up (:func:`_bound`), and infeasibility is claimed only when a valid bound
exceeds the cost of any placement (every container on a dearest host of its own).

Upper bounds come from the columns, best first: residual rounding (keep ``floor(lam)`` of every
column, run column generation on what is left, repeat, first fit for the last few containers),
diving (keep whole parts, round up the most nearly whole columns, re-solve and re-price with the
greedy), then an integer restricted master (CP-SAT, covering with ``>=``) with the rest of the
time. Surplus containers are trimmed, patterns go to the hosts of each type in index order, GPU
cards are chosen with :meth:`packing.feasibility.predicates.ClusterState.choose_cards`, and every placement
passes :func:`packing.feasibility.checker.check` before it is kept. First-fit decreasing is the fallback.
For costs, bounds are rounded up to a multiple of the cost unit (:func:`cost_unit`).

Exact pricing is a dynamic programme on the capacity grid (or a branch and bound on larger grids)
when the rows are integral, small and no rule links two priced apps
(:func:`solvers.exact.pricing.price_dp`), otherwise CP-SAT.

The ``"deployed"`` objective is not supported here (use ``solvers.exact.pulp_model.solve_pulp`` or CP-SAT).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from packing.errors import InputError, Problem
from packing.feasibility.checker import check
from packing.model.instance import Instance, Placement
from solvers.base import (
    DEFAULT_OPTIONS,
    Clock,
    SolveOptions,
    Stop,
    ceil_bound,
    cheap_lower_bound,
    infeasibility_reason,
    notify,
    objective_value,
    resolve_objective,
    run_cpsat,
)
from solvers.exact.pricing import (
    PricingMemo,
    TypeRows,
    cost_unit,
    counts_from_placement,
    pattern_placeable,
    placement_from_counts,
    price_exact,
    price_greedy,
    single_host,
    type_rows,
)
from solvers.result import Objective, Progress, ProgressCallback, SolveResult
from solvers.search.greedy import ffd

METHOD = "colgen"
RC_EPS = 1e-7
"""A column enters the master when its reduced cost is below ``-RC_EPS``."""
DIVE_SHARE = 0.05
"""Share of the fractional columns diving rounds up per step (at least one)."""
STABILISE = 0.0
"""Wentges smoothing weight of the best-bound duals (0: off). Off by default: on Caprara-Toth
CL_1_100_1 it cut iterations (216 -> 184 at 0.5, 172 at 0.8) but cost time (11 s -> 14 s, 49 s),
because every mis-price needs an extra exact pricing."""


class Column(NamedTuple):
    """A pattern: ``counts[a]`` containers of app ``a`` on one host of type ``type_index``."""

    type_index: int
    counts: np.ndarray


@dataclass(frozen=True)
class ColgenBound:
    """The outcome of column generation.

    Attributes:
        lp_value: value of the last restricted master LP (within ``RC_EPS`` per host of
            ``lp_bound`` when converged).
        lp_bound: a proven lower bound on the LP optimum (Farley/Lagrangian), hence on the
            objective.
        bound: the bound for the objective: ``ceil(lp_bound - 1e-6)`` for host counts; for
            costs the LP bound rounded up to a multiple of the cost unit (:func:`cost_unit`,
            e.g. 1 when all costs are integers), else the LP bound itself.
        columns: the generated patterns, each with its host type; counts of shape ``(n_apps,)``.
        iterations: master solves.
        converged: whether exact pricing proved that no column improves the master.
        seconds: wall time.
        lam: the last master solution per column, shape ``(len(columns),)``.
        infeasible: the bound exceeds the cost of any placement: no placement exists.
        lp_failed: GLOP solved the master to no optimum (also from scratch), so the loop
            stopped early; ``lp_bound`` is the best of the completed pricings, still valid.
    """

    lp_value: float
    lp_bound: float
    bound: float
    columns: tuple[Column, ...]
    iterations: int
    converged: bool
    seconds: float
    lam: np.ndarray
    infeasible: bool = False
    lp_failed: bool = False


class MasterLPFailed(RuntimeError):
    """GLOP returned no optimal master solution, also when solving from scratch.

    Attributes:
        status: the ``pywraplp.Solver`` status (4: ``ABNORMAL``, numerical trouble).
    """

    def __init__(self, status: int) -> None:
        super().__init__(f"master LP failed with GLOP status {status}")
        self.status = status


def _unsupported(kind: str) -> InputError:
    return InputError([Problem("<options>", "objective", f"column generation minimises hosts or "
                               f"cost; objective {kind!r} is not supported (use pulp or cpsat)")])


class _Master:
    """The restricted master LP over the column pool (OR-Tools GLOP, columns added in place)."""

    def __init__(self, instance: Instance, cost: np.ndarray, limit: np.ndarray) -> None:
        from ortools.linear_solver import pywraplp

        self.inst = instance
        self.cost = cost  # (n_types,)
        self.limit = limit  # (n_types,) host count usable per type
        self.cols: list[Column] = []
        self.keys: set[tuple[int, bytes]] = set()
        self.big = 10.0 * float(max(cost.max(initial=1.0), 1.0)) * max(1, instance.n_containers)
        lp = pywraplp.Solver.CreateSolver("GLOP")
        inf = lp.infinity()
        self.lp = lp
        self.cover = [lp.Constraint(float(b), inf) for b in instance.counts]
        self.types = [lp.Constraint(-inf, float(u)) for u in limit]
        self.vars: list[object] = []
        self.art = []
        for a, row in enumerate(self.cover):  # artificial columns keep the master feasible
            v = lp.NumVar(0.0, inf, f"art{a}")
            row.SetCoefficient(v, 1.0)
            lp.Objective().SetCoefficient(v, self.big)
            self.art.append(v)
        lp.Objective().SetMinimization()
        self.rows: list[TypeRows] = []
        self.ones: list[Instance] = []
        self.rng = np.random.default_rng(0)

    def set_lower(self, p: int, value: float) -> None:
        """Fix column ``p`` to at least ``value`` hosts (diving)."""
        self.vars[p].SetLb(float(value))  # type: ignore[attr-defined]

    def add(self, col: Column) -> bool:
        key = (col.type_index, col.counts.astype(np.int64).tobytes())
        if key in self.keys or not col.counts.any():
            return False
        self.keys.add(key)
        counts = col.counts.astype(np.int64)
        self.cols.append(Column(col.type_index, counts))
        v = self.lp.NumVar(0.0, self.lp.infinity(), f"p{len(self.vars)}")
        for a in np.flatnonzero(counts):
            self.cover[a].SetCoefficient(v, float(counts[a]))
        self.types[col.type_index].SetCoefficient(v, 1.0)
        self.lp.Objective().SetCoefficient(v, float(self.cost[col.type_index]))
        self.vars.append(v)
        return True

    def solve(self, retry: bool = True, deadline: float | None = None
              ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, float]:
        """Solve; returns (value, lam (P,), pi (n_apps,), mu (n_types,), artificial use).

        The artificial columns keep the master feasible and bounded, so GLOP's only other
        answer is ``ABNORMAL`` (numerical trouble, status 4), which the warm start from the last
        basis can cause: with ``retry`` the master is then solved again from scratch (dual
        simplex, then primal simplex). With ``deadline`` (on :func:`time.perf_counter`'s scale)
        every solve is limited to the time left until it, and no retry starts after it.

        Raises:
            MasterLPFailed: no optimum (from scratch either), or the deadline came first.
        """
        from ortools.linear_solver import pywraplp

        def limit() -> bool:
            if deadline is None:
                return True
            left = deadline - time.perf_counter()
            self.lp.SetTimeLimit(max(1, int(1000 * left)))
            return left > 0

        st = self.lp.Solve() if limit() else pywraplp.Solver.NOT_SOLVED
        P = pywraplp.MPSolverParameters
        for algorithm in (P.DUAL, P.PRIMAL) if retry else ():
            if st == pywraplp.Solver.OPTIMAL or not limit():
                break
            params = P()
            params.SetIntegerParam(P.INCREMENTALITY, P.INCREMENTALITY_OFF)
            params.SetIntegerParam(P.LP_ALGORITHM, algorithm)
            st = self.lp.Solve(params)
        if st != pywraplp.Solver.OPTIMAL:
            raise MasterLPFailed(st)
        pi = np.maximum(np.array([c.dual_value() for c in self.cover]), 0.0)
        mu = np.minimum(np.array([c.dual_value() for c in self.types]), 0.0)
        lam = np.array([v.solution_value() for v in self.vars])  # type: ignore[attr-defined]
        art = float(sum(v.solution_value() for v in self.art))
        return float(self.lp.Objective().Value()), lam, pi, mu, art


def _initial_columns(inst: Instance, rows: list[TypeRows], ones: list[Instance],
                     start: Placement | None, clock: Clock) -> list[Column]:
    """The start placement's host patterns, then one single-app column per app and type.

    Single-app columns stop when a quarter of the time budget is used (the master's artificial
    columns keep it feasible without them).
    """
    cols: list[Column] = []
    if start is not None:
        hc = counts_from_placement(inst, start)
        for h in np.flatnonzero(hc.sum(axis=1)):
            cols.append(Column(int(inst.host_type_of[h]), hc[h]))
    budget = 0.25 * clock.time_limit
    for t, tr in enumerate(rows):
        for a in np.flatnonzero(tr.ub > 0):
            if clock.elapsed > budget or clock.stopped:
                return cols
            n = np.zeros(inst.n_apps, dtype=np.int64)
            n[a] = tr.ub[a]
            while n[a] > 0 and not pattern_placeable(ones[t], n):
                n[a] -= 1
            if n[a] > 0:
                cols.append(Column(t, n))
    return cols


def _host_limits(inst: Instance, kind: Objective, incumbent: float | None) -> np.ndarray:
    """Hosts of each type a solution at least as good as ``incumbent`` can use, ``(n_types,)``."""
    lim = np.minimum(inst.type_count, max(inst.n_containers, 1)).astype(np.float64)
    if incumbent is not None:
        if kind == "hosts":
            lim = np.minimum(lim, incumbent)
        else:
            with np.errstate(divide="ignore"):
                lim = np.minimum(lim, np.where(inst.type_cost > 0,
                                               np.floor(incumbent / inst.type_cost + 1e-9), lim))
    return lim


def _generate(inst: Instance, kind: Objective, clock: Clock, seed: int, workers: int,
              start: Placement | None, callback: ProgressCallback | None,
              history: list[Progress]) -> tuple[ColgenBound, _Master]:
    """The column-generation loop (see the module docstring)."""
    n_t = len(inst.host_types)
    rows = [type_rows(inst, t) for t in range(n_t)]
    ones = [single_host(inst, t) for t in range(n_t)]
    cost = inst.type_cost.astype(np.float64) if kind == "cost" else np.ones(n_t)
    incumbent = objective_value(inst, start.host_array(inst), kind) if start is not None else None
    limit = _host_limits(inst, kind, incumbent)
    master = _Master(inst, cost, np.minimum(inst.type_count, max(inst.n_containers, 1)))
    for col in _initial_columns(inst, rows, ones, start, clock):
        master.add(col)
    rng = np.random.default_rng(seed)
    memo = PricingMemo()
    best_lb = 0.0
    it = 0
    converged = False
    value, lam, art = 0.0, np.zeros(0), 0.0
    center: tuple[np.ndarray, np.ndarray] | None = None  # duals of the best bound (Wentges)

    def improving(t: int, n: np.ndarray, pi: np.ndarray, mu: np.ndarray) -> bool:
        return float(pi @ n) - mu[t] > cost[t] + RC_EPS

    failed = False
    while not clock.stopped:  # a stop ends the loop between iterations; best_lb stays valid
        it += 1
        try:
            value, lam, pi_r, mu_r, art = master.solve(deadline=clock.deadline)
        except MasterLPFailed as e:
            # no duals to price with: stop with the bound of the pricings done so far (each
            # rests on its own duals and proven price bounds, not on this LP) and the columns
            if clock.left(0.0) <= 0.05:
                break  # the budget ended during the solve: a time stop, not a failure
            failed = True
            notify(callback, history, clock, None, _bound(best_lb, kind, cost) if best_lb else None,
                   METHOD, f"iteration {it}: {e}; column generation stops with the bound so far")
            break
        added = 0
        exact_ok = False
        # Wentges smoothing: price first at a point between the best-bound duals and the
        # master's; a column enters only if it improves the master; on a mis-price, price at
        # the master's duals themselves.
        points = [(pi_r, mu_r)]
        if center is not None and STABILISE > 0:
            points.insert(0, (STABILISE * center[0] + (1 - STABILISE) * pi_r,
                              STABILISE * center[1] + (1 - STABILISE) * mu_r))
        for pi, mu in points:
            for t, tr in enumerate(rows):
                for n in price_greedy(inst, tr, pi, rng=rng, tries=4):
                    if improving(t, n, pi_r, mu_r) and pattern_placeable(ones[t], n):
                        added += master.add(Column(t, n))
            if added:
                break
            exact_ok = True
            best_price = np.zeros(n_t)
            for t, tr in enumerate(rows):
                left = clock.left(0.0)
                pr = price_exact(inst, tr, pi, time_limit=max(0.05, min(left, 10.0)), seed=seed,
                                 workers=workers, threshold=cost[t] + mu[t] + RC_EPS,
                                 stop=clock.stop, memo=memo)
                best_price[t] = pr.bound
                exact_ok &= pr.optimal
                for n in (pr.counts, *pr.others):
                    if improving(t, n, pi_r, mu_r):
                        if pattern_placeable(ones[t], n):
                            added += master.add(Column(t, n))
                        elif n is pr.counts and improving(t, n, pi, mu):
                            exact_ok = False  # GPU rows are a relaxation: no cards for it
            lb = _lower_bound(inst, pi, mu, cost, limit, best_price, value, master.limit)
            if lb > best_lb:
                best_lb, center = lb, (pi, mu)
                notify(callback, history, clock, None, _bound(best_lb, kind, cost), METHOD,
                       f"iteration {it}: LP {value:.4f}, bound {best_lb:.4f}")
            if added or clock.left(0.0) <= 0.05:
                break
        if not added:
            # priced exactly at the master's duals: nothing improves. The bound stays the
            # Lagrangian one of this last pricing (at most RC_EPS per host below the LP value):
            # it rests on the proven price bounds, not on the float LP's own value
            converged = exact_ok
            break
        if clock.left(0.0) <= 0.05:
            break
    # no placement exists when a valid lower bound exceeds what any placement costs (every
    # container on a host of its own, at the dearest cost); the artificial columns' cost is 10x
    # that, so an LP that needs them shows it
    infeasible = best_lb > max(inst.n_containers, 1) * float(cost.max(initial=1.0)) * (1 + 1e-6)
    master.rows, master.ones, master.rng = rows, ones, rng
    res = ColgenBound(value, best_lb, _bound(best_lb, kind, cost), tuple(master.cols), it,
                      converged, clock.elapsed, lam, infeasible, failed)
    return res, master


def _lower_bound(inst: Instance, pi: np.ndarray, mu: np.ndarray, cost: np.ndarray,
                 limit: np.ndarray, price: np.ndarray, value: float,
                 master_limit: np.ndarray) -> float:
    """The best of Farley's and the Lagrangian bound for the current duals (see module doc).

    ``price[t]`` is a proven upper bound on ``pi @ n`` over the patterns of type ``t``.
    """
    b = inst.counts.astype(np.float64)
    out = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = float(np.max(np.where(cost > 0, price / cost, np.inf), initial=0.0))
    if 0 < rho < np.inf:
        out = float(pi @ b) / rho
    rc = cost - mu - price  # most negative reduced cost per type (a lower bound on it)
    lag = float(pi @ b) + float(mu @ master_limit) + float(np.minimum(0.0, rc) @ limit)
    if np.isfinite(lag):
        out = max(out, lag)
    return min(out, value) if np.isfinite(value) else out


def _bound(lp: float, kind: Objective, costs: np.ndarray | None = None) -> float:
    """The objective bound from an LP bound: rounded up to hosts, or to the cost unit.

    The LP bound is computed in floats (GLOP duals, float price bounds), so it is shaved before
    rounding: ``ceil(lp - 1e-6)`` hosts (:func:`solvers.base.ceil_bound`), the same in cost units,
    or ``lp - 1e-7 * max(1, |lp|)`` when the costs have no common unit.
    """
    if kind == "hosts":
        return ceil_bound(lp)
    g = cost_unit(costs) if costs is not None else None
    return lp - 1e-7 * max(1.0, abs(lp)) if g is None else ceil_bound(lp / g) * g


def colgen_bound(instance: Instance, *, time_limit: float = 30.0, seed: int = 0,
                 callback: ProgressCallback | None = None) -> ColgenBound:
    """The Gilmore–Gomory LP bound by column generation (hosts, or cost with priced types).

    Args:
        instance: the instance.
        time_limit: seconds; a run cut short still returns a valid (Farley/Lagrangian) bound.
        seed: CP-SAT seed of the exact pricing.
        callback: receives :class:`~solvers.result.Progress` events with improved bounds.
    """
    kind = resolve_objective(instance, None)
    clock = Clock(time_limit)
    g = ffd(instance, kind)
    start = g.placement(instance) if g.complete else None
    return _generate(instance, kind, clock, seed, 1, start, callback, [])[0]


def _dive(inst: Instance, master: _Master, clock: Clock) -> np.ndarray | None:
    """Diving: keep the whole part of every column, round up the most nearly whole ones.

    Each step re-solves the master with the fixed lower bounds and adds improving columns
    from the greedy pricing (a few rounds), so the rest of the demand gets fresh patterns.

    Returns:
        Hosts per column of ``master.cols`` (covering every app), or ``None``.
    """
    out: np.ndarray | None = None
    rounds = 0
    while clock.left(0.0) > 0.05:
        try:
            _value, lam, pi, mu, art = master.solve(retry=False, deadline=clock.deadline)
        except MasterLPFailed:
            break  # the other roundings and the restricted master still run
        if art > 1e-6:
            break
        added = 0
        if rounds < 5:
            for t, tr in enumerate(master.rows):
                for n in price_greedy(inst, tr, pi, rng=master.rng, tries=2):
                    if float(pi @ n) - mu[t] > master.cost[t] + RC_EPS and pattern_placeable(
                            master.ones[t], n):
                        added += master.add(Column(t, n))
        if added:
            rounds += 1
            continue
        rounds = 0
        floor = np.floor(lam + 1e-9)
        frac = lam - floor
        frac[frac < 1e-6] = 0.0
        if not frac.any():
            out = np.round(lam).astype(np.int64)
            break
        for q in np.flatnonzero(floor >= 1).tolist():  # keep what the LP already uses whole
            master.set_lower(q, float(floor[q]))
        # round up the most nearly whole columns, within the hosts left of each type (the
        # fixed lower bounds of a type never exceed its host limit: the LP stays feasible)
        types = np.array([c.type_index for c in master.cols[: len(lam)]], dtype=np.int64)
        fixed = np.bincount(types, weights=floor, minlength=len(master.limit))
        k = max(1, int(DIVE_SHARE * np.count_nonzero(frac)))
        rounded = 0
        for q in np.argsort(-frac).tolist():
            if rounded == k or frac[q] <= 0:
                break
            if fixed[types[q]] + 1 <= master.limit[types[q]] + 1e-9:
                master.set_lower(q, float(floor[q] + 1))
                fixed[types[q]] += 1
                rounded += 1
        if not rounded:
            break  # no type has a host left for a rounded-up column
    for q in range(len(master.vars)):
        master.set_lower(q, 0.0)
    return out


def _residual_rounding(inst: Instance, kind: Objective, res: ColgenBound, clock: Clock,
                       seed: int, workers: int) -> list[tuple[int, np.ndarray]] | None:
    """Residual rounding: keep ``floor(lam)`` of every column, re-solve the rest, repeat.

    The residual instance keeps every app (with the uncovered counts) and the unused hosts;
    column generation runs on it again until little is left, which first fit packs.

    Returns:
        Patterns ``(host type, counts (n_apps,))`` covering every container, or ``None``.
    """
    chosen: list[tuple[int, np.ndarray]] = []
    cur, cols, lam = inst, list(res.columns), res.lam
    for _level in range(8):
        whole = np.zeros(len(cols), dtype=np.int64)  # columns added after the last solve: 0
        whole[: len(lam)] = np.floor(lam + 1e-9)
        if not whole.any():
            break
        cover = np.zeros(inst.n_apps, dtype=np.int64)
        used = np.zeros(len(inst.host_types), dtype=np.int64)
        for c, k in zip(cols, whole.tolist(), strict=True):
            chosen.extend((c.type_index, c.counts.copy()) for _ in range(k))
            cover += k * c.counts
            used[c.type_index] += k
        left = np.maximum(cur.counts - cover, 0)
        types = tuple(dataclasses.replace(t, count=max(0, int(t.count - u)), host_names=None)
                      for t, u in zip(cur.host_types, used.tolist(), strict=True))
        apps = tuple(dataclasses.replace(a, count=int(n))
                     for a, n in zip(cur.apps, left.tolist(), strict=True))
        cur = cur.replace(apps=apps, host_types=types, initial=None, requests=())
        if left.sum() <= 0.02 * inst.n_containers or clock.left(0.0) < 0.5:
            break
        g = ffd(cur, kind)
        sub, _ = _generate(cur, kind, clock.sub(0.5 * clock.left()), seed, workers,
                           g.placement(cur) if g.complete else None, None, [])
        cols, lam = list(sub.columns), sub.lam
    if cur.n_containers:
        g = ffd(cur, kind)
        if not g.complete:
            return None
        hc = counts_from_placement(cur, g.placement(cur))
        for h in np.flatnonzero(hc.sum(axis=1)):
            chosen.append((int(cur.host_type_of[h]), hc[h]))
    return chosen


def _restricted_ip(inst: Instance, cols: list[Column], lp_bound: float, cost: np.ndarray,
                   limit: np.ndarray, time_limit: float, seed: int, workers: int,
                   hint: np.ndarray | None, stop: Stop | None = None) -> np.ndarray | None:
    """Integer master over the columns (CP-SAT): how many hosts take each column, ``(P,)``.

    ``time_limit`` counts from the call (building the model included).
    """
    deadline = time.perf_counter() + time_limit
    from ortools.sat.python import cp_model

    if not cols:
        return None
    m = cp_model.CpModel()
    lam = [m.new_int_var(0, int(limit[c.type_index]), f"l{p}") for p, c in enumerate(cols)]
    for a in range(inst.n_apps):
        if stop is not None and stop.is_set():  # building takes seconds on the largest data
            return None
        terms = [(lam[p], int(c.counts[a])) for p, c in enumerate(cols) if c.counts[a]]
        if not terms:
            return None
        m.add(sum(v * w for v, w in terms) >= int(inst.counts[a]))
    for t in range(len(inst.host_types)):
        vs = [lam[p] for p, c in enumerate(cols) if c.type_index == t]
        if vs:
            m.add(sum(vs) <= int(limit[t]))
    scale = 1
    for k in range(7):
        if np.allclose(cost * 10**k, np.round(cost * 10**k)):
            scale = 10**k
            break
    else:
        scale = 10**6
    icost = np.round(cost * scale).astype(np.int64)
    m.minimize(sum(int(icost[c.type_index]) * lam[p] for p, c in enumerate(cols)))
    if hint is not None:
        for p, v in enumerate(lam):
            m.add_hint(v, int(hint[p]))
    lb = math.ceil(lp_bound * scale - 1e-6) if lp_bound > 0 else 0
    m.add(sum(int(icost[c.type_index]) * lam[p] for p, c in enumerate(cols)) >= int(lb))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.05, time_limit)
    solver.parameters.num_search_workers = max(1, workers)
    solver.parameters.random_seed = int(seed)
    st = run_cpsat(solver, m, None, stop, deadline=deadline)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    return np.array([solver.value(v) for v in lam], dtype=np.int64)


def _patterns_to_counts(inst: Instance, cols: list[Column], use: np.ndarray) -> np.ndarray:
    """Per-host counts ``(n_hosts, n_apps)`` from column multiplicities, surplus trimmed."""
    chosen: list[tuple[int, np.ndarray]] = []
    for p, k in enumerate(use.tolist()):
        for _ in range(k):
            c = cols[p]
            chosen.append((c.type_index, c.counts.copy()))
    return _assign_patterns(inst, chosen)


def _assign_patterns(inst: Instance, chosen: list[tuple[int, np.ndarray]]) -> np.ndarray:
    """Give patterns ``(type, counts)`` to hosts of their type in index order, surplus trimmed.

    Returns:
        Containers per host and app, shape ``(n_hosts, n_apps)``.
    """
    surplus = sum((n for _, n in chosen), np.zeros(inst.n_apps, dtype=np.int64)) - inst.counts
    for _, n in chosen:  # trimming keeps a pattern valid: every row and rule is downward closed
        take = np.minimum(np.maximum(surplus, 0), n)
        n -= take
        surplus -= take
    starts = np.concatenate([[0], np.cumsum(inst.type_count)])
    nxt = starts[:-1].copy()
    out = np.zeros((inst.n_hosts, inst.n_apps), dtype=np.int64)
    for t, n in sorted(chosen, key=lambda x: (x[0], -int(x[1].sum()))):
        if n.any():
            if nxt[t] >= starts[t + 1]:
                raise ValueError("more hosts of a type than exist")
            out[nxt[t]] = n
            nxt[t] += 1
    return out


def _try_columns(inst: Instance, cols: list[Column], use: np.ndarray,
                 offer: Callable[[Placement, str], bool], source: str) -> None:
    """Turn column multiplicities into a placement and offer it (checked by ``offer``)."""
    try:
        offer(placement_from_counts(inst, _patterns_to_counts(inst, cols, use)), source)
    except ValueError:
        pass  # more hosts of a type than exist, or cards could not be chosen


def solve_colgen(
    instance: Instance,
    options: SolveOptions = DEFAULT_OPTIONS,
) -> SolveResult:
    """Column generation: the Gilmore–Gomory bound and a placement from the generated columns.

    Args:
        instance: the instance (``initial`` and ``requests`` are ignored: offline problem).
        options: the common options (:class:`~solvers.base.SolveOptions`):

            - ``time_limit``: seconds for the whole call (about 60% for the columns, the rest for the
                restricted integer master).
            - ``workers``: CP-SAT workers for pricing and the restricted master.
            - ``seed``: CP-SAT seed.
            - ``objective``: ``"hosts"``, ``"cost"`` or ``None``; ``"deployed"`` raises.
            - ``callback``: receives :class:`~solvers.result.Progress` events.
            - ``hint``: a complete placement to start from (default: first-fit decreasing).
            - ``stop``: a stop request (:class:`solvers.base.StopFlag`): once set, the loop ends after
                the current iteration (pricing CP-SAT is stopped too), the best solution so far is
                rounded from the columns (a quick pass) and returned with the Farley / Lagrangian
                bound of the last completed pricing, which is valid at every iteration.

    Raises:
        InputError: ``objective="deployed"``.
    """
    time_limit, workers, seed = options.time_limit, options.workers, options.seed
    objective, callback, hint, stop = (options.objective, options.callback, options.hint,
                                       options.stop)
    inst = instance
    kind = resolve_objective(inst, objective)
    if kind == "deployed":
        raise _unsupported(kind)
    clock = Clock(time_limit, stop)
    history: list[Progress] = []
    best_p: Placement | None = None
    best_obj: float | None = None

    best_src = [""]

    def offer(p: Placement, source: str) -> bool:
        nonlocal best_p, best_obj
        if check(inst, p, require_all=True):
            return False
        v = objective_value(inst, p.host_array(inst), kind)
        if best_obj is None or v < best_obj - 1e-9:
            best_p, best_obj = p, v
            best_src[0] = source
            notify(callback, history, clock, v, None, METHOD, f"solution from {source}")
            return True
        return False

    if hint is None or not offer(hint, "hint"):  # auto passes its FFD as the hint
        g = ffd(inst, kind)
        if g.complete:
            offer(g.placement(inst), "ffd")
    lb, lb_name = cheap_lower_bound(inst, kind)
    proofs = {"bound": lb_name}
    if best_obj is not None and best_obj <= lb + 1e-9:
        return _result("optimal", best_p, best_obj, best_obj, kind, clock, history,
                       {"solution": best_src[0], **proofs})
    col_clock = clock.sub(0.6 * clock.left())
    res, master = _generate(inst, kind, col_clock, seed, workers, best_p, callback, history)
    if res.infeasible and best_obj is None:
        reason = infeasibility_reason(inst) or "the LP relaxation over all patterns is infeasible"
        return SolveResult("infeasible", None, math.inf, None, None, METHOD, clock.elapsed, kind,
                           {"bound": "colgen"}, reason, tuple(history))
    if res.bound > lb + 1e-9:
        lb, proofs = res.bound, {"bound": "colgen"}
    # solutions from the columns; after a stop only when there is none yet (on the largest
    # instances building the rounded placement alone takes seconds)
    if (best_obj is None or best_obj > lb + 1e-9) and not (clock.stopped and best_obj is not None):
        n_t = len(inst.host_types)
        cost = inst.type_cost.astype(np.float64) if kind == "cost" else np.ones(n_t)
        limit = np.minimum(inst.type_count, max(inst.n_containers, 1))
        chosen = _residual_rounding(inst, kind, res, clock.sub(min(clock.left() * 0.3, 20.0)),
                                    seed, workers)
        if chosen is not None:
            try:
                offer(placement_from_counts(inst, _assign_patterns(inst, chosen)), "rounding")
            except ValueError:
                pass  # more hosts of a type than exist, or cards could not be chosen
        use = None
        if best_obj is None or best_obj > lb + 1e-9:
            use = _dive(inst, master, clock.sub(min(clock.left() * 0.2, 10.0)))
        cols = list(master.cols)
        if use is not None:
            _try_columns(inst, cols, use, offer, "diving")
        if (best_obj is None or best_obj > lb + 1e-9) and clock.left(0.0) > 0.3:
            hint_use = use
            if hint_use is None and best_p is not None:
                hc = counts_from_placement(inst, best_p)
                index = {(c.type_index, c.counts.tobytes()): p for p, c in enumerate(cols)}
                hint_use = np.zeros(len(cols), dtype=np.int64)
                for h in np.flatnonzero(hc.sum(axis=1)):
                    key = (int(inst.host_type_of[h]), hc[h].astype(np.int64).tobytes())
                    if key in index:
                        hint_use[index[key]] += 1
            use = _restricted_ip(inst, cols, res.lp_bound, cost, limit, clock.left() - 0.2,
                                 seed, workers, hint_use, stop)
            if use is not None:
                _try_columns(inst, cols, use, offer, "restricted master")
    if best_obj is None:
        return SolveResult("unknown", None, lb, None, None, METHOD, clock.elapsed, kind,
                           proofs, None, tuple(history))
    lb = min(lb, best_obj)
    status = "optimal" if best_obj <= lb + 1e-6 * max(1.0, best_obj) else "feasible"
    notify(callback, history, clock, best_obj, lb, METHOD, "done")
    return _result(status, best_p, best_obj, lb, kind, clock, history,
                   {"solution": best_src[0], **proofs})


def _result(status: str, p: Placement | None, obj: float | None, bound: float,
            kind: Objective, clock: Clock, history: list[Progress],
            proofs: dict[str, str]) -> SolveResult:
    hosts = None
    if p is not None:
        hosts = len(_hosts_of(p))
    return SolveResult(status, obj, float(bound), p, hosts, METHOD, clock.elapsed,  # type: ignore[arg-type]
                       kind, proofs, None, tuple(history))


def _hosts_of(p: Placement) -> np.ndarray:
    """Distinct hosts a placement uses, as an array of host indices."""
    hs = np.concatenate([np.asarray(v, dtype=np.int64) for v in p.hosts.values()] or
                        [np.zeros(0, dtype=np.int64)])
    return np.flatnonzero(np.bincount(hs[hs >= 0]))  # np.unique would import numpy.ma (20 ms)


__all__ = ["ColgenBound", "Column", "MasterLPFailed", "colgen_bound", "cost_unit", "solve_colgen"]
