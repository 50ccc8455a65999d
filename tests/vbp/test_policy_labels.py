"""Policy rows are named as the user named them; ``vbp sweep --optimum`` adds the optimum columns."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from packing.errors import InputError
from policies.registry import parse_named_policies, shipped_path
from tests.vbp.cli_run import run


@pytest.fixture
def two_files(tmp_path: Path) -> tuple[str, str]:
    """The shipped swarm policy as a/tuned.json and b/tuned.json (same stem)."""
    paths = []
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        paths.append(str(shutil.copy(shipped_path("swarm-sigma"), tmp_path / d / "tuned.json")))
    return paths[0], paths[1]


def test_labels_by_stem_name_and_registry(two_files: tuple[str, str]) -> None:
    a, b = two_files
    assert parse_named_policies(f"ff, {a}") == (["ff", "tuned"], ["ff", a])
    assert parse_named_policies(f"x={a},y={b},bf") == (["x", "y", "bf"], [a, b, "bf"])
    with pytest.raises(InputError) as e:
        parse_named_policies(f"{a},{b}")
    (p,) = e.value.problems
    assert a in p.field and b in p.field and "'tuned'" in p.reason
    with pytest.raises(InputError):
        parse_named_policies("ff,ff")
    with pytest.raises(InputError):
        parse_named_policies("=ff")
    with pytest.raises(InputError):
        parse_named_policies("x=nope")


def test_compare_simulate_sweep_name_rows_as_given(two_files: tuple[str, str], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    a, b = two_files
    code, out, err = run(["compare", "sigma", "--policies", f"old={a},new={b},bf", "--orders", "1",
                          "--json", "-q", "--time-limit", "5"], capsys)
    assert code == 0, err
    assert [p["name"] for p in json.loads(out)["policies"]] == ["old", "new", "bf"]
    code, _, err = run(["compare", "sigma", "--policies", f"{a},{b}", "-q"], capsys)
    assert code == 2 and a in err and b in err
    code, out, _ = run(["simulate", "sigma", "--policy", a, "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["policy"] == "tuned" and doc["runs"][0]["policy"] == "tuned"
    table = tmp_path / "t.csv"
    code, _, err = run(["sweep", "sigma", "--policies", f"mine={a},ff", "--orders", "1", "-q",
                        "--out", str(table)], capsys)
    assert code == 0, err
    assert [r["policy"] for r in csv.DictReader(table.open())] == ["mine", "ff"]


def test_sweep_optimum_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "t.csv"
    code, _, err = run(["sweep", "sigma", "--policies", "ff,bf", "--orders", "2", "-q", "--optimum",
                        "--time-limit", "10", "--out", str(table)], capsys)
    assert code == 0, err
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 4
    for r in rows:  # sigma: 15 hosts, proven (the Sigma article's optimum)
        assert (float(r["optimum"]), float(r["bound"]), r["optimum_status"]) == (15.0, 15.0, "optimal")
        assert float(r["excess"]) == pytest.approx((int(r["hosts"]) - 15) / 15)
    plain = tmp_path / "p.csv"
    run(["sweep", "sigma", "--policies", "ff", "--orders", "1", "-q", "--out", str(plain)], capsys)
    assert "optimum" not in plain.read_text().splitlines()[0]


def test_sweep_optimum_on_an_infeasible_instance_exits_3(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    inf = tmp_path / "inf.json"
    inf.write_text(json.dumps({
        "name": "inf", "resources": ["cpu"],
        "host_types": [{"name": "std", "capacity": [4], "count": 3}],
        "apps": [{"name": "a", "demand": [2], "count": 4, "max_per_host": 1}]}))
    table = tmp_path / "t.csv"
    code, _, err = run(["sweep", str(inf), "--policies", "ff", "--orders", "1", "-q", "--optimum",
                        "--time-limit", "5", "--out", str(table)], capsys)
    assert code == 3 and "infeasible" in err and not table.exists()


def test_sweep_optimum_not_found_leaves_the_columns_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import solvers
    from solvers import SolveResult

    monkeypatch.setattr(solvers, "solve", lambda *a, **k: SolveResult("unknown", None, 12.0, None, None,
                                                                      "cpsat", 0.1))
    table = tmp_path / "t.csv"
    code, out, err = run(["sweep", "sigma", "--policies", "ff", "--orders", "1", "-q", "--optimum",
                          "--out", str(table)], capsys)
    assert code == 0, err
    assert "optimum sigma: none found hosts (unknown, bound 12)" in out
    (row,) = csv.DictReader(table.open())
    assert (row["optimum"], row["bound"], row["excess"], row["optimum_status"]) == ("", "12.0", "", "unknown")


def test_jobs_compare_names_rows_as_given(capsys: pytest.CaptureFixture[str]) -> None:
    dag = str(Path(__file__).resolve().parents[1] / "data" / "dag")
    code, out, err = run(["jobs", "compare", dag, "--jobs", "3", "--hosts", "32c64g:1", "--policies",
                          "first=fifo,cpf", "--json"], capsys)
    assert code == 0, err
    assert [p["name"] for p in json.loads(out)["policies"]] == ["first", "cpf"]
    code, _, err = run(["jobs", "compare", dag, "--jobs", "3", "--policies", "fifo,fifo"], capsys)
    assert code == 2 and "both named 'fifo'" in err


def test_simulate_takes_one_policy_and_names_its_option(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["simulate", "sigma", "--policy", "ff,bf"], capsys)
    assert code == 2 and "--policy: ff,bf" in err and "one policy, got 2" in err
    code, _, err = run(["simulate", "sigma", "--policy", "nope"], capsys)
    assert code == 2 and "--policy: nope: unknown policy" in err
    code, out, err = run(["simulate", "sigma", "--policy", "mine=ff"], capsys)
    assert code == 0 and "policy mine" in out, err
