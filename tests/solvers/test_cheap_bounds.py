"""The cheap bounds every solver starts from, at their edges: a fleet filled exactly, all deployed."""

from __future__ import annotations

import pytest

from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance
from solvers import solve


def fleet(n_hosts: int, sizes: list[float]) -> Instance:
    return Instance("e", ("cpu",), (HostType("h", (10.0,), n_hosts),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate(sizes)))


@pytest.mark.parametrize("method", ["auto", "cpsat"])
def test_a_fleet_filled_exactly_is_feasible(method: str) -> None:
    # the volume bound equals the hosts there are: that proves nothing infeasible
    inst = fleet(2, [5.0, 4.0, 4.0, 3.0, 2.0, 2.0])
    res = solve(inst, method, time_limit=10, seed=0)
    assert (res.status, res.objective, res.bound) == ("optimal", 2.0, 2.0)
    assert res.placement is not None and check(inst, res.placement, require_all=True) == []


def test_deployed_counts_every_container_first_fit_misses() -> None:
    # first fit places 5 of the 6; 5 + 3 + 2 | 4 + 4 + 2 places all: the bound on deployed is
    # 6, and 5 is not optimal
    inst = fleet(2, [5.0, 4.0, 4.0, 3.0, 2.0, 2.0])
    res = solve(inst, "auto", time_limit=10, seed=0, objective="deployed")
    assert (res.status, res.objective, res.bound) == ("optimal", 6.0, 6.0)
