"""The host-kinds LP bound: hand-computed cases above the cheap bounds, and never above a
brute-force optimum (random rules, exclusions, caps, non-integer and exactly-filling data)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from packing.feasibility.bounds import lower_bounds
from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance, Placement, Rule
from solvers.base import StopFlag
from solvers.bounds.rule_bounds import _certify, rule_bound, rule_lower_bound
from tests.packing.brute import brute_force  # noqa: E402
from tests.packing.strategies import tiny_instances  # noqa: E402
from tests.solvers.test_exact_bruteforce import random_instance  # noqa: E402

TEN = (HostType("h", (10.0, 10.0), 30),)


def test_rule_with_small_k_beyond_the_cheap_bounds() -> None:
    # a (cap 1) needs 6 hosts; <a, b, 1>: those run one b each, the other 6 b's (3 cpu) need 2
    # more hosts. Cheap bounds: volume 5, cap 6. The LP proves 8, and 8 hosts suffice.
    apps = (App("a", (1.0, 1.0), 6, max_per_host=1), App("b", (3.0, 1.0), 12))
    inst = Instance("k1", ("cpu", "mem"), TEN, apps, (Rule("a", "b", 1),))
    assert lower_bounds(inst).best == 6
    rb = rule_bound(inst)
    assert (rb.value, rb.cheap, rb.kinds, rb.status) == (8, 6, ("a",), "optimal")
    assert 7.999 < rb.certified <= 8.0 and abs(rb.lp - 8.0) < 1e-6
    p = Placement({"a": tuple(range(6)), "b": (*range(6), 6, 6, 6, 7, 7, 7)})
    assert check(inst, p, require_all=True) == []
    # with k = 2 the a-hosts take all twelve b's (1 + 6 cpu): 6 hosts
    inst2 = inst.replace(rules=(Rule("a", "b", 2),))
    assert rule_lower_bound(inst2) == 6


def test_exclusion_closes_forced_hosts_per_resource() -> None:
    # kinds see the residual capacity: a (cap 1, 5 hosts, 8 cpu each) leaves 2 cpu per host for
    # c (2 cpu, 10 containers, only compatible with a); b (excludes a) 4 x 5 cpu.
    # Cheap: volume 40 + 20 + 20 = 80 -> 8; excluded 5 + 2 = 7. LP: a-hosts take 5 c's, the rest
    # (5 c + 4 b = 30 cpu) needs 3 more hosts: 8 ... and b's 2 per host keep it there: 8.
    apps = (App("a", (8.0, 1.0), 5, max_per_host=1), App("b", (5.0, 1.0), 4),
            App("c", (2.0, 1.0), 10))
    inst = Instance("x", ("cpu", "mem"), TEN, apps, (), (("a", "b"),))
    lb = lower_bounds(inst)
    rb = rule_bound(inst)
    assert rb.value >= lb.best and rb.value == 8


def test_stop_and_trivial() -> None:
    apps = (App("a", (1.0, 1.0), 6, max_per_host=1), App("b", (3.0, 1.0), 12))
    inst = Instance("k1", ("cpu", "mem"), TEN, apps, (Rule("a", "b", 1),))
    flag = StopFlag()
    flag.set()
    rb = rule_bound(inst, stop=flag)
    assert (rb.value, rb.status) == (6, "stopped")
    empty = Instance("e", ("cpu",), (HostType("h", (1.0,), 1),), (App("a", (1.0,), 0),))
    assert rule_bound(empty).status == "trivial"


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.lists(st.floats(-2.0, 2.0), min_size=4, max_size=4))
def test_certificate_holds_for_any_multipliers(n: int, noise: list[float]) -> None:
    # min x0 + x1  s.t. -x0 - 2 x1 <= -n, x0 - 3 <= 0 ... (bounds 0..10): optimum n / 2
    a = sp.csr_matrix(np.array([[-1.0, -2.0], [1.0, 0.0]]))
    b = np.array([-float(n), 3.0])
    c = np.ones(2)
    upper = np.array([10.0, 10.0])
    opt = n / 2
    assert _certify(c, a, b, upper, np.array([-0.5, 0.0])) <= opt
    assert _certify(c, a, b, upper, np.array([-0.5, 0.0])) > opt - 1e-6
    marg = np.array(noise[:2])
    assert _certify(c, a, b, upper, marg) <= opt + 1e-12


def _scaled(inst: Instance, f: float) -> Instance:
    """The instance with every capacity and demand multiplied by ``f`` (non-integer data)."""
    types = tuple(t.__class__(**{**t.__dict__, "capacity": tuple(c * f for c in t.capacity)})
                  for t in inst.host_types)
    apps = tuple(a.__class__(**{**a.__dict__, "demand": tuple(d * f for d in a.demand)})
                 for a in inst.apps)
    return inst.replace(host_types=types, apps=apps)


@settings(max_examples=120, deadline=None)
@given(tiny_instances(gpus=False), st.sampled_from([1.0, 0.1, 1 / 3, 0.7, 1.3]))
def test_never_above_the_optimum(inst: Instance, f: float) -> None:
    inst = _scaled(inst, f)
    hosts = brute_force(inst)[0]
    if math.isinf(hosts):
        return
    rb = rule_bound(inst, time_limit=10)
    lb = lower_bounds(inst)
    assert lb.excluded <= hosts
    assert rb.value <= hosts, (rb, hosts, inst)


@settings(max_examples=40, deadline=None)
@given(tiny_instances(gpus=True, max_count=3))
def test_never_above_the_optimum_with_gpus(inst: Instance) -> None:
    hosts = brute_force(inst)[0]
    if not math.isinf(hosts):
        assert rule_lower_bound(inst, time_limit=10) <= hosts


def test_exact_fills_and_tolerance() -> None:
    # loads landing exactly on the capacity, just above it, or within the checker's tolerance
    for seed in range(40):
        inst = random_instance(seed)
        if inst.n_containers > 9:
            continue
        hosts = brute_force(inst)[0]
        rb = rule_bound(inst, time_limit=10)
        assert rb.value <= hosts, (seed, rb, hosts)
        assert lower_bounds(inst).excluded <= hosts


@st.composite
def hub_instances(draw: st.DrawFn) -> Instance:
    """A capped hub app ``a`` with a rule towards ``b`` (and maybe ``c``), non-integer sizes:
    small enough for brute force, often with the LP bound above the cheap bounds."""
    f = draw(st.sampled_from([1.0, 0.1, 1 / 3, 0.7]))
    cap = draw(st.integers(6, 10)) * f
    n_a = draw(st.integers(2, 3))
    apps = [App("a", (draw(st.integers(1, 5)) * f, 1.0), n_a, max_per_host=1)]
    apps.append(App("b", (draw(st.integers(2, 5)) * f, 1.0), draw(st.integers(2, 4))))
    rules = [Rule("a", "b", draw(st.integers(0, 2)))]
    if draw(st.booleans()):
        apps.append(App("c", (draw(st.integers(1, 4)) * f, 1.0), draw(st.integers(1, 2))))
        rules.append(Rule(*draw(st.sampled_from([("a", "c"), ("c", "a"), ("b", "c")])),
                          draw(st.integers(0, 1))))
    n = sum(a.count for a in apps)
    return Instance("hub", ("cpu", "mem"), (HostType("h", (cap, 10.0), n),), tuple(apps),
                    tuple(rules))


@settings(max_examples=150, deadline=None)
@given(hub_instances())
def test_hub_rules_never_above_the_optimum(inst: Instance) -> None:
    hosts = brute_force(inst)[0]
    if not math.isinf(hosts):
        assert rule_lower_bound(inst, time_limit=10) <= hosts


@settings(max_examples=60, deadline=None)
@given(tiny_instances(gpus=True, max_count=3), st.sampled_from([1.0, 0.1, 1 / 3]))
def test_class_bound_never_above_the_optimum(inst: Instance, f: float) -> None:
    from solvers.bounds.rule_bounds import class_config_bound, merge_classes

    inst = _scaled(inst, f)
    hosts = brute_force(inst)[0]
    agg = merge_classes(inst)
    assert agg.n_containers == inst.n_containers and not agg.rules
    if not math.isinf(hosts):
        assert class_config_bound(inst, time_limit=5).value <= hosts


def test_class_bound_sees_patterns() -> None:
    from solvers.bounds.rule_bounds import class_config_bound

    # a = (6, 2), b = (2, 6) and c = (4, 4) on (10, 10): a host holds {a, b}, {a, c}, {b, c} or
    # {c, c}; five a, five b, four c: volume 56 / 10 -> 6, cap 5; the configuration LP (dual
    # 1/2 each) proves 7, which 3 {a, b} + 2 {a, c} + 2 {b, c} reach. a and a2 merge.
    apps = (App("a", (6.0, 2.0), 3), App("a2", (6.0, 2.0), 2), App("b", (2.0, 6.0), 5),
            App("c", (4.0, 4.0), 4))
    inst = Instance("p", ("cpu", "mem"), TEN, apps)
    assert lower_bounds(inst).best == 6
    cb = class_config_bound(inst, time_limit=10)
    assert (cb.value, cb.classes, cb.converged) == (7, 3, True)


def test_tianchi_fixture_bounds_below_first_fit() -> None:
    from packing.loaders.tianchi import load_tianchi
    from solvers.search.greedy import ffd

    folder = Path(__file__).resolve().parents[2] / "data" / "tianchi_small"
    for kw in ({"view": "reduced"}, {"view": "full"},
               {"hosts": "64c128g", "rules": "cross", "round_up": True}):
        inst = load_tianchi(folder, **kw)  # type: ignore[arg-type]
        rb = rule_bound(inst, time_limit=20)
        g = ffd(inst, "hosts")
        assert rb.status == "optimal", rb
        assert rb.certified <= rb.lp + 1e-6
        assert rb.cheap <= rb.value
        if g.placed == inst.n_containers:
            assert rb.value <= g.objective
        assert rb.lp == pytest.approx(rb.certified, abs=1e-3)


@pytest.mark.slow
def test_tianchi_set_b_values(shared_data: Path) -> None:
    # the values in the README table (benchmarks/bench_tianchi_bounds.py)
    from packing.loaders.tianchi import load_tianchi

    inst = load_tianchi(shared_data / "alibaba-tianchi-2018")
    lb = lower_bounds(inst)
    assert (lb.volume, lb.cap, lb.excluded) == (2951, 610, 1594)
    rb = rule_bound(inst, time_limit=120)
    assert rb.value == 2951 and 2950.4 < rb.certified <= rb.lp
