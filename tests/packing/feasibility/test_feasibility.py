"""ClusterState: the mask agrees with the checker, and place/remove are inverse."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings

from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState, fits, over_cap, rule_broken
from packing.model.instance import UNPLACED, App, HostType, Instance, Placement, Rule
from tests.packing.strategies import instance_and_placement


def cards_list(inst: Instance, p: Placement) -> list[tuple[int, ...]]:
    return [p.cards_of(a.name, j) for a in inst.apps for j in range(a.count)]


def feasible_part(inst: Instance, p: Placement) -> Placement:
    """Unplace every container on a host with a violation (host violations are local)."""
    while True:
        bad = {v.host for v in check(inst, p) if v.host is not None}
        if not bad:
            return p
        hosts = {a: tuple(UNPLACED if h in bad else h for h in hs) for a, hs in p.hosts.items()}
        gpus = {a: tuple(() if hosts[a][j] == UNPLACED else c for j, c in enumerate(cs))
                for a, cs in p.gpus.items()}
        p = Placement(hosts, gpus)


def with_one_more(inst: Instance, p: Placement, app: int, j: int, h: int, cards) -> Placement:
    name = inst.apps[app].name
    hosts = dict(p.hosts)
    hosts[name] = tuple(h if i == j else x for i, x in enumerate(hosts[name]))
    gpus = dict(p.gpus)
    if inst.apps[app].gpu_cards:
        old = list(gpus.get(name, ((),) * inst.apps[app].count))
        old[j] = tuple(cards)
        gpus[name] = tuple(old)
    return Placement(hosts, gpus)


@settings(max_examples=150, deadline=None)
@given(instance_and_placement())
def test_mask_agrees_with_checker(ip) -> None:
    inst, p = ip
    p = feasible_part(inst, p)
    host_of = p.host_array(inst)
    st = ClusterState.from_placement(inst, host_of, cards_list(inst, p))
    for a, app in enumerate(inst.apps):
        free = [j for j in range(app.count) if p.hosts[app.name][j] == UNPLACED]
        if not free:
            continue
        mask = st.mask(a)
        for h in range(inst.n_hosts):
            n_cards = int(inst.host_gpus[h])
            choices = itertools.combinations(range(n_cards), app.gpu_cards) if app.gpu_cards \
                else [()]
            ok = any(check(inst, with_one_more(inst, p, a, free[0], h, cs)) == []
                     for cs in choices)
            assert bool(mask[h]) == ok, (app.name, h)
            if ok and app.gpu_cards:  # the cards the state picks are a feasible choice
                cs = st.choose_cards(a, h)
                assert check(inst, with_one_more(inst, p, a, free[0], h, cs)) == []


@settings(max_examples=100, deadline=None)
@given(instance_and_placement())
def test_place_then_remove_restores_state(ip) -> None:
    inst, p = ip
    host_of = p.host_array(inst)
    cards = cards_list(inst, p)
    full = ClusterState.from_placement(inst, host_of, cards)
    st = ClusterState(inst)
    for j, h in enumerate(host_of):
        if h != UNPLACED:
            st.place(int(inst.container_app[j]), int(h), cards[j])
    assert np.allclose(st.used, full.used) and np.array_equal(st.count, full.count)
    assert np.allclose(st.card_used, full.card_used) and np.array_equal(st.n_on, full.n_on)
    for j, h in enumerate(host_of):
        if h != UNPLACED:
            st.remove(int(inst.container_app[j]), int(h), cards[j])
    empty = ClusterState(inst)
    assert np.array_equal(st.used, empty.used) and np.array_equal(st.count, empty.count)
    assert np.array_equal(st.card_used, empty.card_used) and np.array_equal(st.n_on, empty.n_on)
    assert not st.used_hosts().any()


def test_predicates() -> None:
    assert fits(10.0, 10.0) and fits(10.0 + 1e-12, 10.0) and not fits(10.1, 10.0)
    assert list(fits(np.array([1.0, 3.0]), np.array([2.0, 2.0]))) == [True, False]
    assert over_cap(3, 2) and not over_cap(2, 2)
    assert rule_broken(1, 2, 1) and not rule_broken(0, 5, 0) and not rule_broken(1, 1, 1)


def test_mask_hand_case() -> None:
    inst = Instance("m", ("cpu",), (HostType("h", (4.0,), 3),),
                    (App("a", (3.0,), 1), App("b", (1.0,), 2, max_per_host=1)),
                    exclusions=(("a", "b"),))
    st = ClusterState.from_placement(inst, np.array([0, 1, UNPLACED]))
    assert list(st.mask(1)) == [False, False, True]  # host 0 runs a, host 1 has b at its cap


def test_mask_keeps_a_one_directional_rule_both_ways() -> None:
    # rule <a, b, 1>: a host running a takes at most one b, whichever app arrives last
    inst = Instance("r", ("cpu",), (HostType("h", (10.0,), 2),),
                    (App("a", (1.0,), 1), App("b", (1.0,), 3)), rules=(Rule("a", "b", 1),))
    st = ClusterState.from_placement(inst, np.array([0, 0, UNPLACED, UNPLACED]))
    assert list(st.mask(1)) == [False, True]  # a second b beside a breaks the rule
    st = ClusterState.from_placement(inst, np.array([UNPLACED, 0, 0, UNPLACED]))
    assert list(st.mask(0)) == [False, True]  # a beside two b breaks it too
    assert list(st.mask(1)) == [True, True]  # b without a is unlimited


def test_capacity_tolerance_is_one_part_in_a_billion() -> None:
    # the tolerance only absorbs float residue: an overload of 1e-7 relative is an overload
    assert not fits(10.0 * (1 + 1e-7), 10.0) and fits(10.0 * (1 + 1e-10), 10.0)
    assert not fits(1e-7, 0.0) and fits(1e-10, 0.0)
    inst = Instance("t", ("cpu",), (HostType("h", (1.0,), 2),), (App("a", (0.5000001,), 2),))
    (v,) = check(inst, Placement({"a": (0, 0)}))
    assert (v.kind, v.host) == ("capacity", 0)
    assert check(inst, Placement({"a": (0, 1)})) == []


def test_mask_whole_card_needs_empty_cards() -> None:
    # two hosts of two cards; a share on card 0 of host 0 leaves it one empty card
    inst = Instance("g", ("cpu",), (HostType("g", (100.0,), 2, gpus=2, gpu_capacity=(1000.0,)),),
                    (App("s", (1.0,), 1, gpu_cards=1, gpu_per_card=(100.0,)),
                     App("w", (1.0,), 2, gpu_cards=1, gpu_whole=True),
                     App("ww", (1.0,), 1, gpu_cards=2, gpu_whole=True)),
                    gpu_resources=("gpu_milli",))
    st = ClusterState.from_placement(inst, np.array([0, UNPLACED, UNPLACED, UNPLACED]),
                                     [(0,), (), (), ()])
    assert list(st.mask(1)) == [True, True]
    assert list(st.mask(2)) == [False, True]  # two whole cards: only host 1 has them
    assert st.choose_cards(1, 0) == (1,)
    st.place(1, 0, (1,))
    assert list(st.mask(1)) == [False, True]  # host 0's cards are taken
    assert list(st.mask(0)) == [True, True]  # card 0 still has room for a share


def test_mask_keeps_an_app_to_the_host_types_it_may_use() -> None:
    types = (HostType("ssd", (10.0,), 1, labels=(("disk", "ssd"),)),
             HostType("hdd", (10.0,), 1, labels=(("disk", "hdd"),)),
             HostType("t4", (10.0,), 1, gpus=1, gpu_capacity=(1000.0,), gpu_model="T4"),
             HostType("v100", (10.0,), 1, gpus=1, gpu_capacity=(1000.0,), gpu_model="V100"))
    inst = Instance("s", ("cpu",), types,
                    (App("a", (1.0,), 1, node_selector=(("disk", "ssd"),)),
                     App("g", (1.0,), 1, gpu_cards=1, gpu_per_card=(100.0,), gpu_models=("T4",))),
                    gpu_resources=("gpu_milli",))
    st = ClusterState(inst)
    assert list(st.mask(0)) == [True, False, False, False]
    assert list(st.mask(1)) == [False, False, True, False]
