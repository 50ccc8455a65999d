"""benchmarks/bench_dag_bounds.py runs on the fixture: the compared run and ``--bound-only``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "bench_dag_bounds.py"
FIXTURE = ROOT / "tests" / "data" / "dag"


def run(*args: str) -> str:
    r = subprocess.run([sys.executable, str(BENCH), str(FIXTURE), *args], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_bound_only_prints_the_bound_of_the_compared_run() -> None:
    both = run("--jobs", "0", "--seeds", "1", "--hosts", "32c64g:1", "--policies", "sjf")
    alone = run("--jobs", "0", "--seeds", "1", "--hosts", "32c64g:1", "--bound-only")
    cap = float(re.search(r"capacity ([0-9.]+) s, best sjf ([0-9.]+) s", both).group(1))
    assert f"capacity bound {cap:.1f} s" in alone
    assert re.search(r"mean CPU time of the capacity bound [0-9.]+ s over 1 samples", alone)
    best = float(re.search(r"best sjf ([0-9.]+) s", both).group(1))
    assert cap <= best + 1e-9


def test_bench_help_names_bound_only() -> None:
    r = subprocess.run([sys.executable, str(BENCH), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--bound-only" in r.stdout


def test_policies_as_vbp_jobs_compare_takes_them_and_their_sums() -> None:
    out = run("--jobs", "0", "--seeds", "1", "--hosts", "32c64g:1", "--policies", "sjf,cp=sjf-cp")
    best = float(re.search(r"best \S+ ([0-9.]+) s", out).group(1))
    sums = re.search(r"sums of mean JCT over the samples: sjf ([0-9.]+) s, cp ([0-9.]+) s", out)
    assert sums is not None, out
    assert min(map(float, sums.groups())) == round(best, 1)  # one sample: the sums are its mean JCTs
