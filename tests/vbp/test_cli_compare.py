"""``vbp compare`` and ``vbp simulate`` end to end on the built-in instance and small files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from packing.feasibility.checker import check
from packing.io import load_placement, save_instance
from packing.model.instance import App, HostType, Instance
from vbp.cli import cli

pytest.importorskip("solvers")
pytest.importorskip("packing.feasibility.metrics")


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_compare_json_on_sigma() -> None:
    code, out, _ = run("compare", "sigma", "--policies", "ff,bf", "--orders", "3", "--json",
                       "--time-limit", "10")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["optimum"] == {"status": "optimal", "objective": 15.0, "bound": 15.0,
                              "bound_kind": "lower", "objective_kind": "hosts", "hosts": 15}
    names = [p["name"] for p in doc["policies"]]
    assert names == ["ff", "bf"]
    for p in doc["policies"]:
        assert {"name", "hosts_mean", "hosts_min", "hosts_max", "allocation_mean", "excess"} <= set(p)
        assert "gap" not in p  # a gap is (value - bound) / value; this is the excess over the optimum
        assert p["hosts_min"] >= 15
        assert p["excess"] == pytest.approx((p["hosts_mean"] - 15) / 15)
    bf = doc["policies"][1]
    assert bf["hosts_max"] >= 20  # the own order costs BF 20 hosts


def test_compare_same_seed_same_table_and_other_seed_other_orders() -> None:
    args = ("compare", "--policies", "bf,random", "--orders", "4", "--json", "--time-limit", "10")
    a = json.loads(run(*args, "--seed", "1")[1])
    b = json.loads(run(*args, "--seed", "1")[1])
    c = json.loads(run(*args, "--seed", "2")[1])
    assert a == b
    assert a["policies"] != c["policies"]


def test_compare_table_and_plot(tmp_path: Path) -> None:
    png = tmp_path / "cmp.png"
    code, out, _ = run("compare", "--policies", "ff,bf,wf", "--orders", "2", "--plot", str(png), "-q",
                       "--time-limit", "10")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[3].startswith("optimum") and "optimal, bound 15" in lines[3]
    assert any(line.startswith("bf ") for line in lines)
    assert png.stat().st_size > 10_000


def test_bad_policy_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    from vbp.cli import main

    with pytest.raises(SystemExit) as e:
        main(["compare", "--policies", "ff,nope"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --policies: nope: unknown policy") and len(err.splitlines()) == 1


def test_keep_without_snapshots_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    from vbp.cli import main

    with pytest.raises(SystemExit) as e:
        main(["compare", "--keep", "0.5", "--orders", "1"])
    assert e.value.code == 2
    assert capsys.readouterr().err.startswith("error: --keep: 0.5: only with --snapshots")


def test_simulate_file_json_and_out(tmp_path: Path) -> None:
    inst = Instance("small", ("cpu",), (HostType("h", (10.0,), 3),),
                    (App("a", (6.0,), 2), App("b", (4.0,), 2), App("c", (9.0,), 2)))
    f = tmp_path / "small.json"
    save_instance(inst, f)
    out_pl = tmp_path / "pl.json"
    code, out, _ = run("simulate", str(f), "--policy", "ff", "--json", "--out", str(out_pl))
    assert code == 0, out
    doc = json.loads(out)
    run0 = doc["runs"][0]
    # a,a on hosts 0,1; b,b beside them; c on host 2; the second c fits nowhere
    assert run0["hosts"] == 3 and run0["rejected"] == 1 and run0["deployed"] == 5
    pl = load_placement(out_pl, inst)
    assert check(inst, pl) == []
    code, out, _ = run("simulate", str(f), "--policy", "bf", "--orders", "3")
    assert code == 0 and "hosts: mean" in out


def test_simulate_missing_file_exits_2(tmp_path: Path) -> None:
    from vbp.cli import main

    with pytest.raises(SystemExit) as e:
        main(["simulate", str(tmp_path / "nope.json")])
    assert e.value.code == 2


def test_compare_over_resampled_snapshots(tmp_path: Path) -> None:
    from packing.io import save_instance
    from packing.model.instance import UNPLACED, App, HostType, Instance, Placement

    inst = Instance("snap", ("cpu", "mem"), (HostType("h", (10.0, 10.0), 8),),
                    (App("a", (3.0, 1.0), 6, max_per_host=2), App("b", (2.0, 2.0), 6)),
                    initial=Placement({"a": (0, 0, 1, 1, UNPLACED, UNPLACED),
                                       "b": (2, 2, 3, UNPLACED, UNPLACED, UNPLACED)}))
    path = tmp_path / "snap.json"
    save_instance(inst, path)
    args = [str(path), "--snapshots", "3", "--keep", "0.5", "--policies", "ff,bf", "--json"]
    first = json.loads(CliRunner().invoke(cli, ["compare", *args]).output)
    again = json.loads(CliRunner().invoke(cli, ["compare", *args]).output)
    assert first == again
    assert first["optimum"]["objective"] == 3  # 6 x (3,1) with cap 2 and 6 x (2,2): 3 hosts
    assert all(p["hosts_min"] >= 3 for p in first["policies"])


def test_compare_on_processes_gives_the_serial_table() -> None:
    args = ("compare", "--policies", "ff,random,k8s-rtcr", "--orders", "3", "--json", "--time-limit", "10",
            "--seed", "3")
    serial = json.loads(run(*args)[1])
    code, out, _ = run(*args, "--executor", "process", "--workers", "2")
    assert code == 0, out
    assert json.loads(out) == serial


def test_compare_executor_options_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    from vbp.cli import main

    for argv, message in [(["--executor", "serial", "--ray-address", "h:1"], "only with --executor ray"),
                          (["--executor", "threads"], "'threads' is not one of"),
                          (["--workers", "0"], "0 is not in the range")]:
        with pytest.raises(SystemExit) as e:
            main(["compare", "--policies", "ff", *argv])
        assert e.value.code == 2
        assert message in capsys.readouterr().err
