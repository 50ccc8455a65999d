"""Every command ends with the same exit statuses: 0 success, 2 bad input, 3 proven infeasible,
4 no placement found (nothing proven), 1 an internal error; the table is in ``vbp --help``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from packing.errors import EXIT_INFEASIBLE, EXIT_INPUT, EXIT_NO_PLACEMENT, InfeasibleError
from tests.vbp.cli_run import run
from vbp.cli import EXIT_STATUSES

# 4 containers with max_per_host 1 on 3 hosts: no placement of every container (by hand)
INFEASIBLE: dict[str, Any] = {
    "name": "inf", "resources": ["cpu"],
    "host_types": [{"name": "std", "capacity": [4], "count": 3}],
    "apps": [{"name": "a", "demand": [2], "count": 4, "max_per_host": 1}],
}


@pytest.fixture
def infeasible(tmp_path: Path) -> str:
    p = tmp_path / "inf.json"
    p.write_text(json.dumps(INFEASIBLE))
    return str(p)


@pytest.mark.parametrize("args", [
    ["solve", "{}", "-q", "--time-limit", "5"],
    ["solve", "{}", "-q", "--time-limit", "5", "--json"],
    ["compare", "{}", "-q", "--time-limit", "5", "--orders", "1", "--policies", "ff"],
    ["compare", "{}", "-q", "--time-limit", "5", "--orders", "1", "--policies", "ff", "--json"],
    ["validate", "{}"],
    ["plan", "{}", "--hosts", "std:4c8g:1:3", "--time-limit", "5"],
    ["plan", "{}", "--hosts", "std:4c8g:1:3", "--time-limit", "5", "--json"],
])
def test_an_infeasible_instance_exits_3(args: list[str], infeasible: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run([a.replace("{}", infeasible) for a in args], capsys)
    assert code == EXIT_INFEASIBLE == 3, err
    assert "Traceback" not in err


def test_plan_on_infeasible_demand_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "d.csv"
    d.write_text("name,replicas,cpu,memory\nbig,1,32,1Gi\n")
    code, out, _ = run(["plan", str(d), "--hosts", "std:16c64g"], capsys)
    assert code == 3 and "fits on no host type" in out


def test_a_solve_that_finds_nothing_exits_4(infeasible: str, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    import solvers
    from solvers import SolveResult

    def nothing(*args: Any, **kwargs: Any) -> SolveResult:
        return SolveResult("unknown", None, 1.0, None, None, "cpsat", 0.1)

    monkeypatch.setattr(solvers, "solve", nothing)
    code, out, _ = run(["solve", infeasible, "-q", "--json"], capsys)
    assert code == EXIT_NO_PLACEMENT == 4
    assert json.loads(out)["status"] == "unknown"


def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["solve", str(tmp_path / "nope.json")], ["validate", str(tmp_path / "nope.json")],
                 ["compare", str(tmp_path / "nope.json")]):
        code, _, err = run(args, capsys)
        assert code == EXIT_INPUT == 2, (args, err)


def test_infeasible_error_pickles_and_the_table_is_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    import pickle

    e = pickle.loads(pickle.dumps(InfeasibleError("x", "app 'a' fits nowhere")))
    assert (e.source, e.reason, e.exit_status) == ("x", "app 'a' fits nowhere", 3)
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    flat = " ".join(out.split())
    for status, text in EXIT_STATUSES:
        assert f"{status} {text}" in flat
    assert [s for s, _ in EXIT_STATUSES] == [0, 1, 2, 3, 4, 130]
