"""Rule-aware LNS (:mod:`solvers.exact.rule_lns`) against more ejection chains on Tianchi 2018 set B.

A start is built by ``auto``'s large path (:func:`solvers.solve`, ``--start-time`` seconds:
shaped filling, then ejection chains); then, from that same start and for the same
``--time-limit``, each method of ``--methods`` runs:

* ``rule-lns``: :func:`solvers.exact.rule_lns.improve` with ``--neighbourhood``, ``--workers`` and
  ``--executor`` (one neighbourhood per worker and round);
* ``repack``: :func:`solvers.search.repack.repack` (what ``auto`` does with the rest of its budget).

Every result is checked with :func:`packing.feasibility.checker.check`. The table gives the hosts of the
start and of each method, the cheap bound of ``auto``, and for ``rule-lns`` its rounds,
sub-solves, sub-solves that freed a host, and those proven unable to.

Usage::

    python benchmarks/bench_rule_lns.py DATA --config uniform-cross --time-limit 120
    python benchmarks/bench_rule_lns.py DATA --config contest-reduced --workers 2 --executor process
    python benchmarks/bench_rule_lns.py DATA --start-cache /tmp/start.npy ...  # reuse a start
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tianchi import CONFIGS  # noqa: E402 - the configurations of the Tianchi benchmark

from packing.feasibility.checker import check  # noqa: E402
from packing.loaders.tianchi import load_tianchi  # noqa: E402
from packing.model.instance import Instance, Placement  # noqa: E402
from solvers import solve  # noqa: E402
from solvers.base import cheap_lower_bound, objective_value  # noqa: E402
from solvers.exact.rule_lns import NEIGHBOURHOODS, improve  # noqa: E402
from solvers.search.repack import repack  # noqa: E402

METHODS = ("rule-lns", "repack")


def _start(inst: Instance, seconds: float, seed: int, cache: Path | None) -> np.ndarray:
    """The start packing: ``auto`` for ``seconds`` (or a cached host array of a previous run)."""
    if cache is not None and cache.exists():
        host_of = np.load(cache, allow_pickle=False)
        if host_of.shape == (inst.n_containers,):
            return host_of
    res = solve(inst, "auto", time_limit=seconds, seed=seed)
    assert res.placement is not None, res.status
    host_of = res.placement.host_array(inst)
    if cache is not None:
        np.save(cache, host_of)
    return host_of


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="the Tianchi data-set B folder")
    ap.add_argument("--config", default="uniform-cross",
                    choices=["uniform-cross", "contest-reduced", "contest-full"])
    ap.add_argument("--start-time", type=float, default=60.0, help="seconds of auto for the start")
    ap.add_argument("--start-cache", type=Path, default=None,
                    help="a .npy host array: loaded if it exists, else the start is saved there")
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds of each method")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--executor", default=None, choices=["serial", "process", "ray"])
    ap.add_argument("--neighbourhood", default="rules", choices=list(NEIGHBOURHOODS))
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    inst = load_tianchi(args.folder, **CONFIGS[args.config])  # type: ignore[arg-type]
    lb, lb_name = cheap_lower_bound(inst, "hosts")
    t0 = time.perf_counter()
    start = _start(inst, args.start_time, args.seed, args.start_cache)
    h0 = objective_value(inst, start, "hosts")
    print(f"{args.config}: start {h0:.0f} hosts ({time.perf_counter() - t0:.0f} s), "
          f"bound {lb:.0f} ({lb_name})", flush=True)
    rows = []
    for method in args.methods:
        t0 = time.perf_counter()
        stats: dict[str, float] = {}
        if method == "rule-lns":
            out = improve(inst, start, time_limit=args.time_limit, seed=args.seed,
                          workers=args.workers, executor=args.executor,
                          neighbourhood=args.neighbourhood, stats=stats)
            label = f"rule-lns {args.neighbourhood} x{args.workers} {args.executor or 'auto'}"
        else:
            got = repack(inst, start, time_limit=args.time_limit, target=0, seed=args.seed)
            out = start if got is None else got
            label = "repack"
        wall = time.perf_counter() - t0
        problems = check(inst, Placement.from_arrays(inst, out), require_all=True)
        hosts = objective_value(inst, out, "hosts")
        extra = (f"{stats['rounds']:.0f} rounds, {stats['tasks']:.0f} sub-solves, "
                 f"{stats['freed']:.0f} freed, {stats['proven']:.0f} proven, "
                 f"{stats['timeouts']:.0f} timed out, size {stats['size']:.0f}") if stats else ""
        rows.append((label, hosts, wall, "ok" if not problems else f"{len(problems)} problems",
                     extra))
        print(f"  {label}: {h0:.0f} -> {hosts:.0f} hosts in {wall:.0f} s, checker "
              f"{rows[-1][3]} {extra}", flush=True)
    print()
    print(f"| {args.config} | start | method | hosts | freed | bound | gap | wall s | notes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, hosts, wall, ok, extra in rows:
        print(f"| | {h0:.0f} | {label} | {hosts:.0f} | {h0 - hosts:.0f} | {lb:.0f} | "
              f"{100 * (hosts - lb) / lb:.2f} % | {wall:.0f} | {ok}; {extra} |")


if __name__ == "__main__":
    main()
