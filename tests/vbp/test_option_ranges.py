"""Every number an option or ``--set`` takes is range-checked before any work: exit 2, the range named.

Options are checked before the input is read, so these cases name a missing file and assert that
the message names the option instead (proof that the check came first).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import click
import pytest

from packing.io.fields import parse_sets
from tests.vbp.cli_run import run
from vbp.cli.common import FiniteFloat

HAS_TORCH = importlib.util.find_spec("torch") is not None


# -- the shared number type -------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "text", "needle"), [
    (FiniteFloat(0.0, 86400.0), "nan", "must be a finite number in [0, 86400], got 'nan'"),
    (FiniteFloat(0.0, 1.0, min_open=True), "0", "must be greater than 0 (a finite number in (0, 1])"),
    (FiniteFloat(0.0, 10_000_000.0), "1e300", "must be at most 10_000_000 (a finite number in [0, "
                                              "10_000_000])"),
    (FiniteFloat(0.0), "-inf", "must be a finite number >= 0, got '-inf'"),
    (FiniteFloat(), "x", "expected a number, got 'x'"),
])
def test_finite_float_names_the_range(kind: FiniteFloat, text: str, needle: str) -> None:
    with pytest.raises(click.BadParameter) as e:
        kind.convert(text, None, None)
    assert needle in str(e.value.message)


def test_finite_float_accepts_the_bounds() -> None:
    assert FiniteFloat(0.0, 1.0).convert("1", None, None) == 1.0
    assert FiniteFloat(0.0, 1.0).convert("0", None, None) == 0.0


def test_parse_sets() -> None:
    assert parse_sets(["a=1", " b = x "]) == {"a": "1", "b": "x"}
    for bad, needle in ((["a"], "expected NAME=VALUE"), (["=1"], "expected NAME=VALUE"),
                        (["a=1", "a=2"], "given twice")):
        with pytest.raises(Exception, match=needle):
            parse_sets(bad)


# -- command-line options ------------------------------------------------------------------------
OPTIONS: list[tuple[list[str], str, str]] = [
    # (command line with MISSING for the input, option, text of the allowed range)
    (["gpu-frag", "MISSING", "--bound-time", "nan"], "--bound-time", "[0, 86400]"),
    (["gpu-frag", "MISSING", "--bound-time", "-1"], "--bound-time", "[0, 86400]"),
    (["gpu-frag", "MISSING", "--seeds", "0"], "--seeds", "1<=x<=1000"),
    (["train", "rl", "MISSING", "--out", "OUT.pt", "--threads", "1000000"], "--threads", "1<=x<=256"),
    (["train", "rl", "MISSING", "--out", "OUT.pt", "--episodes", "0"], "--episodes", "1<=x<=1000000"),
    (["train", "swarm", "MISSING", "--out", "OUT.json", "--workers", "1000000"], "--workers", "1<=x<=256"),
    (["train", "swarm", "MISSING", "--out", "OUT.json", "--particles", "100000000"], "--particles",
     "1<=x<=10000"),
    (["train", "swarm", "MISSING", "--out", "OUT.json", "--iters", "0"], "--iters", "1<=x<=1000000"),
    (["train", "swarm", "MISSING", "--out", "OUT.json", "--w", "1e9"], "--w", "[0, 2]"),
    (["train", "swarm", "MISSING", "--out", "OUT.json", "--c1", "-1"], "--c1", "[0, 10]"),
    (["train", "swarm", "MISSING", "--out", "OUT.json", "--c2", "nan"], "--c2", "[0, 10]"),
    (["solve", "MISSING", "--workers", "1000000"], "--workers", "1<=x<=256"),
    (["solve", "MISSING", "--time-limit", "1e300"], "--time-limit", "(0, 10_000_000]"),
    (["solve", "MISSING", "--time-limit", "0"], "--time-limit", "(0, 10_000_000]"),
    (["compare", "MISSING", "--time-limit", "inf"], "--time-limit", "(0, 10_000_000]"),
    (["compare", "MISSING", "--workers", "0"], "--workers", "1<=x<=256"),
    (["compare", "MISSING", "--keep", "nan"], "--keep", "[0, 1]"),
    (["simulate", "MISSING", "--orders", "0"], "--orders", "1<=x<=100000"),
    (["sweep", "MISSING", "--out", "OUT.csv", "--orders", "1000000000"], "--orders", "1<=x<=100000"),
    (["generate", "random", "--out", "OUT.json", "--rule-density", "nan"], "--rule-density", "[0, 1]"),
    (["generate", "random", "--out", "OUT.json", "--tightness", "0"], "--tightness", "(0, 1]"),
    (["generate", "random", "--out", "OUT.json", "--containers", "0"], "--containers", "1<=x<="),
    (["jobs", "compare", "MISSING", "--interarrival", "nan"], "--interarrival", "[0, 10_000_000]"),
    (["jobs", "compare", "MISSING", "--online-share", "1"], "--online-share", "[0, 0.95]"),
    (["jobs", "compare", "MISSING", "--jobs", "0"], "--jobs", "1<=x<=100000"),
    (["jobs", "partition", "MISSING", "--time-limit", "1e300"], "--time-limit", "(0, 86400]"),
    (["jobs", "partition", "MISSING", "--containers", "-1"], "--containers", "1<=x<=100000"),
]


@pytest.mark.parametrize(("args", "option", "allowed"), OPTIONS)
def test_options_are_range_checked_first(args: list[str], option: str, allowed: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "missing-input")
    argv = [missing if a == "MISSING" else str(tmp_path / a) if a.startswith("OUT") else a for a in args]
    code, _, err = run(argv, capsys)
    assert code == 2, err
    assert option in err and allowed in err, err
    assert "missing-input" not in err, err


@pytest.mark.skipif(not HAS_TORCH, reason="vbp train gcn needs torch")
@pytest.mark.parametrize(("args", "option", "allowed"), [
    (["--init-scale", "1e300"], "--init-scale", "[0, 1_000_000]"),
    (["--lr", "2"], "--lr", "(0, 1]"),
    (["--entropy", "nan"], "--entropy", "[0, 1000]"),
    (["--layers", "1000000"], "--layers", "1<=x<=8"),
    (["--dim", "0"], "--dim", "2<=x<=512"),
])
def test_train_gcn_options(args: list[str], option: str, allowed: str, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["train", "gcn", str(tmp_path / "missing-input"), "--out", str(tmp_path / "m.pt"),
                        *args], capsys)
    assert code == 2 and option in err and allowed in err, err


@pytest.mark.skipif(not HAS_TORCH, reason="vbp train gcn needs torch")
@pytest.mark.parametrize(("args", "option", "allowed"), [
    (["--lr", "nan"], "--lr", "(0, 1]"),
    (["--interarrival", "inf"], "--interarrival", "[0, 10_000_000]"),
    (["--dagger", "2"], "--dagger", "[0, 1]"),
    (["--dim", "100000"], "--dim", "2<=x<=256"),
])
def test_train_gcn_dag_options(args: list[str], option: str, allowed: str, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    dag = str(Path(__file__).resolve().parents[1] / "data" / "dag")
    code, _, err = run(["train", "gcn", dag, "--out", str(tmp_path / "m.pt"), *args], capsys)
    assert code == 2 and option in err and allowed in err, err


# -- vbp train rl --set -------------------------------------------------------------------------------
SETS: list[tuple[str, str, str]] = [
    # (algo, setting, text in the message)
    ("eade-m", "gamma=nan", "gamma=nan: got nan; expected a number in [0, 1]"),
    ("eade-m", "gamma=-0.5", "expected a number in [0, 1]"),
    ("eade-m", "gamma=1e12", "expected a number in [0, 1]"),
    ("eade-m", "batch=0", "batch=0: got 0; expected an integer in 1..8192"),
    ("eade-m", "buffer=1e12", "buffer=1e12: got '1e12'; expected an integer in 1..1_000_000"),
    ("eade-m", "buffer=0", "expected an integer in 1..1_000_000"),
    ("eade-m", "lr=0", "expected a number in (0, 1]"),
    ("eade-m", "lr=inf", "expected a number in (0, 1]"),
    ("eade-m", "embed=-5", "expected an integer in 1..1024"),
    ("eade-m", "heads=3", "heads: 3 does not divide embed 64"),
    ("eade-m", "hidden=0", "expected a list of 2 integers"),
    ("eade-m", "hidden=8,4,2", "expected a list of 2 integers"),
    ("eade-m", "update_every=0", "expected an integer in 1..10000"),
    ("eade-m", "reward_scale=0", "expected a number in (0, 1_000_000]"),
    ("eade-m", "eps_start=2", "expected a number in [0, 1]"),
    ("eade-m", "pretrain=-1", "expected an integer in 0..1_000_000"),
    ("eade-m", "rollout_k=0", "expected an integer in 1..4096"),
    ("eade-m", "attention=maybe", "expected true or false"),
    ("eade-m", "admission=true", "admission needs residual"),
    ("eade-m", "n_clusters=3", "unknown eade-m hyper-parameter"),
    ("eade-m", "nope=1", "unknown eade-m hyper-parameter; known: admission"),
    ("eade", "noise=nan", "expected a number in [0, 10]"),
    ("eade", "hidden=100000", "expected an integer in 1..4096"),
    ("eade", "tau_soft=-1", "expected a number in [0, 1]"),
    ("ddpg", "batch=0", "expected an integer in 1..8192"),
    ("ppo", "gamma=nan", "expected a number in [0, 1]"),
    ("ppo", "batch=0", "batch_size=0: got 0; expected an integer in 1..8192"),
    ("ppo", "n_steps=1", "expected an integer in 2..1_000_000"),
    ("ppo", "verbose=2", "unknown ppo hyper-parameter"),
    ("sac", "buffer_size=1000000000000", "expected an integer in 1..1_000_000"),
    ("td3", "lr=-1", "learning_rate=-1: got -1.0; expected a number in (0, 1]"),
]


@pytest.mark.skipif(not HAS_TORCH, reason="vbp train rl needs torch")
@pytest.mark.parametrize(("algo", "setting", "needle"), SETS)
def test_train_rl_set_values_are_range_checked(algo: str, setting: str, needle: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.pt"
    code, _, err = run(["train", "rl", str(tmp_path / "missing-input"), "--algo", algo, "--set", setting,
                        "--out", str(out)], capsys)
    assert code == 2, err
    assert err.startswith("error: --set: ") and needle in err, err
    assert "missing-input" not in err and not out.exists()


@pytest.mark.skipif(not HAS_TORCH, reason="vbp train rl needs torch")
def test_train_rl_set_accepts_values_in_range() -> None:
    from policies.agents.rl import coerce

    assert coerce("eade-m", {"gamma": "0.5", "hidden": "16,8", "attention": "false", "batch": "32"}) == {
        "gamma": 0.5, "hidden": (16, 8), "attention": False, "batch": 32}
    assert coerce("ppo", {"batch": "64", "lr": "0.001"}) == {"batch_size": 64, "learning_rate": 0.001}


# -- policy lists -------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["", ",,", " , "])
@pytest.mark.parametrize("command", [["compare", "sigma"], ["sweep", "sigma", "--out", "OUT.csv"],
                                     ["gpu-frag", "MISSING"], ["jobs", "compare", "MISSING"]])
def test_empty_policy_lists_are_errors(command: list[str], text: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(tmp_path / "missing-input") if a == "MISSING" else str(tmp_path / a) if a.startswith("OUT")
            else a for a in command]
    code, _, err = run([*argv, "--policies", text], capsys)
    assert code == 2, err
    assert "--policies" in err and "no policy named" in err, err


@pytest.mark.skipif(not HAS_TORCH, reason="vbp train rl needs torch")
@pytest.mark.parametrize(("algo", "sets"), [("eade", ["hidden=4096,4096,4096,4096,4096,4096,4096,4096"]),
                                            ("eade-m", ["embed=1024", "hidden=4096,4096"])])
def test_train_rl_networks_larger_than_a_model_file_may_hold(algo: str, sets: list[str], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Each value is in range, together they ask for more weights than a model file may hold."""
    scen = str(tmp_path / "mc4.json")
    data = str(Path(__file__).resolve().parents[1] / "data" / "multicluster_small")
    code, _, err = run(["generate", "multicluster", "--data", data, "--clusters", "4", "--nodes", "1",
                        "--tasks", "5", "--out", scen], capsys)
    assert code == 0, err
    out = tmp_path / "m.pt"
    args = [w for s in sets for w in ("--set", s)]
    code, _, err = run(["train", "rl", scen, "--algo", algo, *args, "--out", str(out)], capsys)
    assert code == 2, err
    assert f"error: --set: {','.join(sets)}: with 4 clusters the settings give a network of " in err, err
    assert "parameters; at most 20,000,000 are allowed" in err and not out.exists()


def test_generate_multicluster_caps_the_hosts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = str(Path(__file__).resolve().parents[1] / "data" / "multicluster_small")
    # within what vbp reads (5M hosts) but beyond the scenario's cap (the read limit is tested apart)
    code, _, err = run(["generate", "multicluster", "--data", data, "--clusters", "1000", "--nodes", "1000",
                        "--out", str(tmp_path / "big.json")], capsys)
    assert code == 2, err
    assert "--clusters/--nodes: 1000 x 1000: 1,000,000 GPU nodes; at most 100,000" in err


@pytest.mark.skipif(not HAS_TORCH, reason="vbp train gcn needs torch")
def test_train_gcn_caps_the_training_orders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["train", "gcn", "sigma", "--orders", "100000", "--out", str(tmp_path / "m.pt")],
                       capsys)
    assert code == 2, err
    assert "--orders/--family: 100000: 100,000 orders x 1 instance(s) x 235 containers = 23,500,000 " \
           "positions; at most 20,000,000" in err


def test_train_swarm_caps_the_orders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["train", "swarm", "sigma", "--samples", "100000", "--held-out", "100000",
                        "--out", str(tmp_path / "s.json")], capsys)
    assert code == 2, err
    assert "--samples/--held-out: 200000: 200,000 orders x 1 instance(s) x 235 containers" in err


@pytest.mark.skipif(not HAS_TORCH, reason="vbp train gcn needs torch")
def test_train_gcn_dag_caps_the_jobs_drawn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dag = str(Path(__file__).resolve().parents[1] / "data" / "dag")
    code, _, err = run(["train", "gcn", dag, "--jobs", "10000", "--samples", "10", "--long-samples", "1000",
                        "--out", str(tmp_path / "m.pt")], capsys)
    assert code == 2, err
    assert ("100,140,000 jobs to draw (jobs x (samples + held-out + 10 x long samples)); at most 1,000,000"
            in err)  # 4 held-out samples by default


Q_OUT = "every q must be in 1..64"


@pytest.mark.parametrize(("q", "needle"), [("1-1000000000", Q_OUT), ("5-2", Q_OUT), ("3,70", Q_OUT),
                                           ("x", "expected numbers and ranges")])
def test_jobs_partition_q_is_range_checked_before_expanding(q: str, needle: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["jobs", "partition", str(tmp_path / "missing-input"), "--q", q], capsys)
    assert code == 2 and f"--q: {q}: {needle}" in err, err


@pytest.mark.parametrize("command", [["simulate", "sigma"], ["compare", "sigma"],
                                     ["sweep", "sigma", "--out", "OUT.csv"]])
def test_orders_are_capped_by_positions(command: list[str], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(tmp_path / a) if a.startswith("OUT") else a for a in command]
    code, _, err = run([*argv, "--orders", "100000"], capsys)
    assert code == 2, err
    assert "--orders: 100000: 100,000 orders x 1 instance(s) x 235 containers = 23,500,000 positions" in err
