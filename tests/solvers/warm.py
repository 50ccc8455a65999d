"""Compile the numba parts of ``auto`` once per test process, outside any solver time limit.

The tabu search takes about 15 s to compile on a machine without numba's cache (a fresh clone);
tests that run it under a time limit call :func:`warm_search` first, so the limit measures the
search and not the compiler.
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
