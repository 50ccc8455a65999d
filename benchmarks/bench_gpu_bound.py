"""The offline GPU bound on openb: configuration LP vs aggregated LP vs FGD / FGD-Pack, per seed.

For each seed of a pod list it builds the FGD paper's workload
(:func:`packing.gpu.fgd_protocol.build_workload`),
computes the aggregated LP bound and the configuration LP bound (:class:`solvers.bounds.gpu_bound.GpuBound`,
``method="config"``: column generation with exact CP-SAT pricing, Lagrangian certificate) at the
report levels, replays the policies, and prints per seed and level the unallocated GPU % of each, the
bound's time, iterations and whether the column generation converged (the bound is valid either way).

    python benchmarks/bench_gpu_bound.py --seeds 3 --time-limit 600      # default list, seeds 42..44
    python benchmarks/bench_gpu_bound.py --seeds 1 --levels 130 --time-limit 480   # 130%: not closed
    python benchmarks/bench_gpu_bound.py --pods gpuspec33 --seeds 1 --json out.json
    python benchmarks/bench_gpu_bound.py --seeds 1 --levels 100 --time-limit 60

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

from packing.gpu.fgd_protocol import build_workload, run_policy  # noqa: E402
from packing.loaders.openb import load_openb  # noqa: E402
from policies.registry import gpu_policy as make_policy  # noqa: E402
from solvers.bounds.gpu_bound import GpuBound  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "alibaba-gpu-v2023"))
    ap.add_argument("--pods", default="default")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--levels", default="90,95,100")
    ap.add_argument("--policies", default="fgd,fgd-pack")
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds of column generation per level")
    ap.add_argument("--json", default=None)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    top = max(levels)
    inst = load_openb(Path(args.data) / "csv" / f"openb_pod_list_{args.pods}.csv", nodes="gpu")
    pols = [p for p in args.policies.split(",") if p]
    rows = []
    print(f"openb {args.pods}: levels {levels}, time limit {args.time_limit:.0f} s per level")
    print(f"{'seed':>5} {'level':>6} {'trivial':>8} {'aggr':>7} {'config':>7} "
          + "".join(f"{p:>10}" for p in pols) + f"{'its':>5} {'conv':>5} {'s':>7}")
    for s in range(args.seed, args.seed + args.seeds):
        wl = build_workload(inst, s, max(130, top) / 100.0)
        t0 = time.perf_counter()
        agg = GpuBound(wl.instance, method="aggregate").levels(wl, top)
        t_agg = time.perf_counter() - t0
        t0 = time.perf_counter()
        gb = GpuBound(wl.instance, method="config", config_levels=levels, time_limit=args.time_limit)
        cfg = gb.levels(wl, top, log=print if args.verbose else None)
        t_cfg = time.perf_counter() - t0
        runs = {p: run_policy(wl, make_policy(p, wl.dist, wl)).levels("unallocated", top) for p in pols}
        for lv in levels:
            res = gb.config_results.get(lv)
            triv = (100.0 - 100.0 * res.trivial / wl.capacity) if res is not None else float("nan")
            row = {"seed": s, "level": lv, "trivial": round(triv, 2), "aggregate": float(agg[lv]),
                   "config": float(cfg[lv]), **{p: float(runs[p][lv]) for p in pols},
                   "iterations": None if res is None else res.iterations,
                   "converged": None if res is None else res.converged,
                   "lp": None if res is None else round(100.0 - 100.0 * res.lp / wl.capacity, 4),
                   "seconds": None if res is None else round(res.seconds, 1)}
            rows.append(row)
            print(f"{s:>5} {lv:>6} {triv:>8.2f} {agg[lv]:>7.2f} {cfg[lv]:>7.2f} "
                  + "".join(f"{runs[p][lv]:>10.2f}" for p in pols)
                  + f"{row['iterations'] or 0:>5} {str(row['converged'])[:1]:>5} {row['seconds'] or 0:>7.1f}",
                  flush=True)
        print(f"  seed {s}: configuration bound {t_cfg:.1f} s (aggregated {t_agg:.1f} s)", flush=True)
    print("median over seeds:")
    for lv in levels:
        sel = [r for r in rows if r["level"] == lv]
        print(f"  {lv:>4}%: aggregate {np.median([r['aggregate'] for r in sel]):.2f}  config "
              f"{np.median([r['config'] for r in sel]):.2f}  "
              + "  ".join(f"{p} {np.median([r[p] for r in sel]):.2f}" for p in pols))
    if args.json:
        out = {"pods": args.pods, "time_limit": args.time_limit, "rows": rows}
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
