"""The checker: one test per kind of violation, and a comparison with a naive re-implementation."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from packing.feasibility.checker import KINDS, check, is_feasible
from packing.model.instance import UNPLACED, App, HostType, Instance, Placement, Rule
from tests.packing.strategies import instance_and_placement

TOL = 1e-9


def triples(vs) -> set[tuple[str, int | None, str | None]]:
    return {(v.kind, v.host, v.app) for v in vs}


def one_kind(inst: Instance, bad: Placement, good: Placement, kind: str, host: int | None,
             app: str | None, **kw) -> None:
    """``bad`` breaks exactly ``kind`` (on host/app); the near-identical ``good`` breaks nothing."""
    vs = check(inst, bad, **kw)
    assert vs, f"{kind} not detected"
    assert {v.kind for v in vs} == {kind}
    assert any(v.host == host and v.app == app for v in vs), vs
    assert all(v.message for v in vs)
    assert check(inst, good, **kw) == []


def two_hosts(*apps: App, rules=(), exclusions=(), cap=(10.0, 10.0)) -> Instance:
    return Instance("t", ("cpu", "mem"), (HostType("h", cap, 2),), tuple(apps), tuple(rules),
                    tuple(exclusions))


def test_kinds_are_all_covered() -> None:
    tested = {n[len("test_kind_"):] for n in globals() if n.startswith("test_kind_")}
    assert tested == set(KINDS)


def test_kind_unknown_app() -> None:
    inst = two_hosts(App("a", (1.0, 1.0), 1))
    one_kind(inst, Placement({"a": (0,), "zz": (0,)}), Placement({"a": (0,)}),
             "unknown_app", None, "zz")


def test_kind_count() -> None:
    inst = two_hosts(App("a", (1.0, 1.0), 2))
    one_kind(inst, Placement({"a": (0,)}), Placement({"a": (0, UNPLACED)}), "count", None, "a")


def test_kind_unknown_host() -> None:
    inst = two_hosts(App("a", (1.0, 1.0), 2))
    one_kind(inst, Placement({"a": (0, 2)}), Placement({"a": (0, 1)}), "unknown_host", None, "a")


def test_a_host_that_is_not_an_index_is_an_unknown_host() -> None:
    """A name, None, a boolean or a float is reported, not read as a host (1.5 as host 1)."""
    inst = two_hosts(App("a", (6.0, 1.0), 2))
    for h in (1.5, True, 1.0, None, "h#1"):
        vs = check(inst, Placement({"a": (1, h)}))  # type: ignore[dict-item]
        assert [(v.kind, v.app) for v in vs] == [("unknown_host", "a")], h
        assert f"is on host {h!r}, which is not a host index" in vs[0].message
    assert check(inst, Placement({"a": (np.int64(0), np.int32(1))})) == []


def test_kind_unplaced() -> None:
    inst = two_hosts(App("a", (1.0, 1.0), 2))
    one_kind(inst, Placement({"a": (0, UNPLACED)}), Placement({"a": (0, 1)}), "unplaced", None,
             "a", require_all=True)
    assert check(inst, Placement({"a": (0, UNPLACED)})) == []


def test_kind_capacity() -> None:
    inst = two_hosts(App("a", (4.0, 1.0), 3))
    vs = check(inst, Placement({"a": (1, 1, 1)}))
    assert [(v.kind, v.host, v.resource) for v in vs] == [("capacity", 1, "cpu")]
    one_kind(inst, Placement({"a": (1, 1, 1)}), Placement({"a": (0, 1, 1)}), "capacity", 1, None)
    # exactly full is feasible
    inst = two_hosts(App("a", (5.0, 1.0), 2))
    assert is_feasible(inst, Placement({"a": (1, 1)}))


def gpu_instance(*apps: App, model: str | None = None) -> Instance:
    return Instance("g", ("cpu",), (HostType("g", (100.0,), 2, gpus=2, gpu_capacity=(1000.0,),
                                             gpu_model=model),),
                    tuple(apps), gpu_resources=("gpu_milli",))


def test_kind_gpu_assignment() -> None:
    inst = gpu_instance(App("a", (1.0,), 1, gpu_cards=2, gpu_per_card=(100.0,)))
    for cards in [(0,), (0, 0), (0, 2), (0, 1, 1)]:
        one_kind(inst, Placement({"a": (1,)}, {"a": (cards,)}),
                 Placement({"a": (1,)}, {"a": ((0, 1),)}), "gpu_assignment", 1, "a")


def test_kind_gpu_card() -> None:
    inst = gpu_instance(App("a", (1.0,), 2, gpu_cards=1, gpu_per_card=(600.0,)),
                        App("w", (1.0,), 1, gpu_cards=1, gpu_whole=True))
    bad = Placement({"a": (0, 0), "w": (1,)}, {"a": ((1,), (1,)), "w": ((0,),)})
    good = Placement({"a": (0, 0), "w": (1,)}, {"a": ((0,), (1,)), "w": ((0,),)})
    one_kind(inst, bad, good, "gpu_card", 0, None)
    # a whole card takes the card: a share on it breaks it
    bad = Placement({"a": (0, 1), "w": (1,)}, {"a": ((0,), (1,)), "w": ((1,),)})
    good = Placement({"a": (0, 1), "w": (1,)}, {"a": ((0,), (0,)), "w": ((1,),)})
    one_kind(inst, bad, good, "gpu_card", 1, None)


def test_kind_gpu_model() -> None:
    inst = Instance("g", ("cpu",), (
        HostType("v", (100.0,), 1, gpus=1, gpu_capacity=(1000.0,), gpu_model="V100"),
        HostType("t", (100.0,), 1, gpus=1, gpu_capacity=(1000.0,), gpu_model="T4")),
        (App("a", (1.0,), 1, gpu_cards=1, gpu_per_card=(100.0,), gpu_models=("T4",)),),
        gpu_resources=("gpu_milli",))
    one_kind(inst, Placement({"a": (0,)}, {"a": ((0,),)}),
             Placement({"a": (1,)}, {"a": ((0,),)}), "gpu_model", 0, "a")


def test_kind_node_selection() -> None:
    from packing.model.selection import Taint, Toleration

    ssd = HostType("ssd", (10.0,), 1, labels=(("disk", "ssd"),))
    tainted = HostType("gpu", (10.0,), 1, labels=(("disk", "ssd"),),
                       taints=(Taint("dedicated", "gpu", "NoSchedule"),))
    hdd = HostType("hdd", (10.0,), 1, labels=(("disk", "hdd"),))
    inst = Instance("s", ("cpu",), (ssd, tainted, hdd),
                    (App("a", (1.0,), 1, node_selector=(("disk", "ssd"),)),))
    one_kind(inst, Placement({"a": (2,)}), Placement({"a": (0,)}), "node_selection", 2, "a")
    (v,) = check(inst, Placement({"a": (1,)}))  # the taint is not tolerated
    assert v.kind == "node_selection" and "dedicated=gpu:NoSchedule" in v.message
    tolerant = inst.replace(apps=(App("a", (1.0,), 1, node_selector=(("disk", "ssd"),),
                                      tolerations=(Toleration("dedicated", "Exists"),)),))
    assert check(tolerant, Placement({"a": (1,)})) == []


def test_kind_anti_affinity() -> None:
    inst = two_hosts(App("a", (1.0, 1.0), 3, max_per_host=2))
    one_kind(inst, Placement({"a": (0, 0, 0)}), Placement({"a": (0, 0, 1)}),
             "anti_affinity", 0, "a")
    # a self-rule is a cap
    inst = two_hosts(App("a", (1.0, 1.0), 3), rules=[Rule("a", "a", 1)], cap=(10.0, 10.0))
    inst = inst.replace(host_types=(HostType("h", (10.0, 10.0), 3),))
    one_kind(inst, Placement({"a": (0, 0, 1)}), Placement({"a": (0, 1, 2)}),
             "anti_affinity", 0, "a")


def test_kind_exclusion() -> None:
    inst = two_hosts(App("a", (1.0, 1.0), 1), App("b", (1.0, 1.0), 1), exclusions=[("a", "b")])
    vs = check(inst, Placement({"a": (1,), "b": (1,)}))
    assert {(v.host, v.app, v.other) for v in vs} == {(1, "a", "b"), (1, "b", "a")}
    one_kind(inst, Placement({"a": (1,), "b": (1,)}), Placement({"a": (0,), "b": (1,)}),
             "exclusion", 1, "a")


def test_kind_rule() -> None:
    inst = two_hosts(App("a", (1.0, 1.0), 1), App("b", (1.0, 1.0), 3), rules=[Rule("a", "b", 1)])
    one_kind(inst, Placement({"a": (0,), "b": (0, 0, 1)}), Placement({"a": (0,), "b": (0, 1, 1)}),
             "rule", 0, "a")
    # the rule is one-directional: many b without a is fine, and b alone doesn't restrict a
    assert is_feasible(inst, Placement({"a": (1,), "b": (0, 0, 0)}))


# ------------------------------------------------------------------------------------------------
def naive_check(inst: Instance, p: Placement, require_all: bool) -> set:
    """A deliberately plain re-implementation: loops over hosts, apps and cards."""
    out: set = set()
    names = [a.name for a in inst.apps]
    for name in p.hosts:
        if name not in names:
            out.add(("unknown_app", None, name))
    # host types and card counts per host, by walking the types
    host_type = []
    for t in inst.host_types:
        host_type += [t] * t.count
    n_hosts = len(host_type)
    on: list[list[tuple[App, tuple[int, ...]]]] = [[] for _ in range(n_hosts)]
    for app in inst.apps:
        if app.name in p.hosts and len(p.hosts[app.name]) != app.count:
            out.add(("count", None, app.name))
        hs = list(p.hosts.get(app.name, ()))[: app.count]
        unplaced = app.count - len(hs)
        for j, h in enumerate(hs):
            if h == UNPLACED:
                unplaced += 1
                continue
            if h < 0 or h >= n_hosts:
                out.add(("unknown_host", None, app.name))
                continue
            g = p.gpus.get(app.name)
            cs = tuple(g[j]) if g is not None and j < len(g) else ()
            if inst.max_gpus or any(p.gpus.values()):
                n_cards = host_type[h].gpus
                ok = [c for c in cs if 0 <= c < n_cards]
                if len(cs) != app.gpu_cards or len(set(cs)) != len(cs) or len(ok) != len(cs):
                    out.add(("gpu_assignment", h, app.name))
                uniq = []
                for c in ok:
                    if c not in uniq:
                        uniq.append(c)
                cs = tuple(uniq)
            on[h].append((app, cs))
        if require_all and unplaced:
            out.add(("unplaced", None, app.name))
    # effective caps and cross rules
    cap = {}
    for app in inst.apps:
        c = app.count if app.max_per_host is None else min(app.count, app.max_per_host)
        for r in inst.rules:
            if r.a == r.b == app.name:
                c = min(c, r.k)
        cap[app.name] = max(c, 0)
    cross: dict[tuple[str, str], int] = {}
    for r in inst.rules:
        if r.a != r.b:
            cross[(r.a, r.b)] = min(cross.get((r.a, r.b), r.k), r.k)
    excl = set()
    for a, b in inst.exclusions:
        cross[(a, b)] = cross[(b, a)] = 0
        excl |= {(a, b), (b, a)}
    for h in range(n_hosts):
        t = host_type[h]
        for r in range(inst.n_resources):
            load = sum(app.demand[r] for app, _ in on[h])
            if load > t.capacity[r] + TOL * max(1.0, abs(t.capacity[r])):
                out.add(("capacity", h, None))
        for card in range(t.gpus):
            for g in range(len(inst.gpu_resources)):
                load = 0.0
                for app, cs in on[h]:
                    if app.gpu_cards and card in cs:
                        load += t.gpu_capacity[g] if app.gpu_whole else app.gpu_per_card[g]
                if load > t.gpu_capacity[g] + TOL * max(1.0, abs(t.gpu_capacity[g])):
                    out.add(("gpu_card", h, None))
        count: dict[str, int] = {}
        for app, _ in on[h]:
            count[app.name] = count.get(app.name, 0) + 1
            if app.gpu_models and t.gpu_model not in app.gpu_models:
                out.add(("gpu_model", h, app.name))
        for a, n in count.items():
            if n > cap[a]:
                out.add(("anti_affinity", h, a))
        for (a, b), k in cross.items():
            if count.get(a, 0) > 0 and count.get(b, 0) > k:
                out.add(("exclusion" if k == 0 and (a, b) in excl else "rule", h, a))
    return out


@settings(max_examples=200, deadline=None)
@given(instance_and_placement(bad=True))
def test_check_matches_naive(ip) -> None:
    inst, p = ip
    for require_all in (False, True):
        assert triples(check(inst, p, require_all=require_all)) == naive_check(inst, p, require_all)


@settings(max_examples=100, deadline=None)
@given(instance_and_placement(bad=False, gpus=False))
def test_check_matches_naive_without_gpus(ip) -> None:
    inst, p = ip
    assert triples(check(inst, p)) == naive_check(inst, p, False)


def test_naive_check_can_fail() -> None:
    # the naive checker is not vacuous: it reports the hand-made capacity violation
    inst = two_hosts(App("a", (6.0, 1.0), 2))
    assert naive_check(inst, Placement({"a": (0, 0)}), False) == {("capacity", 0, None)}


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_rule_and_cap_violations_are_every_one_on_every_host(seed: int) -> None:
    """The checker looks only where an app runs; compare with every (rule or app, host) pair."""
    from packing.generators.random import generate_random

    inst = generate_random(12, 60, rule_density=0.3, exclusion_density=0.2, cap_fraction=0.5,
                           seed=seed)
    rng = np.random.default_rng(seed)
    host_of = rng.integers(0, min(inst.n_hosts, 8), inst.n_containers)
    got = {(v.host, v.app, v.other) for v in check(inst, Placement.from_arrays(inst, host_of))
           if v.kind in ("rule", "exclusion")}
    count = np.zeros((inst.n_hosts, inst.n_apps), dtype=np.int64)
    np.add.at(count, (host_of, inst.container_app), 1)
    want = set()
    for a, b, k in zip(*inst.rule_arrays, strict=True):
        for h in range(inst.n_hosts):
            if count[h, a] > 0 and count[h, b] > k:
                want.add((h, inst.apps[a].name, inst.apps[b].name))
    assert got == want
    caps = [(v.host, v.app) for v in check(inst, Placement.from_arrays(inst, host_of))
            if v.kind == "anti_affinity"]
    assert caps == [(h, inst.apps[a].name) for a in range(inst.n_apps)
                    for h in range(inst.n_hosts) if count[h, a] > inst.cap[a]]


def _zones(*apps: App) -> Instance:
    z = "topology.kubernetes.io/zone"
    return Instance("t", ("cpu", "mem"), (HostType("a", (10.0, 10.0), 2, labels=((z, "a"),)),
                                          HostType("b", (10.0, 10.0), 2, labels=((z, "b"),))),
                    tuple(apps))


def test_kind_domain_cap() -> None:
    inst = _zones(App("a", (1.0, 1.0), 2, domain_caps=(("topology.kubernetes.io/zone", 1),)))
    one_kind(inst, Placement({"a": (0, 1)}), Placement({"a": (0, 2)}), "domain_cap", None, "a")


def test_kind_spread() -> None:
    inst = _zones(App("a", (1.0, 1.0), 3, spreads=(("topology.kubernetes.io/zone", 1),)))
    one_kind(inst, Placement({"a": (0, 1, 0)}), Placement({"a": (0, 1, 2)}), "spread", None, "a")


def test_spread_app_needs_the_key_on_its_host() -> None:
    z = "topology.kubernetes.io/zone"
    inst = _zones(App("a", (1.0, 1.0), 2, spreads=((z, 1),)))
    inst = inst.replace(host_types=(*inst.host_types, HostType("bare", (10.0, 10.0), 1)))
    one_kind(inst, Placement({"a": (0, 4)}), Placement({"a": (0, 2)}), "node_selection", 4, "a")
