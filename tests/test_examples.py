"""Every example runs with a reduced budget (the real-trace one only when the data sets are present)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_compare_policies(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("solvers")
    means = load("compare_policies").main(policies=("ff", "bf"), orders=2, time_limit=30.0)
    assert means["bf"] >= 15
    assert "optimum status optimal" in capsys.readouterr().out


def test_simulate_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = load("simulate_and_plot").main("bf", str(tmp_path / "run"))
    assert (folder / "trajectory.png").stat().st_size > 5000
    assert (folder / "hosts.png").stat().st_size > 5000
    assert "bf: 20 hosts" in capsys.readouterr().out


def test_real_trace_without_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert load("real_trace").main("openb", data=str(tmp_path)) is None
    assert "is absent" in capsys.readouterr().err
    r = subprocess.run([sys.executable, str(EXAMPLES / "real_trace.py"), "openb", "--data", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "is absent" in r.stderr  # a script that cannot run says so by its status


@pytest.mark.slow
def test_real_trace_openb(shared_data: Path) -> None:
    out = load("real_trace").main("openb", ("ff",), data=str(shared_data))
    assert out is not None and out["ff"] > 0


def test_every_example_names_what_it_cannot_read_and_exits_2(tmp_path: Path) -> None:
    # a missing input, an unknown policy or absent data: one "error:"/"absent" line, status 2, no traceback
    env = {**os.environ, "PYTHONPATH": str(EXAMPLES.parent)}
    missing = str(tmp_path / "missing.json")
    cases = {
        "compare_policies.py": [missing],
        "plan_capacity.py": [str(tmp_path / "missing.csv")],
        "simulate_and_plot.py": ["--policy", "no-such-policy", "--out", str(tmp_path / "run")],
        "real_trace.py": ["tianchi", "--data", str(tmp_path)],
    }
    assert set(cases) == {p.name for p in EXAMPLES.glob("*.py")}, "a new example needs a case here"
    procs = {name: subprocess.Popen([sys.executable, str(EXAMPLES / name), *args], env=env, cwd=tmp_path,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name, args in cases.items()}
    for name, p in procs.items():
        out, err = p.communicate(timeout=300)
        assert p.returncode == 2, f"{name}: exit {p.returncode}\n{out}\n{err}"
        assert "Traceback" not in out + err, f"{name}:\n{err}"
        assert ("missing" in err or "no-such-policy" in err or "is absent" in err), f"{name}:\n{err}"
