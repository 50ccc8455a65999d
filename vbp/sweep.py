"""The orchestration of ``vbp sweep``: instances x policies x orders on one executor, one tidy table.

Each instance is shipped once per worker with its orders (:class:`packing.evaluation.Scenario`);
every (instance, policy, order) is one :class:`packing.evaluation.RunTask` and one row of the table,
with the numbers of its :class:`packing.evaluation.RunRecord` (from :mod:`packing.metrics`). The
table is written as CSV (always) or Parquet (needs pyarrow), with the columns of :data:`COLUMNS`.
"""

from __future__ import annotations

import csv
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packing.atomic import atomic_path, write_with
from packing.errors import input_error
from packing.model import Instance

if TYPE_CHECKING:
    from packing.evaluation import Executor, Progress

COLUMNS: tuple[str, ...] = ("instance", "policy", "order", "seed", "hosts", "hosts_peak", "cost",
                            "rejected", "delayed", "deployed", "allocation", "seconds", "executor")
"""The columns of the table, one row per run. ``order`` 0 is the instance's own order; ``seed`` is the
sweep's seed (order ``i`` runs with the policy seed ``run_seed(seed, i)``); ``allocation`` is the
Sigma allocation rate of the bottleneck resource; ``seconds`` is the run's wall time."""

OPTIMUM_COLUMNS: tuple[str, ...] = ("optimum", "bound", "gap", "optimum_status")
"""The columns ``vbp sweep --optimum`` adds: the instance's optimum (the solver's objective:
hosts, or cost with priced host types), its proven bound, the run's gap to that optimum
(``(value - optimum) / optimum``, value in the same unit; empty without an optimum) and the
solver's status (``optimal``, ``feasible``: the optimum column is then the best found)."""

FORMATS = {".csv": "csv", ".parquet": "parquet"}
"""Output suffixes and their formats."""


def output_format(path: str | Path) -> str:
    """Check where the table goes, before any work: ``"csv"`` or ``"parquet"``.

    Raises:
        InputError: an unknown suffix, Parquet without pyarrow, a missing or unwritable folder, or a
            path that is a folder.
    """
    p = Path(path)
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise input_error("--out", str(path), f"unknown table format {p.suffix or '(no suffix)'!r}; "
                          "use .csv or .parquet")
    if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise input_error("--out", str(path), "writing Parquet needs pyarrow (pip install pyarrow, or "
                          "'vbp-toolkit[parquet]'); or write .csv")
    if p.is_dir():
        raise input_error("--out", str(path), "is a folder")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise input_error("--out", str(path), f"folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise input_error("--out", str(path), "not writable")
    return fmt


def labels(names: Sequence[str], paths: Sequence[str]) -> list[str]:
    """Instance labels for the table: each instance's name, or its path where names repeat."""
    return [n if names.count(n) == 1 else p for n, p in zip(names, paths, strict=True)]


def solve_optima(instances: Sequence[tuple[str, Instance]], time_limit: float,
                 seed: int) -> dict[str, Any]:
    """Solve every instance once (``auto``, up to ``time_limit`` seconds); results by label.

    Raises:
        InfeasibleError: an instance is proven to have no placement of every container.
    """
    from packing.errors import InfeasibleError
    from solvers import solve

    out: dict[str, Any] = {}
    for label, inst in instances:
        res = solve(inst, "auto", time_limit=time_limit, seed=seed)
        if res.status == "infeasible":
            raise InfeasibleError(label, "no placement of every container exists, so there is no "
                                  f"optimum: {res.reason or 'proven by ' + res.method}")
        out[label] = res
    return out


def optimum_columns(res: Any, row: dict[str, Any]) -> dict[str, Any]:
    """The :data:`OPTIMUM_COLUMNS` of one row, from the instance's solve result."""
    import math

    opt = res.objective
    bound = res.bound if math.isfinite(res.bound) else None  # an upper bound for "deployed"
    gap = None
    if opt is not None and opt > 0:
        kind = res.objective_kind
        value = row["cost"] if kind == "cost" else row["deployed"] if kind == "deployed" else row["hosts"]
        gap = (opt - value) / opt if kind == "deployed" else (value - opt) / opt
    return {"optimum": opt, "bound": bound, "gap": gap, "optimum_status": res.status}


def run_sweep(instances: Sequence[tuple[str, Instance]], policies: Sequence[str], orders: int,
              seed: int, executor: Executor, progress: Progress | None = None,
              policy_labels: Sequence[str] | None = None,
              optima: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Run every policy on ``orders`` orders of every instance; one row (dict of :data:`COLUMNS`) per run.

    Args:
        instances: ``(label, instance)`` pairs.
        policies: policy specs (registry names or policy files), as the table names them.
        orders: orders per instance: the own order, then seeded shuffles
            (:func:`packing.simulator.sample_orders` with ``seed``, as ``vbp compare`` uses).
        seed: the sweep's seed.
        executor: where the runs go (left open).
        progress: called with the number of runs finished.
        policy_labels: the table's name of each policy (default: the spec as given).
        optima: solve results by instance label (:func:`solve_optima`): adds the
            :data:`OPTIMUM_COLUMNS`.

    Returns:
        The rows, instance-major, then policy, then order.
    """
    from packing.evaluation import Scenario
    from packing.simulator import sample_orders
    from policies.runner import order_tasks, resolve_policy, run_task

    for p in policies:
        resolve_policy(p)
    tasks = []
    keys = []
    names = dict(zip(policies, policy_labels or policies, strict=True))
    for label, inst in instances:
        ref = executor.share(Scenario(inst, tuple(sample_orders(inst, orders, seed)), label), "sweep")
        for t in order_tasks(ref, policies, orders, seed):
            tasks.append(t)
            keys.append((label, names[str(t.policy)], t.order))
    recs = executor.map(run_task, tasks, progress)
    rows = []
    for (label, policy, order), r in zip(keys, recs, strict=True):
        rows.append({"instance": label, "policy": policy, "order": order, "seed": seed,
                     "hosts": r.hosts, "hosts_peak": r.hosts_peak, "cost": r.cost,
                     "rejected": r.rejected, "delayed": r.delayed, "deployed": r.deployed,
                     "allocation": r.allocation, "seconds": r.seconds, "executor": executor.name})
        if optima is not None:
            rows[-1].update(optimum_columns(optima[label], rows[-1]))
    return rows


def write_table(rows: Sequence[dict[str, Any]], path: str | Path, fmt: str | None = None) -> Path:
    """Write the rows as CSV or Parquet (by suffix unless ``fmt`` is given); returns the path.

    The table goes to a temporary file beside ``path``, renamed over it when complete
    (:mod:`packing.atomic`): an interruption leaves a previous table as it was.
    """
    p = Path(path)
    fmt = fmt or output_format(p)
    columns = COLUMNS + (OPTIMUM_COLUMNS if rows and "optimum" in rows[0] else ())
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({c: [r[c] for r in rows] for c in columns})
        write_with(p, lambda tmp: pq.write_table(table, tmp))
        return p
    with atomic_path(p) as tmp, tmp.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(columns), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: (repr(r[c]) if isinstance(r[c], float) else r[c]) for c in columns})
    return p


__all__ = ["COLUMNS", "FORMATS", "OPTIMUM_COLUMNS", "labels", "optimum_columns", "output_format",
           "run_sweep", "solve_optima", "write_table"]
