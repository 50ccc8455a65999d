"""More bad input through the real CLI: options of compare / train swarm / sweep, request streams that
leave containers out, compare on an infeasible instance, errors across processes, Ctrl-C in training.

Each case asserts the exit status (2 for bad input, 130 for Ctrl-C), that no traceback is printed, and
that the message names the file or option, the field and the reason.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from packing.errors import InputError, Problem
from tests.vbp.test_bad_input import run  # one in-process CLI runner for both bad-input modules
from vbp.cli.common import MAX_ORDERS, MAX_SEED

REPO = Path(__file__).resolve().parents[2]

# 6 containers of `a`, but the requests ask for 1 of them (and both of `b`)
UNCOVERED: dict[str, Any] = {
    "name": "unc", "resources": ["cpu"],
    "host_types": [{"name": "std", "capacity": [4], "count": 6}],
    "apps": [{"name": "a", "demand": [2], "count": 6}, {"name": "b", "demand": [1], "count": 2}],
    "requests": [{"time": 0, "app": "a", "count": 1}, {"time": 1, "app": "b", "count": 2}],
}
# 4 containers at most one per host, 3 hosts: no placement of every container
INFEASIBLE: dict[str, Any] = {
    "name": "inf", "resources": ["cpu"],
    "host_types": [{"name": "std", "capacity": [4], "count": 3}],
    "apps": [{"name": "a", "demand": [2], "count": 4, "max_per_host": 1}],
}




def write(tmp_path: Path, name: str, content: Any) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(content))
    return str(p)


def error_lines(err: str) -> list[str]:
    lines = err.strip().splitlines()
    assert lines and all(x.startswith("error: ") for x in lines), err
    return lines


# ------------------------------------------------------------------------------------------------
# 1. options are checked before any work
@pytest.mark.parametrize("args, option, needle", [
    (["--time-limit", "nan"], "--time-limit", "finite"),
    (["--time-limit", "inf"], "--time-limit", "finite"),
    (["--time-limit", "0"], "--time-limit", "greater than 0"),
    (["--seed", "-1"], "--seed", "-1"),
    (["--seed", str(MAX_SEED + 1)], "--seed", str(MAX_SEED + 1)),
    (["--orders", "0"], "--orders", "0"),
    (["--orders", str(MAX_ORDERS + 1)], "--orders", str(MAX_ORDERS + 1)),
    (["--snapshots", str(MAX_ORDERS + 1)], "--snapshots", str(MAX_ORDERS + 1)),
    (["--keep", "nan"], "--keep", "finite"),
    (["--plot", "p.csv"], "--plot", "expected a file name ending in"),
])
def test_compare_options_are_checked_before_loading(tmp_path: Path, capsys, args, option,
                                                    needle) -> None:
    missing = str(tmp_path / "missing.json")  # naming the option proves it was checked first
    code, _, err = run(["compare", missing, *args], capsys)
    assert code == 2 and option in err and needle in err and "missing.json" not in err, err


def test_compare_snapshots_need_a_snapshot(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "nosnap.json", INFEASIBLE | {"name": "other-name",
                                                        "apps": [{"name": "a", "demand": [1],
                                                                  "count": 2}]})
    code, _, err = run(["compare", path, "--snapshots", "3", "-q"], capsys)
    (line,) = error_lines(err)
    assert code == 2 and f"{path}: --snapshots:" in line and "no snapshot" in line, err
    assert "other-name" not in line  # names the file, not the instance


def test_compare_errors_name_the_file(tmp_path: Path, capsys) -> None:
    d = {"name": "not-the-file-name", "resources": ["cpu"],
         "host_types": [{"name": "std", "capacity": [4], "count": 3}],
         "apps": [{"name": "a", "demand": [3], "count": 2}],
         "initial": {"hosts": {"a": ["std#0", "std#0"]}}}  # 6 cpu on a 4-cpu host
    path = write(tmp_path, "snap.json", d)
    code, _, err = run(["compare", path, "--policies", "bf", "--orders", "1", "-q",
                        "--time-limit", "5"], capsys)
    assert code == 2 and f"{path}: initial" in err and "not-the-file-name:" not in err, err


@pytest.mark.parametrize("args, option, needle", [
    (["--particles", "0"], "--particles", "0"),
    (["--iters", "0"], "--iters", "0"),
    (["--samples", "0"], "--samples", "0"),
    (["--held-out", "0"], "--held-out", "0"),
    (["--workers", "0"], "--workers", "0"),
    (["--patience", "-1"], "--patience", "-1"),
    (["--seed", "-1"], "--seed", "-1"),
    (["--w", "nan"], "--w", "finite"),
    (["--c1", "inf"], "--c1", "finite"),
    (["--c2", "x"], "--c2", "expected a number"),
    (["--checkpoint", "ck.pkl"], "--checkpoint", "expected a file name ending in .json"),
    (["--resume"], "--resume", "needs --checkpoint"),
    (["--optimizer", "de", "--checkpoint", "ck.json"], "--checkpoint", "only with --optimizer pso"),
    (["--ray-address", "auto"], "--ray-address", "only with --backend ray"),
])
def test_train_swarm_options_are_checked_before_loading(tmp_path: Path, capsys, args, option,
                                                        needle) -> None:
    missing = str(tmp_path / "missing.json")
    out = str(tmp_path / "tuned.json")
    code, _, err = run(["train", "swarm", missing, *args, "--out", out], capsys)
    assert code == 2 and option in err and needle in err and "missing.json" not in err, err
    assert not Path(out).exists()


@pytest.mark.parametrize("out, reason", [
    ("tuned.txt", "expected a file name ending in .json"),
    ("{file}/tuned.json", "is not a folder"),
])
def test_train_swarm_out_is_checked_before_training(tmp_path: Path, capsys, out, reason) -> None:
    f = tmp_path / "plain.json"
    f.write_text("{}")
    out = out.format(file=f)
    code, _, err = run(["train", "swarm", str(tmp_path / "missing.json"), "--out", out], capsys)
    (line,) = error_lines(err)
    assert code == 2 and "--out" in line and out in line and reason in line, err


def test_train_swarm_checkpoint_is_not_out(tmp_path: Path, capsys) -> None:
    out = str(tmp_path / "tuned.json")
    code, _, err = run(["train", "swarm", str(tmp_path / "missing.json"), "--checkpoint", out,
                        "--out", out], capsys)
    (line,) = error_lines(err)
    assert code == 2 and "--checkpoint" in line and "same file as --out" in line, err


def test_train_swarm_ray_backend_without_ray(tmp_path: Path, capsys, monkeypatch) -> None:
    real = importlib.util.find_spec

    def no_ray(name: str, *a: Any, **k: Any) -> Any:
        return None if name == "ray" or name.startswith("ray.") else real(name, *a, **k)

    monkeypatch.setattr(importlib.util, "find_spec", no_ray)
    code, _, err = run(["train", "swarm", str(tmp_path / "missing.json"), "--backend", "ray",
                        "--out", str(tmp_path / "t.json")], capsys)
    (line,) = error_lines(err)
    assert code == 2 and "--backend" in line and "Ray is not installed" in line, err


@pytest.mark.parametrize("args, option", [
    (["--seed", "-1"], "--seed"), (["--seed", str(MAX_SEED + 1)], "--seed"),
    (["--orders", "0"], "--orders"), (["--orders", str(MAX_ORDERS + 1)], "--orders"),
    (["--uncovered", "sometimes"], "--uncovered"),
])
def test_sweep_options_are_checked_before_loading(tmp_path: Path, capsys, args, option) -> None:
    code, _, err = run(["sweep", str(tmp_path / "missing.json"), "--out",
                        str(tmp_path / "t.csv"), *args], capsys)
    assert code == 2 and option in err and "missing.json" not in err, err


# ------------------------------------------------------------------------------------------------
# 2. containers the request stream does not cover
@pytest.mark.parametrize("cmd", [
    ["compare", "{path}", "--policies", "bf", "--orders", "1", "-q", "--time-limit", "5"],
    ["simulate", "{path}"],
    ["sweep", "{path}", "--policies", "bf", "--orders", "1", "-q", "--out", "{tmp}/t.csv"],
])
def test_uncovered_containers_are_refused(tmp_path: Path, capsys, cmd) -> None:
    path = write(tmp_path, "unc.json", UNCOVERED | {"name": "not-the-file-name"})
    code, out, err = run([a.format(path=path, tmp=tmp_path) for a in cmd], capsys)
    (line,) = error_lines(err)
    assert code == 2, err
    assert line.startswith(f"error: {path}: requests: "), line
    assert "app 'a' has 6 containers" in line and "covers only 1" in line, line
    assert "other 5 would never arrive" in line and "--uncovered drop" in line, line
    assert "not-the-file-name" not in line and not (tmp_path / "t.csv").exists()


def test_uncovered_drop_solves_and_simulates_only_the_covered(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "unc.json", UNCOVERED)
    code, out, err = run(["compare", path, "--policies", "bf,ff", "--orders", "2", "-q", "--json",
                          "--time-limit", "5", "--uncovered", "drop"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["uncovered"] == {"mode": "drop", "containers": 5}
    assert doc["optimum"]["hosts"] == 1  # a x1 (2 cpu) + b x2 (1 cpu each) on one 4-cpu host
    assert all(p["hosts_mean"] == 1 and p["rejected_mean"] == 0 for p in doc["policies"])
    assert "--uncovered drop" in err and "5 container(s)" in err
    code, out, _ = run(["compare", path, "--policies", "bf", "--orders", "1", "-q",
                        "--time-limit", "5", "--uncovered", "drop"], capsys)
    assert code == 0 and "3 containers" in out.splitlines()[0]
    assert "note: the request stream does not cover 5 container(s)" in out and "left out" in out


def test_uncovered_arrive_places_every_container(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "unc.json", UNCOVERED)
    code, out, err = run(["compare", path, "--policies", "bf,ff", "--orders", "2", "-q", "--json",
                          "--time-limit", "5", "--uncovered", "arrive"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["uncovered"] == {"mode": "arrive", "containers": 5}
    assert doc["optimum"]["hosts"] == 4  # 14 cpu on 4-cpu hosts
    # the policies place the same 8 containers the optimum places (before: 3 of them, on 1 host)
    assert all(p["hosts_min"] == 4 and p["rejected_mean"] == 0 for p in doc["policies"])
    code, out, err = run(["simulate", path, "--json", "--uncovered", "arrive"], capsys)
    assert code == 0 and json.loads(out)["runs"][0]["deployed"] == 8
    assert "arrive first, before the request stream" in err
    code, out, _ = run(["sweep", path, "--policies", "bf", "--orders", "1", "-q", "--uncovered",
                        "arrive", "--out", str(tmp_path / "t.csv")], capsys)
    assert code == 0 and f"note: {path}: the request stream does not cover 5" in out
    rows = (tmp_path / "t.csv").read_text().splitlines()
    assert len(rows) == 2 and ",bf,0,0,4," in rows[1]  # 4 hosts used


# ------------------------------------------------------------------------------------------------
# 3. compare on an infeasible instance says why, like vbp solve
def test_compare_on_an_infeasible_instance_names_the_rule(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "inf.json", INFEASIBLE | {"name": "not-the-file-name"})
    code, out, _ = run(["solve", path, "-q", "--time-limit", "5"], capsys)
    reason = next(x for x in out.splitlines() if x.startswith("reason"))[len("reason"):].strip()
    assert code == 3 and "max_per_host = 1" in reason
    code, out, err = run(["compare", path, "-q", "--time-limit", "5"], capsys)
    (line,) = error_lines(err)
    assert code == 3 and out == "", out
    assert line.startswith("error: not-the-file-name: infeasible: no placement of every container"), line
    assert reason in line and "no optimum to compare with" in line


# ------------------------------------------------------------------------------------------------
# 4. an InputError survives pickling (process pools, Ray)
def test_input_error_survives_pickling() -> None:
    e = InputError([Problem("f.json", "apps[0].count", "must not be negative"),
                    Problem("f.json", "requests[2].app", "unknown app 'x'")])
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is InputError and back.problems == e.problems and str(back) == str(e)


# ------------------------------------------------------------------------------------------------
# 5. Ctrl-C during training: the checkpoint holds the last complete iteration; resume is exact
TRAIN = ["train", "swarm", "sigma", "--particles", "4", "--iters", "150", "--samples", "2",
         "--held-out", "2", "--patience", "0", "--seed", "7"]


def _vbp(words: list[str]) -> list[str]:
    """A ``vbp ...`` command line as a subprocess argument list."""
    assert words[0] == "vbp"
    return [sys.executable, "-m", "vbp.cli", *words[1:]]


def _default_sigint() -> None:  # a shell may start us with SIGINT ignored: undo that in the child
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _iteration(ck: Path) -> int:
    try:
        return int(json.loads(ck.read_text())["payload"]["iteration"])
    except (OSError, ValueError, KeyError):
        return 0


def test_ctrl_c_during_training_then_resume_is_exact(tmp_path: Path, capsys) -> None:
    full = tmp_path / "full.json"
    code, _, err = run([*TRAIN, "--out", str(full)], capsys)
    assert code == 0, err

    ck, out = tmp_path / "ck.json", tmp_path / "resumed.json"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(_vbp(["vbp", *TRAIN, "--checkpoint", str(ck), "--out", str(out)]),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_default_sigint)
    deadline = time.monotonic() + 60
    while _iteration(ck) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stdout + stderr and not out.exists()
    (line,) = error_lines(stderr)
    kept = _iteration(ck)
    assert 3 <= kept < 150  # interrupted in the middle, the checkpoint is a complete iteration
    assert f"{ck} holds {kept} complete iteration(s)" in line
    command = line.split("resume with: ", 1)[1]
    words = shlex.split(command)
    assert words[-1] == "--resume" and str(ck) in words and str(out) in words

    done = subprocess.run(_vbp(words), capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    a, b = json.loads(full.read_text()), json.loads(out.read_text())
    assert b["weights"] == a["weights"]
    for k in ("training_cost", "initial_cost", "iterations", "evaluations"):
        assert b["training"][k] == a["training"][k], k


def test_ctrl_c_without_a_checkpoint_says_nothing_was_saved(tmp_path: Path, capsys,
                                                           monkeypatch) -> None:
    import policies.swarm.train as train

    def interrupted(*a: Any, **k: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(train, "train_swarm", interrupted)
    code, _, err = run(["train", "swarm", "--out", str(tmp_path / "t.json")], capsys)
    (line,) = error_lines(err)
    assert code == 130 and "interrupted" in line and "--checkpoint FILE" in line, err


def test_batch_dag_jobs_are_pointed_to_the_jobs_commands(capsys) -> None:
    dag = Path(__file__).resolve().parents[1] / "data" / "dag"
    for args in (["info", str(dag)], ["solve", str(dag / "batch_task_small.csv")]):
        code, _, err = run(args, capsys)
        assert code == 2 and "batch DAG jobs" in err and "vbp jobs compare" in err, err
