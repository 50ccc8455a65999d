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
