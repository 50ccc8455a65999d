"""The partition over small-reduced-cost patterns: brute force on small decimal instances."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import solvers.exact.arcflow as af
from packing.feasibility.checker import check
from packing.generators.hard1d import generate_hard1d, petersen_instance
from packing.model.instance import App, HostType, Instance
from solvers import solve
from solvers.exact.arcflow_patterns import dual_bound, small_rc_patterns, solve_patterns


def one_d(cap: float, sizes: list[float]) -> Instance:
    vals, counts = np.unique(np.asarray(sizes, dtype=np.float64), return_counts=True)
    apps = tuple(App(f"i{k}", (float(v),), int(c))
                 for k, (v, c) in enumerate(zip(vals, counts, strict=True)))
    return Instance("t", ("s",), (HostType("h", (cap,), len(sizes)),), apps)


def fewest_bins(cap: int, sizes: list[int]) -> int:
    """Fewest bins, by a dynamic programme over subsets (integer sizes, items <= 12)."""
    n = len(sizes)
    best = [(n + 1, 0)] * (1 << n)  # (bins, load of the last bin), smallest first
    best[0] = (1, 0)
    for mask in range(1 << n):
        bins, load = best[mask]
        if bins > n:
            continue
        for i in range(n):
            if mask & (1 << i):
                continue
            nxt = mask | (1 << i)
            cand = (bins, load + sizes[i]) if load + sizes[i] <= cap else (bins + 1, sizes[i])
            best[nxt] = min(best[nxt], cand)
    return best[-1][0]


def all_patterns(g: af.ArcGraph) -> list[tuple[int, ...]]:
    """Every pattern (counts per app, load within the capacity), by brute force."""
    ranges = [range(min(int(b), int(g.capacity) // int(w)) + 1) if w > 0 else range(1)
              for w, b in zip(g.size.tolist(), g.need.tolist(), strict=True)]
    return [c for c in itertools.product(*ranges)
            if sum(k * int(w) for k, w in zip(c, g.size.tolist(), strict=True)) <= g.capacity]


# decimal sizes (tenths of a unit on a capacity of 10.0): exact scaling to a grid of 100
sizes_st = st.lists(st.integers(5, 80), min_size=3, max_size=9)


@settings(max_examples=25, deadline=None)
@given(sizes=sizes_st)
def test_dual_bound_and_patterns_match_brute_force(sizes: list[int]) -> None:
    inst = one_d(10.0, [s / 10 for s in sizes])
    g = af.build_graph(inst)
    sol = af.lp_solution(g)
    assert sol is not None
    lp, duals = sol
    pi, bound, best = dual_bound(g, duals)
    opt = fewest_bins(100, sizes)
    assert bound <= lp + 1e-6
    assert bound <= opt + 1e-9  # a valid lower bound
    pats = all_patterns(g)
    values = [float(np.dot(pi, c)) for c in pats]
    assert max(values) <= 1.0 + 1e-9  # the scaled duals are dual feasible
    for threshold in (0.0, 0.05, 0.3, 2.0):
        got, outcome = small_rc_patterns(g, pi, best, threshold)
        assert outcome == "complete"
        want = {c for c, v in zip(pats, values, strict=True) if 1.0 - v <= threshold + 1e-7}
        assert {tuple(int(x) for x in row) for row in got} == want


@settings(max_examples=8, deadline=None)
@given(sizes=sizes_st)
def test_partition_finds_the_optimum_and_proves_one_less_infeasible(sizes: list[int]) -> None:
    inst = one_d(10.0, [s / 10 for s in sizes])
    g = af.build_graph(inst)
    sol = af.lp_solution(g)
    assert sol is not None
    opt = fewest_bins(100, sizes)
    at_opt = solve_patterns(g, sol[1], opt, time_limit=20)
    assert at_opt.counts is not None and not at_opt.infeasible
    assert len(at_opt.counts) <= opt
    assert (at_opt.counts.sum(axis=0) == g.need).all()
    pl = af.checked_placement(inst, at_opt.counts)
    assert pl is not None and check(inst, pl, require_all=True) == []
    if opt > 1:
        below = solve_patterns(g, sol[1], opt - 1, time_limit=20)
        assert below.counts is None  # never a packing below the optimum
        if below.complete:
            assert below.infeasible


def test_petersen_gap_is_proven_by_the_partition() -> None:
    # LP bound 3, optimum 4 (no 3-edge-colouring of the Petersen graph): with U = 3 the gap is
    # 0: every used pattern fills its bin exactly (pi @ n = 1), and no 3 of them partition
    inst = petersen_instance()
    g = af.build_graph(inst)
    sol = af.lp_solution(g)
    assert sol is not None and sol[0] == pytest.approx(3.0)
    res = solve_patterns(g, sol[1], 3, time_limit=20)
    assert res.complete and res.infeasible and res.counts is None
    assert res.patterns >= 6  # the 6 perfect matchings at least
    four = solve_patterns(g, sol[1], 4, time_limit=20)
    assert four.counts is not None and len(four.counts) <= 4


def test_auto_proves_petersen_through_the_arcflow_stages() -> None:
    # stage 1f (patterns) and the arc-flow MIP beside it race to the proof: either may win on a
    # loaded machine (the partition alone is tested above)
    af.forget_graph()
    res = solve(petersen_instance(), "auto", time_limit=30, seed=0)
    assert res.status == "optimal" and res.objective == 4 and res.bound == 4
    assert res.proofs["bound"] in ("patterns", "arcflow")


def test_triplets_are_found_by_the_partition() -> None:
    # every bin of the optimum is filled exactly: the LP bound is the planted optimum, the gap
    # is (nearly) 0 and the partition finds the triplets
    inst = generate_hard1d(3, kind="triplets", n_items=31)
    g = af.build_graph(inst)
    sol = af.lp_solution(g)
    assert sol is not None
    hosts = math.ceil(sol[0] - 1e-6)
    assert hosts == inst.meta["planted_optimum"] == 11
    res = solve_patterns(g, sol[1], hosts, time_limit=20)
    _pi, bound, _best = dual_bound(g, sol[1])
    assert bound == pytest.approx(sol[0], abs=1e-6)
    assert res.gap == pytest.approx(hosts - bound)
    assert res.counts is not None and len(res.counts) == 11
    pl = af.checked_placement(inst, res.counts)
    assert pl is not None and check(inst, pl, require_all=True) == []


@pytest.mark.slow
@pytest.mark.parametrize("seed, opt", [(1003, 69), (1018, 78)])
def test_auto_proves_the_uniform_instances_heuristics_miss(seed: int, opt: int) -> None:
    # LP bound = volume bound = opt, first fit opt + 1, the tabu search stalls at opt + 1: the
    # partition over small-reduced-cost patterns (or the arc-flow MIP beside it) finds opt
    af.forget_graph()
    inst = generate_hard1d(seed, kind="uniform")
    res = solve(inst, "auto", time_limit=120, seed=0)
    assert res.status == "optimal" and res.objective == opt == res.bound
    assert res.placement is not None and check(inst, res.placement, require_all=True) == []


@pytest.mark.parametrize("max_patterns", [100, 200])
def test_an_incomplete_enumeration_proves_nothing(max_patterns: int) -> None:
    # Petersen packs on 4 hosts; too few patterns allowed: the enumeration stops short (at
    # lower thresholds), its partition fails, and that must not claim "no packing on 4 hosts"
    inst = petersen_instance()
    g = af.build_graph(inst)
    sol = af.lp_solution(g)
    assert sol is not None
    res = solve_patterns(g, sol[1], 4, time_limit=20, max_patterns=max_patterns)
    assert not res.complete and res.patterns > 0
    assert not res.infeasible
    if res.counts is not None:
        pl = af.checked_placement(inst, res.counts)
        assert pl is not None and check(inst, pl, require_all=True) == []
