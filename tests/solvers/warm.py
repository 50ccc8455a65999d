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


def warm_compiled() -> bool:
    """Fill numba's disk cache with every compiled part of the solvers it lacks (:func:`warm_up`).

    Returns:
        Whether numba's disk cache now holds them all (False when it is not writable: then each
        process compiles what it runs).
    """
    from solvers.exact.warmup import PARTS

    if all(warm(on_disk=True) for _, warm in PARTS.values()):
        return True
    return all(cached for _, cached in warm_up().values())
