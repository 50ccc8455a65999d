"""FGD paper reproduction on openb: unallocated GPU per policy against the published numbers, and time.

Runs the paper's protocol (:mod:`vbp.gpufrag`: seeded arrival order, resampled to 130% of the GPU
capacity, no departures) on the 1,213 GPU nodes of openb for every policy and seed, and prints per
policy: the median and mean unallocated GPU % at 90/95/100/130% arrived, the published medians, the
difference at 100%, the median fragmented GPU % of capacity at 100%, and the wall time per seed
(policy decisions, engine, and the per-arrival fragmentation record).

    python benchmarks/bench_gpufrag.py --seeds 10            # seeds 42..51, as the paper
    python benchmarks/bench_gpufrag.py --pods multigpu50 --seeds 3 --json out.json

Needs the data in ../shared/data/alibaba-gpu-v2023 (or --data).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from packing.loaders.openb import load_openb  # noqa: E402
from vbp.gpufrag import DEFAULT_POLICIES, LEVELS, evaluate  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "alibaba-gpu-v2023"))
    ap.add_argument("--pods", default="default")
    ap.add_argument("--policies", default=",".join(DEFAULT_POLICIES))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--json", default=None, help="also write every run's levels to this JSON file")
    args = ap.parse_args()
    if not Path(args.data).is_dir():
        sys.exit(f"no data at {args.data}")
    t0 = time.perf_counter()
    inst = load_openb(args.data, nodes="gpu", pods=args.pods)
    seeds = list(range(args.seed, args.seed + args.seeds))
    names = [n.strip() for n in args.policies.split(",") if n.strip()]

    def progress(name: str, s: int, run: object) -> None:
        print(f"  seed {s} {name:<15} {getattr(run, 'seconds', 0.0):6.1f} s", file=sys.stderr, flush=True)

    results = evaluate(inst, names, seeds, 1.3, progress=progress)
    print(f"openb {args.pods}: {inst.n_hosts} GPU nodes, {int(inst.host_gpus.sum())} GPUs, seeds "
          f"{seeds[0]}..{seeds[-1]} ({time.perf_counter() - t0:.0f} s in all)")
    print(f"{'policy':<15}" + "".join(f"{'med' + str(lv):>8}" for lv in LEVELS) + f"{'mean100':>8}"
          + f"{'pub100':>8}{'d100':>7}{'frag100':>8}{'s/seed':>8}{'min s':>7}{'max s':>7}")
    dump = []
    for r in results:
        med = r.at(LEVELS, 130)
        mean = r.at(LEVELS, 130, stat="mean")
        frag = r.at([100], 130, what="frag")["100"]
        pub = r.published
        d = None if pub is None or med["100"] is None else med["100"] - pub[2]
        secs = [run.seconds for run in r.runs]
        print(f"{r.name:<15}" + "".join(f"{med[str(lv)] if med[str(lv)] is not None else '-':>8}"
                                         for lv in LEVELS)
              + f"{mean['100'] if mean['100'] is not None else '-':>8}"
              + f"{pub[2] if pub else '-':>8}{f'{d:+.2f}' if d is not None else '-':>7}"
              + f"{frag if frag is not None else '-':>8}{np.mean(secs):8.1f}{min(secs):7.1f}{max(secs):7.1f}")
        dump.append({"name": r.name, "published": pub, "seconds": secs,
                     "unallocated_100": [float(run.levels("unallocated")[100]) for run in r.runs],
                     "median": med, "mean": mean})
    if args.json:
        out = {"pods": args.pods, "seeds": seeds, "policies": dump}
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
