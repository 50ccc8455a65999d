"""The run table of ``vbp sweep``: one row per (instance, policy, order), written as CSV or Parquet.

A row holds the numbers of one :class:`packing.sim.evaluation.RunRecord` (from
:mod:`packing.feasibility.metrics`)
under the names of :data:`COLUMNS`; with an optimum it adds :data:`OPTIMUM_COLUMNS`. The table goes
to a temporary file renamed over the target when complete (:mod:`packing.io.atomic`).
"""

from __future__ import annotations

import csv
import importlib.util
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packing.errors import input_error
from packing.io.atomic import atomic_path, check_writable, write_with
from packing.report.comparison import excess

if TYPE_CHECKING:
    from packing.sim.evaluation import RunRecord

COLUMNS: tuple[str, ...] = ("instance", "policy", "order", "seed", "hosts", "hosts_peak", "cost",
                            "rejected", "delayed", "deployed", "allocation", "seconds", "executor",
                            "waiting", "departed", "bottleneck")
"""The columns of the table, one row per run. ``order`` 0 is the instance's own order; ``seed`` is the
sweep's seed (order ``i`` runs with the policy seed ``run_seed(seed, i)``); ``allocation`` is the
Sigma allocation rate of the bottleneck resource, ``bottleneck`` names that resource (the one whose
share of the used hosts' capacity is the largest: the cards on most GPU runs; empty when no host is
used); ``seconds`` is the run's wall time. Every arrival
is counted once: ``deployed + rejected + waiting + departed`` is the number of arrivals plus the
snapshot's containers (``waiting``: never placed because the policy chose WAIT and no departure let
it in)."""

OPTIMUM_COLUMNS: tuple[str, ...] = ("optimum", "bound", "excess", "optimum_status", "optimum_kind")
"""The columns ``vbp sweep --optimum`` adds: the instance's optimum (the objective of
:func:`solvers.exact.optimum.comparison_optimum`, the same as ``vbp compare``'s: hosts, cost with
priced host types, or tasks deployed for a multi-cluster scenario), its proven bound (a lower
bound, an upper bound for deployed), the run's excess over that optimum (``(value - optimum) /
optimum``, value in the same unit; ``(optimum - deployed) / optimum`` for deployed; empty without
an optimum), the solver's status (``optimal``, ``feasible``: the optimum column is then the best
found) and what the optimum counts (``optimum_kind``: ``hosts``, ``cost`` or ``deployed``)."""

FORMATS = {".csv": "csv", ".parquet": "parquet"}
"""Output suffixes and their formats."""


def output_format(path: str | Path) -> str:
    """Check where the table goes, before any work: ``"csv"`` or ``"parquet"``.

    Raises:
        InputError: an unknown suffix, Parquet without pyarrow, or a path that cannot be written
            (:func:`packing.io.atomic.check_writable`).
    """
    p = Path(path)
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise input_error("--out", str(path), f"unknown table format {p.suffix or '(no suffix)'!r}; "
                          "use .csv or .parquet")
    if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise input_error("--out", str(path), "writing Parquet needs pyarrow (pip install pyarrow, or "
                          "'vbp-toolkit[parquet]'); or write .csv")
    check_writable(p, "--out")
    return fmt


def run_row(record: RunRecord, instance: str, policy: str, seed: int, executor: str) -> dict[str, Any]:
    """One row of :data:`COLUMNS` from a run's record (``instance``, ``policy``: the table's labels)."""
    r = record
    return {"instance": instance, "policy": policy, "order": r.order, "seed": seed,
            "hosts": r.hosts, "hosts_peak": r.hosts_peak, "cost": r.cost,
            "rejected": r.rejected, "delayed": r.delayed, "deployed": r.deployed,
            "allocation": r.allocation, "seconds": r.seconds, "executor": executor,
            "waiting": r.waiting, "departed": r.departed, "bottleneck": bottleneck(r.allocation_by_resource)}


def bottleneck(by_resource: dict[str, float]) -> str | None:
    """The resource with the largest allocation (the first of equals); ``None`` without any."""
    return max(by_resource, key=by_resource.__getitem__) if by_resource else None


def optimum_columns(res: Any, row: dict[str, Any]) -> dict[str, Any]:
    """The :data:`OPTIMUM_COLUMNS` of one row, from the instance's solve result.

    ``res`` has ``objective``, ``bound`` (an upper bound for ``"deployed"``), ``objective_kind``
    and ``status``, as :class:`solvers.result.SolveResult`.
    """
    opt = res.objective
    bound = res.bound if math.isfinite(res.bound) else None
    g = excess(opt, res.objective_kind, hosts=row["hosts"], cost=row["cost"], deployed=row["deployed"])
    return {"optimum": opt, "bound": bound, "excess": g, "optimum_status": res.status,
            "optimum_kind": res.objective_kind}


def write_table(rows: Sequence[dict[str, Any]], path: str | Path, fmt: str | None = None) -> Path:
    """Write the rows as CSV or Parquet (by suffix unless ``fmt`` is given); returns the path.

    The table goes to a temporary file beside ``path``, renamed over it when complete
    (:mod:`packing.io.atomic`): an interruption leaves a previous table as it was.
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


__all__ = ["COLUMNS", "FORMATS", "OPTIMUM_COLUMNS", "bottleneck", "optimum_columns", "output_format",
           "run_row", "write_table"]
