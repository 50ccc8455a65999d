"""Compile the solvers' numba code once, into numba's disk cache, outside any time limit.

``auto`` runs its compiled stages (the tabu search, the exact cover's and stage 1f's pattern
enumerations; the large-scale path's filling, repacking and time-curve balancing, and column
generation's pricing DP) under a short time limit only when they run without compiling
(:mod:`solvers.search.jit`). On a machine where they never ran, compiling costs about 15-25 s,
so the first solves with a limit below ``AutoSettings.search_min_left`` (20 s) go without them.
Warming fills the cache once; every later process loads the code in well under a second::

    python -m solvers.exact.warmup

prints how long each part took and whether numba's disk cache now holds it (exit 1 if not).
:func:`warm_up` is the same from Python.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

from packing.model.instance import App, HostType, Instance, Rule
from solvers.exact import arcflow_patterns, cover
from solvers.search import tabu
from solvers.search.jit import ready


def _ruled() -> Instance:
    """Four containers, a cap and an exclusion: the rule tables are built and used."""
    return Instance("warm", ("s",), (HostType("h", (10.0,), 4),),
                    (App("a", (2.0,), 2, max_per_host=1), App("b", (2.0,), 2)),
                    exclusions=(("a", "b"),))


def _tabu() -> None:
    # emptying the host of the last container overloads another: the search itself runs
    tight = Instance("warm-search", ("s",), (HostType("h", (10.0,), 3),),
                     (App("a", (3.0,), 4), App("b", (4.0,), 2)))
    tabu.tabu_pack(tight, np.array([0, 0, 0, 1, 1, 2]), target=2, time_limit=600, max_iters=50)
    tabu.tabu_pack(_ruled(), np.arange(4), target=1, time_limit=600, max_iters=10)


def _cover() -> None:
    cover.tight_patterns(_ruled(), 2)


def _patterns() -> None:
    import solvers.exact.arcflow as af

    inst = Instance("warm", ("s",), (HostType("b", (10.0,), 3),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate((5.0, 4.0, 3.0, 3.0))))
    g = af.build_graph(inst)
    sol = af.lp_solution(g)
    if sol is None:  # pragma: no cover - the LP of four items always solves
        raise RuntimeError("the arc-flow LP of the warm-up instance did not solve")
    pi, _, best = arcflow_patterns.dual_bound(g, sol[1])
    arcflow_patterns.small_rc_patterns(g, pi, best, 1.0)


def _large() -> None:
    from solvers.search import curves, repack, spread

    # two points of a time curve, day and night containers, a cap: the balancing needs a third
    # host beyond the two it opens (first fit finishes it)
    curve = Instance("warm-curves", ("cpu_t00", "cpu_t01"), (HostType("h", (5.0, 5.0), 6),),
                     (App("day", (4.0, 1.0), 3), App("night", (1.0, 4.0), 3)), (Rule("day", "day", 1),))
    host_of = curves.balance(curve, 2)
    spread.fill(curve)
    repack.repack(curve, host_of, time_limit=600, max_iters=20)


def _large_warm(on_disk: bool = False) -> bool:
    from solvers.search import curves, repack, spread

    return ready(spread._fill_hosts, repack._search, curves._balance, curves._first_fit, on_disk=on_disk)


def _pricing() -> None:
    from solvers.exact.knapsack_jit import knapsack2

    # column generation's compiled DP, as :func:`solvers.exact.pricing.price_dp` calls it
    w = np.array([6, 2, 4], dtype=np.int64)
    knapsack2(w, w[::-1].copy(), np.array([1.0, 1.0, 0.5]), 10, 10)


def _pricing_warm(on_disk: bool = False) -> bool:
    from solvers.exact.knapsack_jit import knapsack2

    return ready(knapsack2, on_disk=on_disk)


PARTS: dict[str, tuple[Callable[[], None], Callable[..., bool]]] = {
    "tabu search": (_tabu, tabu.warm),
    "exact cover": (_cover, cover.warm),
    "stage 1f patterns": (_patterns, arcflow_patterns.warm),
    "large path": (_large, _large_warm),
    "pricing DP": (_pricing, _pricing_warm),
}
"""Part -> (what runs it on a tiny instance, its ``warm(on_disk=)`` check)."""


def warm_up() -> dict[str, tuple[float, bool]]:
    """Run each compiled part once on a tiny instance.

    Returns:
        ``{part: (seconds it took, cached)}``: cached means numba's disk cache now holds the part's
        code for this source and CPU, so a new process runs it without compiling (False when the
        cache is not writable: then only this process has it).
    """
    out: dict[str, tuple[float, bool]] = {}
    for name, (run, warm) in PARTS.items():
        t = time.perf_counter()
        run()
        out[name] = (time.perf_counter() - t, bool(warm(on_disk=True)))
    return out


def main() -> int:
    """Warm every part and print one line each; exit 1 when a part's code is not in the disk cache."""
    out = warm_up()
    for name, (secs, ok) in out.items():
        state = "cached" if ok else "NOT cached (is numba's cache folder writable?)"
        print(f"{name:18s} {secs:6.1f} s  {state}")
    return 0 if all(ok for _, ok in out.values()) else 1


__all__ = ["PARTS", "warm_up"]

if __name__ == "__main__":
    sys.exit(main())
