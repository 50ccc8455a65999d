"""``vbp.plan``: how many hosts of which types a demand needs, with proof, per growth scenario.

The orchestration only: demand and host types are read by :func:`packing.loaders.front.read_inputs`
(as every command reads them), capacities are adjusted by :mod:`packing.plan.model`, each
scenario is built, bounded and solved by :mod:`solvers.plan.scenario` (whose placement passes the
checker), the scenarios run on the executors of :mod:`packing.sim.evaluation`, and the result is a
:class:`packing.plan.result.PlanResult`.

Example:
    >>> import vbp
    >>> p = vbp.plan("deployments.csv", ["std:16c64g:0.8", "big:64c256g:2.9"],
    ...              headroom="15%", growth=(1, 1.5))                    # doctest: +SKIP
    >>> [(s.growth, s.status, s.hosts, s.cost) for s in p.scenarios]   # doctest: +SKIP
    [(1.0, 'optimal', 7, 8.3), (1.5, 'optimal', 10, 11.7)]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from packing.plan.model import Adjustment, Demand, HostOffer
from packing.plan.result import PlanResult, Replay, ScenarioResult


def plan(
    demand: str | Path | Sequence[str | Path] | Demand,
    hosts: str | Sequence[str | Path | HostOffer],
    *,
    headroom: str | float | Mapping[str, Any] | None = None,
    reserve: str | Mapping[str, str] | None = None,
    growth: str | Sequence[float] = (1.0,),
    growth_by: str | Mapping[str, float] | None = None,
    time_limit: float = 60.0,
    method: str = "auto",
    threads: int = 2,
    seed: int = 0,
    executor: str = "serial",
    workers: int | None = None,
    address: str | None = None,
    current: Any = None,
    max_moves: int | str | None = None,
    n_plus_one: bool = False,
    verify_only: bool = False,
    zones: Sequence[str] = (),
    progress: Callable[[int], None] | None = None,
) -> PlanResult:
    """Plan hosts for a demand: one optimal (or proven-gap) plan per growth multiplier.

    Args:
        demand: DEMAND file(s) (deployments CSV, instance file, Kubernetes manifests, a cluster
            snapshot) or a :class:`~packing.plan.model.Demand`; none: the snapshot ``current``.
        hosts: host-type files (CSV/YAML), inline specs (``std=16c64g:price=0.8``,
            ``std:16c64g:0.8``; see ``docs/plan.md``), or
            :class:`~packing.plan.model.HostOffer` objects.
        headroom: share kept free: ``"15%"``, ``"cpu=20%,memory=10%"``, a fraction or a mapping.
        reserve: per-host overhead taken off first: ``"100m,128Mi"`` or ``"cpu=100m,memory=128Mi"``;
            the demand's own overhead (Kubernetes DaemonSets) is added to it.
        growth: demand multipliers (``"1,1.25,1.5"`` or numbers), each a scenario.
        growth_by: per-app multipliers under every scenario's (``"web=2,db=1"`` or a mapping),
            over a deployments CSV's ``growth`` column: app ``a`` gets
            ``ceil(replicas * m_a * growth)`` replicas (:meth:`~packing.plan.model.Demand.scaled`).
        time_limit: budget per scenario (building it, then solving), seconds.
        method: :func:`solvers.solve` method.
        threads: solver threads per scenario.
        seed: solver seed.
        executor: where scenarios run: ``"serial"``, ``"process"`` or ``"ray"``.
        workers: processes (process) or CPUs (ray).
        address: Ray cluster address (ray only).
        current: the running cluster (see ``docs/plan.md``).
        max_moves: most containers moved from ``current`` (``"all"``: any number; ``None``:
            none move).
        n_plus_one: check that the plan survives losing any one host.
        verify_only: only verify ``current``.
        zones: every host type without a zone once per zone (``--zones``).
        progress: called with the number of scenarios just finished (e.g. a tqdm ``update``).

    Returns:
        The :class:`~packing.plan.result.PlanResult`.

    Raises:
        InputError: bad demand, host types, headroom, reserve, growth or per-app growth, a time
            limit, thread count or seed outside the command line's ranges, or an app whose node
            selection matches no host type.
    """
    from packing.loaders.front import read_inputs
    from packing.plan import model as pm
    from packing.sim.evaluation import SerialExecutor, make_executor
    from policies.autoscalers import provision
    from solvers.base import check_run_options
    from solvers.plan.current import ALL_MOVES
    from solvers.plan.scenario import PlanOptions, ScenarioTask, run_scenario

    check_run_options(time_limit, threads, seed, workers_name="threads")
    user = Adjustment(pm.parse_reserve(reserve), pm.parse_headroom(headroom))
    growths = pm.parse_growth(growth)
    if not isinstance(demand, Demand) and not demand and current is not None:
        demand = [current]  # the running cluster, a snapshot, is the demand
    dem, offers = read_inputs(demand, hosts, zones=zones, current=current)  # as every command reads them
    dem = dem.with_growth_by(pm.parse_growth_by(growth_by)) if growth_by is not None else dem
    adj = user.plus(dem.overhead)  # DaemonSets are added per host type when building
    res = pm.plan_resources(dem, offers)
    for o in offers:  # a reserve that leaves nothing: an error before any work
        adj.planned(o, extra=dem.daemon_load(o, res), resources=res)
    if isinstance(max_moves, str):  # "all": no limit (as vbp consolidate reads it)
        from packing.cluster.answer import parse_budgets

        bs = parse_budgets(max_moves)
        if len(bs) != 1:
            from packing.errors import input_error

            raise input_error("--max-moves", max_moves, "expected one whole number >= 0 or all")
        max_moves = ALL_MOVES if bs[0] is None else bs[0]
    options = PlanOptions(adj, float(time_limit), method, int(threads), int(seed), current,
                          max_moves, bool(n_plus_one), bool(verify_only))
    tasks = [ScenarioTask(g, dem, offers, options) for g in growths]
    serial = len(tasks) == 1 or executor == "serial"
    with SerialExecutor() if serial else make_executor(executor, workers, address) as ex:
        results: Sequence[ScenarioResult] = ex.map(run_scenario, tasks, progress)
    replay = Replay(offers, {o.name: pm.reserved(adj, dem, o, res) for o in offers}, dem.pods)
    if current is None:  # what the autoscalers' first fit decreasing onto the cheapest type gives
        results = [r.with_autoscaler(provision(r.instance)) if r.instance else r for r in results]
    return PlanResult(tuple(dataclasses.replace(r, replay=replay) for r in results),
                      adj.describe(daemons=bool(dem.daemons)), offers)


__all__ = ["plan"]
