"""benchmarks/search_dag_schedule.py: prints what policies.dag_search finds (tests/policies/test_dag_search.py
tests the search itself) and refuses a negative count."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from packing.dag.bounds import capacity_bound
from packing.dag.engine import Overheads
from packing.dag.loader import load_dag_folder
from policies.dag_search import search_schedule
from vbp.jobfusion import carve_sample, parse_hosts, sample_jobs

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "search_dag_schedule.py"
FIXTURE = ROOT / "tests" / "data" / "dag"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
"""The script imports this checkout's packages."""


def test_script_prints_the_library_search() -> None:
    # the script is a thin wrapper of policies.dag_search: same sample, carving, seeds and result
    w = sample_jobs(load_dag_folder(FIXTURE), None, 3, 0.0)  # all six jobs at once
    cl = carve_sample(w, "constrained", q=4, hosts=parse_hosts("32c64g:1"), seed=3, carving="nested",
                      large_share=0.6).cluster
    found = search_schedule(w, cl, "sjf-headroom", seed=3, evaluations=25, search_seed=1)
    cap = capacity_bound(w, cl, Overheads(), seed=3).mean_jct
    r = subprocess.run([sys.executable, str(SCRIPT), str(FIXTURE), "--seed", "3", "--jobs", "0", "--hosts",
                        "32c64g:1", "--interarrival", "0", "--evaluations", "25", "--search-seed", "1"],
                       capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"seed 3: capacity bound {cap:.1f} s"
    assert lines[1:-1] == [f"episode {it}: {v:.1f} s" for it, v in found.improvements]
    start = found.start_mean_jct
    assert lines[-1] == (f"sjf-headroom {start:.1f} s ({start / cap:.3f}); best "
                         f"found {found.mean_jct:.1f} s ({found.mean_jct / cap:.3f}) after 25 episodes; "
                         f"{found.jobs_reordered} jobs with a factor other than 1")
    assert found.mean_jct < found.start_mean_jct


def test_command_prints_the_result_and_refuses_a_negative_count() -> None:
    args = [sys.executable, str(SCRIPT), str(FIXTURE), "--seed", "0", "--jobs", "0", "--hosts", "32c64g:1"]
    r = subprocess.run([*args, "--evaluations", "3"], capture_output=True, text=True, cwd=ROOT, env=ENV,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "capacity bound" in r.stdout and "best found" in r.stdout and "after 3 episodes" in r.stdout
    bad = subprocess.run([*args, "--evaluations", "-1"], capture_output=True, text=True, cwd=ROOT, env=ENV,
                         timeout=300)
    assert bad.returncode == 2 and "--evaluations" in bad.stderr
