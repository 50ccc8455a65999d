"""The relaxation as a guide: the hosts it keeps, the model that avoids the others, the guided search."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ortools.sat.python import cp_model

from packing.cluster.fit import start
from packing.cluster.problem import build_problem
from solvers.base import Clock
from solvers.consolidate.bound import relaxation_bound, relaxation_hosts
from solvers.consolidate.guided import SLACKS, fill, guided
from solvers.consolidate.model import build_model, read_solution
from solvers.consolidate.search import key
from solvers.consolidate.solve import verify
from tests.solvers.consolidate.cluster_cases import offers, small_cluster, snapshot_of


def problem_of(seed: int, tmp_path: Path, nodes: int = 12, pods: int = 70, replace: bool = False):
    return build_problem(snapshot_of(small_cluster(seed, nodes=nodes, pods=pods), tmp_path), offers(),
                         replace=replace)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("slack", [1.0, 1.3])
def test_the_hosts_kept_hold_the_demand_with_slack(seed: int, slack: float, tmp_path: Path) -> None:
    P = problem_of(seed, tmp_path)
    keep = relaxation_hosts(P, None, slack, time_limit=10)
    assert keep is not None and keep.shape == (P.n_hosts,)
    assert keep[P.keep].all()  # hosts of pinned pods and DaemonSet-only rules stay
    mov = ~P.pinned
    pin_load = P.orig[P.pinned].T @ P.demand[P.pinned]
    room = (P.capacity - pin_load)[keep].sum(axis=0)
    need = (P.demand[mov] * P.counts[mov, None]).sum(axis=0)
    assert (room >= slack * need - 1e-9).all()
    if slack == 1.0:  # solved to the end on a small cluster: its price is the bound
        assert P.scaled_price[keep].sum() / P.price_scale == pytest.approx(relaxation_bound(P, None)[0])


def test_new_types_are_added_by_their_first_slots(tmp_path: Path) -> None:
    P = problem_of(0, tmp_path, nodes=4, pods=20, replace=True)
    keep = relaxation_hosts(P, None, 2.0, time_limit=10)
    assert keep is not None
    for t in {P.host_type[h] for h in np.flatnonzero(~P.existing).tolist()}:
        slots = [h for h in np.flatnonzero(~P.existing).tolist() if P.host_type[h] == t]
        chosen = keep[slots]
        assert (chosen[:-1] >= chosen[1:]).all()  # a prefix


@pytest.mark.parametrize("seed", range(3))
def test_avoided_hosts_stay_empty(seed: int, tmp_path: Path) -> None:
    P = problem_of(seed, tmp_path)
    x = start(P, None)
    assert x is not None
    movable_only = np.flatnonzero(P.used(x) & ~P.keep & (P.orig[P.pinned].sum(axis=0) == 0))
    avoid = np.zeros(P.n_hosts, dtype=bool)
    avoid[movable_only[:2]] = True
    mm = build_model(P, x, None, None, avoid=avoid)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 20
    status = solver.solve(mm.model)
    assert status in (cp_model.OPTIMAL, cp_model.FEASIBLE)  # these clusters have room elsewhere
    y = read_solution(mm, solver)
    assert y[:, avoid].sum() == 0 and not verify(P, y, None)
    if P.keep.any():  # a host that must stay cannot be avoided
        assert not build_model(P, x, None, None, avoid=P.keep.copy()).feasible


@pytest.mark.parametrize("seed", range(4))
def test_fill_moves_pods_onto_the_hosts_kept_only(seed: int, tmp_path: Path) -> None:
    P = problem_of(seed, tmp_path)
    x = start(P, None)
    keep = relaxation_hosts(P, None, SLACKS[0], time_limit=10)
    assert x is not None and keep is not None
    y = fill(P, x, keep, None)
    assert not verify(P, y, None)
    gained = (y - x).clip(min=0)
    assert gained[:, ~keep].sum() == 0  # nothing lands outside the hosts kept
    assert P.used(y)[~keep].sum() <= P.used(x)[~keep].sum()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("budget", [None, 4])
def test_guided_is_checked_cheaper_and_repeats(seed: int, budget: int | None, tmp_path: Path) -> None:
    P = problem_of(seed, tmp_path, nodes=16, pods=100)
    x = start(P, None)
    assert x is not None
    g, used = guided(P, x, budget, Clock(120), work=4.0, seed=seed)
    again, used2 = guided(P, x, budget, Clock(120), work=4.0, seed=seed)
    assert 0 < used <= 4.0 + 1e-9 and used == pytest.approx(used2)
    if g is None:
        assert again is None
        return
    assert again is not None and (g == again).all()
    assert not verify(P, g, budget)
    assert key(P, g) < key(P, x)
    if budget is not None:
        assert P.moves(g) <= budget


def test_too_large_a_model_is_not_tried(tmp_path: Path) -> None:
    P = problem_of(0, tmp_path)
    x = start(P, None)
    assert x is not None
    assert guided(P, x, None, Clock(60), work=4.0, max_vars=1) == (None, 0.0)
    g, used = guided(P, x, None, Clock(60), work=4.0, max_vars=10**6)
    assert g is not None and used > 0


def test_the_last_rung_is_guided_when_its_whole_model_is_large(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The guided search runs once, on the last rung, when the whole model is large (made so
    here by lowering the threshold); a small whole model is solved without it."""
    import solvers.consolidate.solve as solve_mod

    calls: list[int | None] = []

    def spy(problem, x, budget, clock, **kw):  # type: ignore[no-untyped-def]
        calls.append(budget)
        return guided(problem, x, budget, clock, **kw)

    monkeypatch.setattr(solve_mod, "guided", spy)
    P = problem_of(1, tmp_path)
    small = solve_mod.consolidate_budgets(P, [0, None], time_limit=60, seed=1, work=4.0)
    assert calls == []
    monkeypatch.setattr(solve_mod, "FULL_MODEL_VARS", 1)
    large = solve_mod.consolidate_budgets(P, [0, None], time_limit=60, seed=1, work=4.0)
    assert calls == [None]
    for r in (*small, *large):
        assert r.outcome is not None and not verify(P, r.outcome.x, r.max_moves)
    assert large[1].cost_after is not None and large[1].cost_after <= large[0].cost_after + 1e-9
