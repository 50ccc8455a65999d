"""Multi-cluster GPU scheduling (the EADE-DDPG scenario): the per-policy comparison rows.

The rows of ``benchmarks/bench_multicluster.py`` and of the tests: a policy's deployed tasks and the
paper's cluster metrics. The proven optimum is :func:`solvers.exact.max_deployed.optimum`; the instances
come from :func:`packing.generators.multicluster.generate_multicluster` (``vbp generate multicluster``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from packing.feasibility.metrics import compute_metrics
from packing.model.instance import Instance, Placement


def policy_row(inst: Instance, name: str, *, seed: int = 0) -> dict[str, Any]:
    """Simulate registry policy ``name`` on the stream; deployed count and the paper's cluster metrics."""
    from packing.sim.simulator import simulate
    from policies.registry import get_policy

    t0 = time.perf_counter()
    r = simulate(inst, get_policy(name), seed=seed)
    return metrics_row(inst, name, r.placement, time.perf_counter() - t0)


def metrics_row(inst: Instance, name: str, placement: Placement, seconds: float = 0.0) -> dict[str, Any]:
    """Deployed count, mean and std of ``U_n`` over clusters, fragmentation and load variance."""
    m = compute_metrics(inst, placement)
    u = np.array(list(m.cluster_utilisation.values()))
    return {"policy": name, "deployed": m.deployed, "u_mean": float(u.mean()), "u_std": float(u.std()),
            "fragmentation": m.fragmentation, "load_variance": m.load_variance, "seconds": seconds}


__all__ = ["metrics_row", "policy_row"]
