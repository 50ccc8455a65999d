"""The aggregated CP-SAT model: size, hints, GPU modes, symmetry breaking, scaling."""

from __future__ import annotations

import numpy as np
import pytest

from packing.checker import check
from packing.model import App, HostType, Instance, Rule
from solvers import solve
from solvers.cpsat import _int_scale, build_model, model_hosts, solve_cpsat
from solvers.greedy import ffd


def _inst(count: int = 50) -> Instance:
    return Instance("c", ("cpu", "mem"), (HostType("h", (10.0, 10.0), count),),
                    (App("a", (3.0, 1.0), 6, max_per_host=2), App("b", (2.0, 4.0), 5),
                     App("c", (1.0, 1.0), 4)), rules=(Rule("a", "c", 1),),
                    exclusions=(("b", "c"),))


def test_only_hosts_up_to_ffd_are_built() -> None:
    inst = _inst(50)
    g = ffd(inst, "hosts")
    cm = build_model(inst, objective="hosts", upper=g.objective, hint=g)
    assert len(cm.hosts) == g.objective < 50
    # one integer per (app, host) and booleans only for the rule heads (a, and b/c for k = 0)
    assert len(cm.x) == 3 * len(cm.hosts)
    assert {a for a, _ in cm.z} <= {0, 1, 2}


def test_hosts_per_type_follow_cost_bound() -> None:
    inst = Instance("p", ("cpu",), (HostType("big", (20.0,), 10, cost=4.0),
                                     HostType("small", (10.0,), 10, cost=1.0)),
                    (App("a", (5.0,), 8),))
    hosts = model_hosts(inst, "cost", upper=6.0)
    # floor(6 / 4) = 1 big host, 6 small hosts (capped by the 8 containers and the count 10)
    assert list(hosts) == [0, 10, 11, 12, 13, 14, 15]


def test_int_scale() -> None:
    assert _int_scale(np.array([1.0, 2.5, 0.25])) == (100, True)
    assert _int_scale(np.array([3.0, 7.0])) == (1, True)
    assert _int_scale(np.array([1 / 3])) == (10**6, False)


def test_fractional_demands_are_safe() -> None:
    # 1/3 is not representable: demands round up, so 3 x 1/3 may not fill a host of 1; the
    # result must still be feasible, bound <= objective
    inst = Instance("f", ("cpu",), (HostType("h", (1.0,), 5),), (App("a", (1 / 3,), 6),))
    res = solve(inst, "cpsat", time_limit=5)
    assert check(inst, res.placement, require_all=True) == []  # type: ignore[arg-type]
    assert res.lower_bound <= res.objective  # type: ignore[operator]


@pytest.mark.parametrize("exact", [True, False])
def test_gpu_modes_give_checked_cards(exact: bool) -> None:
    inst = Instance("g", ("cpu",), (HostType("g", (100.0,), 6, gpus=4, gpu_capacity=(1000.0,)),),
                    (App("w", (1.0,), 3, gpu_cards=2, gpu_whole=True),
                     App("s", (1.0,), 5, gpu_cards=1, gpu_per_card=(700.0,)),
                     App("t", (1.0,), 4, gpu_cards=2, gpu_per_card=(300.0,))),
                    gpu_resources=("gpu_milli",))
    g = ffd(inst, "hosts")
    cm = build_model(inst, objective="hosts", upper=g.objective, hint=g, gpu_exact=exact)
    assert cm.gpu_exact is exact
    assert bool(cm.n) is exact
    res = solve(inst, "cpsat", time_limit=5)
    # cards: 6 whole + 5 x 700 (one card each) + t's 8 shares of 300 beside the 700s (5) and
    # 3 more on other cards -> >= 12 cards -> 3 hosts of 4 cards
    assert res.status == "optimal" and res.objective == 3


def test_callback_records_solutions() -> None:
    events = []
    inst = _inst()
    res = solve_cpsat(inst, time_limit=5, callback=events.append)
    assert events[0].message == "first fit"
    assert res.history and res.history[-1].objective is not None


def test_item_symmetry_single_container_apps() -> None:
    # classic bin packing: 6 items of sizes 6,5,4,3,2,2 (sum 22) in bins of 8 -> 3 bins
    sizes = [6.0, 5.0, 4.0, 3.0, 2.0, 2.0]
    inst = Instance("bp", ("s",), (HostType("b", (8.0,), 6),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate(sizes)))
    cm = build_model(inst, objective="hosts", upper=4)
    assert cm.item_rank is not None
    # the largest item may only use the first host
    assert [j for (a, j) in cm.x if a == 0] == [0]
    res = solve(inst, "cpsat", time_limit=5)
    assert res.status == "optimal" and res.objective == 3
