"""``vbp solve``: text and JSON output, --out, errors."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from packing.feasibility.checker import check
from packing.io import load_placement, save_instance
from packing.model.instance import App, HostType, Instance
from vbp.cli import cli


def _file(tmp_path: Path) -> Path:
    inst = Instance("x", ("cpu",), (HostType("h", (10.0,), 5),), (App("a", (4.0,), 5),))
    p = tmp_path / "x.json"
    save_instance(inst, p)
    return p


def test_json_and_out(tmp_path: Path) -> None:
    p = _file(tmp_path)
    out = tmp_path / "pl.json"
    r = CliRunner().invoke(cli, ["solve", str(p), "--json", "-q", "--method", "cpsat",
                                 "--time-limit", "5", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    for k in ("status", "objective", "hosts", "bound", "bound_kind", "gap", "seconds", "method"):
        assert k in doc
    assert doc["status"] == "optimal" and doc["objective"] == 3  # 2 per host
    from packing.io import load_instance

    inst = load_instance(p)
    assert check(inst, load_placement(out, inst), require_all=True) == []


def test_text_output(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["solve", str(_file(tmp_path)), "--time-limit", "5"])
    assert r.exit_code == 0, r.output
    assert "status     optimal" in r.stdout and "gap        0.00%" in r.stdout


def test_infeasible_exits_3(tmp_path: Path) -> None:
    inst = Instance("x", ("cpu",), (HostType("h", (10.0,), 1),), (App("big", (40.0,), 1),))
    p = tmp_path / "bad.json"
    save_instance(inst, p)
    r = CliRunner().invoke(cli, ["solve", str(p), "--json", "-q", "--method", "cpsat"])
    assert r.exit_code == 3
    doc = json.loads(r.stdout)
    assert doc["status"] == "infeasible" and "big" in doc["reason"]
    assert doc["bound"] is None  # infinity is not JSON


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    import pytest

    from vbp.cli import main

    with pytest.raises(SystemExit) as e:
        main(["solve", str(tmp_path / "nope.json")])
    assert e.value.code == 2
