"""Swarm-tuned scoring policy against Best-Fit and the optimum, on held-out request orders.

Reproduces the SwarmRL comparison of the Alibaba Sigma article on two instances:

* ``sigma``: the built-in 30-app Sigma-like instance (optimum 15 hosts, solved here);
* ``large``: ``generate_sigma_large(310)``, about 5,000 containers on a planted optimum of 310 hosts.

For each it trains a swarm policy (pyswarms GlobalBestPSO, seeded) on training orders, then prints one
markdown row per policy on *held-out* orders (never used in training): hosts mean, min, max, range and
the bottleneck allocation rate, plus the training time. Run::

    python benchmarks/bench_swarm.py                 # both instances, default budgets
    python benchmarks/bench_swarm.py --only sigma    # just the small one (about a minute)
    python benchmarks/bench_swarm.py --backend ray --ray-address ray://head:10001   # on a Ray cluster

Every run goes through the evaluation layer (``packing.sim.evaluation``: run tasks and records, the
numbers of ``packing.feasibility.metrics``) on the executor of ``--backend``; the numbers do not depend on it.
"""

from __future__ import annotations

import argparse
import time

from packing.generators.sigma import generate_sigma_large
from packing.io.builtin import builtin_instance
from packing.model.instance import Instance
from policies.swarm.optimizer import PSOSettings
from policies.swarm.train import TrainSettings, train_swarm


def run(name: str, inst: Instance, optimum: float, allocation_opt: float, pso: PSOSettings,
        ts: TrainSettings) -> None:
    t0 = time.perf_counter()
    res = train_swarm(inst, pso, ts, baselines=("bf", "ff"))
    print(f"\n### {name}: {inst.n_apps} apps, {inst.n_containers} containers; PSO {pso.n_particles} "
          f"particles x {len(res.history)} iterations, {ts.samples} training orders, "
          f"{ts.held_out} held-out orders, seed {ts.seed}; training {res.seconds:.0f} s "
          f"(total {time.perf_counter() - t0:.0f} s)\n")
    print("| policy | hosts mean | min | max | range | allocation | vs BF |")
    print("|---|---|---|---|---|---|---|")
    print(f"| optimum | {optimum:g} | | | | {allocation_opt:.2%} | |")
    bf = next(h for h in res.held_out if h.policy == "bf").hosts.mean()
    for h in res.held_out:
        d = h.to_dict()
        print(f"| {d['policy']} | {d['hosts_mean']:.2f} | {d['hosts_min']} | {d['hosts_max']} | "
              f"{d['hosts_range']} | {d['allocation_mean']:.2%} | "
              f"{100 * (d['hosts_mean'] / bf - 1):+.2f}% |")
    w = {f: round(float(x), 2) for f, x in zip(res.policy.to_dict()["features"], res.policy.weights,
                                              strict=True) if x}
    print(f"\ntuned weights: {w}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=["sigma", "large"], default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", choices=["local", "process", "ray"], default="process",
                    help="where candidates are evaluated (the same numbers on every backend)")
    ap.add_argument("--workers", type=int, default=2, help="processes, or CPUs of a local Ray")
    ap.add_argument("--ray-address", default=None, help="a Ray cluster (default: $RAY_ADDRESS or local)")
    args = ap.parse_args()
    backend = {"backend": args.backend, "workers": args.workers, "address": args.ray_address}
    if args.only in (None, "sigma"):
        from solvers import solve

        inst = builtin_instance("sigma")
        opt = solve(inst, time_limit=30, seed=args.seed)
        cores = float((inst.demand[:, 0] * inst.counts).sum())
        run("sigma", inst, float(opt.objective or 0), cores / (96 * (opt.objective or 1)),
            PSOSettings(n_particles=24, iters=40, seed=args.seed, patience=0),
            TrainSettings(samples=16, held_out=20, seed=args.seed, **backend))
    if args.only in (None, "large"):
        inst = generate_sigma_large(310, seed=args.seed)
        run("sigma-large-310", inst, float(inst.meta["planted_optimum"]), 1.0,
            PSOSettings(n_particles=12, iters=15, seed=args.seed, patience=5),
            TrainSettings(samples=10, held_out=20, seed=args.seed, **backend))


if __name__ == "__main__":
    main()
