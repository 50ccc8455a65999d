"""``auto``: stops at first fit when the cheap bound meets it, and names its proofs."""

from __future__ import annotations

import dataclasses

import pytest

from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance
from solvers import AutoSettings, solve
from solvers.base import SolveOptions


def test_ffd_meets_volume_bound() -> None:
    inst = Instance("v", ("cpu",), (HostType("h", (10.0,), 10),), (App("a", (5.0,), 6),))
    res = solve(inst, "auto", time_limit=5)
    assert res.status == "optimal" and res.objective == 3
    assert res.proofs == {"solution": "ffd", "bound": "volume"}
    assert res.method == "auto"


def test_ffd_meets_cap_bound() -> None:
    inst = Instance("c", ("cpu",), (HostType("h", (10.0,), 10),),
                    (App("a", (1.0,), 5, max_per_host=1),))
    res = solve(inst, "auto", time_limit=5)
    assert res.objective == 5 and res.proofs["bound"] == "cap"


def test_needs_search_and_reports_parts() -> None:
    # bin packing where FFD is not optimal: sizes 5 5 4 4 3 3 3 3 (sum 30) in bins of 10:
    # FFD: 5+5 | 4+4 | 3+3+3 | 3 -> 4 bins; optimum 3 (5+5, 4+3+3, 4+3+3)
    sizes = [5.0, 5.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0]
    inst = Instance("bp", ("s",), (HostType("b", (10.0,), 8),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate(sizes)))
    res = solve(inst, "auto", time_limit=10)
    assert check(inst, res.placement, require_all=True) == []  # type: ignore[arg-type]
    assert res.status == "optimal" and res.objective == 3
    assert res.proofs["solution"] != "ffd"
    assert set(res.proofs) == {"solution", "bound"}


def test_deployed_everything_fits() -> None:
    inst = Instance("d", ("cpu",), (HostType("h", (10.0,), 2),), (App("a", (5.0,), 3),))
    res = solve(inst, "auto", objective="deployed", time_limit=5)
    assert res.objective == 3 and res.status == "optimal"


@pytest.mark.parametrize("improver", ["tabu", "lns"])
def test_large_model_path_colgen_then_improve(monkeypatch: pytest.MonkeyPatch,
                                              improver: str) -> None:
    # pretend the model is large: colgen first (stubbed to return every item on its own host),
    # then tabu search (where it applies) or LNS must repack to the optimum 3 (5+5, 4+3+3, 4+3+3)
    import numpy as np

    import solvers.exact.colgen as colgen
    import solvers.search.tabu as tabu
    from packing.model.instance import Placement
    from solvers.result import SolveResult

    sizes = [5.0, 5.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0]
    inst = Instance("bp", ("s",), (HostType("b", (10.0,), 8),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate(sizes)))
    calls: list[float] = []

    def stub(instance: Instance, options: SolveOptions) -> SolveResult:
        calls.append(float(options.time_limit))
        pl = Placement.from_arrays(instance, np.arange(8))
        return SolveResult("feasible", 8.0, 3.0, pl, 8, "colgen", 0.0, "hosts",
                           {"solution": "rounding", "bound": "colgen"})

    if improver != "lns":  # compiled before colgen is stubbed (the warm-up runs colgen too)
        from tests.solvers.warm import warm_search

        warm_search()
    monkeypatch.setattr(colgen, "solve_colgen", stub)
    settings = AutoSettings(cpsat_small=0, cpsat_large=0)
    if improver == "lns":
        monkeypatch.setattr(tabu, "applicable", lambda instance: False)
        limit = 8.0
    else:  # no stage 1b (it would solve this at once); stage 3 needs search_min_left seconds
        settings = dataclasses.replace(settings, tabu_share=0.0, cover_share=0.0)
        limit = 2 * settings.search_min_left
    res = solve(inst, "auto", time_limit=limit, settings=settings)
    assert calls and calls[0] <= limit * settings.colgen_share_large
    assert res.status == "optimal" and res.objective == 3
    assert res.proofs["solution"] == improver
    assert check(inst, res.placement, require_all=True) == []  # type: ignore[arg-type]
    assert res.seconds <= limit + 1


def test_presolved_instance_is_lifted_back() -> None:
    # mem never binds (mem <= cpu / 2) and the three apps are interchangeable: one class of 5
    # containers of size 4 on capacity 10 -> 3 hosts (2 + 2 + 1), volume bound 2, cap bound 3
    inst = Instance("r", ("cpu", "mem"), (HostType("h", (10.0, 10.0), 6),),
                    (App("a", (4.0, 1.0), 2), App("b", (4.0, 2.0), 2), App("c", (4.0, 0.5), 1)))
    res = solve(inst, "auto", time_limit=5)
    assert res.status == "optimal" and res.objective == 3
    assert res.placement is not None and set(res.placement.hosts) == {"a", "b", "c"}
    assert check(inst, res.placement, require_all=True) == []


def test_settings_are_values() -> None:
    s = AutoSettings()
    assert s.cpsat_small == 30_000 and s.search_min_left == 20.0 and s.margin == 0.3
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.margin = 1.0  # type: ignore[misc]
    inst = Instance("v", ("cpu",), (HostType("h", (10.0,), 10),), (App("a", (5.0,), 6),))
    with pytest.raises(ValueError, match="settings"):
        solve(inst, "cpsat", time_limit=5, settings=s)


def test_settings_choose_the_stages(monkeypatch: pytest.MonkeyPatch) -> None:
    # with cpsat_small = 0 the first CP-SAT run is skipped and column generation comes first
    import solvers.exact.colgen as colgen

    sizes = [5.0, 5.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0]
    inst = Instance("bp", ("s",), (HostType("b", (10.0,), 8),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate(sizes)))
    seen: list[str] = []
    real = colgen.solve_colgen

    def spy(instance: Instance, options: SolveOptions) -> object:
        seen.append("colgen")
        return real(instance, options)

    monkeypatch.setattr(colgen, "solve_colgen", spy)
    # stage 1b would settle it, and so would the arc-flow LP bound (stage 1a)
    no_search = AutoSettings(tabu_share=0.0, cover_share=0.0, arcflow=False)
    # a generous limit (each returns as soon as it is proven) so a loaded machine changes no stage
    res = solve(inst, "auto", time_limit=60, settings=no_search)
    assert seen == [] and res.status == "optimal"  # the default: CP-SAT settles it first
    res = solve(inst, "auto", time_limit=60,
                settings=dataclasses.replace(no_search, cpsat_small=0))
    assert seen == ["colgen"] and res.status == "optimal"


def test_a_feasible_result_keeps_its_bound_below_the_objective() -> None:
    # 150 containers with rules: four seconds leave auto above the volume bound (CP-SAT's or the
    # tabu search's solution, not closed); a "feasible" result must say how far it may be off
    from packing.feasibility.bounds import lower_bounds
    from packing.generators.random import generate_random

    inst = generate_random(20, 150, rule_density=0.3, exclusion_density=0.1, cap_fraction=0.3,
                           seed=5)
    res = solve(inst, "auto", time_limit=4, seed=0)
    assert res.placement is not None and check(inst, res.placement, require_all=True) == []
    assert res.objective is not None and res.bound >= lower_bounds(inst).best
    if res.status == "feasible":
        assert res.bound < res.objective and res.gap is not None and res.gap > 0
    else:
        assert res.status == "optimal" and res.bound == res.objective


def test_a_part_claiming_infeasible_beside_a_placement_proves_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a faulty part (CP-SAT replaced by one that always answers "infeasible") while first fit
    # has placed everything: auto keeps its own bound and never calls the result optimal on it
    import math

    import solvers.exact.cpsat as cpsat_module
    from solvers.result import SolveResult
    from tests.solvers.test_exact_bruteforce import hard_instance

    calls: list[int] = []

    def faulty(inst: Instance, options: SolveOptions, **kw: object) -> SolveResult:
        calls.append(1)
        return SolveResult("infeasible", None, math.inf, None, None, "cpsat", 0.0, "hosts",
                           {"bound": "faulty"}, "fault", ())

    monkeypatch.setattr(cpsat_module, "solve_cpsat", faulty)
    inst, opt = hard_instance(1)  # optimum 3 above the cheap bound 2
    # no other part that could prove the optimum first (so the faulty one is asked)
    quiet = AutoSettings(arcflow=False, patterns=False, cover_share=0.0, colgen_share=0.0)
    res = solve(inst, "auto", time_limit=3, seed=0, settings=quiet)
    assert calls
    assert res.placement is not None and check(inst, res.placement, require_all=True) == []
    assert res.proofs["bound"] != "faulty" and res.bound <= opt
    assert res.status == "feasible" or res.objective == res.bound == opt


@pytest.mark.parametrize("seed", [1, 5])
def test_large_path_proves_only_what_its_cheap_bound_proves(seed: int) -> None:
    # the large-scale path (forced here on a small instance whose optimum lies above the cheap
    # bound) has no proof but the cheap bound: it may not call a placement above it optimal
    from packing.feasibility.bounds import lower_bounds
    from tests.solvers.test_exact_bruteforce import hard_instance

    inst, opt = hard_instance(seed)
    lb = lower_bounds(inst).best
    assert opt > lb
    res = solve(inst, "auto", time_limit=3, seed=0, settings=AutoSettings(spread_min_work=1))
    assert res.placement is not None and check(inst, res.placement, require_all=True) == []
    assert res.objective is not None and res.objective >= opt and res.bound == lb
    assert res.status == "feasible"
