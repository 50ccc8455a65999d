"""What validating every :class:`packing.model.instance.Instance` costs.

Every ``Instance`` is checked when it is built (:mod:`packing.model.validation`), including the derived
instances solvers build internally (LNS sub-instances, reductions, views). This measures:

* the Tianchi 2018 loader on the small fixture (``tests/data/tianchi_small``, mean of repeats)
  and, when given, on the full data set (``--tianchi DATA``, reduced and full views);
* the LNS sub-instance builder (:func:`solvers.exact.lns.sub_instance`) on a generated instance with
  ``--containers`` containers: mean time per sub-instance;
* :func:`solvers.exact.lns.improve` from a first-fit start for ``--time-limit`` seconds: rounds (how
  many sub-instances it built) and the hosts it reached, seeded.

Run it on two checkouts to compare (timings depend on the machine's load)::

    python benchmarks/bench_validation.py --tianchi ../shared/data/alibaba-tianchi-2018
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from packing.generators.random import generate_random
from packing.loaders.tianchi import load_tianchi
from packing.model.instance import Placement

ROOT = Path(__file__).resolve().parent.parent


def _mean_seconds(fn, repeats: int) -> float:  # type: ignore[no-untyped-def]
    fn()  # warm-up (imports, caches)
    t0 = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - t0) / repeats


def main() -> None:
    """Print one line per measurement."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tianchi", type=Path, default=None, help="the full Tianchi 2018 folder")
    ap.add_argument("--containers", type=int, default=2000)
    ap.add_argument("--apps", type=int, default=200)
    ap.add_argument("--time-limit", type=float, default=5.0)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    small = ROOT / "tests" / "data" / "tianchi_small"
    t = _mean_seconds(lambda: load_tianchi(small), args.repeats)
    print(f"load_tianchi(tianchi_small): {1000 * t:.1f} ms")
    if args.tianchi is not None:
        for view in ("reduced", "full"):
            t = _mean_seconds(lambda v=view: load_tianchi(args.tianchi, view=v), 1)
            print(f"load_tianchi(full data, view={view}): {t:.2f} s")

    from solvers.exact.lns import improve, sub_instance
    from solvers.search.greedy import ffd

    inst = generate_random(args.apps, args.containers, rule_density=0.01,
                           exclusion_density=0.005, cap_fraction=0.2, seed=args.seed)
    g = ffd(inst, "hosts")
    start = g.placement(inst)
    host_of = start.host_array(inst)
    used = np.unique(host_of[host_of >= 0])
    rng = np.random.default_rng(args.seed)
    picks = [rng.choice(used, size=min(8, len(used)), replace=False) for _ in range(200)]
    it = iter(picks * (args.repeats + 2))
    t = _mean_seconds(lambda: sub_instance(inst, next(it), host_of), args.repeats * 10)
    print(f"sub_instance ({inst.n_apps} apps, {inst.n_containers} containers, "
          f"{inst.n_hosts} hosts): {1000 * t:.2f} ms")

    import solvers.exact.lns as lns

    calls = [0]
    real = lns.sub_instance

    def counted(*a, **k):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return real(*a, **k)

    lns.sub_instance = counted  # type: ignore[assignment]
    try:
        t0 = time.perf_counter()
        best: Placement = improve(inst, start, kind="hosts", time_limit=args.time_limit,
                                  seed=args.seed, workers=1)
        took = time.perf_counter() - t0
    finally:
        lns.sub_instance = real  # type: ignore[assignment]
    hosts = len(np.unique(best.host_array(inst)[best.host_array(inst) >= 0]))
    print(f"lns.improve {args.time_limit:g} s: {calls[0]} sub-instances in {took:.1f} s, "
          f"{len(used)} -> {hosts} hosts")

    import solvers

    spent = [0, 0.0]
    try:
        import packing.model.instance as model
    except ImportError:  # pragma: no cover
        model = None
    real_validate = getattr(model, "validate", None)
    if real_validate is not None:  # a tree where every Instance is checked: time the checks
        def timed(*a, **k):  # type: ignore[no-untyped-def]
            t0 = time.perf_counter()
            try:
                return real_validate(*a, **k)
            finally:
                spent[0] += 1
                spent[1] += time.perf_counter() - t0

        model.validate = timed  # type: ignore[union-attr]
    try:
        t0 = time.perf_counter()
        res = solvers.solve(inst, time_limit=args.time_limit, seed=args.seed, workers=1)
        took = time.perf_counter() - t0
    finally:
        if real_validate is not None:
            model.validate = real_validate  # type: ignore[union-attr]
    checks = (f", {spent[0]} instances checked in {1000 * spent[1]:.0f} ms"
              if real_validate is not None else "")
    print(f"solvers.solve (auto) {args.time_limit:g} s: {res.status} {res.objective} hosts "
          f"(bound {res.bound}) in {took:.1f} s{checks}")


if __name__ == "__main__":
    main()
