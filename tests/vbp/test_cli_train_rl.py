"""``vbp train rl`` end to end on a tiny multi-cluster scenario, and ``vbp compare`` with the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vbp.cli import cli

pytest.importorskip("torch")

DATA = Path(__file__).resolve().parents[1] / "data" / "multicluster_small"
TINY = ("--set", "embed=8", "--set", "heads=2", "--set", "hidden=16,8", "--set", "batch=16",
        "--set", "pretrain=10")


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mc") / "s.json"
    code, _, err = run("generate", "multicluster", "--data", str(DATA), "--clusters", "3", "--nodes", "2",
                       "--tasks", "20", "--seed", "1", "--out", str(path))
    assert code == 0, err
    return path


def test_train_rl_then_compare(scenario: Path, tmp_path: Path) -> None:
    model, plot = tmp_path / "m.pt", tmp_path / "c.png"
    code, out, err = run("train", "rl", str(scenario), "--algo", "eade-m", "--episodes", "2", *TINY,
                         "--out", str(model), "--plot", str(plot), "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert [r["episode"] for r in rep["curve"]] == [0, 1] and model.is_file() and plot.stat().st_size > 0
    held = rep["held_out"]  # the saved agent and Best-Fit on 8 shuffled orders of the scenario
    assert (held["n_runs"], held["baseline"], held["metrics"]) == (8, "bf", ["deployed", "hosts"])
    a, b = held["policy_mean"], held["baseline_mean"]
    assert held["worse"] == ((a["deployed"], -a["hosts"]) < (b["deployed"], -b["hosts"]))
    assert ("warning: on the 8 held-out orders" in err) == held["worse"]
    # resume: two more episodes continue the curve from the file
    code, out, err = run("train", "rl", str(scenario), "--algo", "eade-m", "--episodes", "4", *TINY,
                         "--out", str(model), "--resume", "--json")
    assert code == 0, err
    assert [r["episode"] for r in json.loads(out)["curve"]] == [0, 1, 2, 3]
    code, out, err = run("compare", str(scenario), "--policies", f"mc-util,{model}", "--orders", "1",
                         "--json", "-q")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["optimum"]["objective_kind"] == "deployed"
    assert rep["optimum"]["objective"] >= max(p["deployed_mean"] for p in rep["policies"])
    names = [p["name"] for p in rep["policies"]]  # a model file is named by its stem
    assert names == ["mc-util", "m"] and all(p["deployed_mean"] > 0 for p in rep["policies"])


def test_train_rl_ppo_and_bad_input(scenario: Path, tmp_path: Path) -> None:
    pytest.importorskip("stable_baselines3")
    model = tmp_path / "p.pt"
    code, _, err = run("train", "rl", str(scenario), "--algo", "ppo", "--episodes", "1",
                       "--set", "n_steps=32", "--set", "batch=16", "--out", str(model))
    assert code == 0, err
    assert model.is_file()


def test_bad_input_is_a_clean_error(scenario: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    from vbp.cli import main

    model = tmp_path / "m.pt"
    for args, word in ((["--algo", "eade-m", "--set", "nope=1"], "nope"),
                       (["--algo", "ppo", "--resume"], "resume"),
                       (["--set", "batch"], "NAME=VALUE")):
        with pytest.raises(SystemExit) as e:
            main(["train", "rl", str(scenario), *args, "--out", str(model)])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and word in err and len(err.splitlines()) == 1
    with pytest.raises(SystemExit) as e:
        main(["train", "rl", str(scenario), "--out", str(tmp_path / "m.json")])
    assert e.value.code == 2 and ".pt" in capsys.readouterr().err


def test_compare_table_lost_counts_every_task_not_deployed(scenario: Path) -> None:
    code, out, err = run("compare", str(scenario), "--policies", "mc-util,mc-greedy", "--orders", "1", "-q")
    assert code == 0, err
    lines = out.splitlines()
    assert "lost" in lines[1]
    rows = [ln.split() for ln in lines if ln.startswith(("mc-util", "mc-greedy"))]
    assert len(rows) == 2
    for r in rows:  # lost = the scenario's 20 tasks minus those deployed
        assert float(r[3]) == pytest.approx(20 - float(r[1]))
