"""``vbp.plan``: how many hosts of which types a demand needs, with proof, per growth scenario.

The orchestration only: demand and host types are read by :mod:`packing.loaders.deployments` and
:mod:`packing.loaders.host_types`, capacities are adjusted and the instance built by
:mod:`packing.planning`, open host counts are bounded by :mod:`solvers.plan_bound`, the instance is
solved by :func:`solvers.solve` (whose placement passes the checker) and the scenarios run on the
executors of :mod:`packing.evaluation`.

Example:
    >>> import vbp
    >>> p = vbp.plan("deployments.csv", ["std:16c64g:0.8", "big:64c256g:2.9"],
    ...              headroom="15%", growth=(1, 1.5))                    # doctest: +SKIP
    >>> [(s.growth, s.status, s.hosts, s.cost) for s in p.scenarios]   # doctest: +SKIP
    [(1.0, 'optimal', 7, 8.3), (1.5, 'optimal', 10, 11.7)]
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packing.model import Instance, Placement
from packing.planning import Adjustment, Demand, HostOffer, TypeUsage

FORMAT = "vbp-plan/1"
"""The ``format`` of :meth:`PlanResult.to_dict` (schema: ``docs/schemas/vbp-plan-1.json``)."""


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
        max_moves: most containers a plan may move from ``current``.
        n_plus_one: also check that the plan survives losing any one host.
        verify_only: only check ``current`` against the demand, no new plan.
    """

    adjustment: Adjustment = Adjustment()
    time_limit: float = 60.0
    method: str = "auto"
    threads: int = 2
    seed: int = 0
    current: Any = None
    max_moves: int | None = None
    n_plus_one: bool = False
    verify_only: bool = False


@dataclass(frozen=True)
class Replay:
    """What writing a scenario as Kubernetes objects needs besides its instance and placement.

    Attributes:
        offers: the host types offered.
        reserve: per host type (by name), the amount off allocatable (``--reserve`` plus the
            DaemonSets it runs), base units, shape ``(3,)``.
        pods: per app, the workload and its pod template (:attr:`packing.planning.Demand.pods`).
    """

    offers: tuple[HostOffer, ...]
    reserve: Mapping[str, tuple[int, int, int]]
    pods: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class ScenarioResult:
    """The plan for one demand multiplier.

    Attributes:
        growth: the demand multiplier (replicas rounded up).
        status: ``"optimal"``, ``"feasible"`` (with a proven gap), ``"infeasible"`` or
            ``"unknown"``.
        objective: ``"hosts"`` (no prices) or ``"cost"``.
        hosts: hosts used (``None`` without a plan).
        cost: total price of the hosts used (``None`` without prices or without a plan).
        lower_bound: proven lower bound on the objective (hosts or cost).
        gap: ``(value - bound) / value`` of the objective (0 when optimal).
        per_type: usage per host type, in the order of the host list.
        max_hosts: hosts of each type the plan could use (the given count or the derived bound).
        seconds: wall time of the scenario.
        proofs: which method found the plan and which proved the bound.
        reason: why, when infeasible.
        placement: where every container goes (hosts named ``"<type>#<i>"``).
        instance: the instance solved (planned capacities, scaled replicas).
        n_plus_one: the N+1 check (see ``docs/plan.md``), when asked for.
        moves: the moves from the current cluster, when asked for.
        replay: what :meth:`to_kubernetes` needs (set by :func:`plan`).
    """

    growth: float
    status: str
    objective: str
    hosts: int | None
    cost: float | None
    lower_bound: float
    gap: float | None
    per_type: tuple[TypeUsage, ...]
    max_hosts: dict[str, int]
    seconds: float
    proofs: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    placement: Placement | None = None
    instance: Instance | None = None
    n_plus_one: dict[str, Any] | None = None
    moves: dict[str, Any] | None = None
    replay: Replay | None = field(default=None, compare=False, repr=False)

    def to_kubernetes(self) -> list[dict[str, Any]]:
        """The plan as Kubernetes objects: a Node per used host, a bound Pod per container.

        With ``n_plus_one``, its spare hosts are Nodes too (empty).

        See :mod:`packing.k8s_out` (write them with :func:`packing.k8s_out.write_objects`).

        Raises:
            ValueError: the scenario has no placement, or was not made by :func:`plan`.
        """
        from packing.k8s_out import plan_objects

        if self.placement is None or self.instance is None:
            raise ValueError(f"growth {self.growth:g}: no plan to write ({self.status})")
        if self.replay is None:
            raise ValueError("the scenario has no host offers; make it with vbp.plan")
        spares = (self.n_plus_one or {}).get("spares") or ()
        return plan_objects(self.instance, self.placement, self.replay.offers,
                            self.replay.reserve, self.replay.pods, tuple(spares))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the scenario (see ``docs/plan.md``); infinities become ``null``."""
        d: dict[str, Any] = {
            "growth": self.growth, "status": self.status, "objective": self.objective,
            "hosts": self.hosts, "cost": self.cost, "lower_bound": _finite(self.lower_bound),
            "gap": _finite(self.gap), "seconds": round(self.seconds, 3),
            "per_type": [t.to_dict() for t in self.per_type],
            "max_hosts": dict(self.max_hosts), "proofs": dict(self.proofs), "reason": self.reason,
        }
        if self.n_plus_one is not None:
            d["n_plus_one"] = self.n_plus_one
        if self.moves is not None:
            d["moves"] = self.moves
        return d


@dataclass(frozen=True)
class PlanResult:
    """Every scenario of a plan.

    Attributes:
        scenarios: one per growth multiplier, in the order given.
        planned_against: which capacity the plans respect (reserve and headroom applied).
        host_types: the host types offered.
    """

    scenarios: tuple[ScenarioResult, ...]
    planned_against: str
    host_types: tuple[HostOffer, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"format": "vbp-plan/1", "planned_against": ..., "scenarios": [...]}``."""
        return {"format": FORMAT, "planned_against": self.planned_against,
                "scenarios": [s.to_dict() for s in self.scenarios]}

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per scenario and host type.

        Columns: ``growth, status, total_hosts, total_cost, lower_bound, gap, type, hosts, cost,
        bottleneck``, then ``util_<resource>`` and ``stranded_<resource>`` per resource.

        Raises:
            ImportError: pandas is not installed (with how to install it).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("PlanResult.to_frame needs pandas: pip install pandas "
                              "(or use to_dict())") from None
        rows = []
        for s in self.scenarios:
            for t in s.per_type:
                row: dict[str, Any] = {
                    "growth": s.growth, "status": s.status, "total_hosts": s.hosts,
                    "total_cost": s.cost, "lower_bound": s.lower_bound, "gap": s.gap,
                    "type": t.type, "hosts": t.hosts, "cost": t.cost, "bottleneck": t.bottleneck}
                row.update({f"util_{r}": u for r, u in t.utilisation.items()})
                row.update({f"stranded_{r}": v for r, v in t.stranded.items()})
                rows.append(row)
        return pd.DataFrame(rows)


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


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
    :func:`solvers.plan_bound.count_bounds` (as many as needed when no count is given).
    """
    from packing.planning import build_instance
    from solvers.plan_bound import count_bounds

    scaled = demand.scaled(growth)
    probe = build_instance(scaled, offers, [1] * len(offers), adjustment)
    counts = count_bounds(probe, [o.count for o in offers]).tolist()
    return build_instance(scaled, offers, counts, adjustment, name=f"plan-x{growth:g}")


def solve_scenario(instance: Instance, growth: float, offers: Sequence[HostOffer],
                   options: PlanOptions) -> ScenarioResult:
    """Solve one built scenario and read the plan off the placement.

    This is the per-scenario hook: the moves, N+1 and verification extensions take the built
    instance here.
    """
    from solvers import solve
    from solvers.plan_bound import fits_alone

    t0 = time.perf_counter()
    priced = any(o.price is not None for o in offers)
    kind = "cost" if priced else "hosts"
    labels = [dict(o.labels) for o in offers]
    max_hosts = {t.name: t.count for t in instance.host_types}
    fit = fits_alone(instance)
    anywhere = [bool(fit[a].any()) for a in range(instance.n_apps)]
    nowhere = [a.name for a, ok, c in zip(instance.apps, anywhere, instance.counts.tolist(),
                                          strict=True)
               if c > 0 and not ok]
    if nowhere:
        reason = (f"app {nowhere[0]!r} fits on no host type (planned against "
                  f"{instance.meta.get('planned_against', 'full host capacity')})"
                  + (f"; {len(nowhere) - 1} more apps neither" if len(nowhere) > 1 else ""))
        return ScenarioResult(growth, "infeasible", kind, None, None, math.inf, None, (),
                              max_hosts, time.perf_counter() - t0, reason=reason,
                              instance=instance)
    # E2 hook: --current/--max-moves/--verify-only plan on the running cluster; --n-plus-one
    from vbp.plan_current import current_scenario, needs_current, with_n_plus_one

    if needs_current(options):
        return current_scenario(instance, growth, offers, options, t0, summarise)
    res = solve(instance, options.method, time_limit=options.time_limit, workers=options.threads,
                seed=options.seed, objective=kind, settings=auto_settings(instance, fit, options))
    out = summarise(instance, growth, res.placement, res.status, res.lower_bound, priced,
                    labels, max_hosts, time.perf_counter() - t0, dict(res.proofs), res.reason,
                    kind)
    return with_n_plus_one(out, options) if options.n_plus_one and out.placement else out


def auto_settings(instance: Instance, fit: Any, options: PlanOptions) -> Any:
    """The knobs of method ``auto`` for a plan (``None`` for other methods).

    ``auto`` sends instances of at least ``spread_min_work`` containers x hosts to its large-scale
    heuristic path. A plan's host counts are upper bounds, mostly never used, so the work is
    measured with the hosts one type that takes every container needs (its count), not with the
    sum of the bounds: the threshold is scaled by ``n_hosts / that count``.

    Args:
        instance: the built scenario.
        fit: :func:`solvers.plan_bound.fits_alone` of it, shape ``(n_apps, n_types)``.
        options: the plan's options.
    """
    if options.method != "auto":
        return None
    from solvers.auto import DEFAULT_SETTINGS

    need = instance.counts > 0
    whole = [t.count for i, t in enumerate(instance.host_types) if t.count and fit[need, i].all()]
    scale = instance.n_hosts / min(whole) if whole else 1.0
    return dataclasses.replace(
        DEFAULT_SETTINGS, spread_min_work=int(DEFAULT_SETTINGS.spread_min_work * max(1.0, scale)))


def summarise(instance: Instance, growth: float, placement: Placement | None, status: str,
              lower_bound: float, priced: bool, labels: Sequence[Mapping[str, str]],
              max_hosts: dict[str, int], seconds: float, proofs: dict[str, str] | None = None,
              reason: str | None = None, kind: str = "hosts") -> ScenarioResult:
    """A :class:`ScenarioResult` from any (checked) placement of a planning instance."""
    from packing.planning import type_usage

    if placement is None:
        return ScenarioResult(growth, status, kind, None, None, lower_bound, None, (), max_hosts,
                              seconds, proofs or {}, reason, None, instance)
    per_type = type_usage(instance, placement, priced, labels)
    hosts = sum(t.hosts for t in per_type)
    cost = sum(t.cost or 0.0 for t in per_type) if priced else None
    value = float(cost if priced and cost is not None else hosts)
    if status == "optimal" or value == lower_bound:
        gap = 0.0
    else:
        gap = abs(value - lower_bound) / value if value else math.inf
    return ScenarioResult(growth, status, kind, hosts, cost, lower_bound, gap, per_type, max_hosts,
                          seconds, proofs or {}, reason, placement, instance)


MIN_SOLVE_SECONDS = 1.0
"""The solver gets at least this long, even when building the scenario used up its budget."""


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


def plan(
    demand: str | Path | Sequence[str | Path] | Demand,
    hosts: str | Sequence[str | Path | HostOffer],
    *,
    headroom: str | float | Mapping[str, Any] | None = None,
    reserve: str | Mapping[str, str] | None = None,
    growth: str | Sequence[float] = (1.0,),
    time_limit: float = 60.0,
    method: str = "auto",
    threads: int = 2,
    seed: int = 0,
    executor: str = "serial",
    workers: int | None = None,
    address: str | None = None,
    current: Any = None,
    max_moves: int | None = None,
    n_plus_one: bool = False,
    verify_only: bool = False,
) -> PlanResult:
    """Plan hosts for a demand: one optimal (or proven-gap) plan per growth multiplier.

    Args:
        demand: DEMAND file(s) (deployments CSV, instance file, Kubernetes manifests) or a
            :class:`~packing.planning.Demand`.
        hosts: host-type files (CSV/YAML), inline ``NAME:16c64g[:PRICE[:COUNT]]`` specs, or
            :class:`~packing.planning.HostOffer` objects.
        headroom: share kept free: ``"15%"``, ``"cpu=20%,memory=10%"``, a fraction or a mapping.
        reserve: per-host overhead taken off first: ``"100m,128Mi"`` or ``"cpu=100m,memory=128Mi"``;
            the demand's own overhead (Kubernetes DaemonSets) is added to it.
        growth: demand multipliers (``"1,1.25,1.5"`` or numbers), each a scenario.
        time_limit: budget per scenario (building it, then solving), seconds.
        method: :func:`solvers.solve` method.
        threads: solver threads per scenario.
        seed: solver seed.
        executor: where scenarios run: ``"serial"``, ``"process"`` or ``"ray"``.
        workers: processes (process) or CPUs (ray).
        address: Ray cluster address (ray only).
        current: the running cluster (see ``docs/plan.md``).
        max_moves: most containers moved from ``current``.
        n_plus_one: check that the plan survives losing any one host.
        verify_only: only verify ``current``.

    Returns:
        The :class:`PlanResult`.

    Raises:
        InputError: bad demand, host types, headroom, reserve or growth.
    """
    from packing.evaluation import make_executor
    from packing.loaders.deployments import load_demand
    from packing.loaders.host_types import load_hosts
    from packing.planning import parse_growth, parse_headroom, parse_reserve

    user = Adjustment(parse_reserve(reserve), parse_headroom(headroom))
    growths = parse_growth(growth)
    dem = demand if isinstance(demand, Demand) else load_demand(demand)
    offers = load_hosts(hosts)
    adj = user.plus(dem.overhead)  # DaemonSets are added per host type when building
    for o in offers:  # a reserve that leaves nothing: an error before any work
        adj.planned(o, extra=dem.daemon_load(o))
    options = PlanOptions(adj, float(time_limit), method, int(threads), int(seed), current,
                          max_moves, bool(n_plus_one), bool(verify_only))
    tasks = [ScenarioTask(g, dem, offers, options) for g in growths]
    if len(tasks) == 1 or executor == "serial":
        results = [run_scenario(t) for t in tasks]
    else:
        with make_executor(executor, workers, address) as ex:
            results = ex.map(run_scenario, tasks)
    per_type = {o.name: adj.plus(dem.daemon_load(o)).reserve for o in offers}
    replay = Replay(offers, per_type, dem.pods)
    results = [dataclasses.replace(r, replay=replay) for r in results]
    return PlanResult(tuple(results), adj.describe(daemons=bool(dem.daemons)), offers)


def scenario_path(out: str | Path, growth: float, several: bool) -> Path:
    """Where ``--out`` writes a scenario's placement: ``out`` itself, or ``<stem>-x<growth><suffix>``."""
    p = Path(out)
    return p.with_name(f"{p.stem}-x{growth:g}{p.suffix}") if several else p


def replace(result: ScenarioResult, **changes: Any) -> ScenarioResult:
    """A copy of a scenario result with some fields replaced."""
    return dataclasses.replace(result, **changes)


__all__ = ["FORMAT", "PlanOptions", "PlanResult", "Replay", "ScenarioResult", "ScenarioTask",
           "build_scenario", "plan", "run_scenario", "scenario_path", "solve_scenario",
           "summarise"]
