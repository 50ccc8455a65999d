"""Tianchi 2018 data set B: ``auto`` on the uniform fleet and on the contest machines.

Configurations (``--configs``; the data-set options of ``vbp solve``):

* ``uniform-cross``: ``--hosts 64c128g --rules cross --round-up`` (the published 2-D form:
  cross-app rules only, peaks rounded up; target: at most 5,240 hosts, 3 % above the memory
  volume bound 5,087, within 10 minutes);
* ``uniform-all``: ``--hosts 64c128g --round-up`` (every rule, self-rules too);
* ``contest-reduced``: the contest's 6,000 machines, peaks (every rule);
* ``contest-full``: the contest's machines, every one of the 98 time points (200 resources).

Each run goes through :func:`solvers.solve` (the placement passes :func:`packing.feasibility.checker.check`)
and is checked again here. The table gives the hosts found, the bound ``auto`` reports, the gap
and the wall time of the solve (loading excluded) against the time limit.

Usage::

    python benchmarks/bench_tianchi.py DATA_FOLDER --time-limit 600
    python benchmarks/bench_tianchi.py DATA_FOLDER --time-limit 120 --configs contest-full
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from packing.feasibility.checker import check
from packing.loaders.tianchi import load_tianchi
from solvers import solve

CONFIGS: dict[str, dict[str, object]] = {
    "uniform-cross": {"hosts": "64c128g", "rules": "cross", "round_up": True},
    "uniform-all": {"hosts": "64c128g", "rules": "all", "round_up": True},
    "contest-reduced": {},
    "contest-full": {"view": "full"},
}
"""Loader options of each configuration (:func:`packing.loaders.tianchi.load_tianchi`)."""

FLAGS = {
    "uniform-cross": "--hosts 64c128g --rules cross --round-up",
    "uniform-all": "--hosts 64c128g --round-up",
    "contest-reduced": "",
    "contest-full": "--view full",
}
"""The same options as ``vbp solve`` flags."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="the Tianchi data-set B folder")
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    args = ap.parse_args()
    rows = []
    for name in args.configs:
        inst = load_tianchi(args.folder, **CONFIGS[name])  # type: ignore[arg-type]
        t0 = time.perf_counter()
        res = solve(inst, "auto", time_limit=args.time_limit, seed=args.seed)
        took = time.perf_counter() - t0
        assert res.placement is not None and check(inst, res.placement) == []
        gap = (res.objective - res.bound) / res.objective if res.objective else float("nan")
        rows.append((name, inst.n_containers, inst.n_hosts, res.objective, res.bound,
                     gap, took, res.proofs))
        print(f"{name}: {res.objective} hosts, bound {res.bound:g}, {took:.1f} s",
              flush=True)
    print()
    print("| configuration | `vbp solve` options | hosts found | bound | gap | time (limit) "
          "| solution by |")
    print("|---|---|---|---|---|---|---|")
    for name, _n, _h, obj, lb, gap, took, proofs in rows:
        flags = f"{FLAGS[name]} --time-limit {args.time_limit:g}".strip()
        print(f"| {name} | `{flags}` | {obj:,.0f} "
              f"| {lb:,.0f} ({proofs.get('bound', '?')}) | {100 * gap:.2f} % "
              f"| {took:.0f} s ({args.time_limit:g} s) | {proofs.get('solution', '?')} |")


if __name__ == "__main__":
    main()
