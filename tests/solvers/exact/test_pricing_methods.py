"""Exact pricing without numba: the NumPy DP takes the compiled DP's decisions, the branch and bound
proves the same best value on large grids, and column generation on small data loads no numba."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packing.model.instance import App, HostType, Instance
from solvers.exact import pricing
from solvers.exact.knapsack_jit import knapsack2
from solvers.exact.pricing import PricingMemo, binary_chunks, price_dp, type_rows

ROOT = Path(__file__).resolve().parents[3]


def _instance(cap: int, sizes: list[tuple[int, int]], counts: list[int]) -> Instance:
    apps = tuple(App(f"a{k}", (float(w1), float(w2)), c)
                 for k, ((w1, w2), c) in enumerate(zip(sizes, counts, strict=True)))
    return Instance("p", ("cpu", "mem"), (HostType("h", (float(cap), float(cap)), 50),), apps)


def _compiled(inst: Instance, duals: np.ndarray) -> tuple[float, np.ndarray]:
    """The compiled DP on the instance's rows, as price_dp called it before (all rows bind)."""
    tr = type_rows(inst, 0)
    assert tr.int_rows is not None and tr.int_capacity is not None
    use = np.flatnonzero((duals > 1e-12) & (tr.ub > 0))
    items = binary_chunks(use, tr.ub)
    w = np.array([tr.int_rows[a] * k for a, k in items], dtype=np.int64).reshape(-1, 2)
    vals = np.array([k * float(duals[a]) for a, k in items])
    cap = [int(c) for c in tr.int_capacity]
    _, chosen = knapsack2(w[:, 0].copy(), w[:, 1].copy(), vals, cap[0], cap[1])
    n = np.zeros(inst.n_apps, dtype=np.int64)
    for (a, k), on in zip(items, chosen.tolist(), strict=True):
        n[a] += k if on else 0
    return float(duals @ n), n


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_numpy_dp_takes_the_compiled_decisions(data: st.DataObject) -> None:
    n_apps = data.draw(st.integers(1, 7))
    sizes = [(data.draw(st.integers(1, 12)), data.draw(st.integers(1, 12))) for _ in range(n_apps)]
    counts = [data.draw(st.integers(1, 5)) for _ in range(n_apps)]
    inst = _instance(20, sizes, counts)
    # values with ties (small integers) test the tie-breaking as well
    duals = np.array([float(data.draw(st.integers(0, 4))) for _ in range(n_apps)])
    tr = type_rows(inst, 0)
    got = price_dp(inst, tr, duals)  # numba may be loaded here: force the NumPy DP
    assert got is not None
    saved = pricing.DP2_CELLS
    try:
        pricing.DP2_CELLS = 0
        mine = price_dp(inst, tr, duals)
    finally:
        pricing.DP2_CELLS = saved
    assert mine is not None and mine.optimal
    assert tr.int_rows is not None and tr.int_capacity is not None
    if (tr.ub[duals > 0] @ tr.int_rows[duals > 0] > tr.int_capacity).all():  # both rows bind
        value, n = _compiled(inst, duals)
        assert mine.counts.tolist() == n.tolist()
        assert mine.value == pytest.approx(value, abs=1e-9)
    assert mine.value == pytest.approx(got.value, abs=1e-9)


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_branch_and_bound_proves_the_dp_value_on_large_grids(data: st.DataObject) -> None:
    n_apps = data.draw(st.integers(2, 9))
    sizes = [(data.draw(st.integers(150, 700)), data.draw(st.integers(150, 700)))
             for _ in range(n_apps)]
    counts = [data.draw(st.integers(1, 3)) for _ in range(n_apps)]
    inst = _instance(1000, sizes, counts)  # 1001 x 1001 cells: above DP_CELLS
    duals = np.array([data.draw(st.floats(0.01, 1.0)) for _ in range(n_apps)])
    tr = type_rows(inst, 0)
    memo = PricingMemo()
    got = price_dp(inst, tr, duals, memo)
    assert got is not None and got.optimal and memo.branch_and_bound
    value, _ = _compiled(inst, duals)
    assert got.value == pytest.approx(value, rel=1e-9)
    assert got.bound >= value - 1e-12  # a valid upper bound on every pattern
    assert got.bound <= value * (1 + 1e-9)


def test_a_branch_and_bound_out_of_time_hands_over_to_the_dp(monkeypatch: pytest.MonkeyPatch) -> None:
    # sizes without a common divisor: the integer rows keep the 1001 x 1001 grid
    inst = _instance(1000, [(301, 599), (599, 301), (451, 449)], [2, 2, 2])
    duals = np.array([0.5, 0.5, 0.6])
    best = _compiled(inst, duals)[0]
    calls: list[bool] = []
    real = pricing._price_bb

    def counted(*args: object, **kwargs: object) -> object:
        got = real(*args, **kwargs)  # type: ignore[arg-type]
        calls.append(got is not None)
        return got

    monkeypatch.setattr(pricing, "_price_bb", counted)
    memo = PricingMemo()
    got = price_dp(inst, type_rows(inst, 0), duals, memo)
    assert calls == [True] and memo.branch_and_bound  # proven by the branch and bound
    assert got is not None and got.value == pytest.approx(best)

    def out_of_time(*args: object, **kwargs: object) -> None:
        calls.append(False)
        return None  # what _price_bb returns when it proves nothing in BB_SECONDS

    monkeypatch.setattr(pricing, "_price_bb", out_of_time)
    got = price_dp(inst, type_rows(inst, 0), duals, memo)
    assert got is not None and got.optimal and got.value == pytest.approx(best)  # by the DP
    assert not memo.branch_and_bound  # the rest of the run goes to the DP at once
    price_dp(inst, type_rows(inst, 0), duals, memo)
    assert calls == [True, False]


SCRIPT = """
import json, sys
from packing.model.instance import App, HostType, Instance
from solvers import solve
from solvers.exact import pricing
pricing.BB_SECONDS = 60.0  # no verdict on the clock: the branch and bound may take its time
cap = float(sys.argv[1])
big = {20: [(12, 6), (6, 12), (11, 10), (9, 11)],
       1000: [(601, 299), (299, 601), (551, 503), (449, 553)]}[int(cap)]
apps = tuple(App(f"a{k}", (float(w1), float(w2)), 6) for k, (w1, w2) in enumerate(big))
inst = Instance("large-items", ("cpu", "mem"), (HostType("h", (cap, cap), 40),), apps)
res = solve(inst, time_limit=30, workers=1)
heavy = ("numba", "ortools.sat.python.cp_model", "pandas", "scipy")
print(json.dumps({"status": res.status, "proofs": res.proofs, "objective": res.objective,
                  "loaded": [m for m in heavy if m in sys.modules]}))
"""


@pytest.mark.parametrize("cap", [20, 1000])  # the NumPy DP; the branch and bound
def test_column_generation_on_large_items_loads_no_numba(cap: int) -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(cap)], cwd=ROOT, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    # 24 containers, at most two a host and mostly one: the volume bound is far below the optimum
    # and column generation proves it
    assert got["status"] == "optimal" and got["proofs"]["bound"] == "colgen", got
    assert got["loaded"] == []
