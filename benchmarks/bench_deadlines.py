"""``vbp solve --time-limit T``: wall time against the limit, per method and instance.

Every run is a separate process (``python -m vbp.cli solve FILE --method M --time-limit T
--json -q``), timed from start to exit, so the numbers include Python's start and the imports
(about 1-3 s, more on a loaded machine). The table gives the limit, the process's wall seconds,
the seconds the solver reports (``seconds`` in the JSON: from the solve's start to its result),
the overrun of each over the limit, the allowed margin ``max(2 s, 3%)`` and the status.

Instances (``--instances``, any of):

* ``hard1d``: a ``uniform`` hard 1-D instance (:func:`packing.generators.hard1d.generate_hard1d`,
  seed 1000; ``auto`` does not settle it within a minute);
* ``decimal``: ten containers with ten-decimal sizes on two resources (the scaling is
  relaxed, so the models verify their claims with further solves);
* ``rules``: the Tianchi cut of ``tests/data/tianchi_small`` (caps, exclusions and
  ``<A, B, k>`` rules);
* ``tianchi``: Tianchi 2018 set B, reduced view, contest machines
  (``../shared/data/alibaba-tianchi-2018``; skipped when absent).

Usage::

    python benchmarks/bench_deadlines.py
    python benchmarks/bench_deadlines.py --limits 5 20 60 --methods auto cpsat colgen
    python benchmarks/bench_deadlines.py --instances tianchi --limits 60
    python benchmarks/bench_deadlines.py --limits 5 20 --tianchi-limits 20 60
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from packing.generators.hard1d import generate_hard1d  # noqa: E402
from packing.io import save_instance  # noqa: E402
from packing.model.instance import App, HostType, Instance  # noqa: E402

TIANCHI = ROOT.parent / "shared" / "data" / "alibaba-tianchi-2018"
"""Tianchi 2018 set B, when the shared data sit beside the repository."""

METHODS = ("auto", "cpsat", "colgen", "arcflow", "pulp")
"""Methods run by default (``tabu`` and the others with ``--methods``)."""


def decimal_instance() -> Instance:
    """Ten containers with ten-decimal sizes (no exact integer scaling within the limits)."""
    return Instance("decimal10", ("cpu", "mem"), (HostType("h", (1.0, 1.0), 10),),
                    (App("a0", (0.5, 0.2499999), 3), App("a1", (0.2500002, 0.2500001), 3),
                     App("a2", (0.2499998, 0.2500001), 2, max_per_host=1),
                     App("a3", (0.2500002, 0.2500002), 1),
                     App("a4", (0.3333334333, 0.5000002), 1)))


def instance_paths(names: list[str], tmp: Path) -> dict[str, str]:
    """The file (or folder) of every named instance that is available."""
    out: dict[str, str] = {}
    for name in names:
        if name == "hard1d":
            path = tmp / "hard1d_uniform_1000.json"
            save_instance(generate_hard1d(1000, kind="uniform"), path)
            out[name] = str(path)
        elif name == "decimal":
            path = tmp / "decimal10.json"
            save_instance(decimal_instance(), path)
            out[name] = str(path)
        elif name == "rules":
            out[name] = str(ROOT / "tests" / "data" / "tianchi_small")
        elif name == "tianchi":
            if TIANCHI.is_dir():
                out[name] = str(TIANCHI)
            else:
                print(f"# {TIANCHI} absent: tianchi skipped")
        else:
            raise SystemExit(f"unknown instance {name!r}")
    return out


def run(path: str, method: str, limit: float) -> tuple[float, float | None, str]:
    """One ``vbp solve`` process: wall seconds, the solver's seconds, the status."""
    args = [sys.executable, "-m", "vbp.cli", "solve", path, "--method", method,
            "--time-limit", f"{limit:g}", "--json", "-q"]
    t0 = time.perf_counter()
    out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, check=False,
                         timeout=limit + 600)
    wall = time.perf_counter() - t0
    try:
        doc = json.loads(out.stdout)
    except json.JSONDecodeError:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        return wall, None, f"error ({last[:60]})"
    return wall, doc.get("seconds"), str(doc.get("status"))


def main(argv: list[str] | None = None) -> None:
    """Run the table (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limits", type=float, nargs="+", default=[5.0, 20.0])
    ap.add_argument("--methods", nargs="+", default=list(METHODS))
    ap.add_argument("--instances", nargs="+", default=["hard1d", "decimal", "rules", "tianchi"])
    ap.add_argument("--tianchi-methods", nargs="+", default=["auto"],
                    help="methods run on the Tianchi data (the exact models do not fit it)")
    ap.add_argument("--tianchi-limits", type=float, nargs="+", default=None,
                    help="limits on the Tianchi data (default: --limits)")
    a = ap.parse_args(argv)
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        paths = instance_paths(a.instances, Path(tmp))
        print(f"{'instance':<9} {'method':<8} {'limit':>6} {'wall':>7} {'solver':>7} "
              f"{'over':>6} {'s.over':>6} {'margin':>6}  status")
        for name, path in paths.items():
            methods = a.tianchi_methods if name == "tianchi" else a.methods
            limits = a.tianchi_limits if name == "tianchi" and a.tianchi_limits else a.limits
            for method in methods:
                for limit in limits:
                    wall, secs, status = run(path, method, limit)
                    margin = max(2.0, 0.03 * limit)
                    s_over = "-" if secs is None else f"{secs - limit:+6.2f}"
                    if secs is not None:
                        worst = max(worst, secs - limit - margin)
                    print(f"{name:<9} {method:<8} {limit:6g} {wall:7.2f} "
                          f"{'-' if secs is None else f'{secs:7.2f}'} {wall - limit:+6.2f} "
                          f"{s_over:>6} {margin:6.2f}  {status}", flush=True)
    print(f"# worst solver overrun beyond the margin: {max(worst, 0.0):.2f} s")


if __name__ == "__main__":
    main()
