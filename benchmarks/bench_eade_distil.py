"""EADE-M ``distil`` (item 12 of :mod:`policies.agents.eade_masked`): train seeds, score on streams.

Trains the distilled agent for several training seeds on training scenario seeds (``--train``, e.g.
``0-49,60-99``; never the validation 50-59 or held-out 100-109 ones), scores every model and the
baselines ``mc-cardmix`` and ``mc-rollout`` on the evaluation streams (``--eval``, default validation
50-59), and prints per seed the mean tasks deployed, wins/losses per stream against both baselines,
the CPU seconds of training and the mean time of one decision.

    python benchmarks/bench_eade_distil.py --models DIR --seeds 0,1,2,3,4 --train 0-49,60-99 \
        --set rollout_k=32 --episodes 90 --eval 50-59 --json out.json

Models already in ``DIR`` (``eade-m-sSEED.pt``) are reused, so runs can be split and resumed.
Needs ../shared/data (or ``--data``) to generate the streams.
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
from packing.model.instance import Instance  # noqa: E402
from packing.sim.simulator import simulate  # noqa: E402

HELD_OUT = range(100, 110)
VALIDATION = range(50, 60)
BASE = dict(lambda_expert="0.1", card_features="true", mix_inner="true", card_expert="true", distil="true")
"""The ``--set`` values of the shipped model's training command (items 6, 7 and 12)."""


def seed_list(text: str) -> list[int]:
    """``"0-9,20"`` -> ``[0, 1, ..., 9, 20]``."""
    out: list[int] = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def streams(data: str, seeds: list[int]) -> list[Instance]:
    """The default multi-cluster scenario (16 clusters x 4 T4 nodes, 220 tasks) for ``seeds``."""
    return [generate_multicluster(data, data, clusters=16, nodes=4, tasks=220, seed=s) for s in seeds]


def placed(inst: Instance, policy: Any, seed: int) -> tuple[int, float]:
    """Tasks placed and seconds per decision."""
    t0 = time.perf_counter()
    res = simulate(inst, policy, seed=seed, record=False, compiled=False)
    return int(res.placement.n_placed), (time.perf_counter() - t0) / inst.n_containers


def wins(n: np.ndarray, ref: np.ndarray) -> str:
    """``"+W =T -L"``: streams where ``n`` is above, equal to, below ``ref`` (both shape ``(S,)``)."""
    return f"+{int((n > ref).sum())} ={int((n == ref).sum())} -{int((n < ref).sum())}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--models", required=True)
    ap.add_argument("--seeds", default="0,1,2,3,4", help="training seeds")
    ap.add_argument("--train", default="0-9", help="training scenario seeds, e.g. 0-49,60-99")
    ap.add_argument("--episodes", type=int, default=30)
    ap.add_argument("--set", action="append", default=[], help="NAME=VALUE config override")
    ap.add_argument("--eval", default="50-59", help="evaluation scenario seeds")
    ap.add_argument("--baselines", default=None, help="JSON cache of the baselines' counts")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    import torch

    from policies.agents import eade_masked_train as em
    from policies.agents.files import load_agent, read_agent_file
    from policies.agents.rl import coerce
    from policies.card_rollout import ClusterRollout
    from policies.cluster_heuristics import ClusterCardMix

    torch.set_num_threads(1)
    train_seeds, eval_seeds = seed_list(args.train), seed_list(args.eval)
    if set(train_seeds) & (set(HELD_OUT) | set(VALIDATION)):
        ap.error("training scenario seeds must avoid validation 50-59 and held-out 100-109")
    models = Path(args.models)
    models.mkdir(parents=True, exist_ok=True)
    overrides = coerce("eade-m", {**BASE, **dict(s.split("=", 1) for s in args.set)})
    cpu: dict[int, float] = {}
    train = None
    for seed in seed_list(args.seeds):
        out = models / f"eade-m-s{seed}.pt"
        if out.exists():
            continue
        train = train or streams(args.data, train_seeds)
        c0 = time.process_time()
        agent, curve = em.train(train, episodes=args.episodes, seed=seed, **overrides)
        cpu[seed] = time.process_time() - c0
        agent.save(out, {"algo": "eade-m", "episodes": args.episodes, "seed": seed, "curve": curve,
                         "cpu_seconds": cpu[seed], "train_streams": args.train})
        print(f"trained {out.name}: {cpu[seed]:.0f} s CPU; train_deployed "
              f"{[r.get('train_deployed') for r in curve if 'train_deployed' in r]}", flush=True)
    evals = streams(args.data, eval_seeds)
    cache = Path(args.baselines) if args.baselines else None
    base: dict[str, dict[str, int]] = json.loads(cache.read_text()) if cache and cache.exists() else {}
    for name, make in (("mc-cardmix", ClusterCardMix), ("mc-rollout", ClusterRollout)):
        got = base.setdefault(name, {})
        for s, inst in zip(eval_seeds, evals, strict=True):
            if str(s) not in got:
                got[str(s)] = placed(inst, make(), s)[0]
    if cache:
        cache.write_text(json.dumps(base, indent=1))
    cm = np.array([base["mc-cardmix"][str(s)] for s in eval_seeds])
    ro = np.array([base["mc-rollout"][str(s)] for s in eval_seeds])
    print(f"streams {args.eval}: mc-cardmix {cm.mean():.1f}, mc-rollout {ro.mean():.1f}")
    result: dict[str, Any] = {"eval": eval_seeds, "mc-cardmix": cm.tolist(), "mc-rollout": ro.tolist(),
                              "models": {}}
    means = []
    per_model: list[np.ndarray] = []
    for f in sorted(models.glob("eade-m-s*.pt")):
        agent = load_agent(f)
        got = [placed(inst, agent, 0) for inst in evals]
        n = np.array([g[0] for g in got])
        ms = 1000 * float(np.mean([g[1] for g in got]))
        means.append(float(n.mean()))
        per_model.append(n)
        sec = read_agent_file(f).get("cpu_seconds")
        print(f"{f.stem}: {n.mean():.1f} (vs mc-cardmix {wins(n, cm)}; vs mc-rollout {wins(n, ro)}); "
              f"{ms:.2f} ms/decision; training {sec or 0:.0f} s CPU; per stream {n.tolist()}", flush=True)
        result["models"][f.stem] = {"deployed": n.tolist(), "ms": ms, "cpu_seconds": sec}
    if means:
        avg = np.mean(per_model, axis=0)
        print(f"mean over seeds {np.mean(means):.2f} +- {np.std(means):.2f} (min {min(means):.1f}, max "
              f"{max(means):.1f}); per stream (seed mean) vs mc-cardmix {wins(avg, cm)}, vs mc-rollout "
              f"{wins(avg, ro)}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
