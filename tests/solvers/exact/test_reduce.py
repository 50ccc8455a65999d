"""Presolve: implied resources, merged apps, and lifting solutions back to the original."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance, Rule
from solvers import solve
from solvers.exact.reduce import implied_resources, reduce_instance
from solvers.search.greedy import ffd


def test_memory_implied_by_cpu() -> None:
    # mem <= 0.8 cpu for every app, both capacities 100: mem can never bind
    inst = Instance("m", ("cpu", "mem"), (HostType("h", (100.0, 100.0), 5),),
                    (App("a", (10.0, 8.0), 3), App("b", (20.0, 4.0), 2)))
    assert implied_resources(inst).tolist() == [False, True]
    red = reduce_instance(inst)
    assert red.reduced.resources == ("cpu",)
    assert red.reduced.host_types[0].capacity == (100.0,)


def test_not_implied_when_one_app_leans_the_other_way() -> None:
    # b asks for more mem than cpu: a host full of b is over on mem before cpu
    inst = Instance("m", ("cpu", "mem"), (HostType("h", (100.0, 100.0), 5),),
                    (App("a", (10.0, 8.0), 10), App("b", (20.0, 30.0), 5)))  # mem total 230
    assert not implied_resources(inst).any()
    assert reduce_instance(inst).trivial


def test_capacity_ratio_matters() -> None:
    # mem <= 0.5 cpu per app, but mem capacity is only 40 of 100: 0.5 * 100 > 40, not implied;
    # cpu <= 5 mem, and 5 * 40 > 100: cpu is not implied either
    apps = (App("a", (10.0, 5.0), 20), App("b", (10.0, 2.0), 20))  # totals beyond one host
    tight = Instance("t", ("cpu", "mem"), (HostType("h", (100.0, 40.0), 5),), apps)
    roomy = Instance("t", ("cpu", "mem"), (HostType("h", (100.0, 50.0), 5),), apps)
    assert not implied_resources(tight).any()
    assert implied_resources(roomy).tolist() == [False, True]


def test_resource_whose_total_fits_one_host_is_implied() -> None:
    inst = Instance("d", ("cpu", "disk"), (HostType("h", (10.0, 100.0), 5),),
                    (App("a", (6.0, 30.0), 2), App("b", (5.0, 40.0), 1)))  # disk total 100
    assert implied_resources(inst).tolist() == [False, True]


def test_interchangeable_apps_merge_but_constrained_ones_do_not() -> None:
    apps = (App("a", (5.0,), 2), App("b", (5.0,), 3), App("c", (5.0,), 1),
            App("d", (5.0,), 4, max_per_host=1), App("e", (5.0,), 1), App("f", (5.0,), 1))
    inst = Instance("x", ("cpu",), (HostType("h", (10.0,), 20),), apps,
                    rules=(Rule("e", "f", 0),))
    red = reduce_instance(inst)
    names = [a.name for a in red.reduced.apps]
    # d (binding cap), e and f (in a rule) keep their names; a, b, c become one class of 6
    assert names[:3] == ["d", "e", "f"]
    assert len(names) == 4 and red.reduced.apps[3].count == 6
    assert red.app_class.tolist() == [3, 3, 3, 0, 1, 2]


def test_lift_and_project_round_trip() -> None:
    apps = tuple(App(f"a{i}", (float(1 + i % 3), 1.0), 2 + i % 2) for i in range(9))
    inst = Instance("x", ("cpu", "mem"), (HostType("h", (10.0, 10.0), 30),), apps)
    red = reduce_instance(inst)
    assert not red.trivial and red.reduced.n_apps == 3
    g = ffd(inst, "hosts")
    pl = g.placement(inst)
    back = red.lift(red.project(pl))
    assert back is not None
    assert np.array_equal(np.sort(back.host_array(inst)), np.sort(pl.host_array(inst)))
    assert check(inst, back, require_all=True) == []


def test_auto_on_reducible_instance_is_optimal_and_checked() -> None:
    # 1-D after presolve (mem <= cpu / 2): sizes 6 x2, 4 x2, 3 x2, 2 x1 on capacity 10, total 28;
    # 3 hosts suffice (6+4, 6+4, 3+3+2) and the volume bound is 3
    apps = (App("a", (6.0, 1.0), 1), App("b", (6.0, 3.0), 1), App("c", (4.0, 2.0), 2),
            App("d", (3.0, 1.0), 2), App("e", (2.0, 1.0), 1))
    inst = Instance("r", ("cpu", "mem"), (HostType("h", (10.0, 10.0), 7),), apps)
    res = solve(inst, "auto", time_limit=10)
    assert res.status == "optimal" and res.objective == 3
    assert res.placement is not None and check(inst, res.placement, require_all=True) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(0, 6)),
                min_size=2, max_size=8), st.booleans())
def test_lifted_ffd_of_the_reduced_instance_is_feasible(
        spec: list[tuple[int, int, int]], with_rule: bool) -> None:
    apps = tuple(App(f"a{i}", (float(c), float(m) / 2), n) for i, (c, m, n) in enumerate(spec))
    rules = (Rule("a0", "a1", 1),) if with_rule else ()
    inst = Instance("h", ("cpu", "mem"), (HostType("h", (6.0, 6.0), 60),), apps, rules=rules)
    red = reduce_instance(inst)
    assert red.reduced.n_containers == inst.n_containers
    g = ffd(red.reduced, "hosts")
    lifted = red.lift(g.placement(red.reduced))
    assert lifted is not None
    assert check(inst, lifted, require_all=True) == []
