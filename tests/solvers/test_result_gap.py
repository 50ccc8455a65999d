"""SolveResult.gap by hand: relative to the objective, on both sides of the bound."""

from __future__ import annotations

import math

import pytest

from solvers.result import SolveResult


def result(objective: float | None, bound: float, kind: str = "hosts") -> SolveResult:
    return SolveResult("feasible", objective, bound, None, None, "test", 0.0,
                       kind)  # type: ignore[arg-type]


def test_gap_is_relative_to_the_objective() -> None:
    assert result(10.0, 8.0).gap == pytest.approx(0.2)  # not 2 / 8
    assert result(8.0, 10.0, "deployed").gap == pytest.approx(0.25)  # upper bound 10, 8 placed
    assert result(7.5, 6.0, "cost").to_dict()["gap"] == pytest.approx(0.2)
    assert result(4.0, 4.0).gap == 0.0
    assert result(None, 4.0).gap is None
    assert result(0.0, 0.0).gap == 0.0 and math.isinf(result(0.0, 3.0, "deployed").gap or 0.0)
