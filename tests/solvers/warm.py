"""Compile the numba parts of ``auto`` once per test process, outside any solver time limit.

The tabu search takes about 15 s to compile on a machine without numba's cache (a fresh clone);
tests that run it under a time limit call :func:`warm_search` first, so the limit measures the
search and not the compiler.
"""

from __future__ import annotations

import functools

import numpy as np

from packing.model import App, HostType, Instance
from solvers import tabu
from solvers.cover import tight_patterns
from solvers.tabu import tabu_pack


@functools.cache
def warm_search() -> bool:
    """Run the tabu search and the pattern enumeration once on a tiny instance."""
    inst = Instance("warm", ("s",), (HostType("h", (10.0,), 4),),
                    (App("a", (2.0,), 2, max_per_host=1), App("b", (2.0,), 2)),
                    exclusions=(("a", "b"),))
    tabu_pack(inst, np.arange(4), target=1, time_limit=600, max_iters=10)
    tight_patterns(inst, 2)
    # emptying the host of the last 4 overloads another: the search itself runs (and compiles)
    tight = Instance("warm-search", ("s",), (HostType("h", (10.0,), 3),),
                     (App("a", (3.0,), 4), App("b", (4.0,), 2)))
    tabu_pack(tight, np.array([0, 0, 0, 1, 1, 2]), target=2, time_limit=600, max_iters=50)
    assert tabu.warm()
    return True
