"""Every ``--json`` output carries its ``format`` and validates against ``docs/schemas``.

Each command runs in this process on a small input; its stdout is parsed and checked with
``jsonschema`` against ``docs/schemas/vbp-<kind>-<version>.json``. The shared names of
``docs/outputs.md`` (``hosts``, ``deployed``, ``allocation``...) are checked on the way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vbp.cli import main
from vbp.cli.formats import FORMATS, schema_name

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schemas"
DATA = ROOT / "tests" / "data"

VERSIONS = {"solve": 2, "compare": 3, "plan": 3, "jobs-compare": 2, "consolidate": 2, "gpu-frag": 2,
            "train-rl": 2, "info": 2}
"""Formats past version 1 (a key renamed or given another meaning; ``docs/outputs.md`` names each)."""

INFEASIBLE: dict[str, Any] = {
    "name": "inf", "resources": ["cpu"],
    "host_types": [{"name": "std", "capacity": [4], "count": 3}],
    "apps": [{"name": "a", "demand": [2], "count": 4, "max_per_host": 1}],
}


def run_json(args: list[str], capsys: pytest.CaptureFixture[str], code: int = 0) -> dict[str, Any]:
    """Run ``vbp ARGS``; check the exit status and that stdout is one JSON object with its schema."""
    with pytest.raises(SystemExit) as e:
        main(args)
    out, err = capsys.readouterr()
    assert (e.value.code or 0) == code, err
    doc: dict[str, Any] = json.loads(out)
    fmt = doc["format"]
    assert fmt in FORMATS.values(), fmt
    schema = json.loads((SCHEMAS / schema_name(fmt)).read_text())
    jsonschema.validate(doc, schema)
    return doc


def test_every_format_has_a_valid_schema() -> None:
    for kind, fmt in FORMATS.items():
        assert fmt == f"vbp-{kind}/{VERSIONS.get(kind, 1)}"
        schema = json.loads((SCHEMAS / schema_name(fmt)).read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["properties"]["format"] == {"const": fmt}
    names = {p.name for p in SCHEMAS.glob("*.json")}
    assert names == {schema_name(f) for f in FORMATS.values()}


def test_solve_simulate_compare(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(["solve", "sigma", "--json", "-q", "--time-limit", "10"], capsys)
    assert doc["instance"] == "sigma" and doc["status"] == "optimal" and doc["hosts"] == 15
    doc = run_json(["simulate", "sigma", "--policy", "ff", "--orders", "2", "--json"], capsys)
    assert [r["order"] for r in doc["runs"]] == [0, 1]
    assert all(r["deployed"] == 235 and r["hosts"] >= 15 for r in doc["runs"])
    assert doc["hosts_min"] == min(r["hosts"] for r in doc["runs"])
    doc = run_json(["compare", "sigma", "--policies", "ff,bf", "--orders", "2", "--json", "-q",
                    "--time-limit", "10"], capsys)
    assert [p["name"] for p in doc["policies"]] == ["ff", "bf"]
    assert all(p["deployed_mean"] == 235 and p["hosts_min"] >= doc["optimum"]["hosts"]
               for p in doc["policies"])


def test_solve_infeasible_and_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "inf.json"
    p.write_text(json.dumps(INFEASIBLE))
    doc = run_json(["solve", str(p), "--json", "-q", "--time-limit", "5"], capsys, code=3)
    assert doc["status"] == "infeasible" and doc["bound"] is None
    doc = run_json(["validate", str(p), "--json"], capsys, code=3)
    assert (doc["valid"], doc["feasible"], doc["problems"]) == (False, False, [])
    assert any("max_per_host" in x for x in doc["infeasible"])
    doc = run_json(["validate", "sigma", "--json"], capsys)
    assert doc["valid"] and doc["containers"] == 235


def test_info(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(["info", "sigma", "--json"], capsys)
    assert (doc["apps"], doc["containers"], doc["hosts"]) == (30, 235, 30)
    doc = run_json(["info", str(DATA / "k8s" / "shapes" / "hotel"), "--json"], capsys)  # subfolders
    assert doc["containers"] >= 1


def test_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "d.csv"
    d.write_text("name,replicas,cpu,memory\nweb,3,2,4Gi\n")
    doc = run_json(["plan", str(d), "--hosts", "std:4c8g", "--json", "--time-limit", "5"], capsys)
    assert doc["scenarios"][0]["hosts"] == 2  # 3 x 2 cores on 4-core hosts: 2 per host


def test_gpu_frag(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(["gpu-frag", str(DATA / "openb_small"), "--seeds", "1", "--policies",
                    "gpu-bestfit", "--no-bound", "--json", "--until", "100"], capsys)
    (row,) = doc["policies"]
    assert row["name"] == "gpu-bestfit" and row["deployed_mean"] > 0


def test_jobs(capsys: pytest.CaptureFixture[str]) -> None:
    dag = str(DATA / "dag")
    doc = run_json(["jobs", "compare", dag, "--json", "--seed", "1", "--hosts", "32c64g:1",
                    "--jobs", "3", "--policies", "fifo,cpf"], capsys)
    assert [p["name"] for p in doc["policies"]] == ["fifo", "cpf"]
    doc = run_json(["jobs", "partition", dag, "--q", "1", "--methods", "single", "--containers",
                    "20", "--time-limit", "1", "--json"], capsys)
    assert [r["q"] for r in doc["rows"]] == [1]
    assert sum(doc["rows"][0]["hosts_by_type"].values()) >= 1


def test_train_swarm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(["train", "swarm", "sigma", "--particles", "2", "--iters", "1", "--samples", "1",
                    "--held-out", "2", "--init", "none", "--seed", "3", "--json", "--out",
                    str(tmp_path / "t.json")], capsys)
    assert {r["policy"] for r in doc["held_out"]} >= {"bf", "ff"}


def test_train_rl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = tmp_path / "s.json"
    with pytest.raises(SystemExit):
        main(["generate", "multicluster", "--data", str(DATA / "multicluster_small"), "--clusters",
              "3", "--nodes", "2", "--tasks", "20", "--seed", "1", "--out", str(s)])
    capsys.readouterr()
    doc = run_json(["train", "rl", str(s), "--algo", "eade-m", "--episodes", "1", "--set", "embed=8",
                    "--set", "heads=2", "--set", "hidden=16,8", "--set", "batch=16",
                    "--out", str(tmp_path / "m.pt"), "--json"], capsys)
    assert [r["episode"] for r in doc["curve"]] == [0]
    assert 0 <= doc["curve"][0]["deployed"] <= 20
