"""Lower bounds: hand-computed cases, and never above the brute-force optimum."""

from __future__ import annotations

import math
import time

from hypothesis import given, settings

from packing.feasibility.bounds import cost_lower_bound, lower_bounds
from packing.feasibility.checker import check
from packing.feasibility.explain import explain_infeasibility
from packing.model.instance import App, HostType, Instance, Rule
from tests.packing.brute import brute_force
from tests.packing.strategies import tiny_instances

TEN = (HostType("h", (10.0, 10.0), 10),)


def inst_of(*apps: App, types=TEN, rules=(), excl=()) -> Instance:
    return Instance("b", ("cpu", "mem"), tuple(types), tuple(apps), tuple(rules), tuple(excl))


def test_volume_largest_hosts_first() -> None:
    # 25 cpu: one big host (16) + two small (8) is not enough (32 >= 25 -> 2 hosts: 16 + 8 = 24 < 25)
    types = (HostType("small", (8.0, 100.0), 5), HostType("big", (16.0, 100.0), 1))
    lb = lower_bounds(inst_of(App("a", (1.0, 1.0), 25), types=types))
    assert (lb.volume, lb.volume_resource) == (3, "cpu")
    # exactly full counts as fitting
    lb = lower_bounds(inst_of(App("a", (1.0, 1.0), 24), types=types))
    assert lb.volume == 2


def test_cap_and_self_rule() -> None:
    lb = lower_bounds(inst_of(App("a", (1.0, 1.0), 7, max_per_host=2)))
    assert (lb.cap, lb.cap_app) == (4, "a")
    lb = lower_bounds(inst_of(App("a", (1.0, 1.0), 7), rules=[Rule("a", "a", 3)]))
    assert lb.cap == 3
    # capacity also limits containers per host: 4 per host of 10 cpu
    assert lower_bounds(inst_of(App("a", (2.5, 1.0), 9))).cap == 3


def test_clique_adds_disjoint_hosts() -> None:
    apps = [App("a", (1.0, 1.0), 4, max_per_host=2), App("b", (1.0, 1.0), 3, max_per_host=1),
            App("c", (1.0, 1.0), 1), App("d", (1.0, 1.0), 9, max_per_host=9)]
    lb = lower_bounds(inst_of(*apps, rules=[Rule("b", "c", 0)], excl=[("a", "b"), ("a", "c")]))
    # a (2 hosts) + b (3 hosts) + c (1 host), pairwise in conflict: 6
    assert lb.clique == 6 and set(lb.clique_apps) == {"a", "b", "c"} and lb.clique_exact
    assert lb.best == 6
    # a rule with k > 0 is no conflict
    lb = lower_bounds(inst_of(*apps, rules=[Rule("b", "c", 1)], excl=[("a", "b"), ("a", "c")]))
    assert lb.clique == 5


def test_excluded_volume_needs_further_hosts() -> None:
    # a: 3 hosts (cap 1); b0, b1, b2 (2 containers of 5 each) all exclude a but not each other:
    # the clique is a + one b (3 + 1), the volume 33 / 10 -> 4, but the b's 30 cpu need 3 hosts
    # that run no a: 3 + 3 = 6, which is the optimum (each a alone, two b's per host)
    apps = [App("a", (1.0, 1.0), 3, max_per_host=1)] + [App(f"b{i}", (5.0, 1.0), 2)
                                                         for i in range(3)]
    inst = inst_of(*apps, excl=[("a", f"b{i}") for i in range(3)])
    lb = lower_bounds(inst)
    assert (lb.volume, lb.cap, lb.clique) == (4, 3, 4)
    assert (lb.excluded, lb.excluded_apps, lb.best) == (6, ("a",), 6)
    from packing.model.instance import Placement
    p = Placement({"a": (0, 1, 2), "b0": (3, 3), "b1": (4, 4), "b2": (5, 5)})
    assert check(inst, p, require_all=True) == []
    # the clique's hosts are closed to the apps that conflict with all of it: a and c (3 + 2
    # hosts) both exclude b0, b1, b2 (3 hosts): 8; the clique is a + c + one b (6), a's own
    # neighbours c and the b's have volume 32 (3 + 4 = 7)
    apps = [App("a", (1.0, 1.0), 3, max_per_host=1), App("c", (1.0, 1.0), 2, max_per_host=1)]
    apps += [App(f"b{i}", (5.0, 1.0), 2) for i in range(3)]
    excl = [("a", "c")] + [(x, f"b{i}") for x in "ac" for i in range(3)]
    lb = lower_bounds(inst_of(*apps, excl=excl))
    assert (lb.clique, lb.excluded, lb.best) == (6, 8, 8)
    assert lb.excluded_apps == ("a", "c")


def test_gpu_cards() -> None:
    types = (HostType("g", (100.0,), 10, gpus=4, gpu_capacity=(1000.0,)),)
    apps = (App("w", (1.0,), 5, gpu_cards=1, gpu_whole=True),
            App("s", (1.0,), 7, gpu_cards=1, gpu_per_card=(500.0,)))
    lb = lower_bounds(Instance("g", ("cpu",), types, apps, gpu_resources=("gpu_milli",)))
    # 5 whole cards + ceil(3500 / 1000) = 4 shared cards = 9 cards -> 3 hosts of 4
    assert (lb.gpu_cards, lb.gpu) == (9, 3)


def test_infeasible_bounds() -> None:
    lb = lower_bounds(inst_of(App("a", (11.0, 1.0), 1)))
    assert lb.infeasible and math.isinf(cost_lower_bound(inst_of(App("a", (11.0, 1.0), 1))))


def test_cost_bound_prefers_cheap_capacity() -> None:
    types = (HostType("small", (10.0, 10.0), 10, cost=1.0), HostType("big", (20.0, 20.0), 10,
                                                                     cost=1.5))
    inst = inst_of(App("a", (10.0, 1.0), 4), types=types)
    # 40 cpu: big hosts cost 0.075 per cpu -> 2 big = 3.0, and the integer optimum is 3.0
    assert cost_lower_bound(inst) == __import__("pytest").approx(3.0, rel=1e-5)
    assert cost_lower_bound(inst) <= 3.0


@settings(max_examples=150, deadline=None)
@given(tiny_instances())
def test_bounds_never_exceed_the_optimum(inst: Instance) -> None:
    hosts, cost, placement = brute_force(inst)
    lb = lower_bounds(inst)
    reasons = explain_infeasibility(inst)
    if math.isinf(hosts):
        return
    assert check(inst, placement, require_all=True) == []
    assert placement is not None
    for name in ("volume", "cap", "clique", "gpu", "excluded", "best"):
        assert getattr(lb, name) <= hosts, (name, lb, hosts)
    assert not lb.infeasible
    assert cost_lower_bound(inst, lb) <= cost + 1e-9
    # every explanation is a proof of infeasibility
    assert reasons == []


def test_bounds_are_fast_on_a_large_conflict_graph() -> None:
    # 3,000 apps, 6,000 k = 0 rules: the greedy clique keeps it quick
    import numpy as np

    rng = np.random.default_rng(0)
    apps = tuple(App(f"a{i}", (1.0, 1.0), 2, max_per_host=1 if i < 5 else None)
                 for i in range(3000))
    pairs = {tuple(sorted(rng.choice(3000, 2, replace=False).tolist())) for _ in range(6000)}
    pairs |= {(a, b) for a in range(5) for b in range(a + 1, 5)}  # a planted clique of weight 10
    rules = tuple(Rule(f"a{a}", f"a{b}", 0) for a, b in pairs)
    inst = Instance("big", ("cpu", "mem"), (HostType("h", (10.0, 10.0), 1000),), apps, rules)
    t = time.perf_counter()
    lb = lower_bounds(inst)
    assert time.perf_counter() - t < 5
    assert not lb.clique_exact
    assert lb.clique >= 10


def test_cap_bound_counts_gpu_cards_per_host() -> None:
    types = (HostType("g", (100.0,), 10, gpus=4, gpu_capacity=(1000.0,)),)
    # two whole cards each: two per host of four cards -> 5 containers need 3 hosts
    inst = Instance("g", ("cpu",), types, (App("w", (1.0,), 5, gpu_cards=2, gpu_whole=True),),
                    gpu_resources=("gpu_milli",))
    assert lower_bounds(inst).cap == 3
    # 300 on each of two cards: a card takes 3 shares, 4 cards 12 shares = 6 containers -> 13 need 3
    inst = Instance("g", ("cpu",), types,
                    (App("s", (1.0,), 13, gpu_cards=2, gpu_per_card=(300.0,)),),
                    gpu_resources=("gpu_milli",))
    assert lower_bounds(inst).cap == 3
    assert lower_bounds(inst.replace(apps=(App("s", (1.0,), 12, gpu_cards=2,
                                               gpu_per_card=(300.0,)),))).cap == 2


def test_cap_bound_counts_only_the_hosts_the_app_may_use() -> None:
    # the app may only run on the three small ssd hosts (two containers each): 6 need 3 hosts,
    # though one big hdd host would hold them all
    types = (HostType("ssd", (2.0, 10.0), 3, labels=(("disk", "ssd"),)),
             HostType("hdd", (10.0, 10.0), 5, labels=(("disk", "hdd"),)))
    inst = inst_of(App("a", (1.0, 1.0), 6, node_selector=(("disk", "ssd"),)), types=types)
    lb = lower_bounds(inst)
    assert (lb.cap, lb.volume, lb.best) == (3, 1, 3)
    assert lower_bounds(inst.replace(apps=(App("a", (1.0, 1.0), 7,
                                               node_selector=(("disk", "ssd"),)),))).infeasible


def test_cost_bound_needs_the_host_count_and_the_big_host_together() -> None:
    # v needs a big host (10); a and b exclude each other, so two hosts at least: the second
    # costs 1 more. Neither the two cheapest hosts (2) nor the capacity rows alone (10) see it.
    types = (HostType("small", (1.0, 1.0), 10, cost=1.0),
             HostType("big", (100.0, 100.0), 10, cost=10.0))
    inst = inst_of(App("v", (50.0, 1.0), 1), App("a", (1.0, 1.0), 1), App("b", (1.0, 1.0), 1),
                   types=types, excl=[("a", "b")])
    assert lower_bounds(inst).best == 2
    assert cost_lower_bound(inst) == __import__("pytest").approx(11.0, rel=1e-5)
    hosts, cost, _ = brute_force(inst)
    assert (hosts, cost) == (2, 11.0)
