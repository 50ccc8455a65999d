"""The GCN placement policy against Best-Fit, the swarm policy and the optimum, on held-out orders.

Three measurements, each printed as a markdown table:

* ``sigma``: the built-in Sigma-like instance (optimum 15 hosts = the CPU volume bound), on the 8
  orders of ``vbp compare sigma`` and 32 more held-out shuffles (seed 12345); none is a training order
  (training orders come from their own seed stream and skip the compare orders).
* ``family``: held-out members of the Sigma-like family, ``generate_sigma(100 ..)`` (never trained on;
  each has a planted optimum of 15 = its volume bound), own order and 3 shuffles each.
* ``large``: ``generate_sigma_large(310)``: about 5,000 containers, planted optimum 310 hosts (= the
  volume bound); the own order and ``--large-orders - 1`` shuffles.

For each policy: mean hosts, and for the GCN policy the share of Best-Fit's excess over the optimum it
closes, ``(BF - GCN) / (BF - optimum)``, and the wall time of one decision (mean and 95th percentile,
graph building included; torch uses one thread per decision). Run::

    python benchmarks/bench_gcn_placement.py                        # the shipped model
    python benchmarks/bench_gcn_placement.py --model my.pt --only sigma
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from packing.generators.sigma import generate_sigma_large
from packing.io.builtin import builtin_instance
from packing.model.instance import Instance
from packing.sim.simulator import sample_orders, simulate
from policies.registry import get_policy

MODEL = Path(__file__).resolve().parents[1] / "policies" / "data" / "gcn-sigma.pt"


class Timed:
    """Wraps a policy and records the wall time of every ``act``."""

    def __init__(self, policy: Any) -> None:
        self.policy, self.name = policy, policy.name
        self.times: list[float] = []

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Reset the wrapped policy."""
        self.policy.reset(instance, seed)

    def act(self, obs: Any, mask: np.ndarray) -> int:
        """The wrapped policy's host, timed."""
        t = time.perf_counter()
        h = self.policy.act(obs, mask)
        self.times.append(time.perf_counter() - t)
        return int(h)


def table(title: str, runs: list[tuple[Instance, list[np.ndarray], float]], model: str) -> None:
    names = ["bf", "swarm-sigma", "gcn"]
    hosts: dict[str, list[int]] = {n: [] for n in names}
    gcn = Timed(get_policy(model))
    t0 = time.perf_counter()
    for inst, orders, _ in runs:
        for o in orders:
            for n in names:
                pol = gcn if n == "gcn" else get_policy(n)
                hosts[n].append(simulate(inst, pol, o, seed=0).hosts)
    opt = float(np.mean([opt for inst, orders, opt in runs for _ in orders]))
    bf, g = float(np.mean(hosts["bf"])), float(np.mean(hosts["gcn"]))
    ms = 1000 * np.array(gcn.times)
    n_orders = sum(len(o) for _, o, _ in runs)
    print(f"\n### {title}: {len(runs)} instance(s), {n_orders} held-out order(s), "
          f"{runs[0][0].n_containers} containers per instance ({time.perf_counter() - t0:.0f} s)\n")
    print("| policy | hosts mean | min | max | excess over the optimum | share of BF's excess closed |")
    print("|---|---|---|---|---|---|")
    print(f"| optimum | {opt:g} | | | | |")
    for n in names:
        h = np.array(hosts[n])
        closed = (bf - h.mean()) / (bf - opt) if bf > opt else float("nan")
        print(f"| {n} | {h.mean():.2f} | {h.min()} | {h.max()} | {100 * (h.mean() / opt - 1):+.1f}% | "
              f"{closed:.0%} |")
    print(f"\nGCN decision time: mean {ms.mean():.2f} ms, p95 {np.percentile(ms, 95):.2f} ms, max "
          f"{ms.max():.2f} ms over {len(ms)} decisions; GCN closes {(bf - g) / (bf - opt):.0%} of BF's "
          "excess")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(MODEL), help="a gcn-placement .pt file")
    ap.add_argument("--only", choices=["sigma", "family", "large"], default=None)
    ap.add_argument("--family", type=int, default=5, help="held-out family members generate_sigma(100..)")
    ap.add_argument("--large-orders", type=int, default=2)
    args = ap.parse_args()
    if args.only in (None, "sigma"):
        inst = builtin_instance("sigma")
        orders = sample_orders(inst, 8, seed=0) + sample_orders(inst, 33, seed=12345, include_own=False)[:32]
        table("sigma (built-in)", [(inst, orders, 15.0)], args.model)
    if args.only in (None, "family"):
        from vbp.instances import generate_sigma

        runs = []
        for s in range(100, 100 + args.family):
            fam = generate_sigma(s)
            runs.append((fam, sample_orders(fam, 4, seed=0), float(fam.meta["planted_optimum"])))
        table(f"Sigma-like family, held-out seeds 100..{99 + args.family}", runs, args.model)
    if args.only in (None, "large"):
        big = generate_sigma_large(310, seed=0)
        table("sigma-large-310", [(big, sample_orders(big, args.large_orders, seed=0),
                                   float(big.meta["planted_optimum"]))], args.model)


if __name__ == "__main__":
    main()
