"""Read a real trace and compare First-Fit and Best-Fit with the solver on it.

Uses the Alibaba data sets in ``../shared/data`` (see each folder's SOURCE.txt):

* ``tianchi`` — Tianchi 2018 set B, reduced view: 6,000 hosts, 68,224 containers, 9,338 apps and
  anti-affinity rules, with the operator's deployment as the starting snapshot. That snapshot breaks some
  capacities, so it is repaired first (violating containers are re-placed by the policy).
* ``openb`` — Alibaba GPU cluster v2023: 1,523 GPU hosts, 8,152 pods with GPU-card shares. The pods'
  departure times are dropped: every pod arrives and stays, the problem the solver solves.

    python examples/real_trace.py tianchi --policies ff,bf
    python examples/real_trace.py openb --data ../shared/data
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from packing.loaders import load_any
from packing.model.instance import Instance
from packing.sim.evaluation import Scenario, make_executor
from packing.sim.simulator import repair_snapshot, sample_orders, static_view
from policies.runner import evaluate_policies

DATA = Path(os.environ.get("VBP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
FOLDERS = {"tianchi": "alibaba-tianchi-2018", "openb": "alibaba-gpu-v2023"}


def load(trace: str, data: Path) -> Instance | None:
    folder = data / FOLDERS[trace]
    if not folder.is_dir():
        print(f"{folder} is absent: this example needs the Alibaba data sets in {data} "
              "(set VBP_SHARED_DATA or pass --data).", file=sys.stderr)
        return None
    inst = load_any(folder, view="reduced") if trace == "tianchi" else load_any(folder)
    inst, moved = repair_snapshot(static_view(inst))
    if moved:
        print(f"{inst.name}: {moved} containers of the snapshot broke constraints and will be re-placed")
    return inst


def main(trace: str = "tianchi", policies: tuple[str, ...] = ("ff", "bf"), data: str | None = None,
         solve_time: float = 0.0, executor: str = "serial") -> dict[str, int] | None:
    inst = load(trace, Path(data) if data else DATA)
    if inst is None:
        return None
    print(f"{inst.name}: {inst.n_apps} apps, {inst.n_containers} containers, {inst.n_hosts} hosts")
    out: dict[str, int] = {}
    t0 = time.perf_counter()
    with make_executor(executor) as ex:  # the instance goes to each worker once
        records = evaluate_policies(Scenario(inst, tuple(sample_orders(inst, 1))), policies,
                                    executor=ex)
    for k, name in enumerate(policies):
        rec = records[k][0]  # the instance's own order
        print(f"  {name:<6} hosts {rec.hosts:5d}  allocation {100 * rec.allocation:6.2f}%  "
              f"rejected {rec.rejected}  ({rec.seconds:.1f} s, checked)")
        out[name] = rec.hosts
    print(f"  ({len(policies)} runs on {executor} in {time.perf_counter() - t0:.1f} s)")
    if solve_time > 0:
        from solvers import solve

        r = solve(inst, "auto", time_limit=solve_time)
        print(f"  solver: {r.status}, objective {r.objective}, lower bound {r.bound} "
              f"({r.seconds:.1f} s)")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="Policies on a real Alibaba trace.")
    ap.add_argument("trace", nargs="?", choices=sorted(FOLDERS), default="tianchi")
    ap.add_argument("--policies", default="ff,bf")
    ap.add_argument("--data", default=None, help=f"data folder (default {DATA})")
    ap.add_argument("--solve-time", type=float, default=0.0, help="also solve, with this budget (s)")
    ap.add_argument("--executor", choices=["serial", "process", "ray"], default="serial",
                    help="where the runs go (the same numbers on every executor)")
    a = ap.parse_args()
    result = main(a.trace, tuple(a.policies.split(",")), a.data, a.solve_time, a.executor)
    sys.exit(2 if result is None else 0)  # 2: the data it needs is absent (bad input)
