"""PuLP's CBC as an interruptible process (:mod:`solvers.exact.cbc_run`).

A solve that ends on its own sets values and statuses as ``LpProblem.solve`` does (minimise and
maximise); a hard model whose CBC limit is 600 s is interrupted at its deadline or on a stop and
returns within a few seconds (the tests allow 30 s more than CBC's grace, for a loaded machine), with
CBC's best solution when it has one.
"""

from __future__ import annotations

import random
import threading
import time

import pulp
import pytest

from solvers import StopFlag
from solvers.exact.cbc_run import GRACE, solve_interruptible

Model = tuple[pulp.LpProblem, dict[tuple[int, int], pulp.LpVariable], list[pulp.LpVariable]]


def _bin_packing(w: list[int], m: int, start: list[int] | None = None) -> Model:
    """Bin packing of items of sizes ``w`` into ``m`` bins of 1,000 (hard for CBC with 150 items);
    ``start[i]`` is a bin for item ``i`` to start from. Returns the problem, ``x[item, bin]``, ``y[bin]``."""
    n = len(w)
    prob = pulp.LpProblem("bins", pulp.LpMinimize)
    x = {(i, j): prob.add_variable(f"x_{i}_{j}", 0, 1, cat="Integer") for i in range(n) for j in range(m)}
    y = [prob.add_variable(f"y_{j}", 0, 1, cat="Integer") for j in range(m)]
    prob += pulp.lpSum(y)
    for i in range(n):
        prob += pulp.lpSum(x[i, j] for j in range(m)) == 1
    for j in range(m):
        prob += pulp.lpSum(w[i] * x[i, j] for i in range(n)) <= 1000 * y[j]
    if start is not None:
        for (i, j), v in x.items():
            v.setInitialValue(int(start[i] == j))
        for j, v in enumerate(y):
            v.setInitialValue(int(j in start))
    return prob, x, y


def _hard() -> Model:
    rng = random.Random(3)
    return _bin_packing([rng.randint(250, 500) for _ in range(150)], 60)


def test_a_finished_solve_sets_values_and_statuses() -> None:
    # 500+500 | 400+300+300 | 400+300+300: three full bins
    prob, _, y = _bin_packing([500, 500, 400, 400, 300, 300, 300, 300], 5)
    status = solve_interruptible(prob, time_limit=30, deadline=time.perf_counter() + 30)
    assert status == pulp.LpStatusOptimal and prob.sol_status == pulp.LpSolutionOptimal
    assert sum(v.value() for v in y) == pytest.approx(3)
    top = pulp.LpProblem("max", pulp.LpMaximize)
    a, b = top.add_variable("a", 0, None, cat="Integer"), top.add_variable("b", 0, None, cat="Integer")
    top += a + 2 * b
    top += a + b <= 3.5
    top += b <= 1.2
    assert solve_interruptible(top, time_limit=10, deadline=time.perf_counter() + 10) == pulp.LpStatusOptimal
    assert (a.value(), b.value()) == (2, 1)  # a + 2b = 4: maximised, not minimised


def test_a_long_solve_is_interrupted_at_its_deadline() -> None:
    prob, _, _ = _hard()
    t0 = time.perf_counter()
    status = solve_interruptible(prob, time_limit=600, deadline=t0 + 2.0)
    took = time.perf_counter() - t0
    assert took < 2.0 + GRACE + 30.0, took  # far below CBC's own 600 s
    assert status != pulp.LpStatusOptimal


def test_a_stop_interrupts_cbc() -> None:
    prob, _, _ = _hard()
    stop = StopFlag()
    timer = threading.Timer(1.5, stop.set)
    timer.daemon = True
    timer.start()
    t0 = time.perf_counter()
    solve_interruptible(prob, time_limit=600, deadline=t0 + 600, stop=stop)
    assert time.perf_counter() - t0 < 1.5 + GRACE + 30.0


def test_an_interrupted_solve_hands_back_its_incumbent() -> None:
    """Started from first fit and interrupted after 2 s, CBC returns a packing (SIGINT, not a kill).

    60 items in 30 bins: CBC holds the start (26 bins) as its incumbent after 0.2 s on a loaded
    machine (150 items in 80 bins: only after more than 2 s), and it is far from proving anything at
    2 s (the volume bound is 23; with a minute on a loaded machine it still has not).
    """
    rng = random.Random(3)
    w = [rng.randint(250, 500) for _ in range(60)]
    loads: list[int] = []
    start = []
    for size in w:  # first fit
        j = next((k for k, ld in enumerate(loads) if ld + size <= 1000), len(loads))
        if j == len(loads):
            loads.append(0)
        loads[j] += size
        start.append(j)
    prob, x, _ = _bin_packing(w, 30, start)
    t0 = time.perf_counter()
    solve_interruptible(prob, time_limit=600, deadline=t0 + 2.0, warm_start=True)
    assert time.perf_counter() - t0 < 2.0 + GRACE + 30.0
    assert prob.sol_status == pulp.LpSolutionIntegerFeasible
    got = {i: [j for j in range(30) if x[i, j].value() > 0.5] for i in range(len(w))}
    assert all(len(js) == 1 for js in got.values())  # every item in exactly one bin
    per_bin = [sum(w[i] for i, js in got.items() if js[0] == j) for j in range(30)]
    assert max(per_bin) <= 1000
    assert sum(load > 0 for load in per_bin) <= len(loads)  # no worse than the start
