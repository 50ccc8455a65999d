"""The orchestration of ``vbp compare``: solve the instance, replay every policy on the same runs.

This is the application layer: it sits above :mod:`packing`, :mod:`policies` and :mod:`solvers` and is
the only place that combines them (the CLI in :mod:`vbp.cli` only parses options and formats output).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from packing.errors import input_error
from packing.generators.multicluster import is_multicluster
from packing.model.instance import Instance
from packing.report.comparison import ComparisonRow as Row
from packing.report.comparison import json_number, summarise

if TYPE_CHECKING:
    from packing.sim.autoscale import Autoscale
    from packing.sim.evaluation import Executor, RunRecord


def run_compare(inst: Instance, policy_names: list[str], orders: int, time_limit: float, seed: int,
                quiet: bool = True, snapshots: int = 0, keep: float = 0.9,
                executor: Executor | None = None, keep_placement: str | None = None,
                labels: Sequence[str] | None = None, autoscale: Autoscale | None = None
                ) -> tuple[Any, list[Row], dict[str, list[RunRecord]]]:
    """Solve ``inst`` and evaluate every policy on the same ``orders``.

    Every run is a :class:`packing.sim.evaluation.RunTask` run by ``executor`` (default: serial, in this
    process); the table's numbers come from the :class:`packing.sim.evaluation.RunRecord`, i.e. from
    :mod:`packing.feasibility.metrics`. With ``snapshots > 0`` (and a snapshot in ``inst``) every policy
    instead
    replays the same ``snapshots`` resampled snapshots (:func:`packing.sim.simulator.resample_snapshot`
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
        autoscale: run every policy on an autoscaled pool (:mod:`packing.sim.autoscale`).

    Returns:
        ``(solve_result, rows, records_by_policy)``; records are keyed by the policy spec as given.

    Raises:
        InfeasibleError: the instance has no placement of every container (the solver proved
            it; the reason names the app and the rule or resource, as ``vbp solve`` prints it),
            so there is no optimum to compare with; raised before any policy runs.
        InputError: a policy file is bad, or ``orders``, ``snapshots``, ``keep``, ``time_limit`` or
            ``seed`` is outside the command line's ranges.
    """
    from tqdm import tqdm

    from packing.io.fields import check_whole
    from packing.sim.evaluation import RunOptions, Scenario, SerialExecutor
    from packing.sim.simulator import sample_orders
    from policies.runner import check_policies, order_tasks, run_task, snapshot_tasks
    from solvers.base import check_run_options
    from solvers.exact.optimum import comparison_optimum

    check_run_options(time_limit, 1, seed)
    check_whole(orders, "orders", 1)
    check_whole(snapshots, "snapshots", 0)
    if not 0.0 <= float(keep) <= 1.0:
        raise input_error("<options>", "keep", f"expected a probability in [0, 1], got {keep!r}")
    check_policies(policy_names, inst, seed)  # a bad file or an agent of another shape: before the solve

    def progress(p: Any) -> None:
        print(f"  [{p.seconds:7.2f}s] {p.method:<7} objective {p.objective}  bound {p.bound}  "
              f"{p.message}", file=sys.stderr)

    if not quiet:
        what = "most tasks deployed" if is_multicluster(inst) else "auto"
        print(f"solving {inst.name} ({what}, up to {time_limit:g} s)...", file=sys.stderr)
    # the optimum of compare and sweep --optimum alike; infeasible: raised before any run
    res = comparison_optimum(inst, time_limit, seed, callback=None if quiet else progress)
    resample = snapshots > 0 and inst.initial is not None
    runs = snapshots if resample else orders
    own = executor is None
    ex = executor if executor is not None else SerialExecutor()
    try:
        ref = ex.share(Scenario(inst, () if resample else tuple(sample_orders(inst, orders, seed))),
                       "compare")
        opts = RunOptions(autoscale=autoscale)
        tasks = (snapshot_tasks(ref, policy_names, snapshots, keep, seed, opts) if resample
                 else order_tasks(ref, policy_names, orders, seed, opts))
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
    per_policy = [recs[k * runs:(k + 1) * runs] for k in range(len(policy_names))]
    rows = [summarise(rs[0].policy if labels is None else labels[k], rs, res.objective, res.objective_kind)
            for k, rs in enumerate(per_policy)]
    return res, rows, dict(zip(policy_names, per_policy, strict=True))


__all__ = ["Row", "is_multicluster", "json_number", "run_compare"]
