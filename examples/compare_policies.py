"""Compare online policies with the optimum on an instance: the capacity planner's main question.

Loads an instance (a file, a data-set folder, or the built-in Sigma-like instance), solves it for the
optimum and a proven lower bound, replays the same arrival orders with several policies, and prints hosts
used (mean, min, max), the allocation rate and the excess over the optimum. The runs go through the
evaluation layer (``packing.sim.evaluation``): one record per run, with the numbers of
``packing.feasibility.metrics``,
on the executor you pick (the numbers are the same on every executor).

    python examples/compare_policies.py                    # built-in instance
    python examples/compare_policies.py my_cluster.json --orders 16 --time-limit 60 --executor process
"""

from __future__ import annotations

import argparse
import sys
import time

from packing.errors import VbpError
from packing.io.builtin import builtin_instance
from packing.loaders import load_any
from packing.sim.evaluation import Scenario, make_executor
from packing.sim.simulator import sample_orders
from policies.runner import evaluate_policies
from solvers import solve


def main(path: str | None = None, policies: tuple[str, ...] = ("ff", "bf", "wf", "dot", "k8s-most", "random"),
         orders: int = 8, time_limit: float = 20.0, seed: int = 0, executor: str = "serial"
         ) -> dict[str, float]:
    inst = builtin_instance("sigma") if path is None else load_any(path)
    t0 = time.perf_counter()
    opt = solve(inst, "auto", time_limit=time_limit, seed=seed)
    print(f"{inst.name}: optimum status {opt.status}, objective {opt.objective}, bound {opt.bound}, "
          f"{time.perf_counter() - t0:.1f} s")
    scenario = Scenario(inst, tuple(sample_orders(inst, orders, seed)))  # the same orders for every policy
    with make_executor(executor) as ex:
        records = evaluate_policies(scenario, policies, seed, executor=ex)
    means: dict[str, float] = {}
    for k, name in enumerate(policies):
        recs = records[k]
        hosts = [r.hosts for r in recs]
        mean = sum(hosts) / len(hosts)
        alloc = sum(r.allocation for r in recs) / len(recs)  # Sigma allocation rate, from metrics
        excess = f"{100 * (mean - opt.objective) / opt.objective:+.1f}%" if opt.objective else "-"
        print(f"  {name:<10} hosts mean {mean:6.2f}  min {min(hosts):3d}  max {max(hosts):3d}  "
              f"alloc {100 * alloc:6.2f}%  excess {excess}")
        means[name] = mean
    return means


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="Compare online policies with the optimum.")
    ap.add_argument("path", nargs="?", default=None, help="instance file or data-set folder (default: sigma)")
    ap.add_argument("--orders", type=int, default=8)
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--executor", choices=["serial", "process", "ray"], default="serial")
    a = ap.parse_args()
    try:
        main(a.path, orders=a.orders, time_limit=a.time_limit, seed=a.seed, executor=a.executor)
    except VbpError as e:  # a missing or bad file (2), an infeasible instance (3), ...: one line
        print(f"error: {e}", file=sys.stderr)
        sys.exit(e.exit_status)
