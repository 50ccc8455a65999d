"""Pattern rows and pricing: the exact CP-SAT pricing returns the true best pattern (brute force)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance, Rule
from solvers.exact.pricing import (
    pattern_placeable,
    placement_from_counts,
    price_dp,
    price_exact,
    price_greedy,
    rows_violated,
    single_host,
    type_rows,
)


def _brute(inst: Instance, t: int, duals: np.ndarray) -> float:
    tr = type_rows(inst, t)
    best = 0.0
    for n in itertools.product(*[range(int(u) + 1) for u in tr.ub]):
        v = np.array(n, dtype=np.int64)
        if not rows_violated(inst, tr, v):
            best = max(best, float(duals @ v))
    return best


def test_type_rows_upper_bounds() -> None:
    inst = Instance("t", ("cpu", "mem"), (HostType("h", (10, 8), 3),),
                    (App("a", (3, 1), 5), App("b", (1, 3), 9, max_per_host=2), App("c", (11, 1), 1)))
    tr = type_rows(inst, 0)
    assert tr.ub.tolist() == [3, 2, 0]  # a: 10 // 3; b: cap 2 (mem allows 2); c: too big


def test_exact_pricing_with_rule_and_exclusion() -> None:
    # cap (10, 10); a=(4,1) b=(1,4) c=(2,2); <a, b, 1>; exclusion (a, c)
    inst = Instance("t", ("cpu", "mem"), (HostType("h", (10, 10), 5),),
                    (App("a", (4, 1), 5), App("b", (1, 4), 5), App("c", (2, 2), 5)),
                    rules=(Rule("a", "b", 1),), exclusions=(("a", "c"),))
    duals = np.array([1.0, 1.0, 0.9])
    assert price_dp(inst, type_rows(inst, 0), duals) is None  # rules: CP-SAT
    pr = price_exact(inst, type_rows(inst, 0), duals)
    assert pr.optimal
    # a-side: 2a + 1b = 3 (cpu 9, mem 6); c-side: b,c only: 2b+1c=(4,10) -> 2.9, 1b+3c -> 3.7 (7,10)
    # 0b+5c=(10,10) -> 4.5 is the best
    assert abs(pr.value - 4.5) < 1e-9
    assert abs(pr.value - _brute(inst, 0, duals)) < 1e-9
    assert pr.bound >= pr.value - 1e-9


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_exact_pricing_matches_brute_force(data: st.DataObject) -> None:
    n_apps = data.draw(st.integers(1, 4))
    apps = tuple(
        App(f"a{i}", (data.draw(st.integers(1, 6)), data.draw(st.integers(0, 6))),
            data.draw(st.integers(1, 4)), max_per_host=data.draw(st.none() | st.integers(1, 3)))
        for i in range(n_apps))
    rules = []
    if n_apps >= 2 and data.draw(st.booleans()):
        rules.append(Rule("a0", "a1", data.draw(st.integers(0, 2))))
    inst = Instance("r", ("cpu", "mem"), (HostType("h", (10, 10), 2),), apps, tuple(rules))
    duals = np.array([data.draw(st.floats(0, 3)) for _ in range(n_apps)])
    tr = type_rows(inst, 0)
    pr = price_exact(inst, tr, duals)
    best = _brute(inst, 0, duals)
    assert pr.optimal
    assert abs(pr.value - best) < 1e-6
    assert not rows_violated(inst, tr, pr.counts)
    dp = price_dp(inst, tr, duals)
    if not rules:
        assert dp is not None  # integral rows on a 11 x 11 grid
    if dp is not None:
        assert dp.optimal and abs(dp.value - best) < 1e-9
        assert not rows_violated(inst, tr, dp.counts)
    pats = price_greedy(inst, tr, duals, rng=np.random.default_rng(0), tries=4)
    assert pats
    for g in pats:
        assert not rows_violated(inst, tr, g)
        assert float(duals @ g) <= best + 1e-9


def test_greedy_exchanges_reach_the_optimum() -> None:
    # density (value / normalised size) picks big=(6,6) first (1.5/1.2 > 1.8/1.6); then x=(8,8)
    # no longer fits; the exchange big -> x gains 0.3 and reaches the optimum 1.8
    inst = Instance("g", ("cpu", "mem"), (HostType("h", (10, 10), 2),),
                    (App("big", (6, 6), 1), App("x", (8, 8), 1)))
    tr = type_rows(inst, 0)
    duals = np.array([1.5, 1.8])
    assert _brute(inst, 0, duals) == pytest.approx(1.8)
    pats = price_greedy(inst, tr, duals, tries=1)
    assert [g.tolist() for g in pats] == [[0, 1]]


def test_gpu_rows_and_cards() -> None:
    # 2 cards of 1000 milli; shares of 600 cannot pair on a card: at most 2 per host
    inst = Instance("g", ("cpu",), (HostType("h", (100,), 3, gpus=2, gpu_capacity=(1000,)),),
                    (App("s", (1,), 3, gpu_cards=1, gpu_per_card=(600,)),
                     App("w", (1,), 1, gpu_cards=1, gpu_whole=True)),
                    gpu_resources=("gpu_milli",))
    tr = type_rows(inst, 0)
    assert tr.ub.tolist() == [2, 1]
    one = single_host(inst, 0)
    assert pattern_placeable(one, np.array([1, 1]))
    assert not pattern_placeable(one, np.array([2, 1]))
    counts = np.array([[2, 0], [1, 1], [0, 0]])
    p = placement_from_counts(inst, counts)
    assert check(inst, p, require_all=True) == []
