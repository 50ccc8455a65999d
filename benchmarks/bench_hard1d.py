"""Hard 1-D instances (capacity 1000, 160-200 items, sizes 20-800): auto with and without arc flow.

Instances come from :func:`packing.generators.hard1d.generate_hard1d` with seeds from
``--first-seed`` (default 1000: nothing was tuned on seeds >= 1000). Every result passed the
checker (``solvers.solve`` verifies it) and is compared with the planted optimum where there is
one ("opt" is the proven optimum otherwise). "auto (old)" is ``auto`` with the arc-flow stage
off (``AutoSettings(arcflow=False)``), the behaviour before it existed.

Usage::

    python benchmarks/bench_hard1d.py --count 20 --kinds uniform
    python benchmarks/bench_hard1d.py --count 6 --kinds uniform \
        --runs "auto (old, 30 s)" "auto (old, 60 s)" "auto (60 s)" "arcflow (60 s)"
"""

from __future__ import annotations

import argparse
import time

from packing.generators.hard1d import generate_hard1d
from solvers import AutoSettings, solve

RUNS = {
    "auto (old, 30 s)": ("auto", 30.0, AutoSettings(arcflow=False)),
    "auto (old, 60 s)": ("auto", 60.0, AutoSettings(arcflow=False)),
    "auto (60 s)": ("auto", 60.0, None),
    "arcflow (60 s)": ("arcflow", 60.0, None),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1000)
    ap.add_argument("--kinds", nargs="+", default=["uniform", "perfect", "near"])
    ap.add_argument("--runs", nargs="+", default=["auto (old, 30 s)", "auto (60 s)"],
                    choices=list(RUNS))
    args = ap.parse_args()
    print("| instance | items | opt | " + " | ".join(args.runs) + " |")
    print("|---|---|---|" + "---|" * len(args.runs))
    proven = dict.fromkeys(args.runs, 0)
    total = 0
    for kind in args.kinds:
        for seed in range(args.first_seed, args.first_seed + args.count):
            inst = generate_hard1d(seed, kind=kind)
            planted = inst.meta["planted_optimum"]
            total += 1
            best: float | None = None
            cells = []
            for name in args.runs:
                method, limit, settings = RUNS[name]
                t0 = time.perf_counter()
                res = solve(inst, method, time_limit=limit, settings=settings)
                dt = time.perf_counter() - t0
                ok = res.status == "optimal"
                proven[name] += ok
                if planted is not None:
                    assert res.lower_bound <= planted <= (res.objective or planted)
                    ok = ok and res.objective == planted
                if ok:
                    best = res.objective
                cells.append(f"{res.objective:.0f}/{res.lower_bound:.0f} "
                             f"{'proven' if ok else 'open'} {dt:.1f}s "
                             f"({res.proofs.get('solution')}/{res.proofs.get('bound')})")
            opt = planted if planted is not None else (f"{best:.0f}" if best else "?")
            print(f"| {inst.name} | {inst.n_containers} | {opt} | " + " | ".join(cells) + " |",
                  flush=True)
    print("\nproven optimal: " + ", ".join(f"{k}: {v}/{total}" for k, v in proven.items()))


if __name__ == "__main__":
    main()
