"""``vbp train rl --algo eade-m`` with the card options (EADE-M items 6-8), then ``vbp compare`` with it."""

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
CARDS = ("--set", "card_features=true", "--set", "mix_inner=true", "--set", "card_expert=true")


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_train_with_card_options_then_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vbp.cli import main

    scenario, model = tmp_path / "s.json", tmp_path / "m.pt"
    code, _, err = run("generate", "multicluster", "--data", str(DATA), "--clusters", "3", "--nodes", "2",
                       "--tasks", "20", "--seed", "1", "--out", str(scenario))
    assert code == 0, err
    code, _, err = run("train", "rl", str(scenario), "--algo", "eade-m", "--episodes", "1", *TINY, *CARDS,
                       "--set", "mode_action=true", "--out", str(model))
    assert code == 0, err
    code, out, err = run("compare", str(scenario), "--policies", f"mc-util,{model}", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert [p["deployed_mean"] > 0 for p in rep["policies"]] == [True, True]
    with pytest.raises(SystemExit) as e:
        main(["train", "rl", str(scenario), "--algo", "eade-m", "--set", "mix_inner=maybe",
              "--out", str(tmp_path / "x.pt")])
    assert e.value.code == 2 and "mix_inner" in capsys.readouterr().err
