"""``vbp jobs compare`` and ``vbp jobs partition`` (click object in-process; bad input through main)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import vbp.cli
from vbp.cli.jobs import jobs

FIXTURE = str(Path(__file__).resolve().parents[1] / "data" / "dag")


def test_compare_json_and_plot(tmp_path: Path) -> None:
    plot = tmp_path / "jct.png"
    r = CliRunner().invoke(jobs, ["compare", FIXTURE, "--json", "--seed", "1", "--hosts", "32c64g:1",
                                  "--plot", str(plot)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert {"critical_path_mean_jct", "capacity_mean_jct", "makespan"} <= set(out["bounds"])
    assert out["bounds"]["capacity_mean_jct"] >= out["bounds"]["critical_path_mean_jct"] - 1e-9
    names = [p["name"] for p in out["policies"]]
    assert names == ["fifo", "sjf", "cpf", "random", "cpf-single", "sjf-cp", "sjf-reserve", "sjf-headroom"]
    for p in out["policies"]:
        assert {"name", "mean_jct", "makespan", "mean_utilisation", "idle_share", "decision_ms"} <= set(p)
        assert p["mean_jct"] >= out["bounds"]["capacity_mean_jct"] - 1e-9
    assert plot.stat().st_size > 0


def test_compare_table() -> None:
    r = CliRunner().invoke(jobs, ["compare", FIXTURE, "--policies", "fifo,cpf", "--jobs", "3"])
    assert r.exit_code == 0, r.output
    assert "fifo" in r.output and "cpf" in r.output and "makespan >=" in r.output
    assert "bound (cp)" in r.output and "bound (capacity)" in r.output


def test_compare_sjf_reserve_row_and_both_bounds() -> None:
    r = CliRunner().invoke(jobs, ["compare", FIXTURE, "--policies", "sjf-cp,sjf-reserve", "--hosts",
                                  "32c64g:1", "--interarrival", "0", "--q", "2", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert [p["name"] for p in out["policies"]] == ["sjf-cp", "sjf-reserve"]
    cp, cap = out["bounds"]["critical_path_mean_jct"], out["bounds"]["capacity_mean_jct"]
    assert all(p["mean_jct"] >= cap - 1e-9 >= cp - 2e-9 for p in out["policies"])


def test_bounds_charge_the_drawn_delays_unless_preempting() -> None:
    # with the seed every policy meets the same launch delays, and the bounds charge them; with
    # --preempt a relaunch may leave a stage's own stream, so the bounds charge the least delay
    def run(*extra: str) -> dict:
        r = CliRunner().invoke(jobs, ["compare", FIXTURE, "--policies", "sjf,sjf-cp", "--hosts", "32c64g:1",
                                      "--interarrival", "0", "--q", "2", "--seed", "3", "--json", *extra])
        assert r.exit_code == 0, r.output
        return json.loads(r.output)

    drawn, least = run(), run("--preempt")
    assert drawn["bounds"]["overheads"] == "drawn" and least["bounds"]["overheads"] == "least"
    for key in ("critical_path_mean_jct", "capacity_mean_jct"):
        assert drawn["bounds"][key] > least["bounds"][key] + 1.0  # the draws exceed the least delay
    for a, b in zip(drawn["policies"], least["policies"], strict=True):
        assert a["mean_jct"] == b["mean_jct"]  # no surges: preemption changes nothing else
        assert a["mean_jct"] >= drawn["bounds"]["capacity_mean_jct"] - 1e-9


def test_partition_json() -> None:
    r = CliRunner().invoke(jobs, ["partition", FIXTURE, "--q", "1-2", "--methods", "constrained,single",
                                  "--containers", "40", "--time-limit", "1", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)["rows"]
    assert [(x["method"], x["q"]) for x in rows] == [("constrained", 1), ("constrained", 2), ("single", 1)]
    assert all(x["idle_bound"] <= x["idle_share"] + 1e-9 for x in rows)


@pytest.mark.parametrize("args, needle", [
    (["compare", "NOPE"], "no such file or folder"),
    (["compare", FIXTURE, "--policies", "fifo,zzz"], "--policies"),
    (["compare", FIXTURE, "--hosts", "32x:1"], "--hosts"),
    (["partition", FIXTURE, "--q", "0-3"], "--q"),
    (["compare", "BADCSV"], "line 2, column plan_mem"),
])
def test_bad_input_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str],
                           args: list[str], needle: str) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "batch_task_b.csv").write_text(
        "task_name,instance_num,job_name,task_type,status,start_time,end_time,plan_cpu,plan_mem\n"
        "M1,1,j_1,,Terminated,0,5,100,lots\n")
    args = [str(bad) if a == "BADCSV" else (str(tmp_path / "nope") if a == "NOPE" else a) for a in args]
    monkeypatch.setitem(vbp.cli.COMMANDS, "jobs", ("vbp.cli.jobs", "jobs", "DAG jobs"))
    with pytest.raises(SystemExit) as e:
        vbp.cli.main(["jobs", *args])
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert needle in err and "Traceback" not in err
