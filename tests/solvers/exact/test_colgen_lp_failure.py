"""GLOP failing on the master LP (status 4, ABNORMAL): column generation degrades, never raises.

GLOP is forced to answer ``ABNORMAL`` by replacing ``pywraplp.Solver.Solve``. The instance is
hand-computed: 4 containers (4, 6) and 3 containers (2, 7) on (10, 10) hosts; any two need more
than 10 memory, so the optimum is 7 hosts, one each, while the cheap bound is the memory volume
45 / 10 -> 5 and only the LP proves 7.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance
from solvers import solve
from solvers.base import SolveOptions, cheap_lower_bound
from solvers.exact.colgen import colgen_bound, solve_colgen

pywraplp = pytest.importorskip("ortools.linear_solver.pywraplp")

DATA = Path(__file__).resolve().parents[2] / "data"
OPT = 7.0
CHEAP = 5.0
INST = Instance("alone", ("cpu", "mem"), (HostType("h", (10, 10), 8),),
                (App("a", (4, 6), 4), App("b", (2, 7), 3)))


def _glop_fails(monkeypatch: pytest.MonkeyPatch, fails: Callable[[int], bool]) -> list[int]:
    """Make the ``n``-th GLOP solve (1-based) answer ABNORMAL when ``fails(n)``."""
    real = pywraplp.Solver.Solve
    calls: list[int] = []

    def fake(self: object, *args: object) -> int:
        calls.append(1)
        if fails(len(calls)):
            return int(pywraplp.Solver.ABNORMAL)
        return int(real(self, *args))

    monkeypatch.setattr(pywraplp.Solver, "Solve", fake)
    return calls


def test_the_instance_needs_the_lp() -> None:
    assert cheap_lower_bound(INST, "hosts")[0] == CHEAP
    r = solve_colgen(INST, SolveOptions(time_limit=20, workers=1))
    assert (r.status, r.objective, r.bound, r.proofs["bound"]) == ("optimal", OPT, OPT, "colgen")


def test_always_abnormal_keeps_the_cheap_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _glop_fails(monkeypatch, lambda n: True)
    r = solve_colgen(INST, SolveOptions(time_limit=20, workers=1))
    assert calls  # the master was tried
    assert r.status == "feasible" and r.objective == OPT and r.bound == CHEAP
    assert r.placement is not None and check(INST, r.placement, require_all=True) == []
    assert any("GLOP status 4" in p.message for p in r.history)
    b = colgen_bound(INST, time_limit=10)
    assert b.lp_failed and not b.converged and b.bound <= OPT


def test_a_fresh_start_recovers(monkeypatch: pytest.MonkeyPatch) -> None:
    # every warm-started solve fails, and so does the first retry from scratch (dual simplex);
    # the second (primal simplex) succeeds: the normal answer
    _glop_fails(monkeypatch, lambda n: n % 3 != 0)
    r = solve_colgen(INST, SolveOptions(time_limit=20, workers=1))
    assert (r.status, r.objective, r.bound) == ("optimal", OPT, OPT)
    assert not any("GLOP status" in p.message for p in r.history)


@pytest.mark.parametrize("good", [1, 2, 3, 5])
def test_failing_midway_keeps_a_true_bound(monkeypatch: pytest.MonkeyPatch, good: int) -> None:
    _glop_fails(monkeypatch, lambda n: n > good)
    r = solve(INST, "colgen", time_limit=20, workers=1)
    assert r.objective == OPT and CHEAP <= r.bound <= OPT
    assert r.status == ("optimal" if r.bound == OPT else "feasible")
    assert r.placement is not None and check(INST, r.placement, require_all=True) == []


def test_auto_survives_abnormal_glop(monkeypatch: pytest.MonkeyPatch) -> None:
    _glop_fails(monkeypatch, lambda n: True)
    r = solve(INST, "auto", time_limit=20, workers=1)
    assert r.objective == OPT and r.bound <= OPT  # CP-SAT or the arc flow may still prove it
    assert r.placement is not None and check(INST, r.placement, require_all=True) == []


def test_diving_keeps_the_master_feasible(monkeypatch: pytest.MonkeyPatch) -> None:
    # CL_6_25_1 on exactly as many hosts as its optimum (10, LP 9.33): rounding up every
    # fractional column at once (DIVE_SHARE = 1) would ask for more hosts than the type has;
    # the dive rounds up only within each type's host limit, so the master never turns infeasible
    import dataclasses

    import numpy as np

    from packing.loaders import load_any
    from solvers.base import Clock
    from solvers.exact import colgen

    inst = load_any(DATA / "caprara_toth_small" / "instances" / "CL_6_25_1.vbp")
    inst = inst.replace(host_types=tuple(dataclasses.replace(t, count=10, host_names=None)
                                         for t in inst.host_types))
    monkeypatch.setattr(colgen, "DIVE_SHARE", 1.0)
    checked = []
    real = colgen._Master.solve

    def solve_checked(self: colgen._Master, retry: bool = True,
                      deadline: float | None = None) -> object:
        lower = np.array([v.lb() for v in self.vars])  # type: ignore[attr-defined]
        types = np.array([c.type_index for c in self.cols], dtype=np.int64)
        per_type = np.bincount(types, weights=lower, minlength=len(self.limit))
        assert (per_type <= self.limit + 1e-9).all(), (per_type, self.limit)
        checked.append(float(lower.sum()))
        return real(self, retry, deadline)

    monkeypatch.setattr(colgen._Master, "solve", solve_checked)
    res, master = colgen._generate(inst, "hosts", Clock(20), 0, 1, None, None, [])
    assert res.converged and res.bound == 10
    colgen._dive(inst, master, Clock(20))
    assert max(checked) > 0  # the dive fixed columns
    r = solve_colgen(inst, SolveOptions(time_limit=20, workers=1))
    assert r.objective == 10 and r.placement is not None
    assert check(inst, r.placement, require_all=True) == []
