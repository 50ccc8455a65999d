"""``vbp compare`` and ``vbp sweep`` check every agent against the instance before any solve or run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.vbp.cli_run import run

REPO = Path(__file__).resolve().parents[2]
MC_DATA = REPO / "tests" / "data" / "multicluster_small"
EADE = str(REPO / "policies" / "data" / "eade-multicluster.pt")
ONE_RESOURCE = {"name": "one", "resources": ["cpu"],
                "host_types": [{"name": "h", "capacity": [4], "count": 3}],
                "apps": [{"name": "a", "demand": [2], "count": 2}, {"name": "b", "demand": [1], "count": 1}]}


@pytest.fixture
def no_solve(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every solver entry point records its call instead of solving."""
    import solvers
    import solvers.exact.max_deployed

    calls: list[str] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        calls.append("solve")
        raise AssertionError("solved before the policies were checked")

    monkeypatch.setattr(solvers, "solve", refuse)
    monkeypatch.setattr(solvers.exact.max_deployed, "optimum", refuse)
    return calls


def test_eade_agent_for_16_clusters_on_4_is_refused_before_the_optimum(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], no_solve: list[str]) -> None:
    scen = str(tmp_path / "mc4.json")
    code, _, err = run(["generate", "multicluster", "--data", str(MC_DATA), "--clusters", "4", "--nodes", "2",
                        "--tasks", "12", "--out", scen], capsys)
    assert code == 0, err
    code, out, err = run(["compare", scen, "--policies", f"bf,{EADE}", "--orders", "1"], capsys)
    assert code == 2, err
    assert no_solve == []
    lines = err.strip().splitlines()
    assert lines == [f"error: {EADE}: clusters: the agent is trained for 16 clusters of 4 metric "
                     "resources; instance 'mc-4x2-12-s0' has 4 clusters of 4"], err
    assert "solving" not in err and out == ""


def test_gcn_agent_for_two_resources_on_one_is_refused_before_the_optimum(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], no_solve: list[str]) -> None:
    inst = tmp_path / "one.json"
    inst.write_text(json.dumps(ONE_RESOURCE))
    for cmd in (["compare", str(inst), "--policies", "bf,gcn-sigma", "--orders", "1"],
                ["sweep", str(inst), "--policies", "bf,gcn-sigma", "--orders", "1", "--optimum", "-q",
                 "--out", str(tmp_path / "t.csv")]):
        code, _, err = run(cmd, capsys)
        assert code == 2, err
        assert no_solve == []
        assert len(err.strip().splitlines()) == 1, err
        assert "gcn-sigma.pt: n_resources: the model is trained for 2 resources; instance 'one' has 1" in err
    assert not (tmp_path / "t.csv").exists()


def test_agents_of_the_right_shape_still_compare(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["compare", "--policies", "bf,gcn-sigma", "--orders", "1", "-q",
                          "--time-limit", "10"], capsys)
    assert code == 0, err
    assert any(line.startswith("gcn-sigma ") for line in out.splitlines())
