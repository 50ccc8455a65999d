"""EADE-DDPG scenario: tasks deployed per policy against the proven optimum, on held-out streams.

For each seed (default 100..109; RL training uses seeds below 100) it generates the paper's scenario
(``vbp generate multicluster``: 16 clusters x 4 T4 nodes, 220 openb tasks, FIFO), proves the maximum
number of deployable tasks (:func:`vbp.multicluster.optimum`), replays every policy on the stream, and
prints per policy: deployed tasks (mean, std, min, max over seeds), the mean gap to the optimum, the
paper's Table 6 columns (mean and std over clusters of the cluster utilisation ``U_n``, averaged over
seeds), fragmentation ``F`` and load variance (:mod:`packing.metrics`), and seconds per stream.

    python benchmarks/bench_multicluster.py                       # 10 held-out streams
    python benchmarks/bench_multicluster.py --seeds 3 --tasks 400 --json out.json
    python benchmarks/bench_multicluster.py --agent eade.pt       # add a trained EADE-DDPG row
    python benchmarks/bench_multicluster.py --train-eade eade.pt --train-streams 20 --episodes 40 \
        --set gamma=0.5 --set tau_soft=0.02                       # train on seeds 0..19, then report

With ``--train-eade FILE`` it trains EADE-DDPG (:func:`policies.agents.eade.train`, one thread) on the
streams of seeds ``0 .. train-streams - 1`` (disjoint from the reported seeds), saves the checkpoint
to FILE and adds its row; ``--set NAME=VALUE`` overrides a hyper-parameter of
:class:`policies.agents.eade.Config`.

Needs the data in ../shared/data (alibaba-gpu-v2020 and alibaba-gpu-v2023), or ``--data``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from packing.generators.multicluster import generate_multicluster  # noqa: E402
from vbp.multicluster import metrics_row, optimum, policy_row  # noqa: E402

POLICIES = ("mc-expert", "mc-util", "mc-bf", "mc-greedy", "mc-random", "node-bf", "bf", "ff", "gpu-bestfit",
            "fgd")
"""Cluster heuristics and the expert, then vbp's host-level heuristics (same nodes, no cluster step)."""


def _agent_row(inst: Any, path: str) -> dict[str, Any]:
    from policies.agents.eade import EadeAgent

    t0 = time.perf_counter()
    agent = EadeAgent.load(path)
    placement = agent.run_episode(inst)
    return metrics_row(inst, "eade-ddpg", placement, time.perf_counter() - t0)


def _train(args: argparse.Namespace) -> str:
    import torch

    from policies.agents.eade import train

    torch.set_num_threads(1)
    overrides: dict[str, Any] = {}
    for item in args.set:
        k, v = item.split("=", 1)
        overrides[k] = tuple(int(x) for x in v.split(",")) if k == "hidden" else float(v)
        if k in ("embed", "heads", "batch", "buffer"):
            overrides[k] = int(v)
    streams = [generate_multicluster(args.data, args.data, clusters=args.clusters, nodes=args.nodes,
                                     tasks=args.tasks, seed=s) for s in range(args.train_streams)]
    t0 = time.perf_counter()
    agent, _ = train(streams, episodes=args.episodes, seed=0, log=lambda m: print(m, flush=True), **overrides)
    print(f"trained in {time.perf_counter() - t0:.0f} s ({args.episodes} episodes, {len(streams)} streams)")
    agent.save(args.train_eade)
    return str(args.train_eade)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=100)
    ap.add_argument("--clusters", type=int, default=16)
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--tasks", type=int, default=220)
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--agent", default=None, help="a trained EADE-DDPG checkpoint (policies.agents.eade)")
    ap.add_argument("--train-eade", default=None, help="train EADE-DDPG first and save it here")
    ap.add_argument("--train-streams", type=int, default=20)
    ap.add_argument("--episodes", type=int, default=40)
    ap.add_argument("--set", action="append", default=[], help="Config override NAME=VALUE")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    names = [n for n in args.policies.split(",") if n]
    if args.train_eade:
        args.agent = _train(args)
    rows: dict[str, list[dict[str, Any]]] = {n: [] for n in ["optimum", *names]}
    if args.agent:
        rows["eade-ddpg"] = []
    proofs = []
    for s in range(args.first_seed, args.first_seed + args.seeds):
        inst = generate_multicluster(args.data, args.data, clusters=args.clusters, nodes=args.nodes,
                                     tasks=args.tasks, seed=s)
        per = [policy_row(inst, n, seed=s) for n in names]
        if args.agent:
            per.append(_agent_row(inst, args.agent))
        opt = optimum(inst, time_limit=args.time_limit)
        proofs.append((s, opt.deployed, opt.bound, opt.proven, opt.method, opt.seconds))
        opt_row = metrics_row(inst, "optimum", opt.placement, opt.seconds)
        rows["optimum"].append(opt_row | {"opt": opt.deployed})
        for r in per:
            rows[r["policy"]].append(r | {"opt": opt.deployed})
        print(f"seed {s}: offered GPU load {inst.meta['offered_gpu_load']:.0%}, optimum {opt.deployed} "
              f"({'proven' if opt.proven else f'bound {opt.bound}'}, {opt.method}, {opt.seconds:.1f} s); "
              + ", ".join(f"{r['policy']} {r['deployed']}" for r in per), flush=True)
    print(f"\n{args.clusters} clusters x {args.nodes} T4 nodes, {args.tasks} tasks, seeds "
          f"{args.first_seed}..{args.first_seed + args.seeds - 1}")
    head = (f"{'policy':<12} {'deployed':>15} {'min':>4} {'max':>4} {'gap':>6} {'U mean':>7} {'U std':>6} "
            f"{'frag F':>7} {'load var':>9} {'s/stream':>9}")
    print(head)
    print("-" * len(head))
    summary = {}
    for name, rs in rows.items():
        d = np.array([r["deployed"] for r in rs], dtype=float)
        gap = np.array([r["opt"] - r["deployed"] for r in rs], dtype=float)
        row = {"deployed_mean": d.mean(), "deployed_std": d.std(), "min": d.min(), "max": d.max(),
               "gap_mean": gap.mean(), "u_mean": np.mean([r["u_mean"] for r in rs]),
               "u_std": np.mean([r["u_std"] for r in rs]),
               "fragmentation": np.mean([r["fragmentation"] for r in rs]),
               "load_variance": np.mean([r["load_variance"] for r in rs]),
               "seconds": np.mean([r["seconds"] for r in rs])}
        summary[name] = {k: float(v) for k, v in row.items()}
        print(f"{name:<12} {row['deployed_mean']:>8.1f} ± {row['deployed_std']:>4.1f} {row['min']:>4.0f} "
              f"{row['max']:>4.0f} {row['gap_mean']:>6.1f} {row['u_mean']:>7.3f} {row['u_std']:>6.3f} "
              f"{row['fragmentation']:>7.3f} {row['load_variance']:>9.5f} {row['seconds']:>9.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "proofs": proofs, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
