"""The aggregated CP-SAT model: size, hints, GPU modes, symmetry breaking, scaling."""

from __future__ import annotations

import pytest

from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance, Rule
from solvers import solve
from solvers.base import SolveOptions
from solvers.exact.cpsat import build_model, model_hosts, scale_instance, solve_cpsat
from solvers.search.greedy import ffd


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


def test_scaling_reads_the_decimals() -> None:
    inst = Instance("s", ("cpu", "mem"), (HostType("h", (1.0, 64.0), 3),),
                    (App("a", (0.5000001, 2.5), 2), App("b", (0.25, 0.75), 1)))
    sc = scale_instance(inst)
    assert sc.exact
    # cpu: 7 decimals; mem: 2 decimals, divided by the gcd 25 (2.5, 0.75, 64 -> 10, 3, 256)
    assert sc.rows.demand.tolist() == [[5000001, 10], [2500000, 3]]
    assert sc.rows.full.tolist() == [[10000000, 256]]
    # the capacity row allows the checker's tolerance (1e-9 of 1.0 is 0.01 units of 1e-7)
    assert sc.rows.capacity.tolist() == [[10000000, 256]]


def test_inexact_data_gives_no_proof() -> None:
    # 1e-30 has no decimal reading within the limit: the model is an approximation, so a
    # result may be feasible but never proven optimal by the model itself
    inst = Instance("f", ("cpu",), (HostType("h", (1.0,), 5),),
                    (App("a", (0.3 + 1e-17,), 3), App("b", (1e-30,), 1)))
    sc = scale_instance(inst)
    assert not sc.exact
    res = solve(inst, "cpsat", time_limit=5)
    assert check(inst, res.placement, require_all=True) == []  # type: ignore[arg-type]
    assert res.proofs["bound"] != "cpsat"
    assert res.bound <= res.objective  # type: ignore[operator]


def test_fractional_demands_are_exact() -> None:
    # 1/3 is read as 0.3333333333333333 (16 decimals): three fit a host of 1 in the checker
    # (0.9999999999999999 <= 1), so 6 of them need 2 hosts
    inst = Instance("f", ("cpu",), (HostType("h", (1.0,), 5),), (App("a", (1 / 3,), 6),))
    res = solve(inst, "cpsat", time_limit=5)
    assert check(inst, res.placement, require_all=True) == []  # type: ignore[arg-type]
    assert res.status == "optimal" and res.objective == 2


def test_tolerance_is_not_stricter_than_the_checker() -> None:
    # 0.5000000005 + 0.5 = 1.0000000005 <= 1 + 1e-9: the checker accepts one host for both
    inst = Instance("t", ("cpu",), (HostType("h", (1.0,), 3),),
                    (App("a", (0.5000000005,), 1), App("b", (0.5,), 1)))
    for method in ("cpsat", "pulp"):
        res = solve(inst, method, time_limit=5)
        assert res.objective == 1, method
    # memory in MiB: the tolerance is 1e-9 of the capacity (about 0.000262 MiB here)
    inst = Instance("m", ("mem",), (HostType("h", (262144.0,), 3),),
                    (App("a", (131072.0002,), 1), App("b", (131072.0,), 1)))
    for method in ("cpsat", "pulp"):
        res = solve(inst, method, time_limit=5)
        assert res.objective == 1, method


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
    res = solve_cpsat(inst, SolveOptions(time_limit=5, callback=events.append))
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


def test_bound_of_a_run_cut_short_stays_below_the_planted_optimum() -> None:
    # a perfect packing of 120 items on 41 hosts: one second on one worker finds a packing on
    # 42 or more, not the planted one; whatever it returns, the bound may not pass 41 and
    # "optimal" must mean 41 hosts
    from packing.generators.hard1d import generate_hard1d

    inst = generate_hard1d(0, n_items=120)
    opt = inst.meta["planted_optimum"]
    assert opt == 41
    res = solve_cpsat(inst, SolveOptions(time_limit=1.0, workers=1, seed=0))
    assert res.objective is not None and res.bound <= opt
    assert (res.status == "optimal") == (res.objective == opt)


def test_deployed_run_stopped_before_any_solution_proves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # first fit deploys 3 of 4 (4 + 4 on one host, a 6 on the other); 6 + 4 twice deploys all 4.
    # CP-SAT stopped before any solution (status UNKNOWN) reports a bound of 0: it is no upper bound
    # on the tasks deployed, and first fit's 3 is not proven optimal by it
    import time

    from ortools.sat.python import cp_model

    import solvers.exact.cpsat as cs

    inst = Instance("d", ("s",), (HostType("h", (10.0,), 2),),
                    (App("six", (6.0,), 2), App("four", (4.0,), 2)))
    assert ffd(inst, "deployed").objective == 3
    statuses: list[int] = []
    real = cs.run_cpsat

    def no_time(solver, model, callback=None, stop=None, deadline=None):  # type: ignore[no-untyped-def]
        statuses.append(real(solver, model, callback, stop, deadline=time.perf_counter() - 1.0))
        return statuses[-1]

    monkeypatch.setattr(cs, "run_cpsat", no_time)
    res = solve_cpsat(inst, SolveOptions(time_limit=10, objective="deployed"))
    assert statuses == [cp_model.UNKNOWN]
    assert res.status == "feasible" and res.objective == 3 and res.bound == 4
