"""The PuLP/CBC aggregated model: hand-computed optima, infeasibility, the deployed objective."""

from __future__ import annotations

import pytest

from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance, Rule
from solvers.base import SolveOptions
from solvers.exact.pulp_model import build_model, solve_pulp
from tests.solvers.hand_cases import cases


@pytest.mark.parametrize("name,inst,opt", cases(), ids=[c[0] for c in cases()])
def test_hand_computed_optimum(name: str, inst: Instance, opt: float) -> None:
    r = solve_pulp(inst, SolveOptions(time_limit=20, workers=1))
    assert r.status == "optimal", r
    assert r.objective == pytest.approx(opt)
    assert r.bound == pytest.approx(opt)
    assert r.placement is not None
    assert check(inst, r.placement, require_all=True) == []


def test_cbc_claim_verified_by_cpsat(monkeypatch: pytest.MonkeyPatch) -> None:
    # without the cheap bound, only CP-SAT's verification of CBC's optimum proves the 10 hosts
    import solvers.exact.pulp_model as pm

    monkeypatch.setattr(pm, "cheap_lower_bound", lambda inst, kind: (0.0, "none"))
    inst = cases()[3][1]
    r = solve_pulp(inst, SolveOptions(time_limit=20, workers=1))
    assert r.proofs["bound"] == "cpsat"
    assert r.proofs["cbc"] == "claimed optimal 10"
    assert r.bound == 10 and r.status == "optimal"


def test_cbc_claim_without_time_to_verify_is_not_a_proof(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    import solvers.exact.pulp_model as pm

    monkeypatch.setattr(pm, "cheap_lower_bound", lambda inst, kind: (0.0, "none"))
    monkeypatch.setattr(pm, "MIN_VERIFY_SECONDS", 1e9)
    inst = cases()[3][1]
    r = solve_pulp(inst, SolveOptions(time_limit=20, workers=1))
    assert r.proofs["cbc"] == "claimed optimal 10"
    assert r.status == "feasible" and r.objective == 10 and r.bound == 0


def test_infeasible() -> None:
    inst = Instance("in", ("cpu", "mem"), (HostType("h", (10, 10), 3),),
                    (App("a", (11, 1), 1), App("b", (1, 1), 1)))
    r = solve_pulp(inst, SolveOptions(time_limit=10, workers=1))
    assert r.status == "infeasible"
    assert r.placement is None
    assert r.reason


def test_deployed_maximises_placed_containers() -> None:
    # one host: a + b = (9, 9) places 2, three b = (9, 9) place 3, a alone fits 1
    inst = Instance("de", ("cpu", "mem"), (HostType("h", (10, 10), 1),),
                    (App("a", (6, 6), 1), App("b", (3, 3), 3)))
    r = solve_pulp(inst, SolveOptions(time_limit=10, workers=1, objective="deployed"))
    assert r.status == "optimal"
    assert r.objective == 3
    assert r.bound == 3  # the proven upper bound for a maximisation
    assert r.placement is not None
    assert check(inst, r.placement) == []


def test_deployed_with_rules_needs_the_solver() -> None:
    # two hosts; <a, b, 0> both ways; a=(6,6) x2, b=(5,5) x3, c=(4,4) x2:
    # best: host1 a+c (10,10), host2 b+b (10,10) -> 4 placed; 5 is impossible by volume per host
    inst = Instance("dr", ("cpu", "mem"), (HostType("h", (10, 10), 2),),
                    (App("a", (6, 6), 2), App("b", (5, 5), 3), App("c", (4, 4), 2)),
                    exclusions=(("a", "b"),))
    r = solve_pulp(inst, SolveOptions(time_limit=10, workers=1, objective="deployed"))
    assert r.status == "optimal"
    assert r.objective == 4
    assert r.placement is not None and check(inst, r.placement) == []


def test_build_model_variables_only_where_allowed() -> None:
    inst = Instance("bm", ("cpu", "mem"), (HostType("h", (10, 10), 2),),
                    (App("a", (6, 6), 1), App("b", (11, 1), 1)), rules=(Rule("a", "b", 0),))
    m = build_model(inst, objective="hosts")
    assert set(m.x) == {(0, 0), (0, 1)}  # b fits nowhere: no variables
    assert set(m.y) == {0, 1}


def test_hosts_open_when_no_row_can_bind() -> None:
    # regression: one resource, no row can overflow a host alone, yet a used host must be paid
    # 8 containers of 5; big (20, cost 3) holds 4, small (10, cost 1) holds 2, 3 smalls exist:
    # 1 big + 2 small = 5 is optimal
    inst = Instance("c", ("cpu",), (HostType("big", (20.0,), 3, cost=3.0),
                                     HostType("small", (10.0,), 3, cost=1.0)),
                    (App("a", (5.0,), 8),))
    r = solve_pulp(inst, SolveOptions(time_limit=10, workers=1))
    assert r.status == "optimal" and r.objective == 5 and r.bound == 5
    assert r.placement is not None and check(inst, r.placement, require_all=True) == []
