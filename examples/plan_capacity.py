"""Plan capacity: how many hosts, which mix of priced hosts with headroom, and what at 1.25x-2x.

Writes a small deployments CSV (or reads yours), then asks ``vbp.plan`` three questions:

1. how many hosts of one shape the services need (no count given: as many as needed);
2. which mix of three priced host types is cheapest with 15% headroom and a per-host reserve
   for system daemons;
3. what that mix becomes when the demand grows 1.25x, 1.5x and 2x, with the proven bound.

Every answer is optimal or carries a proven gap.

    python examples/plan_capacity.py                       # the built-in demand
    python examples/plan_capacity.py my_deployments.csv --time-limit 60 --plot plan.png
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

from packing.errors import VbpError
from vbp import plan

DEMO = """name,replicas,cpu,memory,max_per_host
frontend,6,500m,512Mi,2
checkout,3,1,1Gi,1
catalog,4,250m,768Mi,
search,2,4,16Gi,1
cache,3,2,12Gi,1
worker,8,1500m,3Gi,
"""

HOSTS = ["general=8c32g:price=0.38", "compute=16c32g:price=0.68", "memory=8c64g:price=0.50"]


def main(path: str | None = None, time_limit: float = 20.0, plot: str | None = None
         ) -> dict[str, object]:
    """Answer the three questions; returns the numbers printed."""
    with tempfile.TemporaryDirectory() as tmp:
        demand = Path(path) if path else Path(tmp) / "deployments.csv"
        if path is None:
            demand.write_text(DEMO)

        one = plan(demand, ["std=16c64g"], time_limit=time_limit).scenarios[0]
        print(f"how many 16c64g hosts: {one.hosts} ({one.status}, proven bound {one.bound:g})")

        mix = plan(demand, HOSTS, headroom="15%", reserve="100m,256Mi", time_limit=time_limit)
        best = mix.scenarios[0]
        used = ", ".join(f"{t.hosts} x {t.type}" for t in best.per_type if t.hosts)
        print(f"cheapest mix with 15% headroom: {used}, cost {best.cost:.2f}/h ({best.status}, "
              f"gap {100 * (best.gap or 0):.1f}%)")
        print(f"  planned against: {mix.planned_against}")

        growth = plan(demand, HOSTS, headroom="15%", reserve="100m,256Mi",
                      growth=(1, 1.25, 1.5, 2), time_limit=time_limit)
        for s in growth.scenarios:
            print(f"  at {s.growth:g}x: {s.hosts} hosts, cost {s.cost:.2f}/h, bound "
                  f"{s.bound:.2f} ({s.status})")
        if plot:
            from packing.report.plots import plot_growth

            plot_growth(plot, [s.growth for s in growth.scenarios],
                        [math.nan if s.cost is None else s.cost for s in growth.scenarios],
                        [s.bound for s in growth.scenarios], cost=True)
            print(f"plot: {plot}")
        return {"hosts": one.hosts, "cost": best.cost,
                "growth_costs": [s.cost for s in growth.scenarios]}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default=None, help="a deployments CSV (default: built in)")
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--plot", default=None)
    a = ap.parse_args()
    try:
        main(a.path, a.time_limit, a.plot)
    except VbpError as e:  # a missing or bad file (2), an infeasible demand (3), ...: one line
        print(f"error: {e}", file=sys.stderr)
        sys.exit(e.exit_status)
