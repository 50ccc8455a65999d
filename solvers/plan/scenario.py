"""Solve one capacity-planning scenario: build it, bound the host counts, solve, read the plan.

A scenario is one growth multiplier of a demand on host offers (:mod:`packing.plan.model`). Its
instance gets each type's count from :func:`solvers.plan.type_bounds.count_bounds`, is solved by
:func:`solvers.solve` (whose placement passes the checker), and is read into a
:class:`packing.plan.result.ScenarioResult`. With a running cluster or N+1, the scenario goes
through :mod:`solvers.plan.current`. ``vbp.plan`` runs the scenarios on an executor.

Example:
    >>> from solvers.plan.scenario import PlanOptions, ScenarioTask, run_scenario   # doctest: +SKIP
    >>> run_scenario(ScenarioTask(1.5, demand, offers, PlanOptions(time_limit=10))).hosts
    10
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from packing.model.instance import Instance
from packing.plan.model import Adjustment, Demand, HostOffer, build_instance
from packing.plan.result import ScenarioResult, summarise

MIN_SOLVE_SECONDS = 1.0
"""The solver gets at least this long, even when building the scenario used up its budget."""


@dataclass(frozen=True)
class PlanOptions:
    """How every scenario is solved.

    Attributes:
        adjustment: reserve and headroom taken off every host.
        time_limit: solver budget per scenario, seconds.
        method: the :func:`solvers.solve` method.
        threads: solver worker threads per scenario.
        seed: solver seed.
        current: the cluster as it runs now (moves / verification; see ``docs/plan.md``).
        max_moves: most containers a plan may move from ``current``
            (:data:`solvers.plan.current.ALL_MOVES`: any number; ``None``: none).
        n_plus_one: also check that the plan survives losing any one host.
        verify_only: only check ``current`` against the demand, no new plan.
    """

    adjustment: Adjustment = Adjustment()
    time_limit: float = 60.0
    method: str = "auto"
    threads: int = 2
    seed: int = 0
    current: Any = None
    max_moves: int | str | None = None
    n_plus_one: bool = False
    verify_only: bool = False


@dataclass(frozen=True)
class ScenarioTask:
    """One scenario to run on an executor (picklable).

    Attributes:
        growth: the demand multiplier.
        demand: the demand at growth 1.
        offers: the host types.
        options: how to solve.
    """

    growth: float
    demand: Demand
    offers: tuple[HostOffer, ...]
    options: PlanOptions


def build_scenario(demand: Demand, offers: Sequence[HostOffer], adjustment: Adjustment,
                   growth: float) -> Instance:
    """The instance of one scenario: scaled demand, planned capacities, counts bounded.

    Each type's count is ``min(given count, bound)`` with the bound of
    :func:`solvers.plan.type_bounds.count_bounds` (as many as needed when no count is given).
    """
    from solvers.plan.type_bounds import count_bounds

    scaled = demand.scaled(growth)
    probe = build_instance(scaled, offers, [1] * len(offers), adjustment)
    counts = count_bounds(probe, [o.count for o in offers]).tolist()
    return build_instance(scaled, offers, counts, adjustment, name=f"plan-x{growth:g}")


def solve_scenario(instance: Instance, growth: float, offers: Sequence[HostOffer],
                   options: PlanOptions) -> ScenarioResult:
    """Solve one built scenario and read the plan off the placement.

    With ``options.current`` the scenario plans on the running cluster, and with
    ``options.n_plus_one`` the plan gets spares (:mod:`solvers.plan.current`).
    """
    from solvers import solve
    from solvers.plan.current import current_scenario, needs_current, objective_of, with_n_plus_one
    from solvers.plan.type_bounds import fits_alone

    t0 = time.perf_counter()
    kind = objective_of(offers)
    fit = fits_alone(instance)
    anywhere: list[bool] = np.asarray(fit.any(axis=1), dtype=bool).tolist()
    nowhere = [a.name for a, ok, c in zip(instance.apps, anywhere, instance.counts.tolist(),
                                          strict=True) if c > 0 and not ok]
    if nowhere:
        from packing.feasibility.explain import refusals
        from packing.plan.model import planned_capacity

        exact = instance.replace(host_types=tuple(  # the amounts as planned, not the solvers' grid
            dataclasses.replace(t, capacity=c)
            for t, c in zip(instance.host_types, planned_capacity(instance), strict=True)))
        reason = (f"app {nowhere[0]!r} fits on no host type (planned against "
                  f"{instance.meta.get('planned_against', 'full host capacity')}): "
                  f"{refusals(exact, instance.app_index[nowhere[0]])}"
                  + (f"; {len(nowhere) - 1} more apps neither" if len(nowhere) > 1 else ""))
        return summarise(instance, growth, None, "infeasible", math.inf, offers,
                         time.perf_counter() - t0, reason=reason)
    if needs_current(options):
        return current_scenario(instance, growth, offers, options, t0)
    res = solve(instance, options.method, time_limit=options.time_limit, workers=options.threads,
                seed=options.seed, objective=kind, settings=auto_settings(instance, fit, options))
    out = summarise(instance, growth, res.placement, res.status, res.bound, offers,
                    time.perf_counter() - t0, res.proofs, res.reason)
    if options.n_plus_one and out.placement:
        return with_n_plus_one(out, options, limits={o.name: o.count for o in offers})
    return out


def auto_settings(instance: Instance, fit: Any, options: PlanOptions) -> Any:
    """The knobs of method ``auto`` for a plan (``None`` for other methods).

    ``auto`` sends instances of at least ``spread_min_work`` containers x hosts to its large-scale
    heuristic path. A plan's host counts are upper bounds, mostly never used, so the work is
    measured with the hosts one type that takes every container needs (its count), not with the
    sum of the bounds: the threshold is scaled by ``n_hosts / that count``.

    Args:
        instance: the built scenario.
        fit: :func:`solvers.plan.type_bounds.fits_alone` of it, shape ``(n_apps, n_types)``.
        options: the plan's options.
    """
    if options.method != "auto":
        return None
    from solvers.exact.auto import DEFAULT_SETTINGS

    need = instance.counts > 0
    whole = [t.count for i, t in enumerate(instance.host_types) if t.count and fit[need, i].all()]
    scale = instance.n_hosts / min(whole) if whole else 1.0
    return dataclasses.replace(
        DEFAULT_SETTINGS, spread_min_work=int(DEFAULT_SETTINGS.spread_min_work * max(1.0, scale)))


def run_scenario(task: ScenarioTask) -> ScenarioResult:
    """Build and solve one scenario (the function the executors run).

    The time limit covers the whole scenario: the solver gets what building it (the count
    bounds) left, at least :data:`MIN_SOLVE_SECONDS`; ``seconds`` reports the whole.
    """
    t0 = time.perf_counter()
    inst = build_scenario(task.demand, task.offers, task.options.adjustment, task.growth)
    left = max(MIN_SOLVE_SECONDS, task.options.time_limit - (time.perf_counter() - t0))
    opts = dataclasses.replace(task.options, time_limit=left)
    res = solve_scenario(inst, task.growth, task.offers, opts)
    return dataclasses.replace(res, seconds=time.perf_counter() - t0)


__all__ = ["MIN_SOLVE_SECONDS", "PlanOptions", "ScenarioTask", "auto_settings", "build_scenario",
           "run_scenario", "solve_scenario"]
