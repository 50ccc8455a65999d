"""Which instances the tabu search (:mod:`solvers.search.tabu`) covers, without importing it.

Kept apart so that ``auto`` can ask before it decides how to run the search: importing
:mod:`solvers.search.tabu` imports numba.
"""

from __future__ import annotations

import numpy as np

from packing.model.instance import Instance


def applicable(instance: Instance) -> bool:
    """Whether the tabu search covers the instance.

    One host type (or identical ones: same capacity and cost), no GPU cards, no restriction of
    apps to host types, no topology, demands and rule limits not negative.
    """
    inst = instance
    if inst.n_containers == 0 or inst.n_resources == 0 or inst.max_gpus:
        return False
    if bool(np.any(inst.gpu_cards > 0)) or inst.type_allowed is not None:
        return False  # hosts must be interchangeable: no restriction of apps to host types
    if inst.has_topology:
        return False  # domain caps and spread couple hosts: not modelled
    if bool(np.any(inst.demand < 0)) or any(r.k < 0 for r in inst.all_rules):
        return False  # the pruning needs demands >= 0, the sparse rule check k >= 0
    first = inst.host_types[0]
    return all(t.capacity == first.capacity and t.cost == first.cost for t in inst.host_types)


__all__ = ["applicable"]
