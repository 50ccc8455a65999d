"""FGD paper reproduction on openb: unallocated GPU per policy against the published numbers, and time.

Runs the paper's protocol (:mod:`packing.gpu.fgd_protocol`: seeded arrival order, resampled to 130% of the GPU
capacity, no departures) on the 1,213 GPU nodes of openb for every policy and seed, and prints per
policy: the median and mean unallocated GPU % at 90/95/100/130% arrived, the published medians, the
difference at 100%, the median fragmented GPU % of capacity at 100%, and the wall time per seed
(policy decisions, engine, and the per-arrival fragmentation record).

    python benchmarks/bench_gpufrag.py --seeds 10            # seeds 42..51, as the paper
    python benchmarks/bench_gpufrag.py --pods multigpu50 --seeds 3 --json out.json
    python benchmarks/bench_gpufrag.py --train-fgd-plus policies/data/fgd-plus.json --train-seeds 0,1,2
    python benchmarks/bench_gpufrag.py --speed          # one seed, compiled vs numpy path, per policy
    python benchmarks/bench_gpufrag.py --lists all --policies fgd,fgd-pack --seeds 10   # each list, 100%
    python benchmarks/bench_gpufrag.py --train-fgd-pack policies/data/fgd-pack.json \
        --train-seeds 0,1,2,3,4,5,6,7,8,9 --particles 6 --iters 4 --workers 2

With ``--train-fgd-plus FILE`` it tunes FGD+'s weights
(:func:`policies.swarm.gpu_train.train_fgd_plus`) on the training seeds (disjoint from the reported
42..51) and writes them, with this command, to FILE.

Needs the data in ../shared/data/alibaba-gpu-v2023 (or --data).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from packing.gpu.fgd_paper import DEFAULT_POLICIES, LEVELS  # noqa: E402
from packing.gpu.fgd_protocol import build_workload, run_policy  # noqa: E402
from packing.loaders.openb import load_openb  # noqa: E402
from policies.fgd_eval import evaluate  # noqa: E402
from policies.registry import gpu_policy as make_policy  # noqa: E402
from policies.swarm.gpu_train import grid_fgd_plus, train_fgd_pack, train_fgd_plus  # noqa: E402
from solvers.bounds.gpu_bound import evaluate_bound  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "alibaba-gpu-v2023"))
    ap.add_argument("--pods", default="default")
    ap.add_argument("--lists", default=None,
                    help="comma-separated pod lists, or 'all': unallocated GPU %% at 100%% per list and "
                    "policy (median and mean over seeds), the first policy as the baseline")
    ap.add_argument("--policies", default=",".join(DEFAULT_POLICIES))
    ap.add_argument("--speed", action="store_true",
                    help="time one seed per policy on the compiled path and on the numpy path, in one run")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--json", default=None, help="also write every run's levels to this JSON file")
    ap.add_argument("--train-fgd-plus", default=None, metavar="FILE", help="tune FGD+ and write it to FILE")
    ap.add_argument("--train-fgd-pack", default=None, metavar="FILE",
                    help="tune FGD-Pack's (lam, threshold) and write them to FILE")
    ap.add_argument("--train-seeds", default="0,1,2")
    ap.add_argument("--train-until", type=float, default=1.01)
    ap.add_argument("--particles", type=int, default=8)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--grid", default=None, help="instead of PSO, try these weight vectors (';'-separated, "
                    "each ','-separated) and theta = 0")
    args = ap.parse_args()
    if not Path(args.data).is_dir():
        sys.exit(f"no data at {args.data}")
    t0 = time.perf_counter()
    if args.lists:
        lists_table(args)
        return
    if args.speed:
        speed(args)
        return
    inst = load_openb(args.data, nodes="gpu", pods=args.pods)
    if args.train_fgd_plus:
        train(args, inst, t0)
        return
    if args.train_fgd_pack:
        train_pack(args, inst, t0)
        return
    seeds = list(range(args.seed, args.seed + args.seeds))
    names = [n.strip() for n in args.policies.split(",") if n.strip()]

    def progress(name: str, s: int, run: object) -> None:
        print(f"  seed {s} {name:<15} {getattr(run, 'seconds', 0.0):6.1f} s", file=sys.stderr, flush=True)

    results = evaluate(inst, names, seeds, 1.3, progress=progress)
    bound = evaluate_bound(inst, seeds, 1.3)
    print(f"openb {args.pods}: {inst.n_hosts} GPU nodes, {int(inst.host_gpus.sum())} GPUs, seeds "
          f"{seeds[0]}..{seeds[-1]} ({time.perf_counter() - t0:.0f} s in all)")
    print(f"{'policy':<15}" + "".join(f"{'med' + str(lv):>8}" for lv in LEVELS) + f"{'mean100':>8}"
          + f"{'pub100':>8}{'d100':>7}{'frag100':>8}{'s/seed':>8}{'min s':>7}{'max s':>7}")
    dump = []
    bm = bound.at(LEVELS)
    print(f"{'offline bound':<15}"
          + "".join(f"{bm[str(lv)] if bm[str(lv)] is not None else '-':>8}" for lv in LEVELS)
          + f"{'':>8}{'':>8}{'':>7}{'':>8}{np.mean(bound.seconds):8.1f}")
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
        out = {"pods": args.pods, "seeds": seeds, "policies": dump, "bound": {"median": bm, "per_seed_100": [
            float(c[100]) for c in bound.curves]}}
        Path(args.json).write_text(json.dumps(out, indent=1))


def train(args: argparse.Namespace, inst: object, t0: float) -> None:
    """Tune FGD+ (see the module docstring) and write its weights with the command that made them."""
    from policies.gpu import save_plus_weights

    seeds = [int(s) for s in args.train_seeds.split(",")]
    if set(seeds) & set(range(42, 52)):
        sys.exit("training seeds must not overlap the reported seeds 42..51")
    if args.grid:
        cands = [[float(v) for v in c.split(",")] for c in args.grid.split(";") if c.strip()]
        w, cost, hist = grid_fgd_plus(inst, seeds, cands, until=args.train_until,  # type: ignore[arg-type]
                                      workers=args.workers)
        for row in hist:
            print(row, file=sys.stderr)
    else:
        w, cost, hist = train_fgd_plus(inst, seeds, until=args.train_until,  # type: ignore[arg-type]
                                       particles=args.particles, iters=args.iters, workers=args.workers,
                                       checkpoint=args.checkpoint,
                                       log=lambda m: print(m, file=sys.stderr, flush=True))
    cmd = "python benchmarks/bench_gpufrag.py " + shlex.join(sys.argv[1:])
    save_plus_weights(args.train_fgd_plus, w.tolist(), {
        "command": cmd, "pods": args.pods, "seeds": seeds, "until": args.train_until, "level": 100,
        "objective": "mean unallocated GPU % at 100% arrived over the training seeds",
        "search": "grid" if args.grid else "pso", "particles": args.particles, "iters": args.iters,
        "cost": round(cost, 4), "history": hist,
        "seconds": round(time.perf_counter() - t0, 1)})
    print(f"weights {np.round(w, 4).tolist()} cost {cost:.3f} written to {args.train_fgd_plus} "
          f"({time.perf_counter() - t0:.0f} s)")


def speed(args: argparse.Namespace) -> None:
    """Wall time of one seed (up to 130%) per policy: compiled episode vs decision-by-decision numpy."""
    inst = load_openb(args.data, nodes="gpu", pods=args.pods)
    wl = build_workload(inst, args.seed, 1.3)
    names = [n.strip() for n in args.policies.split(",") if n.strip()]
    for n in names:  # warm up (numba cache loads, imports) outside the timings
        run_policy(build_workload(inst, 0, 0.05), make_policy(n, wl.dist, wl))
    tot = [0.0, 0.0]
    print(f"openb {args.pods}, seed {args.seed}, up to 130%: seconds per policy (replay + checker + record)")
    for n in names:
        t = []
        for compiled in (True, False):
            t0 = time.perf_counter()
            run = run_policy(wl, make_policy(n, wl.dist, wl), compiled=compiled)
            t.append(time.perf_counter() - t0)
            u = float(run.levels("unallocated")[100])
        tot = [tot[0] + t[0], tot[1] + t[1]]
        print(f"{n:<15} compiled {t[0]:6.2f}  numpy {t[1]:6.2f}  (unallocated at 100%: {u:.2f})", flush=True)
    print(f"{'all':<15} compiled {tot[0]:6.2f}  numpy {tot[1]:6.2f}")


def lists_table(args: argparse.Namespace) -> None:
    """Unallocated GPU % at 100% arrived per pod list and policy (the protocol up to 130%)."""
    names = [n.strip() for n in args.policies.split(",") if n.strip()]
    lists = ([p.stem.removeprefix("openb_pod_list_") for p in sorted((Path(args.data) / "csv").glob(
        "openb_pod_list_*.csv"))] if args.lists == "all" else [x.strip() for x in args.lists.split(",")])
    seeds = list(range(args.seed, args.seed + args.seeds))
    print(f"{'list':<12}" + "".join(f"{n + ' med':>16}{'mean':>8}" for n in names)
          + f"{'d mean':>8}{'wins':>6}")
    dump = []
    for pods in lists:
        inst = load_openb(args.data, nodes="gpu", pods=pods)
        res = evaluate(inst, names, seeds, 1.3)
        per = [[float(run.levels("unallocated")[100]) for run in r.runs] for r in res]
        med = [float(np.median(v)) for v in per]
        mean = [float(np.mean(v)) for v in per]
        wins = sum(b < a - 1e-9 for a, b in zip(per[0], per[-1], strict=True))
        print(f"{pods:<12}" + "".join(f"{m:16.2f}{a:8.2f}" for m, a in zip(med, mean, strict=True))
              + f"{mean[-1] - mean[0]:+8.2f}{wins:>4}/{len(seeds)}", flush=True)
        dump.append({"pods": pods, "policies": names, "unallocated_100": per})
    if args.json:
        Path(args.json).write_text(json.dumps({"seeds": seeds, "lists": dump}, indent=1))


def train_pack(args: argparse.Namespace, inst: object, t0: float) -> None:
    """Tune FGD-Pack (:func:`policies.swarm.gpu_train.train_fgd_pack`); write lam, threshold, provenance."""
    seeds = [int(s) for s in args.train_seeds.split(",")]
    if set(seeds) & set(range(42, 52)):
        sys.exit("training seeds must not overlap the reported seeds 42..51")
    best, cost, hist = train_fgd_pack(inst, seeds, until=args.train_until,  # type: ignore[arg-type]
                                      particles=args.particles, iters=args.iters, workers=args.workers,
                                      log=lambda m: print(m, file=sys.stderr, flush=True))
    doc = {"kind": "fgd-pack", "lam": round(float(best[0]), 4), "threshold": round(float(best[1]), 4),
           "training": {"command": "python benchmarks/bench_gpufrag.py " + shlex.join(sys.argv[1:]),
                        "pods": args.pods, "seeds": seeds, "until": args.train_until, "level": 100,
                        "objective": "mean unallocated GPU % at 100% arrived over the training seeds",
                        "search": "pso", "particles": args.particles, "iters": args.iters,
                        "cost": round(cost, 4), "history": hist,
                        "seconds": round(time.perf_counter() - t0, 1)}}
    Path(args.train_fgd_pack).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"lam {best[0]:.4f} threshold {best[1]:.4f} cost {cost:.3f} written to {args.train_fgd_pack}")


if __name__ == "__main__":
    main()
