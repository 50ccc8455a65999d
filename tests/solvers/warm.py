"""Compile the solvers' numba code outside any solver time limit.

The tabu search takes about 15 s to compile on a machine without numba's cache (a fresh clone),
40 s on a loaded one; the large-scale path and the pricing DP a few seconds more. A time limit
in a test measures the search, not the compiler: the suite fills numba's disk cache once before
any test runs (:func:`warm_compiled`, from ``tests/conftest.py``), and tests that run the tabu
search under a time limit call :func:`warm_search` too (it also loads the code in their process).
"""

from __future__ import annotations

import functools

from solvers.exact.warmup import warm_up
from solvers.search import tabu


@functools.cache
def warm_search() -> bool:
    """Run the tabu search and the pattern enumerations once on tiny instances."""
    warm_up()
    assert tabu.warm()
    return True


def _compiled() -> tuple[object, ...]:
    """The numba functions a solve may compile on its first call: ``auto``'s stages."""
    from solvers.exact import arcflow_patterns, cover, pricing
    from solvers.search import curves, repack, spread

    return (tabu._search, tabu._drop, cover._enumerate, arcflow_patterns._enumerate, spread._fill_hosts,
            repack._search, curves._balance, curves._first_fit, pricing._knapsack2)


def warm_compiled() -> bool:
    """Fill numba's disk cache with every function of :func:`_compiled` that it lacks.

    Runs :func:`solvers.exact.warmup.warm_up` (the tabu search, the cover's and stage 1f's pattern
    enumerations), then the large-scale path's kernels (time curves balanced and finished by first
    fit, the shaped filling, the repacking) and column generation's pricing DP on tiny instances.

    Returns:
        Whether numba's disk cache now holds them all (False when it is not writable: then each
        process compiles what it runs).
    """
    from solvers.search.jit import ready

    if ready(*_compiled(), on_disk=True):
        return True
    from packing.model.instance import App, HostType, Instance, Rule
    from solvers import solve
    from solvers.search import curves, repack, spread

    warm_up()
    # two points of a time curve, day and night containers, a cap: the balancing needs a third
    # host beyond the two it opens (first fit finishes it)
    curve = Instance("warm-curves", ("cpu_t00", "cpu_t01"), (HostType("h", (5.0, 5.0), 6),),
                     (App("day", (4.0, 1.0), 3), App("night", (1.0, 4.0), 3)), (Rule("day", "day", 1),))
    host_of = curves.balance(curve, 2)
    spread.fill(curve)
    repack.repack(curve, host_of, time_limit=600, max_iters=20)
    # integral data, no rules: column generation prices by the compiled DP
    two_d = Instance("warm-dp", ("a", "b"), (HostType("h", (10.0, 10.0), 6),),
                     tuple(App(f"i{k}", s, 1) for k, s in enumerate(
                         [(6.0, 2.0), (2.0, 6.0), (6.0, 2.0), (2.0, 6.0), (4.0, 4.0)])))
    solve(two_d, "colgen", time_limit=600, workers=1)
    return ready(*_compiled(), on_disk=True)
