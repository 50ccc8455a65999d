"""EADE-DDPG scenario: Tables 6 and 7 of the paper, every policy against the proven optimum.

Held-out streams are the seeds ``--first-seed ..`` (default 100..109) of ``vbp generate multicluster``
(16 clusters x 4 T4 nodes, 220 openb tasks, FIFO); agents train on seeds ``0 .. --train-streams - 1``
only (or ``--train-stream-list``, e.g. ``0-49,60-99``: never the held-out seeds, nor 50-59, the
validation streams that pick a shipped model). For each held-out stream it proves the maximum
number of deployable tasks (:func:`solvers.exact.max_deployed.optimum`), replays every heuristic and every
trained model, and prints

* Table 7: tasks deployed (mean and std; for agents over training seeds x streams, with the spread
  of the per-seed means), the shortfall (optimum - deployed) and the excess over the optimum
  (shortfall / optimum), and the improvement of the best agent over each baseline
  (``(agent - baseline) / baseline``);
* Table 6: mean and std over clusters of GPU memory, GPU core, CPU and memory utilisation (allocated
  / capacity per cluster at the end of the stream), averaged over streams;
* fragmentation ``F`` and cross-cluster GPU load variance (:mod:`packing.feasibility.metrics`).

    python benchmarks/bench_multicluster.py --train eade-m:60,ddpg:10,td3:10,sac:10,ppo:10,eade:5 \
        --train-seeds 5 --models /tmp/mc-models --json out.json
    python benchmarks/bench_multicluster.py --models /tmp/mc-models      # evaluate existing models

``--train ALGO:EPISODES,...`` trains each algorithm (:func:`policies.agents.rl.train_rl`, one torch
thread) for seeds ``0 .. --train-seeds - 1`` and saves ``MODELS/ALGO-sSEED.pt`` (an existing file is
reused, so runs can be split across processes and resumed); the CPU seconds of each training run are
printed and kept in the JSON. ``--set ALGO.NAME=VALUE`` overrides a hyper-parameter. Every model file
in ``--models`` is evaluated. ``--curve PNG`` plots the EADE-M training curves (placed per episode minus
what ``mc-cardmix`` places on the same training stream, moving mean over 10 episodes).

Needs the data in ../shared/data (alibaba-gpu-v2020 and alibaba-gpu-v2023), or ``--data``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from packing.env.layout import EnvLayout, cluster_loads  # noqa: E402
from packing.feasibility.checker import check  # noqa: E402
from packing.feasibility.metrics import metric_resources  # noqa: E402
from packing.feasibility.predicates import ClusterState  # noqa: E402
from packing.generators.multicluster import generate_multicluster  # noqa: E402
from packing.model.instance import Instance, Placement  # noqa: E402
from policies.multicluster_rows import metrics_row  # noqa: E402
from solvers.exact.max_deployed import optimum  # noqa: E402

POLICIES = ("mc-expert", "mc-util", "mc-bf", "mc-greedy", "mc-random", "node-bf", "bf", "ff", "gpu-bestfit",
            "fgd", "mc-cardmix", "mc-util/mix", "mc-random/mix", "mc-bf/mix", "mc-expert/mix",
            "mc-greedy/mix", "mc-rollout")
"""Cluster heuristics and the expert, then vbp's host-level heuristics (same nodes, no cluster step),
then the card rule ``mc-cardmix`` and the cluster heuristics with the ``node-mix`` inner rule
(``NAME/mix``, the inner rule of EADE-M with ``inner=node-mix``), then ``mc-rollout``
(:mod:`policies.card_rollout`: mc-cardmix with a rollout look-ahead choosing card mode and admission,
the expert EADE-M's ``distil`` option learns from; seeded by the stream seed; ``mc-rollout:K`` rolls out
on ``K`` futures instead of 32)."""


def make_policy(name: str) -> Any:
    """A registered policy, ``mc-cardmix``, or ``CLUSTER-RULE/mix`` (that rule with :class:`NodeCardMix`)."""
    from policies import cluster_heuristics as mc
    from policies.registry import get_policy

    if name == "mc-cardmix":
        return mc.ClusterCardMix()
    if name == "mc-rollout" or name.startswith("mc-rollout:"):  # not registered: it WAITs (drops)
        from policies.card_rollout import ClusterRollout  # without declaring wait_when_full

        return ClusterRollout(k=int(name.partition(":")[2] or 32))  # mc-rollout:K = K futures
    if name.endswith("/mix"):
        base = {"mc-util": mc.ClusterUtilization, "mc-random": mc.ClusterRandom, "mc-bf": mc.ClusterBestFit,
                "mc-expert": mc.ClusterExpert, "mc-greedy": mc.ClusterGreedy}[name[:-4]]
        return base(mc.NodeCardMix())
    return get_policy(name)

TABLE6 = ("gpu_mem", "gpu_core", "cpu", "memory")
"""The paper's Table 6 resources, in its order."""


def resource_utilisation(inst: Instance, placement: Placement) -> dict[str, tuple[float, float]]:
    """Per metric resource: mean and std over clusters of allocated / capacity, e.g. ``{"cpu": (m, s)}``."""
    st = ClusterState.from_placement(inst, placement.host_array(inst), placement.card_lists(inst))
    load, cap = cluster_loads(EnvLayout.of(inst), st)
    u = np.divide(load, cap, out=np.zeros_like(load), where=cap > 0)
    return {r: (float(u[:, j].mean()), float(u[:, j].std())) for j, r in enumerate(metric_resources(inst))}


def _resource_key(name: str) -> str:
    n = name.lower()
    if "gpu" in n and ("mem" in n):
        return "gpu_mem"
    if "gpu" in n:
        return "gpu_core"
    if "cpu" in n:
        return "cpu"
    if "mem" in n:
        return "memory"
    return n


def row_for(inst: Instance, name: str, placement: Placement, seconds: float) -> dict[str, Any]:
    """:func:`policies.multicluster_rows.metrics_row` plus Table 6 columns (placement checked first)."""
    problems = check(inst, placement)
    if problems:
        raise AssertionError(f"{name}: placement fails the checker: {problems[:3]}")
    row = metrics_row(inst, name, placement, seconds)
    for r, (m, s) in resource_utilisation(inst, placement).items():
        row[f"{_resource_key(r)}_mean"], row[f"{_resource_key(r)}_std"] = m, s
    return row


def _train_seeds(args: argparse.Namespace) -> list[int]:
    """Training scenario seeds: ``--train-stream-list`` (``"0-49,60-99"``) or ``0 .. --train-streams - 1``."""
    if not args.train_stream_list:
        return list(range(args.train_streams))
    out: list[int] = []
    for part in args.train_stream_list.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def _train(args: argparse.Namespace, models: Path) -> dict[str, float]:
    from policies.agents.rl import coerce, train_rl

    overrides: dict[str, dict[str, str]] = {}
    for item in args.set:
        key, _, value = item.partition("=")
        algo, _, name = key.partition(".")
        overrides.setdefault(algo, {})[name] = value
    streams = [generate_multicluster(args.data, args.data, clusters=args.clusters, nodes=args.nodes,
                                     tasks=args.tasks, seed=s) for s in _train_seeds(args)]
    cpu: dict[str, float] = {}
    for spec in args.train.split(","):
        algo, _, eps = spec.partition(":")
        seeds = ([int(x) for x in args.train_seed_list.split(",")] if args.train_seed_list
                 else range(args.train_seeds))
        for seed in seeds:
            out = models / f"{algo}-s{seed}.pt"
            if out.exists():
                continue
            c0 = time.process_time()
            agent, curve = train_rl(algo, streams, episodes=int(eps or 20), seed=seed, threads=1,
                                    overrides=coerce(algo, overrides.get(algo, {})))
            cpu[out.name] = time.process_time() - c0
            extra = {"algo": algo, "episodes": int(eps or 20), "seed": seed, "curve": curve,
                     "cpu_seconds": cpu[out.name]}
            if algo in ("eade-m", "eade", "ddpg"):
                agent.save(out, extra)
            else:
                agent.save(out)
            print(f"trained {out.name}: {cpu[out.name]:.0f} s CPU, last placed "
                  f"{[r['deployed'] for r in curve[-5:]]}", flush=True)
    return cpu


def _plot_curves(models: Path, path: str, title: str = "EADE-M training, 16 clusters x 4 T4 nodes",
                 baseline: list[int] | None = None, label: str = "") -> None:
    """Placed per training episode (moving mean of 10 = one pass over 10 streams) of ``eade-m-s*.pt``.

    With ``baseline`` (tasks a fixed policy places on each training stream, episode ``e`` runs stream
    ``e % len(baseline)``) the curve is placed minus that policy's count on the same stream.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch

    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    w = 10
    for f in sorted(models.glob("eade-m-s*.pt")):
        curve = torch.load(f, weights_only=True).get("curve", [])
        placed = np.array([r.get("deployed", r.get("placed")) for r in curve], dtype=float)  # older: placed
        if baseline:
            placed -= np.array([baseline[r["episode"] % len(baseline)] for r in curve], dtype=float)
        if len(placed) >= w:
            ax.plot(np.arange(w - 1, len(placed)), np.convolve(placed, np.ones(w) / w, mode="valid"), lw=1.2,
                    label=f.stem)
    if baseline:
        ax.axhline(0.0, color="k", lw=0.8, ls="--")
    ax.set_xlabel("training episode (one 220-task stream, exploring)")
    ax.set_ylabel(f"tasks placed{' - ' + label if label else ''} (mean of {w})")
    ax.set_title(title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _cardmix_baseline(args: argparse.Namespace) -> list[int]:
    """Tasks ``mc-cardmix`` places on each training stream (seeds ``0 .. --train-streams - 1``)."""
    from packing.sim.simulator import simulate

    out = []
    for s in _train_seeds(args):
        inst = generate_multicluster(args.data, args.data, clusters=args.clusters, nodes=args.nodes,
                                     tasks=args.tasks, seed=s)
        out.append(int(simulate(inst, make_policy("mc-cardmix"), seed=s).placement.n_placed))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=100)
    ap.add_argument("--clusters", type=int, default=16)
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--tasks", type=int, default=220)
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--models", default=None, help="folder of trained models (*.pt) to evaluate")
    ap.add_argument("--train", default=None, help="ALGO:EPISODES,... to train into --models first")
    ap.add_argument("--train-only", action="store_true", help="train, then stop")
    ap.add_argument("--train-seeds", type=int, default=5)
    ap.add_argument("--train-seed-list", default=None, help="train only these seeds, e.g. 3,4")
    ap.add_argument("--train-streams", type=int, default=20)
    ap.add_argument("--train-stream-list", default=None, help="training scenario seeds, e.g. 0-49,60-99")
    ap.add_argument("--set", action="append", default=[], help="ALGO.NAME=VALUE hyper-parameter")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--curve", default=None, help="PNG of the EADE-M training curves")
    ap.add_argument("--json", default=None)
    ap.add_argument("--merge", nargs="+", default=None,
                    help="print the tables of earlier --json files together (a heuristic's rows from the "
                         "first file that has it, a trained algorithm's rows from all); nothing is run")
    args = ap.parse_args()
    if args.merge:
        _merge(args)
        return
    names = [n for n in args.policies.split(",") if n]
    models = Path(args.models) if args.models else None
    train_cpu: dict[str, float] = {}
    if args.train:
        if models is None:
            ap.error("--train needs --models DIR")
        models.mkdir(parents=True, exist_ok=True)
        import torch

        torch.set_num_threads(1)
        train_cpu = _train(args, models)
        if args.train_only:
            return
    agents: list[tuple[str, str, Any]] = []
    if models is not None:
        import torch

        from policies.agents.files import load_agent

        torch.set_num_threads(1)
        for f in sorted(models.glob("*.pt")):
            m = re.match(r"(.+)-s(\d+)$", f.stem)
            agents.append((m.group(1) if m else f.stem, f.stem, load_agent(f)))
    if args.curve and models is not None:
        _plot_curves(models, args.curve, baseline=_cardmix_baseline(args), label="mc-cardmix")
    from packing.sim.simulator import simulate

    rows: dict[str, list[dict[str, Any]]] = {}
    proofs = []
    decision_ms: dict[str, list[float]] = {}
    for s in range(args.first_seed, args.first_seed + args.seeds):
        inst = generate_multicluster(args.data, args.data, clusters=args.clusters, nodes=args.nodes,
                                     tasks=args.tasks, seed=s)
        opt = optimum(inst, time_limit=args.time_limit)
        proofs.append((s, opt.deployed, opt.bound, opt.proven, opt.method, opt.seconds))
        per = [row_for(inst, "optimum", opt.placement, opt.seconds) | {"seed_model": ""}]
        for n in names:
            t0 = time.perf_counter()
            res = simulate(inst, make_policy(n), seed=s)
            per.append(row_for(inst, n, res.placement, time.perf_counter() - t0) | {"seed_model": ""})
        for algo, stem, agent in agents:
            t0 = time.process_time()
            res = simulate(inst, agent, seed=0)
            dt = time.process_time() - t0
            decision_ms.setdefault(algo, []).append(1000 * dt / args.tasks)  # <= one decision per task
            per.append(row_for(inst, algo, res.placement, dt) | {"seed_model": stem})
        for r in per:
            rows.setdefault(r["policy"], []).append(r | {"opt": opt.deployed, "stream": s})
        print(f"seed {s}: optimum {opt.deployed} ({'proven' if opt.proven else f'bound {opt.bound}'}); "
              + ", ".join(f"{r['policy']} {r['deployed']}" for r in per[1:len(names) + 1])
              + (f"; agents {np.mean([r['deployed'] for r in per[len(names) + 1:]]):.1f}" if agents else ""),
              flush=True)
    summary = _report(args, rows, decision_ms, train_cpu)
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "proofs": proofs, "rows": rows,
                                               "train_cpu_seconds": train_cpu}, indent=1))


def _merge(args: argparse.Namespace) -> None:
    rows: dict[str, list[dict[str, Any]]] = {}
    decision_ms: dict[str, list[float]] = {}
    train_cpu: dict[str, float] = {}
    for f in args.merge:
        data = json.loads(Path(f).read_text())
        for name, rs in data["rows"].items():
            learned = "decision_ms" in data["summary"].get(name, {})
            if name not in rows:
                rows[name] = list(rs)
            elif learned:  # more trained models of the same algorithm
                rows[name] += rs
            if learned:
                decision_ms.setdefault(name, []).append(data["summary"][name]["decision_ms"])
        train_cpu.update(data.get("train_cpu_seconds", {}))
    summary = _report(args, rows, decision_ms, train_cpu)
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))


def _report(args: argparse.Namespace, rows: dict[str, list[dict[str, Any]]],
            decision_ms: dict[str, list[float]], train_cpu: dict[str, float]) -> dict[str, dict[str, float]]:
    print(f"\n{args.clusters} clusters x {args.nodes} T4 nodes, {args.tasks} tasks, held-out streams "
          f"{args.first_seed}..{args.first_seed + args.seeds - 1}")
    summary: dict[str, dict[str, float]] = {}
    for name, rs in rows.items():
        d = np.array([r["deployed"] for r in rs], dtype=float)
        by_model: dict[str, list[float]] = {}
        for r in rs:
            by_model.setdefault(r["seed_model"], []).append(r["deployed"])
        seed_means = [float(np.mean(v)) for v in by_model.values()]
        row = {"deployed_mean": d.mean(), "deployed_std": d.std(), "seed_std": float(np.std(seed_means)),
               "n_models": float(len(by_model)),
               "short_mean": float(np.mean([r["opt"] - r["deployed"] for r in rs])),
               "excess_pct": float(np.mean([(r["opt"] - r["deployed"]) / r["opt"] for r in rs]) * 100),
               "u_mean": np.mean([r["u_mean"] for r in rs]), "u_std": np.mean([r["u_std"] for r in rs]),
               "fragmentation": np.mean([r["fragmentation"] for r in rs]),
               "load_variance": np.mean([r["load_variance"] for r in rs]),
               "seconds": np.mean([r["seconds"] for r in rs])}
        for k in TABLE6:
            if f"{k}_mean" in rs[0]:
                row[f"{k}_mean"] = np.mean([r[f"{k}_mean"] for r in rs])
                row[f"{k}_std"] = np.mean([r[f"{k}_std"] for r in rs])
        if name in decision_ms:
            row["decision_ms"] = float(np.mean(decision_ms[name]))
        summary[name] = {k: float(v) for k, v in row.items()}
    print("\nTable 7: tasks deployed (agents: mean over training seeds x streams; +- std; seed-std = spread "
          "of the per-seed means)")
    head = (f"{'policy':<12} {'deployed':>15} {'seed-std':>8} {'short':>6} {'excess':>6} {'frag F':>7} "
            f"{'load var':>9}")
    print(head)
    print("-" * len(head))
    for name, r in summary.items():
        print(f"{name:<12} {r['deployed_mean']:>8.1f} ± {r['deployed_std']:>4.1f} {r['seed_std']:>8.2f} "
              f"{r['short_mean']:>6.1f} {r['excess_pct']:>5.1f}% {r['fragmentation']:>7.3f} "
              f"{r['load_variance']:>9.5f}")
    learned = [n for n in summary if n in decision_ms]
    if learned:
        best = max(learned, key=lambda n: summary[n]["deployed_mean"])
        b = summary[best]["deployed_mean"]
        print(f"\nimprovement of {best} ({b:.1f}) over each baseline: "
              + ", ".join(f"{n} {100 * (b - r['deployed_mean']) / r['deployed_mean']:+.1f}%"
                          for n, r in summary.items() if n not in (best, "optimum")))
        print("decision time (ms, CPU, incl. the node rule): "
              + ", ".join(f"{n} {summary[n]['decision_ms']:.2f}" for n in learned))
    print("\nTable 6: utilisation per cluster at the end of the stream, mean (std) over clusters")
    head = f"{'policy':<12}" + "".join(f"{k:>17}" for k in TABLE6)
    print(head)
    print("-" * len(head))
    for name, r in summary.items():
        print(f"{name:<12}" + "".join(f"{r.get(k + '_mean', 0):>10.3f} ({r.get(k + '_std', 0):.3f})"
                                       for k in TABLE6))
    if train_cpu:
        print("\ntraining CPU seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in train_cpu.items()))
    return summary


if __name__ == "__main__":
    main()
