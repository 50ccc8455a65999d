"""Serial, process and Ray executors on a large instance: wall time, and the same numbers on each.

Two workloads go through the evaluation layer (``packing.sim.evaluation`` tasks and records,
``policies.runner``) on every executor:

* ``vbp compare``-style evaluation without the solver: every policy on the same ``--orders`` orders
  (the own order, then seeded shuffles), one checked run each;
* one short swarm training (PSO, ``--particles`` x ``--iters`` x ``--samples`` training orders, then
  the tuned policy and Best-Fit on ``--held-out`` orders).

By default the instance is Alibaba Tianchi 2018 set B, reduced view (68,224 containers, 6,000 hosts;
its snapshot breaks capacities, so it is repaired first, and departures are dropped as in compare),
from ``$VBP_SHARED_DATA`` or ``../shared/data``. Wall times include starting and stopping the
executor (a process pool spawns its workers and sends each the instance once; a local Ray starts).
The script fails if any executor's numbers differ from the serial ones. Run::

    python benchmarks/bench_executors.py                                  # Tianchi, ~5 minutes
    python benchmarks/bench_executors.py sigma --orders 8 --policies ff,bf,wf,dot,random
    python benchmarks/bench_executors.py --executors serial,ray --ray-address ray://head:10001
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from packing.model.instance import Instance
from packing.sim.evaluation import Executor, RunRecord, Scenario, make_executor
from packing.sim.simulator import repair_snapshot, sample_orders, static_view
from policies.runner import evaluate_policies
from policies.swarm.optimizer import PSOSettings
from policies.swarm.train import TrainResult, TrainSettings, train_swarm

DATA = Path(os.environ.get("VBP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
BACKEND = {"serial": "local", "process": "process", "ray": "ray"}


def load(path: str) -> Instance:
    from packing.loaders import load_any

    t0 = time.perf_counter()
    inst, moved = repair_snapshot(static_view(load_any(path)))
    print(f"{inst.name}: {inst.n_apps} apps, {inst.n_containers} containers, {inst.n_hosts} hosts; "
          f"snapshot repaired ({moved} containers re-placed); loaded in {time.perf_counter() - t0:.1f} s")
    return inst


def run_compare(ex: Executor, inst: Instance, policies: list[str], orders: int, seed: int
                ) -> list[RunRecord]:
    scenario = Scenario(inst, tuple(sample_orders(inst, orders, seed)))
    recs = evaluate_policies(scenario, policies, seed, executor=ex)
    return [r for k in sorted(recs) for r in recs[k]]


def run_swarm(ex: Executor, inst: Instance, args: argparse.Namespace) -> TrainResult:
    pso = PSOSettings(n_particles=args.particles, iters=args.iters, seed=args.seed, patience=0)
    ts = TrainSettings(samples=args.samples, held_out=args.held_out, seed=args.seed, init="bf",
                       backend=BACKEND[ex.name], workers=args.workers)  # type: ignore[arg-type]
    return train_swarm(inst, pso, ts, baselines=("bf",), executor=ex)


def swarm_numbers(res: TrainResult) -> tuple[Any, ...]:
    return (tuple(res.policy.weights.tolist()), res.best_cost, res.initial_cost,
            tuple((h.policy, tuple(h.hosts.tolist()), tuple(h.allocation.tolist())) for h in res.held_out))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default=str(DATA / "alibaba-tianchi-2018"),
                    help="instance file, data-set folder or built-in name (default: Tianchi set B)")
    ap.add_argument("--executors", default="serial,process,ray")
    ap.add_argument("--workers", type=int, default=2, help="processes, or CPUs of a local Ray")
    ap.add_argument("--ray-address", default=None, help="a Ray cluster (default: $RAY_ADDRESS or local)")
    ap.add_argument("--policies", default="ff,bf,wf")
    ap.add_argument("--orders", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--particles", type=int, default=4)
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--held-out", type=int, default=2)
    ap.add_argument("--skip-swarm", action="store_true")
    args = ap.parse_args()
    if not Path(args.path).exists() and args.path.startswith(str(DATA)):
        print(f"{args.path} is absent (set VBP_SHARED_DATA, or name an instance)", file=sys.stderr)
        return 2
    kinds = [k.strip() for k in args.executors.split(",") if k.strip()]
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    inst = load(args.path)
    print(f"compare: {len(policies)} policies ({', '.join(policies)}) x {args.orders} orders, seed "
          f"{args.seed}; swarm: PSO {args.particles} particles x {args.iters} iterations x "
          f"{args.samples} orders, then swarm and bf on {args.held_out} held-out orders; "
          f"{args.workers} workers\n")
    rows = []
    ref_cmp: list[tuple[Any, ...]] | None = None
    ref_sw: tuple[Any, ...] | None = None
    ok = True
    for kind in kinds:
        address = args.ray_address if kind == "ray" else None
        t0 = time.perf_counter()
        with make_executor(kind, None if kind == "serial" else args.workers, address) as ex:
            recs = run_compare(ex, inst, policies, args.orders, args.seed)
        t_cmp = time.perf_counter() - t0
        nums = [r.numbers() for r in recs]
        ref_cmp = nums if ref_cmp is None else ref_cmp
        same_cmp = nums == ref_cmp
        t_sw = float("nan")
        same_sw = True
        if not args.skip_swarm:
            t0 = time.perf_counter()
            with make_executor(kind, None if kind == "serial" else args.workers, address) as ex:
                res = run_swarm(ex, inst, args)
            t_sw = time.perf_counter() - t0
            sw = swarm_numbers(res)
            ref_sw = sw if ref_sw is None else ref_sw
            same_sw = sw == ref_sw
        ok &= same_cmp and same_sw
        busy = sum(r.seconds for r in recs)
        rows.append((kind, t_cmp, busy, t_sw, same_cmp and same_sw))
        print(f"{kind:<8} compare {t_cmp:7.1f} s (runs {busy:6.1f} s)   swarm {t_sw:7.1f} s   "
              f"same numbers as {kinds[0]}: {same_cmp and same_sw}", flush=True)
    print("\n| executor | compare wall | sum of run times | swarm training wall | numbers identical |")
    print("|---|---|---|---|---|")
    for kind, t_cmp, busy, t_sw, same in rows:
        print(f"| {kind} | {t_cmp:.1f} s | {busy:.1f} s | {t_sw:.1f} s | {'yes' if same else 'NO'} |")
    if ref_cmp is not None:
        print("\ncompare numbers (policy: hosts per order, allocation per order):")
        by: dict[str, list[tuple[Any, ...]]] = {}
        for n in ref_cmp:
            by.setdefault(n[1], []).append(n)
        for name, ns in by.items():
            print(f"  {name:<8} hosts {[n[4] for n in ns]}  allocation "
                  f"{[round(100 * n[10], 2) for n in ns]}%  rejected {[n[7] for n in ns]}")
    if ref_sw is not None:
        w, best, initial, held = ref_sw
        print(f"swarm: training cost {initial:.3f} -> {best:.3f}; held-out hosts "
              + "; ".join(f"{p} {list(h)} (mean {np.mean(h):.1f})" for p, h, _ in held))
    if not ok:
        print("NUMBERS DIFFER between executors", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
