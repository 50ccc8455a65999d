"""LNS repacking and CP-SAT's ``below`` cutoff."""

from __future__ import annotations

import numpy as np

from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance, Placement, Rule
from solvers.base import SolveOptions, objective_value
from solvers.exact.cpsat import solve_cpsat
from solvers.exact.lns import improve

# sizes 5 5 4 4 3 3 3 3 (sum 30) in bins of 10: the optimum is 3 (5+5, 4+3+3, 4+3+3)
SIZES = (5.0, 5.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0)


def _bins() -> Instance:
    return Instance("bp", ("s",), (HostType("b", (10.0,), 8),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate(SIZES)))


def test_lns_repacks_one_item_per_host_to_the_optimum() -> None:
    inst = _bins()
    start = Placement.from_arrays(inst, np.arange(8))  # every item alone: 8 hosts
    seen: list[float] = []
    pl = improve(inst, start, kind="hosts", time_limit=10, lower_bound=3, seed=1,
                 on_improve=seen.append)
    assert check(inst, pl, require_all=True) == []
    assert objective_value(inst, pl.host_array(inst), "hosts") == 3
    assert seen and seen[-1] == 3 and seen == sorted(seen, reverse=True)


def test_lns_keeps_rules_and_caps() -> None:
    # a excludes b; c at most 1 per host; 3 + 3 + 2 containers of size 2 on capacity 10
    inst = Instance("r", ("s",), (HostType("h", (10.0,), 9),),
                    (App("a", (2.0,), 3), App("b", (2.0,), 3), App("c", (2.0,), 2,
                                                                    max_per_host=1)),
                    exclusions=(("a", "b"),))
    start = Placement.from_arrays(inst, np.arange(8))
    pl = improve(inst, start, kind="hosts", time_limit=10, seed=0)
    assert check(inst, pl, require_all=True) == []
    # a-hosts and b-hosts are disjoint: a + c on one, b + c on another -> 2 hosts
    assert objective_value(inst, pl.host_array(inst), "hosts") == 2


def test_lns_leaves_deployed_alone() -> None:
    inst = _bins()
    start = Placement.from_arrays(inst, np.arange(8))
    assert improve(inst, start, kind="deployed", time_limit=1) is start


def test_cpsat_below_cutoff_proves_nothing_better() -> None:
    inst = _bins()
    res = solve_cpsat(inst, SolveOptions(time_limit=10, objective="hosts"), below=3)
    # no solution with fewer than 3 hosts: first fit's solution, with 3 as the proven bound
    assert res.status != "infeasible" and res.bound == 3
    assert res.placement is not None and check(inst, res.placement, require_all=True) == []
    found = solve_cpsat(inst, SolveOptions(time_limit=10, objective="hosts"), below=4)
    assert found.status == "optimal" and found.objective == 3


def test_cpsat_below_with_rule() -> None:
    # <a, b, 1>: a host with a takes at most one b. 1 a + 3 b of size 1 on capacity 10:
    # optimum 2 (a + b, b + b)
    inst = Instance("k", ("s",), (HostType("h", (10.0,), 4),),
                    (App("a", (1.0,), 1), App("b", (1.0,), 3)), rules=(Rule("a", "b", 1),))
    res = solve_cpsat(inst, SolveOptions(time_limit=10, objective="hosts"), below=3)
    assert res.objective == 2 and res.status == "optimal"
    assert res.placement is not None and check(inst, res.placement, require_all=True) == []


def test_cpsat_below_on_a_perfect_packing() -> None:
    # 7+3, 6+4, 5+5, 8+2 fill four bins of 10 exactly; first fit decreasing also finds 4,
    # so ask CP-SAT for 3 (impossible: volume 40 > 30) and for 4 with every host full
    sizes = (8.0, 7.0, 6.0, 5.0, 5.0, 4.0, 3.0, 2.0)
    inst = Instance("pp", ("s",), (HostType("b", (10.0,), 8),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate(sizes)))
    assert solve_cpsat(inst, SolveOptions(time_limit=10, objective="hosts"), below=4).bound == 4
    res = solve_cpsat(inst, SolveOptions(time_limit=10, objective="hosts"), below=5)
    assert res.objective == 4 and res.placement is not None
    assert check(inst, res.placement, require_all=True) == []
