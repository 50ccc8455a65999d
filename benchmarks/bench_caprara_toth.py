"""Caprara-Toth 2-D vector packing: how many proven optimal, and agreement with published optima.

Usage::

    python benchmarks/bench_caprara_toth.py [--time-limit 60] [--method auto] [--jobs 1]
        [--max-n 50] [--classes 1,2,3] [--published-only] [--data ../shared/data/caprara-toth-2d]

Prints one line per instance, then: proven optimal (over all and over those with a published
optimum), agreement with ``optimal_values.csv`` (``opt_bins``), mean and max time, every
disagreement, and a Markdown table per class and size (which methods found the solutions and
proved the bounds). A disagreement (a proven optimum that differs from the published one, a bound above
it, or a solution below it) is a bug; the script exits 1 when there is one.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "caprara-toth-2d"


def run_one(path: str, method: str, time_limit: float, workers: int) -> dict[str, object]:
    from packing.loaders import load_any
    from solvers import solve

    inst = load_any(path)
    t0 = time.perf_counter()
    res = solve(inst, method, time_limit=time_limit, workers=workers, objective="hosts")
    return {"instance": Path(path).name, "status": res.status, "objective": res.objective,
            "bound": res.bound, "seconds": time.perf_counter() - t0,
            "proofs": res.proofs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--method", default="auto")
    ap.add_argument("--workers", type=int, default=2, help="solver threads per instance")
    ap.add_argument("--jobs", type=int, default=1, help="instances solved in parallel")
    ap.add_argument("--max-n", type=int, default=None, help="only instances with n <= this")
    ap.add_argument("--classes", default=None, help="comma-separated classes, e.g. 1,6,9")
    ap.add_argument("--limit", type=int, default=None, help="at most this many instances")
    ap.add_argument("--published-only", action="store_true",
                    help="only the instances with a published optimum (160 of 200)")
    args = ap.parse_args(argv)

    pub: dict[str, int] = {}
    with open(args.data / "optimal_values.csv", newline="") as f:
        for row in csv.DictReader(f):
            if row.get("opt_bins"):
                pub[row["instance"]] = int(row["opt_bins"])
    classes = {int(c) for c in args.classes.split(",")} if args.classes else None
    files = []
    for p in sorted((args.data / "instances").glob("*.vbp")):
        m = re.match(r"CL_(\d+)_(\d+)_(\d+)\.vbp", p.name)
        if not m:
            continue
        cls, n = int(m.group(1)), int(m.group(2))
        if (classes and cls not in classes) or (args.max_n and n > args.max_n):
            continue
        if args.published_only and p.name not in pub:
            continue
        files.append(p)
    files = files[: args.limit]
    print(f"{len(files)} instances, method {args.method}, {args.time_limit:g} s each, "
          f"{args.jobs} job(s) x {args.workers} worker(s)")
    rows = []
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as ex:
        futs = [ex.submit(run_one, str(p), args.method, args.time_limit, args.workers)
                for p in files]
        for fut in futs:
            r = fut.result()
            rows.append(r)
            opt = pub.get(str(r["instance"]))
            print(f"{r['instance']:<18} {r['status']:<9} obj {r['objective']!s:>6} "
                  f"bound {r['bound']!s:>6} published {opt if opt is not None else '-':>4} "
                  f"{r['seconds']:7.2f}s  {r['proofs']}", flush=True)
    bad = []
    for r in rows:
        opt = pub.get(str(r["instance"]))
        if opt is None:
            continue
        obj, bound = r["objective"], float(r["bound"])  # type: ignore[arg-type]
        if (r["status"] == "optimal" and obj != opt) or bound > opt + 1e-9 or (
                obj is not None and float(obj) < opt - 1e-9):  # type: ignore[arg-type]
            bad.append(r)
    with_pub = [r for r in rows if str(r["instance"]) in pub]
    opt_pub = [r for r in with_pub if r["status"] == "optimal"]
    within1 = [r for r in with_pub if r["objective"] is not None
               and float(r["objective"]) <= pub[str(r["instance"])] + 1]  # type: ignore[arg-type]
    secs = [float(r["seconds"]) for r in rows]  # type: ignore[arg-type]
    n_opt = sum(r["status"] == "optimal" for r in rows)
    print()
    print(f"proven optimal            {n_opt}/{len(rows)}")
    if with_pub:
        print(f"  with published optimum  {len(opt_pub)}/{len(with_pub)} "
              f"({100 * len(opt_pub) / len(with_pub):.1f}%)")
        print(f"  within one bin          {len(within1)}/{len(with_pub)}")
        agree = sum(r["objective"] == pub[str(r["instance"])] for r in with_pub)
        print(f"  objective = published   {agree}/{len(with_pub)}")
    if secs:
        print(f"time mean {sum(secs) / len(secs):.2f} s, max {max(secs):.2f} s, "
              f"wall {time.perf_counter() - t0:.1f} s")
    print(f"disagreements             {len(bad)}")
    print()
    print("| class_n | proven optimal | mean s | max s | solution by | bound by |")
    print("|---|---|---|---|---|---|")
    groups: dict[tuple[int, int], list[dict[str, object]]] = {}
    for r in rows:
        m = re.match(r"CL_(\d+)_(\d+)_", str(r["instance"]))
        if m:
            groups.setdefault((int(m.group(1)), int(m.group(2))), []).append(r)
    for (cls, n), rs in sorted(groups.items()):
        t = [float(r["seconds"]) for r in rs]  # type: ignore[arg-type]
        sol = sorted({str(r["proofs"].get("solution", "-")) for r in rs})  # type: ignore[attr-defined]
        bnd = sorted({str(r["proofs"].get("bound", "-")) for r in rs})  # type: ignore[attr-defined]
        print(f"| CL_{cls}_{n} | {sum(r['status'] == 'optimal' for r in rs)}/{len(rs)} | "
              f"{sum(t) / len(t):.1f} | {max(t):.1f} | {', '.join(sol)} | {', '.join(bnd)} |")
    for r in bad:
        print(f"  DISAGREE {r['instance']}: {r['status']} obj {r['objective']} bound {r['bound']} "
              f"published {pub[str(r['instance'])]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
