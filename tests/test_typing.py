"""A user's script type-checks with ``mypy --strict`` against all four packages, which ship ``py.typed``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("packing", "policies", "solvers", "vbp")

SCRIPT = '''\
"""A planning script as a user writes it."""
from packing import App, HostType, Instance, check
from packing.model.instance import Placement
from policies.registry import get_policy
from solvers import solve
from solvers.result import SolveResult
import vbp

inst = Instance(name="x", resources=("cpu",), host_types=(HostType("h", (4.0,), 3),),
                apps=(App("a", (1.0,), 5),))
res: SolveResult = solve(inst, time_limit=5)
p: Placement | None = res.placement
n: int = len(check(inst, p)) if p is not None else 0
policy = get_policy("bf")
plan = vbp.plan("examples/data/deployments.csv", "examples/data/hosts.csv", time_limit=5)
hosts: int | None = plan.scenarios[0].hosts
'''


def test_every_package_ships_py_typed() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for pkg in PACKAGES:
        assert (REPO / pkg / "py.typed").is_file(), pkg
        assert "py.typed" in data.get(pkg, []), pkg


def test_a_user_script_passes_mypy_strict(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    script = tmp_path / "user.py"
    script.write_text(SCRIPT)
    shutil.rmtree(tmp_path / ".cache", ignore_errors=True)
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                        "--cache-dir", str(tmp_path / ".cache"), str(script)],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path,
                       env={"MYPYPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout + r.stderr
