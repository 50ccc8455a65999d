"""Column generation: hand-computed optima, the LP bound against optimum and volume, Caprara-Toth."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packing.errors import InputError
from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance
from solvers.base import SolveOptions
from solvers.exact.colgen import colgen_bound, cost_unit, solve_colgen
from solvers.exact.pulp_model import solve_pulp
from solvers.search.greedy import ffd
from tests.solvers.hand_cases import cases

# the LP bound of the cost case is 3.5 (two small hosts take a and a, half a big host (a, a)
# covers b); with integer costs it rounds up to the optimum 4
LP_GAP: dict[str, float] = {}


@pytest.mark.parametrize("name,inst,opt", cases(), ids=[c[0] for c in cases()])
def test_hand_computed_optimum(name: str, inst: Instance, opt: float) -> None:
    r = solve_colgen(inst, SolveOptions(time_limit=20, workers=1))
    assert r.status == ("feasible" if name in LP_GAP else "optimal"), r
    assert r.objective == pytest.approx(opt)
    assert r.bound == pytest.approx(LP_GAP.get(name, opt))
    assert r.placement is not None
    assert check(inst, r.placement, require_all=True) == []


def test_lp_bound_beats_volume_when_two_resources_bind() -> None:
    # (6,3) and (3,6) on (10,10): volume 90/10 = 9 hosts, but a host holds at most one of
    # each, so every pattern covers at most 2 of the 20 containers: LP = 10
    inst = cases()[3][1]
    b = colgen_bound(inst, time_limit=20)
    assert b.converged
    assert b.lp_value == pytest.approx(10.0)
    assert b.bound == 10
    volume = max(inst.demand.T @ inst.counts / 10.0)
    assert volume == pytest.approx(9.0)


def test_cost_bound_rounds_to_the_cost_unit() -> None:
    # a=(6,6) fits only a big host (cost 3), with at most 2 of b; the third b takes half of
    # a small host (cost 1, holds 2 b): LP = 3.5; costs are integers, so the bound is 4
    inst = Instance("cb", ("cpu", "mem"),
                    (HostType("big", (10, 10), 2, cost=3.0), HostType("small", (5, 5), 2, cost=1.0)),
                    (App("a", (6, 6), 1), App("b", (2, 2), 3)))
    b = colgen_bound(inst, time_limit=20)
    assert b.converged
    assert b.lp_bound == pytest.approx(3.5)
    assert b.bound == pytest.approx(4.0)
    halves = inst.replace(host_types=(HostType("big", (10, 10), 2, cost=1.5),
                                      HostType("small", (5, 5), 2, cost=0.5)))
    b = colgen_bound(halves, time_limit=20)
    assert b.lp_bound == pytest.approx(1.75) and b.bound == pytest.approx(2.0)
    r = solve_colgen(inst, SolveOptions(time_limit=20, workers=1))
    assert r.status == "optimal" and r.objective == 4


def test_cost_unit() -> None:
    assert cost_unit(np.array([3.0, 1.0])) == 1.0
    assert cost_unit(np.array([1.5, 0.5])) == 0.5
    assert cost_unit(np.array([0.25, 0.1])) == pytest.approx(0.05)
    assert cost_unit(np.array([math.pi, 1.0])) is None


def test_deployed_is_unsupported() -> None:
    with pytest.raises(InputError, match="not supported"):
        solve_colgen(cases()[0][1], SolveOptions(objective="deployed"))


def test_infeasible() -> None:
    inst = Instance("in", ("cpu", "mem"), (HostType("h", (10, 10), 3),),
                    (App("a", (11, 1), 1), App("b", (1, 1), 1)))
    r = solve_colgen(inst, SolveOptions(time_limit=10, workers=1))
    assert r.status == "infeasible"
    assert r.placement is None


def test_bounds_before_convergence_are_valid() -> None:
    # every bound reported while the run goes on (Farley / Lagrangian, from duals that are not
    # yet optimal) must be at most the converged bound; the run must report several positive
    # ones (a run cut at 0.05 s reports only 0, which proves nothing)
    rng = np.random.default_rng(3)
    apps = tuple(App(f"a{i}", (int(rng.integers(5, 40)), int(rng.integers(5, 40))), 3)
                 for i in range(30))
    inst = Instance("tl", ("cpu", "mem"), (HostType("h", (100, 100), 90),), apps)
    events: list = []
    full = colgen_bound(inst, time_limit=30, callback=events.append)
    assert full.converged
    bounds = [e.bound for e in events if e.bound is not None]
    assert len(bounds) >= 3 and bounds[0] > 0
    assert bounds[0] < full.bound  # it did improve during the run
    assert max(bounds) <= full.bound
    assert full.bound <= ffd(inst).objective


@settings(max_examples=12, deadline=None)
@given(st.data())
def test_lp_bound_between_volume_and_optimum(data: st.DataObject) -> None:
    n_apps = data.draw(st.integers(1, 3))
    apps = tuple(
        App(f"a{i}", (data.draw(st.integers(1, 9)), data.draw(st.integers(1, 9))),
            data.draw(st.integers(1, 3)), max_per_host=data.draw(st.none() | st.integers(1, 2)))
        for i in range(n_apps))
    excl = ((("a0", "a1"),) if n_apps > 1 and data.draw(st.booleans()) else ())
    inst = Instance("r", ("cpu", "mem"), (HostType("h", (10, 10), 9),), apps, exclusions=excl)
    b = colgen_bound(inst, time_limit=20)
    ref = solve_pulp(inst, SolveOptions(time_limit=20, workers=1))
    assert ref.status == "optimal"
    assert b.converged
    volume = float(max(inst.demand.T @ inst.counts / 10.0))
    assert volume - 1e-6 <= b.lp_value <= ref.objective + 1e-6
    assert b.bound <= ref.objective


CT = ["CL_1_25_1.vbp", "CL_2_25_1.vbp", "CL_10_24_1.vbp"]


@pytest.mark.shared_data
@pytest.mark.parametrize("name", CT)
def test_caprara_toth_gilmore_gomory_bound(shared_data: Path, name: str) -> None:
    from packing.loaders import load_any

    folder = shared_data / "caprara-toth-2d"
    with open(folder / "optimal_values.csv", encoding="utf-8") as f:
        ref = {r["instance"]: r for r in csv.DictReader(f)}[name]
    inst = load_any(folder / "instances" / name)
    b = colgen_bound(inst, time_limit=30)
    published = float(ref["lp_bound_gilmore_gomory"])
    assert b.converged
    assert abs(b.lp_value - published) <= 1e-2
    assert b.bound == math.ceil(published - 1e-6)
    assert b.bound <= int(ref["opt_bins"])


@pytest.mark.shared_data
def test_caprara_toth_solved(shared_data: Path) -> None:
    from packing.loaders import load_any

    folder = shared_data / "caprara-toth-2d"
    inst = load_any(folder / "instances" / "CL_2_25_1.vbp")
    r = solve_colgen(inst, SolveOptions(time_limit=20, workers=1))
    assert r.placement is not None and check(inst, r.placement, require_all=True) == []
    assert r.status == "optimal" and r.objective == 13
