"""Simulate one policy on the built-in Sigma-like instance and plot hosts in use and allocation over time.

Replays the instance's own arrival order (deployments one after another) with Best-Fit, prints where it
ends (20 hosts against the optimum's 15) and which apps forced new hosts, and writes two plots: the run's
trajectory, and the per-host utilisation of the final placement.

    python examples/simulate_and_plot.py --policy bf --out runs/sigma_bf
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from packing.errors import VbpError
from packing.feasibility.metrics import host_utilisation
from packing.io.builtin import builtin_instance
from packing.report.plots import plot_compare, plot_trajectory
from packing.sim.evaluation import RunOptions, run
from policies.runner import resolve_policy


def main(policy: str = "bf", out: str = "runs/sigma_example") -> Path:
    inst = builtin_instance("sigma")
    # one run of the evaluation layer: checked placement, metrics, and (on request) trajectory and placement
    rec = run(inst, resolve_policy(policy), options=RunOptions(check=True, trajectory=True, placement=True))
    print(f"{policy}: {rec.hosts} hosts, allocation rate {100 * rec.allocation:.2f}% "
          f"(optimum {inst.meta.get('planted_optimum')} hosts), {rec.rejected} rejected")
    tr = rec.trajectory
    assert tr is not None
    opened = np.flatnonzero(np.diff(np.concatenate([[0], tr.hosts_used])) > 0)
    late = [inst.apps[a].name for a in tr.app[opened[opened >= len(tr.app) // 2]]]
    print(f"hosts opened in the second half of the stream, by app: {', '.join(late) or 'none'}")
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    p1 = plot_trajectory(folder / "trajectory.png", tr.time, tr.hosts_used, tr.allocation, inst.resources,
                         title=f"{inst.name}: {policy}, own order")
    placement = rec.placement(inst)
    used = np.unique(placement.host_array(inst))
    util = host_utilisation(inst, placement)[used[used >= 0]]
    p2 = plot_compare(folder / "hosts.png", [policy], [rec.hosts], [rec.hosts], [rec.hosts],
                      optimum=float(inst.meta.get("planted_optimum", 0)) or None, utilisation=util,
                      resources=inst.resources, title="hosts used vs optimum")
    print(f"plots: {p1}, {p2}")
    return folder


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="Simulate a policy on the built-in instance and plot it.")
    ap.add_argument("--policy", default="bf")
    ap.add_argument("--out", default="runs/sigma_example")
    a = ap.parse_args()
    try:
        main(a.policy, a.out)
    except VbpError as e:  # an unknown policy or a bad policy file (2), ...: one line
        print(f"error: {e}", file=sys.stderr)
        sys.exit(e.exit_status)
