"""The aggregated placement model in PuLP, solved with the bundled CBC.

Containers of one app are identical, so the model counts them per host:

* ``x[a, h]`` integer in ``0..ub[a, type(h)]``: containers of app ``a`` on host ``h`` (only where
  the app may go; ``ub`` from :func:`solvers.exact.pricing.type_rows`: cap, capacity, GPU cards);
* ``y[h]`` binary: host ``h`` is used (not for ``"deployed"``, where every given host is open);
* ``z[a, h]`` binary, only for apps ``a`` that head a rule ``<a, b, k>`` that can bind on ``h``:
  ``x[a, h] <= ub * z[a, h]`` and ``x[b, h] <= k + (ub_b - k) * (1 - z[a, h])``.

Rows per host (see :mod:`solvers.exact.pricing`): capacity per resource ``<= capacity * y[h]``, and
for hosts with GPU cards the aggregate card rows (total card load per GPU resource, and cards that
hold a single container, i.e. whole cards and shares above half a card). The card rows are a
relaxation of per-card packing: cards are chosen afterwards with
:meth:`packing.feasibility.predicates.ClusterState.choose_cards` and every placement is verified by
:func:`packing.feasibility.checker.check`; if that fails the first-fit-decreasing placement is returned
instead, and the proven bound is unaffected (the model is a relaxation).

Exact data (:mod:`solvers.exact.scaling`): the rows are the integer rows of
:func:`solvers.exact.pricing.type_rows` (decimals read exactly, the checker's tolerance in the
capacities, totals below ``2**53`` so CBC's doubles hold them exactly), so the model is never
stricter than the checker; when the data cannot be scaled exactly the float rows are used.
Either way CBC solves in floats with tolerances (on rows with coefficients near ``1e10`` it can
declare "optimal" one host above the optimum), so nothing CBC says is a proof: its placement is
checked like any other, and its claims of optimality or infeasibility are *verified* by CP-SAT
(:func:`solvers.exact.cpsat.solve_cpsat`, whose integer model is a relaxation of the checker's
problem) in the time CBC leaves: CP-SAT looks for a placement strictly better than the
incumbent; if it proves there is none, the incumbent is optimal, and if it finds one, that
placement (checked) replaces the incumbent. The result's bound is the cheap bound or CP-SAT's
(``proofs["bound"]`` names it); ``proofs["cbc"]`` records CBC's claim, which proves nothing.
A claim with too little time left to verify (:data:`MIN_VERIFY_SECONDS`) leaves the result
"feasible" with the proven bound.

Symmetry breaking: ``y[h] >= y[h + 1]`` within a host type. The cheap lower bound is a
constraint. Only as many hosts of each type as an optimal solution can use are modelled: at most
the first-fit-decreasing host count (``"hosts"``), or ``floor(FFD cost / type cost)`` hosts of a
type (``"cost"``).

Stopping (``stop=``, :class:`solvers.base.StopFlag`): looked at before the model is built and
before CBC starts; CBC runs as a separate process (:func:`solvers.exact.cbc_run.solve_interruptible`)
that is interrupted on a stop, or a second after its own time limit if it runs past it: it then
ends its search and hands back its best solution.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from packing.feasibility.checker import check
from packing.model.instance import Instance, Placement
from solvers.base import (
    DEFAULT_OPTIONS,
    Clock,
    SolveOptions,
    Stop,
    bound_infeasible,
    ceil_bound,
    cheap_lower_bound,
    infeasibility_reason,
    infeasible_result,
    notify,
    objective_value,
    resolve_objective,
)
from solvers.exact.cbc_run import solve_interruptible
from solvers.exact.pricing import cost_unit, counts_from_placement, placement_from_counts, type_rows
from solvers.exact.scaling import CBC_LIMIT
from solvers.result import Objective, Progress, SolveResult
from solvers.search.greedy import ffd

METHOD = "pulp"


@dataclass
class PulpModel:
    """A built PuLP model and its variable handles.

    Attributes:
        problem: the ``pulp.LpProblem``.
        x: ``(app, host) -> LpVariable`` containers per host.
        y: ``host -> LpVariable`` host used (empty for ``"deployed"``).
        hosts: the global host indices modelled, shape ``(n_model_hosts,)``.
        kind: the objective.
        exact: whether the rows are the exactly scaled integer rows (see the module
            docstring); otherwise the model is an approximation and proves nothing.
    """

    problem: Any
    x: dict[tuple[int, int], Any]
    y: dict[int, Any]
    hosts: np.ndarray
    kind: Objective
    exact: bool = True


def model_hosts(instance: Instance, kind: Objective, incumbent: float | None) -> np.ndarray:
    """The hosts worth modelling: per type, as many as a solution better than ``incumbent`` uses.

    Args:
        instance: the instance.
        kind: the objective.
        incumbent: objective of a known complete placement (``None``: none known).

    Returns:
        Global host indices, type by type in index order, shape ``(n_model_hosts,)``.
    """
    starts = np.concatenate([[0], np.cumsum(instance.type_count)])
    out = []
    for t, ht in enumerate(instance.host_types):
        n = min(ht.count, max(instance.n_containers, 1))
        if incumbent is not None and kind == "hosts":
            n = min(n, int(round(incumbent)))
        elif incumbent is not None and kind == "cost" and ht.cost > 0:
            n = min(n, int(math.floor(incumbent / ht.cost + 1e-9)))
        out.append(np.arange(starts[t], starts[t] + n))
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


class ModelTooLarge(RuntimeError):
    """Building the model took longer than the time set aside for it."""


def build_model(instance: Instance, *, objective: str | None = None,
                hosts: np.ndarray | None = None, lower_bound: float = 0.0,
                build_seconds: float | None = None) -> PulpModel:
    """Build the aggregated model (see the module docstring).

    Args:
        instance: the instance.
        objective: ``"hosts"``, ``"cost"``, ``"deployed"`` or ``None`` (resolved as in
            :func:`solvers.base.resolve_objective`).
        hosts: global indices of the hosts to model, shape ``(n_model_hosts,)``; all by default.
        lower_bound: a proven lower bound on the objective, added as a constraint.
        build_seconds: give up (raise :class:`ModelTooLarge`) after this long.
    """
    import pulp

    inst = instance
    kind = resolve_objective(inst, objective)
    hosts = np.arange(inst.n_hosts) if hosts is None else np.asarray(hosts, dtype=np.int64)
    sense = pulp.LpMaximize if kind == "deployed" else pulp.LpMinimize
    prob = pulp.LpProblem("vbp", sense)
    rows = [type_rows(inst, t, limit=CBC_LIMIT) for t in range(len(inst.host_types))]
    exact = all(tr.exact for tr in rows)
    if exact:  # integer rows below 2**53: exact in CBC's doubles
        mats = [(tr.int_rows, tr.int_capacity) for tr in rows]
    else:  # the float rows: solutions only (checked), no proofs
        mats = [(tr.rows, tr.capacity) for tr in rows]
    ra, rb, rk = inst.rule_arrays
    x: dict[tuple[int, int], Any] = {}
    y: dict[int, Any] = {}
    prev: dict[int, Any] = {}
    clock = Clock(build_seconds if build_seconds is not None else math.inf)
    for h in hosts.tolist():
        if clock.left(0.0) <= 0:
            raise ModelTooLarge(f"model not built within {build_seconds:.1f} s")
        t = int(inst.host_type_of[h])
        tr = rows[t]
        apps = np.flatnonzero(tr.ub > 0)
        if kind != "deployed":
            y[h] = prob.add_variable(f"y_{h}", 0, 1, cat="Integer")
            if t in prev:
                prob += prev[t] >= y[h], f"sym_{h}"
            prev[t] = y[h]
        on = y[h] if kind != "deployed" else 1
        for a in apps.tolist():
            x[a, h] = prob.add_variable(f"x_{a}_{h}", 0, int(tr.ub[a]), cat="Integer")
        linked = np.zeros(inst.n_apps, dtype=bool)
        rows_t, cap_t = mats[t]
        assert rows_t is not None and cap_t is not None
        for j in range(rows_t.shape[1]):
            w = rows_t[apps, j]
            if w @ tr.ub[apps] > cap_t[j]:  # int64 stays below 2**53 (CBC_LIMIT)
                prob += (pulp.lpSum(w[i].item() * x[int(a), h] for i, a in enumerate(apps)
                                    if w[i]) <= cap_t[j].item() * on), f"row_{j}_{h}"
                linked[apps[w > 0]] = True
        if kind != "deployed":  # a container needs its host open even where no row can bind
            for a in apps[~linked[apps]].tolist():
                prob += x[a, h] <= int(tr.ub[a]) * on, f"link_{a}_{h}"
        z: dict[int, Any] = {}
        for a, b, k in zip(ra.tolist(), rb.tolist(), rk.tolist(), strict=True):
            if (a, h) in x and (b, h) in x and tr.ub[b] > k:
                if a not in z:
                    z[a] = prob.add_variable(f"z_{a}_{h}", 0, 1, cat="Integer")
                    prob += x[a, h] <= int(tr.ub[a]) * z[a], f"zon_{a}_{h}"
                prob += x[b, h] <= k + (int(tr.ub[b]) - k) * (1 - z[a]), f"rule_{a}_{b}_{h}"
    by_app: dict[int, list[Any]] = {}
    for (a, _h), v in x.items():
        by_app.setdefault(a, []).append(v)
    for a in range(inst.n_apps):
        terms = pulp.lpSum(by_app.get(a, []))
        if kind == "deployed":
            prob += terms <= int(inst.counts[a]), f"count_{a}"
        else:
            prob += terms == int(inst.counts[a]), f"count_{a}"
    if kind == "deployed":
        prob += pulp.lpSum(x.values())
    else:
        cost = {h: float(inst.host_cost[h]) if kind == "cost" else 1.0 for h in y}
        obj = pulp.lpSum(cost[h] * v for h, v in y.items())
        prob += obj
        if lower_bound > 0:
            prob += obj >= float(lower_bound), "cheap_bound"
    return PulpModel(prob, x, y, hosts, kind, exact)


def _set_hint(model: PulpModel, instance: Instance, counts: np.ndarray) -> bool:
    """Give the model a start from per-host counts ``(n_hosts, n_apps)``; False if incompatible."""
    for (a, h), v in model.x.items():
        v.setInitialValue(int(counts[h, a]))
    for h, v in model.y.items():
        v.setInitialValue(int(counts[h].sum() > 0))
    inside = np.zeros(instance.n_hosts, dtype=bool)
    inside[model.hosts] = True
    return bool(counts[~inside].sum() == 0)


def solve_pulp(
    instance: Instance,
    options: SolveOptions = DEFAULT_OPTIONS,
) -> SolveResult:
    """Solve the aggregated model with CBC (see the module docstring).

    Args:
        instance: the instance (``initial`` and ``requests`` are ignored: offline problem).
        options: the common options (:class:`~solvers.base.SolveOptions`):

            - ``time_limit``: seconds for the whole call (CBC gets what FFD and the build leave).
            - ``workers``: CBC threads.
            - ``seed``: CBC random seed.
            - ``objective``: ``"hosts"``, ``"cost"``, ``"deployed"`` or ``None`` (``"cost"`` when a host
                type costs other than 1).
            - ``callback``: receives :class:`~solvers.result.Progress` events.
            - ``hint``: a placement to start from (default: first-fit decreasing).
            - ``stop``: a stop request (:class:`solvers.base.StopFlag`), looked at before the model is
                built and before CBC runs (not during CBC: see the module docstring).

    Returns:
        The result; its placement passed :func:`packing.feasibility.checker.check`.
    """
    time_limit, workers, seed = options.time_limit, options.workers, options.seed
    objective, callback, hint, stop = (options.objective, options.callback, options.hint,
                                       options.stop)
    import pulp

    inst = instance
    clock = Clock(time_limit, stop)
    kind = resolve_objective(inst, objective)
    history: list[Progress] = []
    require_all = kind != "deployed"
    best_p: Placement | None = None
    best_obj: float | None = None
    best_src = "ffd"

    def offer(p: Placement, source: str) -> None:
        nonlocal best_p, best_obj, best_src
        if check(inst, p, require_all=require_all):
            return
        v = objective_value(inst, p.host_array(inst), kind)
        better = best_obj is None or (v > best_obj if kind == "deployed" else v < best_obj)
        if better:
            best_p, best_obj, best_src = p, v, source
            notify(callback, history, clock, v, None, METHOD, f"solution from {source}")

    g = ffd(inst, kind)
    if g.complete or kind == "deployed":
        offer(g.placement(inst), "ffd")
    if hint is not None:
        offer(hint, "hint")
    lb, lb_name = cheap_lower_bound(inst, kind)
    if bound_infeasible(inst, kind, lb):
        return infeasible_result(inst, kind, METHOD, clock, lb_name, history)
    if kind != "deployed":
        lb = _round_bound(inst, kind, lb)
    proofs = {"bound": lb_name}
    if best_obj is not None and (best_obj <= lb + 1e-9 if kind != "deployed"
                                 else best_obj >= lb - 1e-9):
        return _result("optimal", best_p, best_obj, best_obj, kind, clock, proofs, history,
                       source=best_src)
    def stopped() -> SolveResult:
        notify(callback, history, clock, best_obj, lb, METHOD, "stopped")
        return _result("unknown" if best_obj is None else "feasible", best_p, best_obj, lb, kind,
                       clock, proofs, history, source=best_src)

    if clock.stopped:
        return stopped()
    incumbent = best_obj if kind != "deployed" else None
    t_build = clock.elapsed
    try:
        model = build_model(inst, objective=kind, hosts=model_hosts(inst, kind, incumbent),
                            lower_bound=lb if kind != "deployed" else 0.0,
                            build_seconds=0.25 * clock.left())
    except ModelTooLarge:
        model = None
    if clock.stopped:
        return stopped()
    if model is None:  # return what first fit found, with the cheap bound
        status = "unknown" if best_obj is None else "feasible"
        notify(callback, history, clock, best_obj, lb, METHOD, "model too large for the limit")
        return _result(status, best_p, best_obj, lb, kind, clock, {**proofs,
                       "note": "model too large for the time limit"}, history, source=best_src)
    t_build = clock.elapsed - t_build
    # writing and reading the model files costs about as much as building it
    cbc_budget = clock.left(0.0) - 0.5 - 2.5 * t_build
    if cbc_budget < 0.2:  # the budget is spent: first fit, with the cheap bound
        status = "unknown" if best_obj is None else "feasible"
        notify(callback, history, clock, best_obj, lb, METHOD, "no time left for CBC")
        return _result(status, best_p, best_obj, lb, kind, clock, {**proofs,
                       "note": "no time left for CBC"}, history, source=best_src)
    warm = best_p is not None and _set_hint(model, inst, counts_from_placement(inst, best_p))
    cbc_limit = max(0.5, cbc_budget)
    # CBC is interrupted (and writes its best solution) a second after its own limit, or on a stop
    deadline = time.perf_counter() + min(cbc_limit + 1.0, max(0.5, clock.left(0.0) - 0.2))
    cbc_status = solve_interruptible(model.problem, time_limit=cbc_limit, deadline=deadline, stop=stop,
                                     threads=workers, seed=int(seed) + 1, warm_start=warm)
    sol_status = model.problem.sol_status
    proven_opt = cbc_status == pulp.LpStatusOptimal and sol_status == pulp.LpSolutionOptimal
    if sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
        counts = np.zeros((inst.n_hosts, inst.n_apps), dtype=np.int64)
        for (a, h), v in model.x.items():
            counts[h, a] = int(round(v.value() or 0))
        try:
            p = placement_from_counts(inst, counts)
            offer(p, "cbc")
        except ValueError:
            pass  # cards could not be chosen for the relaxed GPU rows: keep the incumbent
    # CBC works in floats with tolerances: its bound, optimality and infeasibility are claims,
    # not proofs. A claim is verified by CP-SAT on its integer model (a relaxation of the
    # checker's problem, solvers.exact.cpsat) with the time left; only what CP-SAT proves is kept.
    claim = proven_opt or cbc_status == pulp.LpStatusInfeasible
    bound = lb
    if claim and not clock.stopped and clock.left() >= MIN_VERIFY_SECONDS:
        ver = _verify(inst, kind, best_p, best_obj, lb, clock, workers, seed, stop)
        if ver is not None:
            if ver.status == "infeasible" and best_obj is None:
                return SolveResult("infeasible", None, math.inf, None, None, METHOD,
                                   clock.elapsed, kind, {"bound": "cpsat"},
                                   ver.reason or infeasibility_reason(inst), tuple(history))
            if ver.placement is not None:
                offer(ver.placement, "cpsat")
            vb = float(ver.bound)
            if kind == "deployed" and vb < bound - 1e-9:
                bound, proofs = vb, {"bound": "cpsat"}
            elif kind != "deployed" and vb > bound + 1e-9 and math.isfinite(vb):
                bound, proofs = _round_bound(inst, kind, vb), {"bound": "cpsat"}
    proofs = {**proofs, "cbc": _claim_note(cbc_status, proven_opt, model.problem, pulp)}
    if best_obj is None:
        return SolveResult("unknown", None, bound, None, None, METHOD, clock.elapsed, kind,
                           proofs, None, tuple(history))
    if kind == "deployed":
        bound = max(bound, best_obj)
    done = abs(best_obj - bound) <= 1e-6 * max(1.0, abs(best_obj))
    if kind != "deployed":
        bound = min(bound, best_obj)
    notify(callback, history, clock, best_obj, bound, METHOD, "cbc finished")
    return _result("optimal" if done else "feasible", best_p, best_obj, bound, kind, clock,
                   proofs, history, source=best_src)


MIN_VERIFY_SECONDS = 0.2
"""Least time left for CP-SAT to verify a claim of CBC (otherwise the claim is not used)."""


def _claim_note(status: int, proven_opt: bool, problem: Any, pulp: Any) -> str:
    """What CBC claimed, for ``proofs["cbc"]`` (a claim, never a proof)."""
    if proven_opt:
        value = pulp.value(problem.objective)
        return f"claimed optimal {value:g}" if value is not None else "claimed optimal"
    if status == pulp.LpStatusInfeasible:
        return "claimed infeasible"
    return str(pulp.LpStatus.get(status, status)).lower()


def _verify(inst: Instance, kind: Objective, best_p: Placement | None, best_obj: float | None,
            lb: float, clock: Clock, workers: int, seed: int, stop: Stop | None
            ) -> SolveResult | None:
    """CP-SAT's proof (or refutation) of CBC's claim, or ``None`` when CP-SAT is missing.

    For ``"hosts"`` and ``"cost"`` with an incumbent, CP-SAT looks only for placements strictly
    below it: if there is none, its bound is the incumbent's value. Otherwise (``"deployed"``,
    or no incumbent) it solves the instance, hinted with the incumbent.
    """
    try:
        from solvers.exact.cpsat import solve_cpsat
    except ImportError:  # pragma: no cover - ortools is a dependency
        return None
    below = best_obj if (kind != "deployed" and best_obj is not None) else None
    return solve_cpsat(inst, SolveOptions(time_limit=clock.left(), workers=workers, seed=seed,
                                          objective=kind, hint=best_p, stop=stop),
                       lower_bound=lb if kind != "deployed" else None, below=below)


def _round_bound(inst: Instance, kind: Objective, value: float) -> float:
    """A proven bound rounded up: to whole hosts, or to the cost unit of priced host types."""
    if math.isinf(value):  # the cheap bound proves infeasibility
        return value
    if kind == "hosts":
        return ceil_bound(value)
    g = cost_unit(inst.type_cost)
    return ceil_bound(value / g) * g if g is not None else value - 1e-7 * max(1.0, abs(value))


def _result(status: str, p: Placement | None, obj: float | None, bound: float,
            kind: Objective, clock: Clock, proofs: dict[str, str], history: list[Progress],
            source: str) -> SolveResult:
    hosts = None
    if p is not None:
        hs = np.concatenate([np.asarray(v, dtype=np.int64) for v in p.hosts.values()] or
                            [np.zeros(0, dtype=np.int64)])
        hosts = int(len(np.unique(hs[hs >= 0])))
    return SolveResult(status, obj, float(bound), p, hosts, METHOD, clock.elapsed,  # type: ignore[arg-type]
                       kind, {"solution": source, **proofs}, None, tuple(history))


__all__ = ["ModelTooLarge", "PulpModel", "build_model", "model_hosts", "solve_pulp"]
