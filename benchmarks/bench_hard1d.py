"""Hard 1-D instances (160-200 items, capacities 1000 and 10,000): auto with and without arc flow.

Instances come from :func:`packing.generators.hard1d.generate_hard1d` (every kind of
:data:`packing.generators.hard1d.KINDS`) with seeds from ``--first-seed`` (default 1000: nothing
was tuned on seeds >= 1000), or as ``--instances kind:seed ...``; ``--set hard28`` is the 28 of
``docs/solver-benchmarks.md`` (12 uniform, 2 perfect, 2 near, 4 each of triplets, schwerin and
large), ``--set more20`` the 20 further seeds of its second table (uniform and large, seeds
1012-1021) and ``--set hard48`` both. Every result passed the checker (``solvers.solve``
verifies it) and is compared with the planted optimum where there is one ("opt" is the proven
optimum otherwise). "auto (no arc flow)" is ``auto`` with the arc-flow stages off
(``AutoSettings(arcflow=False)``); "auto (late arc flow)" has them but without the LP bound
first and the early MIP (stages 1a, 1d and 1e of :mod:`solvers.exact.auto`); "auto (in turn)" runs
the arc-flow MIP between the other stages, not beside them
(``AutoSettings(arcflow_beside=False)``); "auto (no patterns)" is ``auto`` without the partition
over small-reduced-cost patterns (stage 1f, ``AutoSettings(patterns=False)``). The last lines
give, per run, the instances proven optimal and the median and largest time.

Usage::

    python benchmarks/bench_hard1d.py --count 20 --kinds uniform
    python benchmarks/bench_hard1d.py --set hard48 --runs "auto (60 s)"
    python benchmarks/bench_hard1d.py --set hard28 --runs "auto (late arc flow, 60 s)" "auto (60 s)"
    python benchmarks/bench_hard1d.py --count 6 --kinds uniform \
        --runs "auto (no arc flow, 30 s)" "auto (no arc flow, 60 s)" "auto (60 s)" "arcflow (60 s)"
"""

from __future__ import annotations

import argparse
import statistics
import time

from packing.generators.hard1d import KINDS, generate_hard1d
from solvers import AutoSettings, solve
from solvers.exact.arcflow import forget_graph

RUNS = {
    "auto (no arc flow, 30 s)": ("auto", 30.0, AutoSettings(arcflow=False)),
    "auto (no arc flow, 60 s)": ("auto", 60.0, AutoSettings(arcflow=False)),
    "auto (late arc flow, 60 s)": ("auto", 60.0, AutoSettings(
        arcflow_lp_min_left=float("inf"), arcflow_early_min_left=float("inf"), arcflow_beside=False)),
    "auto (in turn, 60 s)": ("auto", 60.0, AutoSettings(arcflow_beside=False)),
    "auto (no patterns, 60 s)": ("auto", 60.0, AutoSettings(patterns=False)),
    "auto (60 s)": ("auto", 60.0, None),
    "arcflow (60 s)": ("arcflow", 60.0, None),
}


HARD28 = (("uniform", 12), ("perfect", 2), ("near", 2), ("triplets", 4), ("schwerin", 4), ("large", 4))
"""The benchmark set of ``docs/solver-benchmarks.md``: kind and number of seeds from 1000."""

MORE20 = (("uniform", 10), ("large", 10))
"""The further seeds of ``docs/solver-benchmarks.md``: kind and number of seeds from 1012."""


def hard_set(name: str) -> list[tuple[str, int]]:
    """The instances (kind, seed) of a named set: ``hard28``, ``more20`` or ``hard48`` (both)."""
    out: list[tuple[str, int]] = []
    if name in ("hard28", "hard48"):
        out += [(k, s) for k, n in HARD28 for s in range(1000, 1000 + n)]
    if name in ("more20", "hard48"):
        out += [(k, s) for k, n in MORE20 for s in range(1012, 1012 + n)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1000)
    ap.add_argument("--kinds", nargs="+", default=["uniform", "perfect", "near"], choices=list(KINDS))
    ap.add_argument("--runs", nargs="+", default=["auto (no arc flow, 30 s)", "auto (60 s)"],
                    choices=list(RUNS))
    ap.add_argument("--instances", nargs="+", default=None, help="kind:seed ... (instead of --kinds)")
    ap.add_argument("--set", choices=["hard28", "more20", "hard48"], default=None)
    args = ap.parse_args()
    if args.set is not None:
        args.instances = [f"{k}:{s}" for k, s in hard_set(args.set)]
    todo = ([(k, int(s)) for k, s in (x.split(":") for x in args.instances)] if args.instances
            else [(k, s) for k in args.kinds
                  for s in range(args.first_seed, args.first_seed + args.count)])
    print("| instance | items | opt | " + " | ".join(args.runs) + " |")
    print("|---|---|---|" + "---|" * len(args.runs))
    proven = dict.fromkeys(args.runs, 0)
    times: dict[str, list[float]] = {k: [] for k in args.runs}
    total = 0
    for kind, seed in todo:
        inst = generate_hard1d(seed, kind=kind)
        planted = inst.meta["planted_optimum"]
        total += 1
        best: float | None = None
        cells = []
        for name in args.runs:
            method, limit, settings = RUNS[name]
            forget_graph()  # each run builds its arc-flow graph and LP itself
            t0 = time.perf_counter()
            res = solve(inst, method, time_limit=limit, settings=settings)
            dt = time.perf_counter() - t0
            times[name].append(dt)
            ok = res.status == "optimal"
            proven[name] += ok
            if planted is not None:
                assert res.bound <= planted <= (res.objective or planted)
                ok = ok and res.objective == planted
            if ok:
                best = res.objective
            cells.append(f"{res.objective:.0f}/{res.bound:.0f} "
                         f"{'proven' if ok else 'open'} {dt:.1f}s "
                         f"({res.proofs.get('solution')}/{res.proofs.get('bound')})")
        opt = planted if planted is not None else (f"{best:.0f}" if best else "?")
        print(f"| {inst.name} | {inst.n_containers} | {opt} | " + " | ".join(cells) + " |",
              flush=True)
    print("\nproven optimal: " + ", ".join(f"{k}: {v}/{total}" for k, v in proven.items()))
    for k, ts in times.items():
        print(f"{k}: median {statistics.median(ts):.1f} s, largest {max(ts):.1f} s")


if __name__ == "__main__":
    main()
