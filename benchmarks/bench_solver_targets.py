"""The solver targets (sigma optimal < 1 s, 5,000 containers optimal or within 0.5%), measured (2 cores).

1. The built-in Sigma instance proven optimal in under 1 s.
2. ``generate_random(300 apps, 5000 containers, binding="cpu", seed=1)`` proven optimal within 30 s.
3. ``generate_random(300 apps, 5000 containers, binding="two", seed=1)``: gap <= 0.5 % within 60 s.

Usage: ``python benchmarks/bench_solver_targets.py [--method auto] [--only 1,2,3] [--seed 1]``.
Exits 1 if a target is missed. The solver modules (and OR-Tools) are imported before the clock
starts, so the times are solve times, not Python start-up; instance generation is not timed.
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", default="auto")
    ap.add_argument("--only", default="1,2,3")
    ap.add_argument("--seed", type=int, default=1, help="generator seed of targets 2 and 3")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    from packing.generators.random import generate_random
    from packing.io.builtin import builtin_instance
    from solvers import available_methods, solve

    available_methods()  # import every solver module (and OR-Tools) before timing

    targets = {
        "1": ("sigma", lambda: builtin_instance("sigma"), 10.0, "fast", 1.0),
        "2": ("5000 containers, cpu binding",
              lambda: generate_random(300, 5000, binding="cpu", seed=args.seed), 30.0,
              "optimal", 0.0),
        "3": ("5000 containers, two binding",
              lambda: generate_random(300, 5000, binding="two", seed=args.seed), 60.0,
              "gap", 0.005),
    }
    missed = 0
    for key in args.only.split(","):
        name, make, limit, goal, gap_goal = targets[key]
        inst = make()
        t0 = time.perf_counter()
        res = solve(inst, args.method, time_limit=limit, workers=args.workers)
        secs = time.perf_counter() - t0
        gap = res.gap if res.gap is not None else float("inf")
        if goal == "fast":  # proven optimal within gap_goal seconds (budget: limit)
            ok = res.status == "optimal" and secs <= gap_goal
        elif goal == "optimal":
            ok = res.status == "optimal" and secs <= limit
        else:
            ok = gap <= gap_goal and secs <= limit + 2
        missed += not ok
        print(f"[{'ok' if ok else 'MISSED'}] {name}: {inst.n_apps} apps, {inst.n_containers} "
              f"containers, {inst.n_hosts} hosts -> {res.status}, objective {res.objective}, "
              f"bound {res.bound}, gap {100 * gap:.2f}%, {secs:.2f} s (limit {limit:g} s), "
              f"proofs {res.proofs}", flush=True)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
