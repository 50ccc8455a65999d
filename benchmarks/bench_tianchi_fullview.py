"""Tianchi set B, full view (98 time points): hosts, bound and gap, and where the gap comes from.

The full view has 98 CPU and 98 memory time points per container (200 resources with disk, P, M,
PM). The proven bound is the volume at the busiest time point (``cpu_t45`` on the contest
machines). For each fleet (``--fleets``: the contest machines, or a uniform fleet such as
``64c128g``) and each rule set (``--rules``: every rule, or none: anti-affinity caps and ⟨A, B, k⟩
rules dropped) this script solves the full view with ``auto`` under the same time limit and prints
hosts, bound, gap (``(hosts - bound) / hosts``) and seconds, then for the placement:

* the fill of the used hosts at the bound's time point, and at each host's *own* busiest time
  point (its largest relative load over the 200 resources), as quantiles;
* how many hosts peak at the bound's time point, and how spread their peak times are.

Every placement passes :func:`packing.feasibility.checker.check`.

    python benchmarks/bench_tianchi_fullview.py DATA_FOLDER --time-limit 600 \
        [--fleets contest 64c128g] [--rules all none] [--save DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from packing.feasibility.checker import check
from packing.loaders.tianchi import load_tianchi
from packing.model.instance import UNPLACED, Instance
from solvers import solve


def host_loads(inst: Instance, host_of: np.ndarray) -> np.ndarray:
    """Relative load of every used host, shape ``(H_used, R)``."""
    placed = host_of != UNPLACED
    load = np.zeros((inst.n_hosts, inst.n_resources))
    np.add.at(load, host_of[placed], inst.demand[inst.container_app[placed]])
    used = np.unique(host_of[placed])
    cap = inst.host_capacity[used]
    return np.where(cap > 0, load[used] / np.where(cap > 0, cap, 1.0), 0.0)


def describe(inst: Instance, host_of: np.ndarray, t_bound: int) -> dict[str, object]:
    """Fill statistics of a placement (see the module docstring)."""
    rel = host_loads(inst, host_of)
    cpu = rel[:, :98]
    own = rel.max(axis=1)
    peak_t = cpu.argmax(axis=1)
    q = [0.05, 0.25, 0.5, 0.75, 0.95]
    return {
        "hosts": int(rel.shape[0]),
        "fill_at_bound_t": np.quantile(cpu[:, t_bound], q).round(3).tolist(),
        "mean_fill_at_bound_t": round(float(cpu[:, t_bound].mean()), 4),
        "fill_at_own_peak": np.quantile(own, q).round(3).tolist(),
        "hosts_own_peak_ge_0.97": int((own >= 0.97).sum()),
        "hosts_cpu_peak_at_bound_t": int((peak_t == t_bound).sum()),
        "distinct_cpu_peak_times": int(len(np.unique(peak_t))),
        "binding": {str(k): int(v) for k, v in zip(*np.unique(
            np.where(rel.argmax(axis=1) < 98, "cpu", np.where(rel.argmax(axis=1) < 196, "mem", "other")),
            return_counts=True), strict=True)},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="the Tianchi data-set B folder")
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fleets", nargs="+", default=["contest", "64c128g"],
                    help="'contest' (the contest machines) or a uniform fleet <cores>c<GB>g")
    ap.add_argument("--rules", nargs="+", default=["all"], choices=["all", "cross", "none"])
    ap.add_argument("--save", type=Path, default=None, help="Write each placement here (host_of, .npy).")
    args = ap.parse_args()
    for fleet in args.fleets:
        for rules in args.rules:
            inst = load_tianchi(args.folder, view="full", rules=rules,
                                hosts=None if fleet == "contest" else fleet)
            vol = inst.demand[inst.container_app].sum(axis=0)
            t_bound = int(np.argmax(vol[:98]))
            t0 = time.perf_counter()
            res = solve(inst, "auto", time_limit=args.time_limit, seed=args.seed)
            took = time.perf_counter() - t0
            assert res.placement is not None and check(inst, res.placement) == []
            host_of = res.placement.host_array(inst)
            if args.save:
                args.save.mkdir(parents=True, exist_ok=True)
                np.save(args.save / f"full-{fleet}-{rules}.npy", host_of)
            stats = describe(inst, host_of, t_bound)
            hosts, bound = float(res.objective or 0), float(res.bound or 0)
            gap = (hosts - bound) / hosts if hosts else 0.0
            print(f"fleet={fleet} rules={rules}: {hosts:g} hosts, bound {bound:g} "
                  f"({res.proofs.get('bound', '?')}), gap {100 * gap:.2f}%, {took:.0f} s "
                  f"(solution by {res.proofs.get('solution', '?')}); bound time point "
                  f"cpu_t{t_bound:02d}")
            for k, v in stats.items():
                print(f"  {k}: {v}")


if __name__ == "__main__":
    main()
