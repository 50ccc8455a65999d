"""The orchestration of ``vbp compare``: solve the instance, replay every policy on the same runs.

This is the application layer: it sits above :mod:`packing`, :mod:`policies` and :mod:`solvers` and is
the only place that combines them (the CLI in :mod:`vbp.cli` only parses options and formats output).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from packing.errors import InfeasibleError
from packing.model import Instance

if TYPE_CHECKING:
    from packing.evaluation import Executor, RunRecord


@dataclass(frozen=True)
class Row:
    """One policy's line of the table."""

    name: str
    hosts_mean: float
    hosts_min: int
    hosts_max: int
    cost_mean: float
    allocation_mean: float
    rejected_mean: float
    gap: float | None
    deployed_mean: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the row (names as in ``docs/outputs.md``)."""
        return {"name": self.name, "hosts_mean": self.hosts_mean, "hosts_min": self.hosts_min,
                "hosts_max": self.hosts_max, "cost_mean": self.cost_mean,
                "allocation_mean": json_number(self.allocation_mean),
                "deployed_mean": self.deployed_mean, "rejected_mean": self.rejected_mean,
                "gap": json_number(self.gap)}


def json_number(x: float | None) -> float | None:
    """``x`` for a JSON report: rounded to 6 decimals; ``None`` for none, ``nan`` or infinity."""
    return None if x is None or not math.isfinite(x) else round(float(x), 6)


def is_multicluster(inst: Instance) -> bool:
    """A scenario of ``vbp generate multicluster`` (compared on tasks deployed, not hosts)."""
    return isinstance(inst.meta, dict) and inst.meta.get("generator") == "multicluster"


def deployed_optimum(inst: Instance, time_limit: float) -> Any:
    """The proven maximum of deployable tasks (:func:`solvers.max_deployed.optimum`) as a ``SolveResult``.

    ``objective`` is the tasks deployed by the best placement and ``bound`` the proven maximum's
    upper bound (``bound_kind == "upper"``: the ``"deployed"`` objective of
    :class:`solvers.result.SolveResult`).
    """
    from solvers.max_deployed import optimum
    from solvers.result import SolveResult

    opt = optimum(inst, time_limit=time_limit)
    hosts = int(len(set(int(h) for h in opt.placement.host_array(inst) if h >= 0)))
    return SolveResult(status="optimal" if opt.proven else "feasible", objective=float(opt.deployed),
                       bound=float(opt.bound), placement=opt.placement, hosts=hosts,
                       method=opt.method, seconds=opt.seconds, objective_kind="deployed")


def run_compare(inst: Instance, policy_names: list[str], orders: int, time_limit: float, seed: int,
                quiet: bool = True, snapshots: int = 0, keep: float = 0.9,
                executor: Executor | None = None, keep_placement: str | None = None,
                labels: Sequence[str] | None = None
                ) -> tuple[Any, list[Row], dict[str, list[RunRecord]]]:
    """Solve ``inst`` and evaluate every policy on the same ``orders``.

    Every run is a :class:`packing.evaluation.RunTask` run by ``executor`` (default: serial, in this
    process); the table's numbers come from the :class:`packing.evaluation.RunRecord`, i.e. from
    :mod:`packing.metrics`. With ``snapshots > 0`` (and a snapshot in ``inst``) every policy instead
    replays the same ``snapshots`` resampled snapshots (:func:`packing.simulator.resample_snapshot`
    with ``keep``).

    Args:
        inst: the instance.
        policy_names: policy specs (registry names or policy files), one table row each.
        orders: arrival orders per policy (the own order first, then seeded shuffles).
        time_limit: solver budget in seconds.
        seed: seed of the orders, policies and solver.
        quiet: no progress on stderr.
        snapshots: replay this many resampled snapshots instead of orders.
        keep: with ``snapshots``: probability that a snapshot container stays.
        executor: where the runs go (left open; default: a serial executor).
        keep_placement: keep the final placement of this policy's first run (for a plot).
        labels: the row name of each policy, as the user named it (default: the policy's own
            name).

    Returns:
        ``(solve_result, rows, records_by_policy)``; records are keyed by the policy spec as given.

    Raises:
        InfeasibleError: the instance has no placement of every container (the solver proved
            it; the reason names the app and the rule or resource, as ``vbp solve`` prints it),
            so there is no optimum to compare with; raised before any policy runs.
        InputError: a policy file is bad.
    """
    from tqdm import tqdm

    from packing.evaluation import Scenario, SerialExecutor
    from packing.simulator import sample_orders
    from policies.runner import order_tasks, resolve_policy, run_task, snapshot_tasks
    from solvers import solve

    for name in policy_names:
        resolve_policy(name)  # a bad policy file fails before the solve

    def progress(p: Any) -> None:
        print(f"  [{p.seconds:7.2f}s] {p.method:<7} objective {p.objective}  bound {p.bound}  "
              f"{p.message}", file=sys.stderr)

    if not quiet:
        print(f"solving {inst.name} (auto, up to {time_limit:g} s)...", file=sys.stderr)
    if is_multicluster(inst):
        res = deployed_optimum(inst, time_limit)
    else:
        res = solve(inst, "auto", time_limit=time_limit, seed=seed, callback=None if quiet else progress)
    if res.status == "infeasible":  # no optimum to compare with: said before any run
        raise InfeasibleError(inst.name, "no placement of every container exists, so there is no "
                              "optimum to compare with: "
                              f"{res.reason or 'proven by ' + res.method}")
    by_cost = res.objective_kind == "cost"
    resample = snapshots > 0 and inst.initial is not None
    runs = snapshots if resample else orders
    own = executor is None
    ex = executor if executor is not None else SerialExecutor()
    try:
        ref = ex.share(Scenario(inst, () if resample else tuple(sample_orders(inst, orders, seed))),
                       "compare")
        tasks = (snapshot_tasks(ref, policy_names, snapshots, keep, seed) if resample
                 else order_tasks(ref, policy_names, orders, seed))
        if keep_placement in policy_names:
            k = policy_names.index(keep_placement) * runs
            tasks[k] = dataclasses.replace(tasks[k], options=dataclasses.replace(
                tasks[k].options, placement=True))
        with tqdm(total=len(tasks), desc=f"simulating ({ex.name})", unit="run", file=sys.stderr,
                  disable=quiet, leave=False) as bar:
            recs = ex.map(run_task, tasks, bar.update)
    finally:
        if own:
            ex.close()
    rows: list[Row] = []
    records: dict[str, list[RunRecord]] = {}
    for k, name in enumerate(policy_names):
        rs = recs[k * runs:(k + 1) * runs]
        records[name] = rs
        hosts = [r.hosts for r in rs]
        mean = sum(hosts) / runs
        cost = sum(r.cost for r in rs) / runs
        value = cost if by_cost else mean
        gap = None
        deployed = float(sum(r.deployed for r in rs) / runs)
        if res.objective is not None and res.objective > 0:
            gap = ((value - res.objective) / res.objective if res.objective_kind != "deployed"
                   else (res.objective - deployed) / res.objective)
        rows.append(Row(rs[0].policy if labels is None else labels[k], mean, min(hosts), max(hosts), cost,
                        float(sum(r.allocation for r in rs) / runs),
                        float(sum(r.rejected for r in rs) / runs), gap, deployed))
    return res, rows, records


__all__ = ["Row", "json_number", "run_compare"]
