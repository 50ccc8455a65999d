"""The compiled 0/1 knapsack on a two-row capacity grid (numba), for exact pricing.

Kept apart from :mod:`solvers.exact.pricing` so that pricing imports numba only when this DP
runs: importing numba and loading its first function from the disk cache costs about a second
of CPU in a new process, more than a whole short ``vbp solve`` on the classic instances.
:func:`solvers.exact.pricing.price_dp` uses it once numba is in the process, and on grids too
large for the NumPy DP.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def knapsack2(w1, w2, val, c1, c2):  # pragma: no cover - compiled
    """0/1 knapsack on the grid ``[0, c1] x [0, c2]``: best value and the items taken.

    Args:
        w1: integer weight of every item on the first row, shape ``(k,)``.
        w2: integer weight on the second row, shape ``(k,)``.
        val: item values, shape ``(k,)``.
        c1: capacity of the first row.
        c2: capacity of the second row.

    Returns:
        ``(value, chosen)``: the best total value and a bool mask of shape ``(k,)``.
    """
    k = len(w1)
    n2 = c2 + 1
    cells = (c1 + 1) * n2
    value = np.zeros(cells)
    take = np.zeros((k, (cells + 7) // 8), dtype=np.uint8)  # one bit per item and cell
    for t in range(k):
        a1 = w1[t]
        a2 = w2[t]
        v = val[t]
        if a1 > c1 or a2 > c2:
            continue
        for x in range(c1, a1 - 1, -1):  # descending: each item at most once
            base = x * n2
            src = (x - a1) * n2 - a2
            for y in range(c2, a2 - 1, -1):
                cand = value[src + y] + v
                if cand > value[base + y] + 1e-12:
                    value[base + y] = cand
                    idx = base + y
                    take[t, idx >> 3] |= np.uint8(1 << (idx & 7))
    chosen = np.zeros(k, dtype=np.bool_)
    x = c1
    y = c2
    for t in range(k - 1, -1, -1):
        idx = x * n2 + y
        if take[t, idx >> 3] & np.uint8(1 << (idx & 7)):
            chosen[t] = True
            x -= w1[t]
            y -= w2[t]
    return value[cells - 1], chosen


__all__ = ["knapsack2"]
