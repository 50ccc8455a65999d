"""Topology rules (domain caps, spread) in every solver: brute force against the exact methods.

Small random instances with zone labels (some host types without one), zone caps, zone and host
name spreads, node selectors and non-integer demands. Every method must satisfy
``bound <= optimum <= objective`` (the optimum from :func:`brute.brute_force`), ``"optimal"``
must mean ``objective == optimum``, and every placement passes the checker (``solvers.solve``
verifies it).
"""

from __future__ import annotations

import numpy as np
import pytest

from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance, Placement
from packing.model.topology import HOSTNAME, ZONE
from solvers import available, solve
from tests.packing.brute import brute_force  # noqa: E402

METHODS = ["auto", "cpsat", "pulp", "colgen"]


def random_instance(seed: int) -> Instance:
    """At most 7 containers on at most 5 hosts of 2-3 types, with zones and topology rules."""
    rng = np.random.default_rng(seed)
    n_types = int(rng.integers(2, 4))
    zones = ["a", "b", "c"]
    types = []
    for t in range(n_types):
        labels: tuple[tuple[str, str], ...] = ()
        if rng.random() < 0.85:
            labels = ((ZONE, zones[int(rng.integers(0, 3))]), ("disk", "ssd" if t % 2 else "hdd"))
        types.append(HostType(f"t{t}", (1.0, round(float(rng.uniform(0.8, 1.2)), 7)),
                              int(rng.integers(1, 3)), cost=float(rng.integers(1, 3)),
                              labels=tuple(sorted(labels))))
    apps = []
    left = 7
    for i in range(int(rng.integers(2, 4))):
        n = int(rng.integers(1, min(4, left) + 1))
        left -= n
        caps: tuple[tuple[str, int], ...] = ()
        spreads: tuple[tuple[str, int], ...] = ()
        r = rng.random()
        if r < 0.3:
            caps = ((ZONE, 1 if rng.random() < 0.7 else 2),)
        elif r < 0.55:
            spreads = ((ZONE, 1 if rng.random() < 0.7 else 2),)
        elif r < 0.7:
            spreads = ((HOSTNAME, 1),)
        elif r < 0.8:
            caps = ((HOSTNAME, 1),)
        sel = (("disk", "ssd"),) if rng.random() < 0.15 else ()
        d = (round(float(rng.uniform(0.05, 0.35)), 7), round(float(rng.uniform(0.05, 0.3)), 7))
        apps.append(App(f"a{i}", d, n, domain_caps=caps, spreads=spreads, node_selector=sel))
        if left <= 0:
            break
    return Instance(f"topo{seed}", ("cpu", "mem"), tuple(types), tuple(apps))


@pytest.mark.parametrize("seed", range(24))
def test_methods_agree_with_brute_force(seed: int) -> None:
    inst = random_instance(seed)
    opt_hosts, opt_cost, best = brute_force(inst)
    if best is not None:
        assert check(inst, best, require_all=True) == []
    kind = "cost" if any(t.cost != 1 for t in inst.host_types) else "hosts"
    opt = opt_cost if kind == "cost" else opt_hosts
    for method in METHODS:
        if not available(method):
            continue
        res = solve(inst, method, time_limit=5.0, objective=kind)  # verified by solve
        if np.isinf(opt):
            assert res.placement is None, method
            assert res.status in ("infeasible", "unknown"), method
            continue
        assert res.bound <= opt + 1e-6, (method, res.bound, opt)
        if res.placement is not None:
            assert res.objective >= opt - 1e-6, (method, res.objective, opt)
        if res.status == "optimal":
            assert abs(res.objective - opt) < 1e-6, (method, res.objective, opt)
        if method in ("cpsat", "auto"):
            assert res.status == "optimal", (method, res.status)
        if res.status == "infeasible":
            raise AssertionError(f"{method} claims infeasible, optimum {opt}")


def test_some_random_instances_bind() -> None:
    """The generator makes instances where the topology rules change the optimum."""
    changed = 0
    for seed in range(24):
        inst = random_instance(seed)
        free = inst.replace(apps=tuple(a.__class__(a.name, a.demand, a.count,
                                                   node_selector=a.node_selector)
                                       for a in inst.apps))
        changed += brute_force(inst)[0] != brute_force(free)[0]
    assert changed >= 4


def _zones(n_per_zone: int, *apps: App, zones: str = "abc") -> Instance:
    types = tuple(HostType(f"z{z}", (4.0,), n_per_zone, labels=((ZONE, z),)) for z in zones)
    return Instance("zones", ("cpu",), types, apps)


def test_hand_zone_cap() -> None:
    # 3 containers of size 1, at most one per zone of 3 zones: 3 hosts (without the cap: 1)
    inst = _zones(2, App("w", (1.0,), 3, domain_caps=((ZONE, 1),)))
    res = solve(inst, "cpsat", time_limit=10)
    assert res.status == "optimal" and res.objective == 3
    # 4 containers, one per zone, 3 zones: infeasible
    inst = _zones(2, App("w", (1.0,), 4, domain_caps=((ZONE, 1),)))
    res = solve(inst, "cpsat", time_limit=10)
    assert res.status == "infeasible"
    assert res.reason is not None and "3 values" in res.reason and "room for 3" in res.reason


def test_hand_zone_spread() -> None:
    # 5 containers of size 2 (two per host), maxSkew 1 over 3 zones: counts 2,2,1 -> 3 hosts
    inst = _zones(2, App("s", (2.0,), 5, spreads=((ZONE, 1),)))
    res = solve(inst, "cpsat", time_limit=10)
    assert res.status == "optimal" and res.objective == 3
    # maxSkew 3: counts 2,2,1 still best (one zone may hold 4 containers on 2 hosts: 4,1,0 -> 3)
    inst = _zones(2, App("s", (2.0,), 5, spreads=((ZONE, 3),)))
    assert solve(inst, "cpsat", time_limit=10).objective == 3
    # 4 containers, maxSkew 2, 2 zones: 3,1 -> hosts 2+1 = 3; 2,2 -> 2 hosts
    inst = _zones(2, App("s", (2.0,), 4, spreads=((ZONE, 2),)), zones="ab")
    assert solve(inst, "cpsat", time_limit=10).objective == 2


def test_hand_spread_counts_empty_zones() -> None:
    # a zone offered but unusable by capacity still counts 0: at most maxSkew containers elsewhere
    types = (HostType("za", (4.0,), 3, labels=((ZONE, "a"),)),
             HostType("zb", (1.0,), 1, labels=((ZONE, "b"),)))
    inst = Instance("e", ("cpu",), types, (App("s", (2.0,), 2, spreads=((ZONE, 1),)),))
    res = solve(inst, "cpsat", time_limit=10)
    assert res.status == "infeasible"
    inst = Instance("e", ("cpu",), types, (App("s", (2.0,), 1, spreads=((ZONE, 1),)),))
    assert solve(inst, "cpsat", time_limit=10).objective == 1


def test_hand_hostname_spread() -> None:
    # app b (size 3) needs 2 hosts; app h (4 x size 0.25, maxSkew 1 per used host) must then
    # spread 2/2 over those hosts or open none more: 2 hosts
    types = (HostType("n", (4.0,), 4),)
    apps = (App("b", (3.0,), 2), App("h", (0.25,), 4, spreads=((HOSTNAME, 1),)))
    inst = Instance("hn", ("cpu",), types, apps)
    res = solve(inst, "cpsat", time_limit=10)
    assert res.status == "optimal" and res.objective == 2
    counts = np.bincount(np.array(res.placement.hosts["h"]), minlength=4)
    assert sorted(counts[counts > 0].tolist()) == [2, 2]
    # all 4 on one host and none on the other used host: broken
    bad = Placement({"b": (0, 1), "h": (0, 0, 0, 0)})
    assert {v.kind for v in check(inst, bad)} == {"spread"}


def test_hosts_without_the_label() -> None:
    # domain caps ignore hosts without the key; spread never uses them
    types = (HostType("za", (4.0,), 1, labels=((ZONE, "a"),)), HostType("nolabel", (4.0,), 2))
    capped = Instance("n", ("cpu",), types, (App("w", (1.0,), 3, domain_caps=((ZONE, 1),)),))
    assert check(capped, Placement({"w": (0, 1, 1)})) == []
    spread = Instance("n", ("cpu",), types, (App("w", (1.0,), 1, spreads=((ZONE, 1),)),))
    assert [v.kind for v in check(spread, Placement({"w": (1,)}))] == ["node_selection"]
    assert solve(spread, "cpsat", time_limit=5).placement.hosts["w"] == (0,)


def test_lns_keeps_the_rules() -> None:
    """LNS solves sub-instances without the rules; what it returns still keeps them."""
    from solvers.exact.lns import improve, sub_instance
    from solvers.search.greedy import ffd

    apps = (App("w", (1.0,), 6, domain_caps=((ZONE, 2),)), App("s", (1.0,), 6,
                                                                spreads=((ZONE, 1),)),
            App("x", (2.0,), 4))
    inst = _zones(4, *apps)
    g = ffd(inst, "hosts")
    assert g.complete
    start = g.placement(inst)
    assert check(inst, start, require_all=True) == []
    out = improve(inst, start, kind="hosts", time_limit=3.0, seed=1, workers=1)
    assert check(inst, out, require_all=True) == []
    sub, _, _ = sub_instance(inst, np.arange(4), g.host_of)
    assert not sub.has_topology
