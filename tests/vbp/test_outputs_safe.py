"""Outputs never destroy input: the overwrite rule, exit statuses, and real signals mid-run.

Every command that writes refuses (exit 2, before any work) an output that is one of its inputs,
even through a symbolic or hard link and even with ``--force``, and an existing file without
``--force``. Tables, placements and plots are written to a temporary file and renamed: a
``vbp sweep`` or ``vbp solve --out`` killed at a random (seeded) moment leaves the previous file
intact, and after SIGINT no temporary file.
"""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from packing.feasibility.checker import check
from packing.io import load_instance, load_placement, save_instance
from packing.io.atomic import ANONYMOUS
from packing.model.instance import App, HostType, Instance
from tests.vbp.cli_run import run

REPO = Path(__file__).resolve().parents[2]
posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links and signals")


def small(tmp_path: Path, name: str = "small.json") -> Path:
    inst = Instance("small", ("cpu",), (HostType("h", (10.0,), 4),),
                    (App("a", (6.0,), 2), App("b", (4.0,), 3), App("c", (3.0,), 3, max_per_host=1)))
    f = tmp_path / name
    save_instance(inst, f)
    return f


def temporaries(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if ".vbp-tmp-" in p.name]


# ------------------------------------------------------------------------------------------------
# an output that is an input
@posix
@pytest.mark.parametrize("cmd", ["solve", "simulate"])
@pytest.mark.parametrize("link", ["same", "symlink", "hardlink"])
def test_out_that_is_the_input_is_refused_even_with_force(tmp_path: Path, capsys, cmd: str,
                                                          link: str) -> None:
    inst = small(tmp_path)
    before = inst.read_bytes()
    out = tmp_path / "out.json"
    if link == "same":
        out = inst
    elif link == "symlink":
        out.symlink_to(inst)
    else:
        os.link(inst, out)
    for force in ([], ["--force"]):
        code, _, err = run([cmd, str(inst), "--out", str(out), *force], capsys)
        assert code == 2, err
        assert "--out" in err and "input file" in err and "internal error" not in err
        assert inst.read_bytes() == before


def test_simulate_refuses_overwriting_its_policy_file(tmp_path: Path, capsys) -> None:
    inst = small(tmp_path)
    pol = tmp_path / "pol.json"
    code, _, _ = run(["train", "swarm", str(inst), "--particles", "2", "--iters", "1",
                      "--samples", "1", "--held-out", "1", "--out", str(pol)], capsys)
    assert code == 0
    before = pol.read_bytes()
    code, _, err = run(["simulate", str(inst), "--policy", str(pol), "--out", str(pol), "--force"],
                       capsys)
    assert code == 2 and "input file" in err
    assert pol.read_bytes() == before


@posix
def test_sweep_refuses_a_table_linked_to_an_instance(tmp_path: Path, capsys) -> None:
    inst = small(tmp_path)
    out = tmp_path / "t.csv"
    out.symlink_to(inst)
    code, _, err = run(["sweep", str(inst), "--policies", "bf", "--orders", "1", "--out", str(out),
                        "--force", "-q"], capsys)
    assert code == 2 and "input file" in err
    assert load_instance(inst).name == "small"


# ------------------------------------------------------------------------------------------------
# an existing file needs --force
def test_solve_out_replaces_an_existing_file_only_with_force(tmp_path: Path, capsys) -> None:
    inst = small(tmp_path)
    out = tmp_path / "p.json"
    out.write_text("keep me")
    code, _, err = run(["solve", str(inst), "--out", str(out), "--time-limit", "5"], capsys)
    assert code == 2 and "already exists" in err and "--force" in err
    assert out.read_text() == "keep me"
    code, _, err = run(["solve", str(inst), "--out", str(out), "--time-limit", "5", "--force"],
                       capsys)
    assert code == 0, err
    i = load_instance(inst)
    assert check(i, load_placement(out, i), require_all=True) == []
    assert temporaries(tmp_path) == []


def test_generate_refuses_to_overwrite_without_force(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.json"
    assert run(["generate", "random", "--seed", "1", "--out", str(out)], capsys)[0] == 0
    first = out.read_bytes()
    code, _, err = run(["generate", "random", "--seed", "2", "--out", str(out)], capsys)
    assert code == 2 and "already exists" in err
    assert out.read_bytes() == first
    assert run(["generate", "random", "--seed", "2", "--out", str(out), "--force"], capsys)[0] == 0
    assert out.read_bytes() != first


def test_sweep_refuses_an_existing_table_without_force(tmp_path: Path, capsys) -> None:
    inst = small(tmp_path)
    out = tmp_path / "t.csv"
    out.write_text("old table\n")
    args = ["sweep", str(inst), "--policies", "bf,ff", "--orders", "2", "--out", str(out), "-q"]
    code, _, err = run(args, capsys)
    assert code == 2 and "already exists" in err
    assert out.read_text() == "old table\n"
    code, _, err = run([*args, "--force"], capsys)
    assert code == 0, err
    with out.open(newline="") as f:
        assert len(list(csv.DictReader(f))) == 4
    assert temporaries(tmp_path) == []


def test_compare_plot_refused_before_any_work(tmp_path: Path, capsys) -> None:
    plot = tmp_path / "p.png"
    plot.write_bytes(b"old")
    code, _, err = run(["compare", "sigma", "--plot", str(plot)], capsys)
    assert code == 2 and "--plot" in err and "already exists" in err
    assert plot.read_bytes() == b"old"


def test_generate_refuses_sizes_vbp_would_refuse_to_read(tmp_path: Path, capsys) -> None:
    out = tmp_path / "mc.json"
    code, _, err = run(["generate", "multicluster", "--clusters", "10000", "--nodes", "10000",
                        "--data", str(tmp_path), "--out", str(out)], capsys)
    assert code == 2 and "--clusters/--nodes" in err and "MAX_HOSTS" in err
    code, _, err = run(["generate", "random", "--apps", "10000", "--containers", "10000",
                        "--resources", "10000", "--out", str(out)], capsys)
    assert code == 2 and "MAX_CELLS" in err
    assert not out.exists()


# ------------------------------------------------------------------------------------------------
# bad input is exit 2 with the field, never an internal error
@pytest.mark.parametrize("cmd", [["info"], ["validate"], ["solve", "--time-limit", "2"],
                                 ["compare", "--orders", "1", "--time-limit", "2"]])
def test_empty_host_types_is_bad_input_everywhere(tmp_path: Path, capsys, cmd: list[str]) -> None:
    f = tmp_path / "e.json"
    f.write_text(json.dumps({"resources": ["cpu"], "host_types": [],
                             "apps": [{"name": "a", "demand": [1], "count": 2}]}))
    code, _, err = run([cmd[0], str(f), *cmd[1:]], capsys)
    assert code == 2, err
    assert f"{f}: host_types:" in err and "internal error" not in err


@pytest.mark.slow  # imports torch
def test_train_gcn_refuses_empty_host_types(tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch_geometric")
    f = tmp_path / "e.json"
    f.write_text(json.dumps({"resources": ["cpu"], "host_types": [],
                             "apps": [{"name": "a", "demand": [1], "count": 2}]}))
    code, _, err = run(["train", "gcn", str(f), "--episodes", "1", "--out",
                        str(tmp_path / "m.pt")], capsys)
    assert code == 2 and "host_types" in err, err


@pytest.mark.parametrize("cmd", ["info", "validate", "solve", "simulate"])
def test_initial_with_an_unknown_app_is_refused_the_same_way(tmp_path: Path, capsys,
                                                             cmd: str) -> None:
    f = tmp_path / "u.json"
    f.write_text(json.dumps({"resources": ["cpu"],
                             "host_types": [{"name": "h", "capacity": [4], "count": 2}],
                             "apps": [{"name": "a", "demand": [1], "count": 2}],
                             "initial": {"hosts": {"zz": ["h#0"]}}}))
    code, _, err = run([cmd, str(f)], capsys)
    assert code == 2
    assert err.strip() == f"error: {f}: initial.hosts.zz: unknown app 'zz'; the instance's apps are ['a']"


@posix
def test_validate_placement_from_a_device_is_refused(tmp_path: Path, capsys) -> None:
    code, _, err = run(["validate", str(small(tmp_path)), "--placement", "/dev/zero"], capsys)
    assert code == 2 and "/dev/zero" in err and "device" in err


# ------------------------------------------------------------------------------------------------
# real signals at a random moment
def spawn(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "vbp.cli", *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})


def table_rows(path: Path) -> int | None:
    """Rows of a complete table, or ``None`` if the file is not the table vbp writes."""
    text = path.read_text()
    if not text.startswith("instance,policy,order"):
        return None
    with path.open(newline="") as f:
        return len(list(csv.DictReader(f)))


@posix
@pytest.mark.parametrize("sig, seed", [("SIGINT", 1), ("SIGTERM", 2),
                                       pytest.param("SIGKILL", 3, marks=pytest.mark.slow)])
def test_sweep_killed_at_a_random_moment_keeps_the_previous_table(tmp_path: Path, sig: str,
                                                                  seed: int) -> None:
    inst = small(tmp_path)
    out = tmp_path / "t.csv"
    out.write_text("old table\n")
    orders = 40
    proc = spawn(["sweep", str(inst), "--policies", "bf,ff,wf", "--orders", str(orders),
                  "--out", str(out), "--force", "-q"])
    time.sleep(random.Random(seed).uniform(0.2, 3.0))
    proc.send_signal(getattr(signal, sig))
    proc.communicate(timeout=60)
    text = out.read_text()
    assert text == "old table\n" or table_rows(out) == 3 * orders, text[:200]
    left = temporaries(tmp_path)
    if sig == "SIGKILL":
        if ANONYMOUS:  # the temporary has a name only for an instant before the rename
            assert left == []
        run_again = spawn(["sweep", str(inst), "--policies", "bf", "--orders", "1", "--out",
                           str(tmp_path / "again.csv"), "-q"])
        assert run_again.wait(timeout=120) == 0
    else:
        assert proc.returncode in (0, 130, 128 + getattr(signal, sig), -getattr(signal, sig))
    assert temporaries(tmp_path) == [], left


@posix
@pytest.mark.slow
def test_solve_out_killed_at_a_random_moment_keeps_the_previous_file(tmp_path: Path) -> None:
    inst = small(tmp_path)
    out = tmp_path / "p.json"
    out.write_text("old placement\n")
    rng = random.Random(7)
    for _ in range(2):
        proc = spawn(["solve", str(inst), "--out", str(out), "--force", "-q"])
        time.sleep(rng.uniform(0.2, 4.0))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        if ANONYMOUS:
            assert temporaries(tmp_path) == []  # a kill -9 while writing leaves no file
        text = out.read_text()
        if text != "old placement\n":  # the solve finished first: a whole placement
            i = load_instance(inst)
            assert check(i, load_placement(out, i), require_all=True) == []
            out.write_text("old placement\n")
    proc = spawn(["solve", str(inst), "--out", str(out), "--force", "-q"])
    assert proc.wait(timeout=120) == 0  # the next write removes what a kill -9 left
    assert temporaries(tmp_path) == []
    i = load_instance(inst)
    assert check(i, load_placement(out, i), require_all=True) == []
