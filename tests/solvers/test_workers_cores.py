"""``workers`` bounds the cores a solve uses, child processes included.

``auto`` runs the arc-flow MIP (a CBC child process) beside its other stages only when it may use
two cores or more, and then gives the stages beside it one core less. Tested two ways: which
parts run with how many threads (in-process), and the CPU time of ``vbp solve`` and its children
against the wall time (``resource.getrusage``, a ratio: no wall-time verdict).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import solvers.exact.auto as auto
import solvers.exact.cpsat as cpsat
from packing.generators.hard1d import generate_hard1d, petersen_instance
from packing.io import save_instance
from solvers import solve

ROOT = Path(__file__).resolve().parents[2]


def _beside_alive() -> bool:
    return any(t.name == "vbp-auto-arcflow" and t.is_alive() for t in threading.enumerate())


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_stages_beside_the_arcflow_mip_get_one_core_less(workers: int,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []
    calls: list[tuple[int, bool]] = []
    real_bg, real_cpsat = auto._Background.__init__, cpsat.solve_cpsat

    def bg(self: auto._Background, *a: object, **k: object) -> None:
        started.append(1)
        real_bg(self, *a, **k)  # type: ignore[arg-type]

    def cp(inst: object, options: object, **k: object) -> object:
        calls.append((options.workers, _beside_alive()))  # type: ignore[attr-defined]
        return real_cpsat(inst, options, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(auto._Background, "__init__", bg)
    monkeypatch.setattr(cpsat, "solve_cpsat", cp)
    # first fit 4, cheap and LP bound 3: the MIP is what proves 4
    settings = auto.AutoSettings(tabu_first=0.0)
    res = solve(petersen_instance(), time_limit=60, workers=workers, settings=settings)
    assert res.status == "optimal" and res.objective == 4
    assert bool(started) == (workers >= 2), res.history
    for threads, beside in calls:
        assert threads == (workers - 1 if beside else workers)


def _cpu_and_wall(args: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "vbp.cli", "solve", *args, "--quiet"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return cpu, wall, proc


@pytest.mark.parametrize("workers", [1, 2])
def test_vbp_solve_cpu_time_within_workers_times_wall(workers: int, tmp_path: Path) -> None:
    # first fit misses this one and the arc-flow MIP, the partition, the cover and CP-SAT all
    # have work to do within the limit (before, a CBC child ran beside them with --workers 1)
    path = tmp_path / "uniform_1003.json"
    save_instance(generate_hard1d(1003, kind="uniform"), path)
    cpu, wall, proc = _cpu_and_wall([str(path), "--workers", str(workers), "--time-limit", "6"])
    assert proc.returncode == 0, proc.stderr
    assert cpu <= workers * wall + 0.5, f"{cpu:.2f} CPU seconds in {wall:.2f} s with --workers {workers}"
