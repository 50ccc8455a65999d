"""Cooperative stop (``solve(..., stop=StopFlag())``): every method returns its best so far.

A stop set from another thread ends the solve long before its time limit (within a couple of
seconds on a quiet machine; the tests allow ten times that and more, for a loaded one), with a
checked placement, a proven bound on the right side of it and ``interrupted=True``.
"""

from __future__ import annotations

import threading
import time

import pytest

from packing.feasibility.checker import check
from packing.generators.random import generate_random
from packing.model.instance import Instance
from solvers import StopFlag, available, solve
from solvers.base import Clock


def _assert_best_so_far(inst: Instance, res: object) -> None:
    from solvers.result import SolveResult

    assert isinstance(res, SolveResult)
    assert res.interrupted
    assert res.status in ("feasible", "optimal")
    assert res.placement is not None and res.objective is not None
    assert check(inst, res.placement, require_all=True) == []
    assert res.bound <= res.objective + 1e-9
    assert res.to_dict()["interrupted"] is True


def _stop_after(seconds: float, stop: StopFlag | threading.Event) -> threading.Timer:
    timer = threading.Timer(seconds, stop.set)
    timer.daemon = True
    timer.start()
    return timer


def test_stop_ends_a_long_auto_solve() -> None:
    """A 60 s ``auto`` solve on a hard instance stopped after 3 s returns within a few seconds."""
    from tests.solvers.warm import warm_search

    warm_search()  # compiling the tabu search is not interruptible: do it outside the clock
    inst = generate_random(300, 5000, binding="two", seed=1)
    stop = StopFlag()
    t0 = time.perf_counter()
    _stop_after(3.0, stop)
    res = solve(inst, "auto", time_limit=60, stop=stop)
    took = time.perf_counter() - t0
    assert took < 3.0 + 12.0, took  # far below the 60 s limit; margin for a saturated 2-core machine
    _assert_best_so_far(inst, res)
    assert res.status == "feasible"  # 791 hosts are optimal; nothing proves it in 3 s


@pytest.mark.parametrize("method", ["cpsat", "colgen", "pulp"])
def test_stop_ends_a_long_method(method: str) -> None:
    """CP-SAT is stopped mid-search (``stop_search``), column generation between iterations, CBC
    (``pulp``) by an interrupt to its process. Each runs to its time limit without the stop (over
    120 s); stopped, it returns 0.1 s (CP-SAT, column generation) to 3 s (``pulp``: the model is
    built first) after the stop on a quiet machine."""
    if not available(method):
        pytest.skip(f"{method} not installed")
    inst = generate_random(100, 1500, binding="two", seed=3)
    stop = threading.Event()  # a plain Event works as well as a StopFlag
    t0 = time.perf_counter()
    _stop_after(1.5, stop)
    res = solve(inst, method, time_limit=600, stop=stop)
    took = time.perf_counter() - t0
    assert took < 1.5 + 40.0, took  # far below the 600 s limit; ten times what it takes on a quiet machine
    _assert_best_so_far(inst, res)


@pytest.mark.parametrize("method", ["auto", "cpsat", "colgen", "pulp"])
def test_stop_set_before_the_solve(method: str) -> None:
    """A stop already set: first fit and the cheap bound at once, nothing else runs."""
    if not available(method):
        pytest.skip(f"{method} not installed")
    inst = generate_random(60, 600, binding="two", seed=2)
    stop = StopFlag()
    stop.set()
    t0 = time.perf_counter()
    res = solve(inst, method, time_limit=60, stop=stop)
    assert time.perf_counter() - t0 < 3.0
    _assert_best_so_far(inst, res)


def test_unset_stop_changes_nothing() -> None:
    """With a stop that is never set the result is the normal one (proven optimal here)."""
    from packing.io.builtin import builtin_instance

    inst = builtin_instance("sigma")
    res = solve(inst, "auto", time_limit=20, stop=StopFlag())
    assert res.status == "optimal" and not res.interrupted
    assert res.to_dict()["interrupted"] is False


def test_clock_ends_its_budget_on_stop() -> None:
    stop = StopFlag()
    clock = Clock(100.0, stop)
    assert clock.left() > 99 and not clock.stopped
    sub = clock.sub(10.0)
    stop.set()
    assert clock.stopped and sub.stopped
    assert clock.left() == 0.01 and sub.left(0.0) == 0.0
    assert "set=True" in repr(stop)
