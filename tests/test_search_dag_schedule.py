"""benchmarks/search_dag_schedule.py: the search starts at the policy, never rises, stays above the capacity
bound, is seeded, and its best factors replay to the value it reports."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from packing.dag.bounds import capacity_bound
from packing.dag.engine import DagEngine, Overheads
from packing.dag.loader import load_dag_folder
from packing.dag.policy import run_dag
from policies.dag import make_dag_policy
from vbp.jobfusion import carve_sample, parse_hosts, sample_jobs

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "search_dag_schedule.py"
FIXTURE = ROOT / "tests" / "data" / "dag"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("search_dag_schedule", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_search_starts_at_the_policy_and_stays_above_the_bound() -> None:
    mod = load_script()
    w = sample_jobs(load_dag_folder(FIXTURE), None, 3, 0.0)  # all six jobs at once
    cl = carve_sample(w, "constrained", q=2, hosts=parse_hosts("32c64g:1"), seed=3).cluster
    policy, _ = run_dag(DagEngine(w, cl, overheads=Overheads(), seed=3), make_dag_policy("sjf-headroom"))
    base = mod.BASES["sjf-headroom"]
    runs = [mod.search(w, cl, base, seed=3, evaluations=25, search_seed=s) for s in (1, 1, 2)]
    start, best, factor = runs[0]
    assert start == pytest.approx(policy.mean_jct, abs=1e-9)  # all factors 1: the policy itself
    assert best < start  # here the search finds a better order (997.1 s to 869.6 s)
    assert best >= capacity_bound(w, cl, Overheads(), seed=3).mean_jct - 1e-6
    assert runs[1][1] == best and np.array_equal(runs[1][2], factor)  # seeded
    replay, _ = run_dag(DagEngine(w, cl, overheads=Overheads(), seed=3), mod.scaled(base, factor))
    assert replay.mean_jct == pytest.approx(best, abs=1e-9)


def test_command_prints_the_result_and_refuses_a_negative_count() -> None:
    args = [sys.executable, str(SCRIPT), str(FIXTURE), "--seed", "0", "--jobs", "0", "--hosts", "32c64g:1"]
    r = subprocess.run([*args, "--evaluations", "3"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "capacity bound" in r.stdout and "best found" in r.stdout and "after 3 episodes" in r.stdout
    bad = subprocess.run([*args, "--evaluations", "-1"], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert bad.returncode == 2 and "--evaluations" in bad.stderr
