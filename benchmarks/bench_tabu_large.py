"""Tabu search (sparse tables) against ejection chains on the Tianchi 2018 uniform fleet.

The instance is data set B on one host type with cross-app rules, peaks rounded up
(``load_tianchi(DATA, hosts="64c128g", rules="cross", round_up=True)``: 68,224 containers,
9,338 apps, about 24,000 rules, about 5,100 hosts). From one start (first fit, or the placement
``solvers.solve(..., solver="auto")`` finds in ``SECONDS``), each method
(:func:`solvers.search.tabu.tabu_pack`, :func:`solvers.search.repack.repack`) runs for ``--time-limit``
seconds towards the cheap lower bound (the memory volume bound, 5,087); the table gives the hosts
over time. Every placement passes :func:`packing.feasibility.checker.check`.

Usage::

    python benchmarks/bench_tabu_large.py DATA --time-limit 300 --start ffd
    python benchmarks/bench_tabu_large.py DATA --time-limit 300 --start auto:120
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from packing.feasibility.checker import check
from packing.loaders.tianchi import load_tianchi
from packing.model.instance import Instance, Placement
from solvers import solve
from solvers.base import cheap_lower_bound
from solvers.search.greedy import ffd
from solvers.search.repack import repack
from solvers.search.tabu import tabu_pack

CHECKPOINTS = (30.0, 60.0, 120.0, 300.0, 600.0)
"""Seconds at which the table reports the hosts (those within the time limit)."""


def _hosts(host_of: np.ndarray) -> int:
    return len(np.unique(host_of))


def _start(inst: Instance, spec: str, seed: int) -> tuple[np.ndarray, float]:
    """The start placement (host per container, shape ``(n_containers,)``) and its time."""
    t0 = time.perf_counter()
    if spec == "ffd":
        g = ffd(inst, "hosts")
        if not g.complete:
            raise SystemExit("first fit leaves containers unplaced")
        host_of = np.asarray(g.host_of, dtype=np.int64)
    elif spec.startswith("auto:"):
        res = solve(inst, "auto", time_limit=float(spec[5:]), seed=seed)
        if res.placement is None:
            raise SystemExit(f"auto found no placement ({res.status})")
        host_of = np.asarray(res.placement.host_array(inst), dtype=np.int64)
    else:
        raise SystemExit(f"--start: expected ffd or auto:SECONDS, got {spec!r}")
    return host_of, time.perf_counter() - t0


def _run(method: str, inst: Instance, start: np.ndarray, target: int, limit: float,
         seed: int) -> tuple[int, list[tuple[float, int]], float]:
    """Hosts at the end, the (seconds, hosts) of each improvement, and the wall time."""
    trace: list[tuple[float, int]] = []
    t0 = time.perf_counter()

    def seen(hosts: int) -> None:
        trace.append((time.perf_counter() - t0, hosts))
        print(f"  {method}: {hosts} hosts at {trace[-1][0]:.1f} s", flush=True)

    run: Callable[..., np.ndarray | None] = tabu_pack if method == "tabu" else repack
    out = run(inst, start, target=target, time_limit=limit, seed=seed, on_improve=seen)
    took = time.perf_counter() - t0
    if out is None:
        return _hosts(start), trace, took
    problems = check(inst, Placement.from_arrays(inst, out, None), require_all=True)
    assert problems == [], problems[:3]
    assert _hosts(out) == trace[-1][1]
    return _hosts(out), trace, took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="the Tianchi data-set B folder")
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds per method")
    ap.add_argument("--start", default="ffd", help="ffd or auto:SECONDS")
    ap.add_argument("--methods", nargs="+", default=["tabu", "repack"],
                    choices=["tabu", "repack"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    inst = load_tianchi(args.folder, hosts="64c128g", rules="cross", round_up=True)
    lb, lb_name = cheap_lower_bound(inst, "hosts")
    target = int(np.ceil(lb - 1e-9))
    start, start_took = _start(inst, args.start, args.seed)
    assert check(inst, Placement.from_arrays(inst, start, None), require_all=True) == []
    h0 = _hosts(start)
    print(f"{inst.n_containers} containers, {inst.n_apps} apps, {len(inst.all_rules)} rules; "
          f"start {args.start}: {h0} hosts in {start_took:.0f} s; bound {target} ({lb_name})",
          flush=True)
    marks = [c for c in CHECKPOINTS if c < args.time_limit] + [args.time_limit]
    rows = []
    for method in args.methods:
        end, trace, took = _run(method, inst, start, target, args.time_limit, args.seed)
        at = [min([h0] + [h for s, h in trace if s <= m]) for m in marks]
        rows.append((method, end, at, took))
    print()
    print(f"Start {args.start} ({h0:,} hosts), bound {target:,}, seed {args.seed}.")
    print()
    print("| method | " + " | ".join(f"hosts at {m:g} s" for m in marks)
          + " | freed | freed per minute |")
    print("|---|" + "---|" * len(marks) + "---|---|")
    for method, end, at, took in rows:
        print(f"| {method} | " + " | ".join(f"{h:,}" for h in at)
              + f" | {h0 - end} | {(h0 - end) / (took / 60):.2f} |")


if __name__ == "__main__":
    main()
