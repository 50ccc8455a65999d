"""Topology rules in the model: domains, the simulator's mask, the compiled paths, hand cases."""

from __future__ import annotations

import numpy as np
import pytest

from packing.errors import InputError
from packing.feasibility import kernels
from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.io import instance_from_dict, instance_to_dict
from packing.model.instance import App, HostType, Instance, Placement
from packing.model.topology import HOSTNAME, ZONE, domains, eligible_domains

A, B = ((ZONE, "a"),), ((ZONE, "b"),)


def zones(*apps: App) -> Instance:
    """Two zones of two 4-cpu hosts, and one host without a zone label."""
    return Instance("z", ("cpu",), (HostType("a", (4.0,), 2, labels=A),
                                    HostType("b", (4.0,), 2, labels=B),
                                    HostType("n", (4.0,), 1)), apps)


def test_domains() -> None:
    inst = zones(App("x", (1.0,), 1))
    d = domains(inst, ZONE)
    assert d.of_host.tolist() == [0, 0, 1, 1, -1] and d.names == ("a", "b")
    assert domains(inst, HOSTNAME).of_host.tolist() == [0, 1, 2, 3, 4]
    assert domains(inst, "rack").of_host.tolist() == [-1] * 5


def test_mask_domain_cap_by_hand() -> None:
    inst = zones(App("w", (1.0,), 3, domain_caps=((ZONE, 1),)))
    st = ClusterState(inst)
    assert st.mask(0).tolist() == [True] * 5
    st.place(0, 0)
    assert st.mask(0).tolist() == [False, False, True, True, True]  # zone a is full
    st.place(0, 3)
    assert st.mask(0).tolist() == [False, False, False, False, True]  # no zone: unlimited


def test_mask_spread_by_hand() -> None:
    inst = zones(App("s", (1.0,), 6, spreads=((ZONE, 1),)))
    st = ClusterState(inst)
    assert st.mask(0).tolist() == [True, True, True, True, False]  # no label: never
    st.place(0, 0)  # a=1, b=0: a would reach 2 - 0 > 1
    assert st.mask(0).tolist() == [False, False, True, True, False]
    st.place(0, 2)  # a=1, b=1
    assert st.mask(0).tolist() == [True, True, True, True, False]


def test_mask_hostname_spread_counts_every_host() -> None:
    inst = Instance("h", ("cpu",), (HostType("n", (4.0,), 3),),
                    (App("h", (1.0,), 4, spreads=((HOSTNAME, 1),)), App("o", (1.0,), 1)))
    st = ClusterState(inst)
    st.place(0, 0)
    assert st.mask(0).tolist() == [False, True, True]  # hosts 1 and 2 exist with 0
    # the plan's rule (checker) counts used hosts only: 2 on host 0 alone is fine
    assert check(inst, Placement({"h": (0, 0, 1, 1), "o": (0,)})) == []
    bad = Placement({"h": (0, 0, 1, 1), "o": (2,)})  # host 2 used, with no h
    assert [v.kind for v in check(inst, bad)] == ["spread"]


def test_spread_eligible_domains_follow_node_selection_not_taints() -> None:
    from packing.model.selection import Taint

    types = (HostType("a", (4.0,), 1, labels=(("disk", "ssd"), (ZONE, "a"))),
             HostType("b", (4.0,), 1, labels=(("disk", "hdd"), (ZONE, "b"))),
             HostType("c", (4.0,), 1, labels=(("disk", "ssd"), (ZONE, "c")),
                      taints=(Taint("gpu", "", "NoSchedule"),)))
    inst = Instance("e", ("cpu",), types,
                    (App("s", (1.0,), 2, node_selector=(("disk", "ssd"),), spreads=((ZONE, 1),)),))
    assert eligible_domains(inst, 0, ZONE).tolist() == [0, 2]  # zone b not selected; c tainted
    # zone c counts 0 (the app cannot go there): at most 1 container in zone a
    assert [v.kind for v in check(inst, Placement({"s": (0, 0)}))] == ["spread"]


@pytest.mark.parametrize("seed", range(6))
def test_compiled_paths_equal_the_mask(seed: int) -> None:
    rng = np.random.default_rng(seed)
    inst = zones(App("w", (1.0,), 3, domain_caps=((ZONE, 1),)),
                 App("s", (0.5,), 5, spreads=((ZONE, 1),)),
                 App("h", (0.5,), 4, spreads=((HOSTNAME, 2),)), App("x", (1.5,), 3))
    st = ClusterState(inst)
    ok = kernels.host_checker(st)
    for _ in range(12):
        a = int(rng.integers(inst.n_apps))
        m = st.mask(a)
        assert np.array_equal(kernels.fast_mask(st, a), m)
        assert [ok(a, h) for h in range(inst.n_hosts)] == m.tolist()
        if m.any():
            st.place(a, int(rng.choice(np.flatnonzero(m))))


def test_file_round_trip_and_bad_input() -> None:
    inst = zones(App("w", (1.0,), 2, domain_caps=((ZONE, 1),), spreads=((HOSTNAME, 1),)))
    doc = instance_to_dict(inst)
    assert doc["apps"][0]["domain_caps"] == {ZONE: 1}
    assert doc["apps"][0]["spreads"] == {HOSTNAME: 1}
    assert instance_from_dict(doc) == inst
    doc["apps"][0]["spreads"] = {ZONE: 0}
    with pytest.raises(InputError, match=r"apps\[0\] \(w\)\.spreads\.topology.kubernetes.io/zone"):
        instance_from_dict(doc)
    with pytest.raises(InputError, match="domain_caps"):
        zones(App("w", (1.0,), 2, domain_caps=(("", 1),)))
    with pytest.raises(InputError, match="twice"):
        zones(App("w", (1.0,), 2, spreads=((ZONE, 1), (ZONE, 2))))
