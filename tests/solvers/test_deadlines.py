"""The time limit binds every stage: no stage starts or runs on after the budget is spent.

Logic tests, no timing: a budget already spent (``time_limit`` 0, a passed deadline) or a stop
set must keep the expensive parts (CBC, CP-SAT, the enumerations) from running, and the result
must still be a checked placement with a bound on the right side of it. The only wall-clock
assertion is a generous one on a child process killed by a stop.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from packing.feasibility.checker import check
from packing.generators.hard1d import generate_hard1d
from packing.model.instance import App, HostType, Instance, Placement
from solvers import StopFlag, solve
from solvers.base import Clock, run_cpsat


def _items(sizes: list[float], cap: float, hosts: int = 6) -> Instance:
    return Instance("t", ("s",), (HostType("h", (cap,), hosts),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate(sizes)))


def _two_d() -> Instance:
    """First fit uses 3 hosts, the volume bound is 2, the optimum 3 (the cover proves it)."""
    return Instance("t", ("a", "b"), (HostType("h", (10.0, 10.0), 6),),
                    tuple(App(f"i{k}", s, 1) for k, s in enumerate(
                        [(6.0, 2.0), (2.0, 6.0), (6.0, 2.0), (2.0, 6.0), (4.0, 4.0)])))


PERFECT = [6.0, 4.0, 7.0, 3.0, 5.0, 5.0]
"""Three hosts of 10 filled exactly ((6,4), (7,3), (5,5)); first fit uses 4."""


# ------------------------------------------------------------------------------------------------
# the clock
def test_sub_clock_never_outlives_its_parent() -> None:
    clock = Clock(10.0)
    assert clock.sub(100.0).time_limit <= 10.0
    assert clock.sub(3.0).time_limit == 3.0
    assert Clock(0.0).sub(5.0).time_limit == 0.0
    assert clock.deadline == pytest.approx(clock.start + 10.0)


def test_run_cpsat_cuts_its_time_to_the_deadline() -> None:
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x = m.new_int_var(0, 10, "x")
    m.maximize(x)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = 100.0
    run_cpsat(solver, m, None, None, deadline=time.perf_counter() - 1.0)
    assert solver.parameters.max_time_in_seconds == 0.0
    solver.parameters.max_time_in_seconds = 100.0
    st = run_cpsat(solver, m, None, None, deadline=time.perf_counter() + 50.0)
    assert st == cp_model.OPTIMAL
    assert 0.0 < solver.parameters.max_time_in_seconds <= 50.0


def test_restricted_master_gets_no_time_once_its_budget_is_spent(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import solvers.exact.colgen as cg

    seen: list[float] = []
    real = cg.run_cpsat

    def spy(solver, model, callback=None, stop=None, deadline=None):
        out = real(solver, model, callback, stop, deadline=deadline)
        seen.append(float(solver.parameters.max_time_in_seconds))
        return out

    monkeypatch.setattr(cg, "run_cpsat", spy)
    inst = _items(PERFECT, 10.0)
    cols = [cg.Column(0, np.eye(inst.n_apps, dtype=np.int64)[a]) for a in range(inst.n_apps)]
    cg._restricted_ip(inst, cols, 3.0, np.ones(1), np.array([6]), 0.0, 0, 1, None)
    assert seen == [0.0]  # the model was built, but CP-SAT got no time past the budget


def test_column_generation_solves_no_master_lp_after_its_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ortools.linear_solver import pywraplp

    import solvers.exact.colgen as cg

    calls: list[int] = []
    real = pywraplp.Solver.Solve

    def counted(self: object, *args: object) -> int:
        calls.append(1)
        return int(real(self, *args))

    monkeypatch.setattr(pywraplp.Solver, "Solve", counted)
    inst = _two_d()
    res, _master = cg._generate(inst, "hosts", Clock(0.0), 0, 1, None, None, [])
    assert calls == []  # no LP after the deadline, not even a retry
    assert not res.lp_failed and not res.converged  # a time stop, not a failure
    assert res.bound <= 3  # the optimum


# ------------------------------------------------------------------------------------------------
# the exact cover: CBC in a child process
def test_cover_runs_cbc_outside_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    import solvers.exact.arcflow_partition as part
    import solvers.exact.cover as cov

    def in_process(*_a: object, **_k: object) -> None:
        raise AssertionError("the cover ran CBC in this process")

    monkeypatch.setattr(part, "partition", in_process)  # the child process is not affected
    monkeypatch.setattr(cov, "partition", in_process, raising=False)
    inst = _items(PERFECT, 10.0)
    res = cov.solve_cover(inst, 3, time_limit=60)
    assert res.host_of is not None and len(np.unique(res.host_of)) == 3
    assert check(inst, Placement.from_arrays(inst, res.host_of), require_all=True) == []


def test_cover_after_a_stop_runs_no_cbc_and_proves_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import solvers.exact.cover as cov

    def no_cbc(*_a: object, **_k: object) -> None:
        raise AssertionError("CBC started after the stop")

    monkeypatch.setattr(cov, "partition_stoppable", no_cbc)
    flag = StopFlag()
    flag.set()
    inst = _two_d()  # two hosts cannot hold it: a stopped cover must not claim so
    res = cov.solve_cover(inst, 2, time_limit=60, stop=flag)
    assert res.host_of is None and not res.infeasible


def test_partition_levels_stop_at_the_first_partition() -> None:
    from solvers.exact.arcflow_partition import partition_levels

    # apps of size 6, 4, 5: patterns (1,1,0) and (0,0,2) of 2 containers, (1,0,0) ... of 1;
    # level 1 (one container per host) has no partition on 2 hosts, level 2 has
    pats = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [0, 0, 2]])
    counts = np.array([1, 1, 2])
    st, use = partition_levels(pats, counts, 2, 30.0, np.array([1, 2]))
    assert st == "found" and use is not None
    assert (use @ pats == counts).all() and use.sum() <= 2
    st, use = partition_levels(pats[:3], counts, 2, 30.0, np.array([1]))
    assert st == "infeasible" and use is None  # one-container patterns need 4 hosts


def test_a_stop_kills_the_child_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from solvers.exact.arcflow import run_child

    (tmp_path / "vbp_sleeper_child.py").write_text("import time\ntime.sleep(600)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    flag = StopFlag()
    timer = threading.Timer(0.5, flag.set)
    timer.start()
    t0 = time.perf_counter()
    try:
        got = run_child("vbp_sleeper_child", b"", 600.0, flag)
    finally:
        timer.cancel()
    assert got is None
    assert time.perf_counter() - t0 < 60.0  # not the child's 600 s (generous: a loaded machine)


# ------------------------------------------------------------------------------------------------
# stage 1f: the share of an incomplete pattern list
def test_incomplete_pattern_list_keeps_its_short_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    import solvers.exact.arcflow as af
    import solvers.exact.arcflow_patterns as ap

    budgets: list[float] = []

    def always_full(g, pi, best, threshold, *, max_patterns, time_limit):
        budgets.append(time_limit)
        return np.zeros((0, len(g.need)), dtype=np.int32), "full"

    monkeypatch.setattr(ap, "small_rc_patterns", always_full)
    inst = generate_hard1d(1018, kind="uniform")
    g = af.build_graph(inst)
    sol = af.lp_solution(g)
    assert sol is not None
    res = ap.solve_patterns(g, sol[1], int(np.ceil(sol[0] - 1e-6)), time_limit=100.0,
                            incomplete_limit=1.0)
    assert res.counts is None and not res.infeasible and not res.complete
    assert budgets and max(budgets) <= 1.0  # never a share of the 100 s of a complete list


def test_auto_caps_stage_1f_when_its_list_is_incomplete() -> None:
    from solvers.exact.auto import DEFAULT_SETTINGS

    assert DEFAULT_SETTINGS.patterns_incomplete_max > 0
    assert DEFAULT_SETTINGS.patterns_incomplete_share < DEFAULT_SETTINGS.patterns_share


# ------------------------------------------------------------------------------------------------
# auto: the arc-flow MIP beside the other stages ends with the budget
def test_background_stage_is_stopped_at_the_deadline() -> None:
    from solvers.exact.auto import _Background, _EitherStop
    from solvers.result import SolveResult

    stop = _EitherStop(None, None)

    def run() -> SolveResult:
        stopped = stop.wait(600.0)  # a stage that would run on for ten minutes
        return SolveResult("unknown", None, 1.0 if stopped else 0.0, None, None, "x", 0.0,
                           "hosts", {}, None, ())

    bg = _Background(run, stop)
    r = bg.result(stop=False, until=time.perf_counter())
    assert r is not None and r.bound == 1.0 and stop.is_set() and bg.done()


def test_large_path_hands_the_first_filling_to_first_fit_before_the_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    import solvers.search.spread as sp
    from packing.generators.random import generate_random
    from solvers.base import SolveOptions
    from solvers.exact.auto import AutoSettings, solve_auto

    seen: list[tuple[float, float, bool]] = []
    real = sp.fill

    def spy(inst, **k):
        seen.append((time.perf_counter(), k["deadline"], k["finish_late"]))
        return real(inst, **k)

    monkeypatch.setattr(sp, "fill", spy)
    inst = generate_random(20, 200, n_resources=2, binding="two", seed=3)
    inst = inst.replace(host_types=tuple(dataclasses.replace(t, count=2 * t.count,
                                                             host_names=None)
                                         for t in inst.host_types))
    cfg = AutoSettings(spread_min_work=0, spread_tabu=False, spread_rule_lns=False,
                       spread_repack=False)
    t0 = time.perf_counter()
    res = solve_auto(inst, SolveOptions(time_limit=100.0), settings=cfg)
    assert res.placement is not None and check(inst, res.placement, require_all=True) == []
    start, deadline, late = seen[0]
    assert late  # the first filling finishes by first fit
    end = t0 + 100.0 - cfg.spread_margin
    # it hands over 10% of its time before the end (at least 0.1 ms per container, at most
    # 15 s), not at the end
    window = end - start
    reserve = min(max(0.1 * window, 1e-4 * inst.n_containers), 15.0, 0.25 * window)
    assert deadline <= end - reserve + 0.5


def test_large_path_without_a_placement_and_time_gives_unknown(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import solvers.exact.auto as auto

    def no_time(*_a: object, **_k: object) -> None:
        raise AssertionError("first fit started without the time for it")

    monkeypatch.setattr(auto, "_solve_large", lambda *a, **k: None)  # containers left over
    monkeypatch.setattr(auto, "ffd", no_time)
    inst = _two_d()
    cfg = auto.AutoSettings(spread_min_work=0, spread_first_fit_per_container=100.0)
    res = auto.solve_auto(inst, auto.SolveOptions(time_limit=10.0), settings=cfg)
    assert res.status == "unknown" and res.placement is None
    assert res.bound == 2 and res.reason  # the cheap bound, and why there is no placement


@pytest.mark.parametrize("method", ["auto", "cpsat", "colgen", "arcflow", "pulp"])
def test_spent_budget_still_gives_a_checked_placement(method: str) -> None:
    from solvers import available

    if not available(method):
        pytest.skip(f"{method} not installed")
    inst = _items([6.0, 4.0, 7.0, 3.0, 5.0, 5.0, 2.0, 8.0], 10.0, hosts=8)
    res = solve(inst, method, time_limit=1e-3, workers=1)
    assert res.placement is not None and res.objective is not None
    assert check(inst, res.placement, require_all=True) == []
    assert res.bound <= res.objective + 1e-9
    if res.status == "optimal":
        assert res.objective == 4  # 4 hosts of 10 hold 40 exactly


def test_auto_runs_no_stage_after_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    import solvers.exact.arcflow as af
    import solvers.exact.colgen as cg
    import solvers.exact.cover as cov
    import solvers.exact.cpsat as cs
    import solvers.exact.lns as lns
    import solvers.search.tabu as tabu

    def late(*_a: object, **_k: object) -> None:
        raise AssertionError("a stage started after the deadline")

    for mod, name in ((cov, "solve_cover"), (tabu, "tabu_pack"), (cg, "solve_colgen"),
                      (lns, "improve"), (af, "solve_arcflow"), (cs, "solve_cpsat")):
        monkeypatch.setattr(mod, name, late)
    inst = _two_d()
    res = solve(inst, "auto", time_limit=1e-9, workers=1)
    assert res.placement is not None and res.objective == 3  # first fit
    assert res.bound == 2 and res.status == "feasible"


def test_pulp_starts_no_cbc_once_its_budget_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    from solvers import available

    if not available("pulp"):
        pytest.skip("pulp not installed")
    import pulp

    def late(*_a: object, **_k: object) -> None:
        raise AssertionError("CBC started after the deadline")

    import solvers.exact.pulp_model as pm

    real = pm.build_model

    def slow_build(*a, **k):
        out = real(*a, **k)
        time.sleep(2.0)  # a build that spends the whole budget (a loaded machine)
        return out

    monkeypatch.setattr(pulp, "PULP_CBC_CMD", late)
    monkeypatch.setattr(pm, "build_model", slow_build)
    inst = _two_d()  # first fit 3, bound 2: CBC would run
    res = solve(inst, "pulp", time_limit=2.0, workers=1)
    assert res.placement is not None and res.objective is not None
    assert check(inst, res.placement, require_all=True) == []
    assert res.bound <= res.objective


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q", "-p", "no:xdist"]))
