"""Per-host ratios shared by the scoring heuristics and the swarm features (one arithmetic order).

With ``c`` the host capacity, ``u`` its load and ``d`` the demand, per resource (a resource with zero
capacity contributes 0): ``resid = (c - u - d) / c``, ``dn = d / c`` and ``fb = (c - u) / c``. Sums over
resources run in resource order, as the compiled kernels do, so numpy and compiled scores agree exactly.
"""

from __future__ import annotations

import numpy as np

from packing.sim.policy import Observation


def ratios(obs: Observation) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Residual after placing, demand and free-before ratios, each shape ``(n_hosts, n_resources)``."""
    c = obs.capacity
    u = obs.used
    d = obs.demand[None, :]
    pos = c > 0
    safe = np.where(pos, c, 1.0)
    resid = np.where(pos, (c - u - d) / safe, 0.0)
    dn = np.where(pos, d / safe, 0.0)
    fb = np.where(pos, (c - u) / safe, 0.0)
    return resid, dn, fb


def colsum(x: np.ndarray) -> np.ndarray:
    """Row sums in resource order (the summation order of the compiled kernels), shape ``(n_rows,)``."""
    s = np.zeros(x.shape[0], dtype=np.float64)
    for r in range(x.shape[1]):
        s = s + x[:, r]
    return s


__all__ = ["colsum", "ratios"]
