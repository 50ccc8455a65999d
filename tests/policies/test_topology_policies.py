"""Every online policy on instances with topology rules: the simulator's mask keeps them.

Without departures the per-pod spread check keeps ``max - min <= maxSkew`` at every step
(:mod:`packing.model.topology`), so every final placement must pass the checker (``simulate`` checks
it), and the state after every step must too.
"""

from __future__ import annotations

import numpy as np
import pytest

from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance, Request
from packing.model.topology import HOSTNAME, ZONE
from packing.sim.simulator import simulate
from policies.registry import POLICIES, get_policy


def instance(seed: int) -> Instance:
    rng = np.random.default_rng(seed)
    types = tuple(HostType(f"z{z}", (4.0, 8.0), int(rng.integers(1, 4)), labels=((ZONE, z),))
                  for z in "abc") + (HostType("plain", (4.0, 8.0), 2),)
    apps = (App("w", (1.0, 1.0), 4, domain_caps=((ZONE, 1),)),
            App("s", (round(float(rng.uniform(0.3, 1.2)), 3), 1.0), 7, spreads=((ZONE, 1),)),
            App("h", (0.5, 0.5), 5, spreads=((HOSTNAME, 1),)),
            App("x", (round(float(rng.uniform(0.5, 2.0)), 3), 2.0), 6))
    order = rng.permutation([a for a in range(len(apps)) for _ in range(apps[a].count)])
    reqs = tuple(Request(float(t), apps[int(a)].name) for t, a in enumerate(order))
    return Instance(f"topo{seed}", ("cpu", "mem"), types, apps, requests=reqs)


CPU_POLICIES = [n for n in POLICIES if not n.startswith(("gpu", "fgd", "mc-", "node-"))]


@pytest.mark.parametrize("name", CPU_POLICIES)
def test_policy_placements_pass_the_checker(name: str) -> None:
    for seed in range(3):
        inst = instance(seed)
        res = simulate(inst, get_policy(name), seed=seed)  # raises on any violation
        assert check(inst, res.placement) == []


def test_every_step_keeps_the_rules() -> None:
    """A random policy: after every placement the partial placement passes the checker."""
    for seed in range(4):
        inst = instance(seed)
        policy = get_policy("random")
        res = simulate(inst, policy, seed=seed)
        hosts = res.placement.host_array(inst)
        # replay in arrival order and check each prefix
        from packing.model.instance import UNPLACED, Placement

        order = [inst.app_index[r.app] for r in inst.requests]
        seen = np.zeros(inst.n_apps, dtype=np.int64)
        partial = np.full(inst.n_containers, UNPLACED, dtype=np.int64)
        for a in order:
            j = int(inst.offsets[a] + seen[a])
            seen[a] += 1
            partial[j] = hosts[j]
            assert check(inst, Placement.from_arrays(inst, partial)) == []
