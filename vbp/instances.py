"""Instance generators that need a policy: the Sigma-like instance is chosen by Best-Fit's host count."""

from __future__ import annotations

from packing.generators.sigma import generate_sigma as _generate_sigma
from packing.model.instance import Instance
from packing.sim.simulator import simulate
from policies.heuristics import BestFit


def best_fit_hosts(instance: Instance) -> int:
    """Hosts Best-Fit uses on the instance's own arrival order."""
    return simulate(instance, BestFit(), check_result=False).hosts


def generate_sigma(seed: int = 0) -> Instance:
    """The Sigma-like instance for ``seed`` (see :func:`packing.generators.sigma.generate_sigma`)."""
    return _generate_sigma(seed, online_hosts=best_fit_hosts)


__all__ = ["best_fit_hosts", "generate_sigma"]
