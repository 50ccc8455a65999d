"""Lower bounds on Tianchi 2018 set B: every bound, its value and its time, per view and fleet.

Settings (``--settings``): the contest machines with every rule in the reduced view (peaks) and
the full view (98 time points), and the uniform 64c128g fleet rounded up with the cross-app rules
only or with every rule. Bounds:

* the cheap bounds of :func:`packing.feasibility.bounds.lower_bounds` (volume, cap, clique, excluded) and
  their time;
* the host-kinds LP of :func:`solvers.bounds.rule_bounds.rule_bound` (rules, caps, exclusions of the
  heaviest clique; certified by weak duality);
* the configuration LP on merged demand classes, rules ignored
  (:func:`solvers.bounds.rule_bounds.class_config_bound`), where the demands are integers (the rounded
  uniform fleet: 144 classes);
* with ``--ffd``: first-fit decreasing with every rule of the setting and with none, as a
  reference placement (the gap is FFD over the best bound).

Usage::

    python benchmarks/bench_tianchi_bounds.py --data /path/to/alibaba-tianchi-2018 --ffd
    python benchmarks/bench_tianchi_bounds.py --settings reduced uniform-cross --lp-time 120
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from packing.feasibility.bounds import lower_bounds
from packing.loaders.tianchi import load_tianchi
from solvers.bounds.rule_bounds import class_config_bound, rule_bound
from solvers.search.greedy import ffd

SETTINGS: dict[str, dict[str, Any]] = {
    "reduced": {"view": "reduced"},
    "full": {"view": "full"},
    "uniform-cross": {"hosts": "64c128g", "rules": "cross", "round_up": True},
    "uniform-all": {"hosts": "64c128g", "rules": "all", "round_up": True},
}
LABEL = {
    "reduced": "contest machines, reduced view, all rules",
    "full": "contest machines, full view, all rules",
    "uniform-cross": "64c128g, rounded up, cross rules",
    "uniform-all": "64c128g, rounded up, all rules",
}
CLASS_CONFIG = ("uniform-cross", "uniform-all")


def _default_data() -> Path:
    env = os.environ.get("VBP_SHARED_DATA")
    root = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"
    return root / "alibaba-tianchi-2018"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=_default_data())
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    ap.add_argument("--lp-time", type=float, default=120.0, help="seconds per LP")
    ap.add_argument("--ffd", action="store_true", help="also run first-fit decreasing")
    args = ap.parse_args()
    head = ["setting", "volume", "cap", "clique", "excluded", "cheap best (s)",
            "kinds LP: certified -> bound (s)", "class config LP (s)"]
    if args.ffd:
        head += ["FFD, rules (s)", "FFD, no rules", "gap FFD / bound"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key in args.settings:
        kw = SETTINGS[key]
        inst = load_tianchi(args.data, **kw)
        t = time.perf_counter()
        lb = lower_bounds(inst)
        t_cheap = time.perf_counter() - t
        rb = rule_bound(inst, time_limit=args.lp_time)
        best = max(lb.best, rb.value)
        cells = [LABEL[key], f"{lb.volume} ({lb.volume_resource})", str(lb.cap),
                 f"{lb.clique}{'' if lb.clique_exact else ' (greedy)'}", str(lb.excluded),
                 f"{lb.best} ({t_cheap:.1f})",
                 f"{rb.certified:.2f} -> {rb.value} ({rb.seconds:.1f}, {rb.explicit_apps} apps, "
                 f"{len(rb.kinds)} kinds, {rb.status})"]
        if key in CLASS_CONFIG:
            cb = class_config_bound(inst, time_limit=args.lp_time)
            best = max(best, cb.value)
            cells.append(f"{cb.lp_bound:.2f} -> {cb.value} ({cb.seconds:.1f}, {cb.classes} "
                         f"classes{'' if cb.converged else ', not converged'})")
        else:
            cells.append("n/a (non-integer demands)")
        if args.ffd:
            t = time.perf_counter()
            g = ffd(inst, "hosts")
            t_ffd = time.perf_counter() - t
            g0 = ffd(inst.replace(rules=(), exclusions=()), "hosts")
            ok = g.placed == inst.n_containers
            cells += [f"{g.objective:.0f} ({t_ffd:.0f})" if ok else "incomplete",
                      f"{g0.objective:.0f}", f"{100 * (g.objective / best - 1):.1f}%" if ok
                      else "-"]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
