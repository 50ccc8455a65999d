"""The orchestration of ``vbp sweep``: instances x policies x orders on one executor, one tidy table.

Each instance is shipped once per worker with its orders (:class:`packing.sim.evaluation.Scenario`);
every (instance, policy, order) is one :class:`packing.sim.evaluation.RunTask` and one row of the table
(:func:`packing.report.run_table.run_row`), written by :func:`packing.report.run_table.write_table` as CSV or
Parquet with the columns of :data:`packing.report.run_table.COLUMNS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from packing.model.instance import Instance
from packing.report.run_table import (
    COLUMNS,
    FORMATS,
    OPTIMUM_COLUMNS,
    optimum_columns,
    output_format,
    run_row,
    write_table,
)

if TYPE_CHECKING:
    from packing.sim.evaluation import Executor, Progress


def labels(names: Sequence[str], paths: Sequence[str]) -> list[str]:
    """Instance labels for the table: each instance's name, or its path where names repeat."""
    return [n if names.count(n) == 1 else p for n, p in zip(names, paths, strict=True)]


def solve_optima(instances: Sequence[tuple[str, Instance]], time_limit: float,
                 seed: int, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Solve every instance once (up to ``time_limit`` seconds); results by label (``progress``: a line each).

    The optimum is :func:`solvers.exact.optimum.comparison_optimum`'s, as in ``vbp compare``: the fewest
    hosts (or the least cost), or the most tasks deployed for a multi-cluster scenario.

    Raises:
        InfeasibleError: an instance is proven to have no placement of every container.
    """
    from solvers.exact.optimum import comparison_optimum

    out = {}
    for label, inst in instances:
        if progress is not None:
            progress(f"solving {label} (up to {time_limit:g} s)...")
        out[label] = comparison_optimum(inst, time_limit, seed, name=label)
    return out


def run_sweep(instances: Sequence[tuple[str, Instance]], policies: Sequence[str], orders: int,
              seed: int, executor: Executor, progress: Progress | None = None,
              policy_labels: Sequence[str] | None = None,
              optima: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Run every policy on ``orders`` orders of every instance; one row (dict of :data:`COLUMNS`) per run.

    Args:
        instances: ``(label, instance)`` pairs.
        policies: policy specs (registry names or policy files), as the table names them.
        orders: orders per instance: the own order, then seeded shuffles
            (:func:`packing.sim.simulator.sample_orders` with ``seed``, as ``vbp compare`` uses).
        seed: the sweep's seed.
        executor: where the runs go (left open).
        progress: called with the number of runs finished.
        policy_labels: the table's name of each policy (default: the spec as given).
        optima: solve results by instance label (:func:`solve_optima`): adds the
            :data:`OPTIMUM_COLUMNS`.

    Returns:
        The rows, instance-major, then policy, then order.

    Raises:
        InputError: a bad policy file, or an agent of another shape than an instance (before any
            run).
    """
    from packing.sim.evaluation import Scenario
    from packing.sim.simulator import sample_orders
    from policies.runner import check_policies, order_tasks, run_task

    for _, inst in instances:
        check_policies(policies, inst, seed)
    tasks = []
    keys = []
    names = dict(zip(policies, policy_labels or policies, strict=True))
    for label, inst in instances:
        ref = executor.share(Scenario(inst, tuple(sample_orders(inst, orders, seed)), label), "sweep")
        for t in order_tasks(ref, policies, orders, seed):
            tasks.append(t)
            keys.append((label, names[str(t.policy)]))
    recs = executor.map(run_task, tasks, progress)
    rows = [run_row(r, label, policy, seed, executor.name)
            for (label, policy), r in zip(keys, recs, strict=True)]
    if optima is not None:
        for row in rows:
            row.update(optimum_columns(optima[row["instance"]], row))
    return rows


__all__ = ["COLUMNS", "FORMATS", "OPTIMUM_COLUMNS", "labels", "optimum_columns", "output_format",
           "run_sweep", "solve_optima", "write_table"]
