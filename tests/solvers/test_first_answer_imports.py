"""The first answer comes before the solver libraries: ``auto`` imports nothing heavy for it.

First fit and the cheap bounds are all an instance needs when they meet; there ``auto`` must not
load OR-Tools' CP-SAT (and the pandas it imports), numba, networkx or scipy.sparse, whose
imports cost more than the solve. Checked in a new process (``sys.modules``), not by the clock.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys
from packing.model.instance import App, HostType, Instance
from solvers import solve
inst = Instance("easy", ("cpu", "mem"), (HostType("h", (10.0, 10.0), 600),),
                tuple(App(f"a{k}", (5.0, 2.0 + k % 3), 20) for k in range(25)))
first = []
res = solve(inst, time_limit=30, workers=1, callback=lambda p: first.append(p.objective))
heavy = ("ortools.sat.python.cp_model", "numba", "networkx", "scipy.sparse", "pandas", "torch")
print(json.dumps({"status": res.status, "proofs": res.proofs, "first": first[0],
                  "loaded": [m for m in heavy if m in sys.modules]}))
"""


def test_a_first_fit_proof_loads_no_solver_library() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    # 500 containers of 5 cpu: two per host, 250 hosts, the volume bound
    assert got["status"] == "optimal" and got["first"] == 250.0
    assert got["proofs"] == {"solution": "ffd", "bound": "volume"}
    assert got["loaded"] == []


CLI = """
import json, runpy, subprocess, sys
started = []
real = subprocess.Popen.__init__


def counted(self, args, *a, **k):
    started.append(str(args))
    real(self, args, *a, **k)


subprocess.Popen.__init__ = counted
heavy = ("numba", "ortools.sat.python.cp_model", "pandas", "networkx", "scipy", "torch",
         "packing.loaders.k8s", "packing.loaders.snapshot", "vbp.consolidate", "numpy.ma")


def report():
    print(json.dumps({"loaded": [m for m in heavy if m in sys.modules], "children": started}),
          file=sys.stderr)


# no verdict on the clock: the Python search may take its time on a loaded machine
import dataclasses
import solvers.exact.auto as auto
auto.DEFAULT_SETTINGS = dataclasses.replace(auto.DEFAULT_SETTINGS, python_tabu=60.0)
sys.argv = ["vbp", "solve", sys.argv[1], "--workers", "1", "--time-limit", "120", "--json"]
try:
    runpy.run_module("vbp.cli", run_name="__main__")
finally:
    report()
"""


def test_vbp_solve_of_a_small_instance_loads_no_numba_and_starts_no_child() -> None:
    # CL_1_25_1: first fit 7 hosts, the volume bound 6; the tabu search (as Python) reaches 6;
    # nor does reading a .vbp file import the other loaders, nor `vbp` its consolidation
    path = ROOT / "tests" / "data" / "caprara_toth_small" / "instances" / "CL_1_25_1.vbp"
    out = subprocess.run([sys.executable, "-c", CLI, str(path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["status"] == "optimal" and doc["objective"] == 6.0
    assert doc["proofs"] == {"solution": "tabu", "bound": "volume"}
    seen = json.loads(out.stderr.strip().splitlines()[-1])
    assert seen == {"loaded": [], "children": []}
