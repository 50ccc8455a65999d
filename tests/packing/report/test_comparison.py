"""packing.report.comparison and .run_table: hand-computed excesses, summaries and a table round trip."""

from __future__ import annotations

import csv
import dataclasses
import math
from pathlib import Path

import pytest

from packing.errors import InputError
from packing.report.comparison import excess, json_number, summarise
from packing.report.run_table import (
    COLUMNS,
    OPTIMUM_COLUMNS,
    optimum_columns,
    output_format,
    run_row,
    write_table,
)
from packing.sim.evaluation import RunRecord


def record(hosts: int, cost: float, deployed: int, allocation: float = 0.5, rejected: int = 0,
           order: int = 0) -> RunRecord:
    return RunRecord("inst", "bf", order, 0, hosts, hosts, cost, rejected, 0, deployed, allocation, 0.01)


class Optimum:
    """A stand-in solve result (the fields a comparison reads)."""

    def __init__(self, objective: float | None, kind: str, bound: float, status: str = "optimal") -> None:
        self.objective, self.objective_kind, self.bound, self.status = objective, kind, bound, status


def test_excess_by_objective() -> None:
    assert excess(10.0, "hosts", hosts=12.0, cost=99.0, deployed=0.0) == pytest.approx(0.2)
    assert excess(40.0, "cost", hosts=1.0, cost=50.0, deployed=0.0) == pytest.approx(0.25)
    assert excess(8.0, "deployed", hosts=1.0, cost=1.0, deployed=6.0) == pytest.approx(0.25)
    assert excess(None, "hosts", hosts=3.0, cost=3.0, deployed=3.0) is None
    assert excess(0.0, "hosts", hosts=3.0, cost=3.0, deployed=3.0) is None


def test_summarise_means_extremes_and_excess() -> None:
    runs = [record(4, 8.0, 10, 0.5, 1), record(6, 12.0, 8, 0.25, 0), record(5, 10.0, 9, 0.75, 2)]
    row = summarise("bf", runs, 4.0, "hosts")
    assert (row.name, row.hosts_mean, row.hosts_min, row.hosts_max) == ("bf", 5.0, 4, 6)
    assert (row.cost_mean, row.deployed_mean, row.allocation_mean, row.rejected_mean) == (10.0, 9.0, 0.5, 1.0)
    assert row.excess == pytest.approx(0.25)
    assert summarise("bf", runs, 10.0, "deployed").excess == pytest.approx(0.1)
    assert summarise("bf", runs, 8.0, "cost").excess == pytest.approx(0.25)
    d = summarise("bf", runs, None, "hosts").to_dict()
    assert d["excess"] is None and d["hosts_mean"] == 5.0


def test_summarise_counts_waiting_and_departed_arrivals() -> None:
    # 10 arrivals per run: deployed + rejected + waiting + departed
    runs = [dataclasses.replace(record(2, 2.0, 6, rejected=1), waiting=3),
            dataclasses.replace(record(2, 2.0, 5, rejected=0), waiting=1, departed=4)]
    d = summarise("agent", runs, 8.0, "deployed").to_dict()
    means = (d["deployed_mean"], d["rejected_mean"], d["waiting_mean"], d["departed_mean"])
    assert means == (5.5, 0.5, 2.0, 2.0)
    row = run_row(runs[1], "inst", "agent", 0, "serial")
    assert (row["deployed"], row["rejected"], row["waiting"], row["departed"]) == (5, 0, 1, 4)


def test_json_number() -> None:
    assert json_number(1 / 3) == 0.333333
    assert json_number(math.nan) is None and json_number(math.inf) is None and json_number(None) is None


def test_table_rows_and_csv_round_trip(tmp_path: Path) -> None:
    rows = [run_row(record(5, 5.0, 7, order=k), "inst", "best-fit", 3, "serial") for k in range(2)]
    assert list(rows[0]) == list(COLUMNS)
    assert rows[1]["order"] == 1 and rows[1]["seed"] == 3 and rows[1]["policy"] == "best-fit"
    for r in rows:
        r.update(optimum_columns(Optimum(4.0, "hosts", 4.0), r))
    assert rows[0]["excess"] == pytest.approx(0.25)
    assert optimum_columns(Optimum(7.0, "deployed", math.inf, "feasible"), rows[0]) == {
        "optimum": 7.0, "bound": None, "excess": 0.0, "optimum_status": "feasible",
        "optimum_kind": "deployed"}
    out = write_table(rows, tmp_path / "t.csv")
    with out.open(newline="") as f:
        back = list(csv.DictReader(f))
    assert list(back[0]) == list(COLUMNS + OPTIMUM_COLUMNS)
    assert back[1]["hosts"] == "5" and float(back[1]["excess"]) == 0.25
    assert back[0]["optimum_status"] == "optimal"


def test_output_format_refuses_before_any_work(tmp_path: Path) -> None:
    assert output_format(tmp_path / "t.csv") == "csv"
    with pytest.raises(InputError, match="unknown table format '.txt'"):
        output_format(tmp_path / "t.txt")
    assert output_format(tmp_path / "new" / "folder" / "t.csv") == "csv"  # writing creates them
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is not a folder"):
        output_format(tmp_path / "file" / "t.csv")
