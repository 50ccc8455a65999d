"""``vbp plan --n-plus-one`` and ``--current`` at 1,000 containers.

The demand is the seeded deployments mix of :mod:`bench_plan` (``--containers`` replicas), on
the five priced host types of that benchmark. Three measurements:

1. an N+1 plan (``vbp.plan(..., n_plus_one=True)``): the plain plan, then spares until every
   host's loss is absorbed; target: within 5% of its proven bound (the plain plan's bound plus
   the cheapest host price, see :mod:`solvers.plan.failover`);
2. N+1 verification of that plan alone (:func:`solvers.plan.failover.verify_n_plus_one`, every host
   lost in turn), and of the plain plan (which stops at its first failure, proven by the exact
   check when first fit fails); target: under 10 s;
3. growth 1.25 on top of the growth-1 plan as the running cluster (``current=``), nothing moved,
   at most 50 moves and no limit: added cost, its proven bound and the gap on what is added
   (target: below 3%).

Run::

    python benchmarks/bench_plan_failover.py                 # about 2-3 minutes on 2 cores
    python benchmarks/bench_plan_failover.py --time-limit 20
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_plan import HOSTS, make_demand  # noqa: E402


def main() -> None:
    """Run the three measurements and print their numbers."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--containers", type=int, default=1000)
    ap.add_argument("--deployments", type=int, default=60)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from packing.io import save_placement
    from solvers.plan.failover import plan_hosts, verify_n_plus_one
    from vbp import plan

    with tempfile.TemporaryDirectory() as tmp:
        demand = make_demand(Path(tmp) / "d.csv", args.containers, args.deployments, args.seed)
        t0 = time.perf_counter()
        res = plan(str(demand), list(HOSTS), n_plus_one=True, time_limit=args.time_limit,
                   threads=args.threads, seed=args.seed)
        s = res.scenarios[0]
        n1 = s.n_plus_one or {}
        print(f"n+1 plan: {args.containers} containers  status {s.status}  hosts {s.hosts}  "
              f"cost {s.cost:.3f}  bound {s.bound:.3f}  gap {100 * (s.gap or 0):.2f}%  "
              f"holds {n1.get('holds')}  spares {n1.get('spares')}  "
              f"extra lower bound {n1.get('extra_bound')}  "
              f"{time.perf_counter() - t0:.1f}s (scenario {s.seconds:.1f}s)")
        assert s.instance is not None and s.placement is not None
        mask = plan_hosts(s.instance, s.placement,
                          [s.instance.host_index[h] for h in n1.get("spares", [])])
        t1 = time.perf_counter()
        v = verify_n_plus_one(s.instance, s.placement, mask)
        print(f"verify n+1: {int(mask.sum())} hosts  holds {v.holds}  checked {v.checked}  "
              f"{time.perf_counter() - t1:.2f}s")
        plain = plan(str(demand), list(HOSTS), time_limit=args.time_limit, threads=args.threads,
                     seed=args.seed).scenarios[0]
        assert plain.placement is not None and plain.instance is not None
        cur = Path(tmp) / "cur.json"
        save_placement(plain.placement, plain.instance, cur)
        print(f"plain plan: cost {plain.cost:.3f} bound {plain.bound:.3f} "
              f"hosts {plain.hosts} ({plain.seconds:.1f}s)")
        t3 = time.perf_counter()
        v = verify_n_plus_one(plain.instance, plain.placement)
        f = v.first_failure
        print(f"verify n+1 of the plain plan: holds {v.holds}  checked {v.checked}  first failure "
              f"{None if f is None else (f.host, f.proof, f.unplaced)}  "
              f"{time.perf_counter() - t3:.2f}s")
        for moves in (0, 50, "all"):
            t2 = time.perf_counter()
            r = plan(str(demand), list(HOSTS), growth=(1.25,), current=str(cur),
                     max_moves=moves, time_limit=args.time_limit, threads=args.threads,
                     seed=args.seed).scenarios[0]
            mv = r.current or {}
            added, bound = mv.get("added_cost") or 0.0, mv.get("added_bound") or 0.0
            print(f"current x1.25 max-moves {moves}: status {r.status}  "
                  f"added cost {added:.3f}  bound {bound:.3f}  gap on what is added "
                  f"{100 * (added - bound) / max(added, 1e-9):.2f}%  (whole plan {100 * (r.gap or 0):.2f}%)  "
                  f"added hosts {mv.get('added_hosts')}  moves used {mv.get('used')}  "
                  f"{r.proofs}  {time.perf_counter() - t2:.1f}s")


if __name__ == "__main__":
    main()
