"""Plans on a running cluster (solvers.plan.incremental) against hand optima and an exhaustive search."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from packing.feasibility.checker import check
from packing.loaders.current import Current
from packing.model.instance import App, HostType, Instance, Placement, Rule
from solvers.plan.incremental import (
    moves_of,
    plan_incremental,
    running_placement,
    volume_bound,
    with_current,
)


def _inst(apps: tuple[App, ...], n_new: int = 3, rules: tuple[Rule, ...] = ()) -> Instance:
    return Instance("c", ("cpu",), (HostType("h", (4.0,), n_new),), apps, rules=rules)


def _hand() -> tuple[Instance, Current]:
    # h#0 and h#1 run one a (2 cpu) each; b (4 cpu) is new
    inst = _inst((App("a", (2.0,), 2), App("b", (4.0,), 1)))
    cur = Current({"h": 2}, {"a": (("h", 0), ("h", 1))})
    return inst, cur


@pytest.mark.parametrize(("moves", "added"), [(0, 1.0), (1, 0.0), (None, 0.0)])
def test_moves_change_the_answer(moves: int | None, added: float) -> None:
    inst, cur = _hand()
    cl = with_current(inst, cur)
    r = plan_incremental(cl, "hosts", moves, time_limit=10, threads=1)
    assert r.status == "optimal"
    assert r.added == added
    assert r.bound == added
    assert r.placement is not None
    assert not check(cl.instance, r.placement, require_all=True)
    assert moves_of(cl, r.placement) == (0 if moves == 0 else 1)


def test_volume_bound_with_fixed_containers() -> None:
    inst, cur = _hand()
    cl = with_current(inst, cur)
    # 4 new cpu and 2 + 2 free: volume alone sees no need (CP-SAT proves 1 host, above)
    assert volume_bound(cl, "hosts", 0) == 0.0
    big = with_current(_inst((App("a", (2.0,), 2), App("b", (4.0,), 3))), cur)
    # 12 new cpu, 4 free with no moves: 2 hosts; 16 cpu in all on 8 existing: 2 hosts anyway
    assert volume_bound(big, "hosts", 0) == 2.0
    assert volume_bound(big, "hosts", None) == 2.0
    priced = _inst((App("a", (2.0,), 2), App("b", (4.0,), 3)))
    priced = priced.replace(host_types=(HostType("h", (4.0,), 3, cost=2.5),))
    assert volume_bound(with_current(priced, cur), "cost", 0) == pytest.approx(5.0)


def _brute(cl, kind: str, max_moves: int | None) -> float | None:
    """Exhaustive: cheapest added hosts over every assignment of every container."""
    inst = cl.instance
    best = None
    for combo in itertools.product(range(inst.n_hosts), repeat=inst.n_containers):
        p = Placement.from_arrays(inst, np.asarray(combo))
        if max_moves is not None and moves_of(cl, p) > max_moves:
            continue
        if check(inst, p, require_all=True):
            continue
        used = np.zeros(inst.n_hosts, dtype=bool)
        used[list(combo)] = True
        v = float((used & ~cl.existing).sum())
        best = v if best is None else min(best, v)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_optimum_matches_exhaustive_search(seed: int) -> None:
    rng = np.random.default_rng(seed)
    apps = (App("a", (float(rng.integers(1, 4)),), 2, max_per_host=int(rng.integers(1, 3))),
            App("b", (float(rng.integers(1, 4)),), 2),
            App("c", (float(rng.integers(2, 5)),), 1))
    inst = _inst(apps, n_new=2, rules=(Rule("a", "c", 0),))
    cur = Current({"h": 2}, {"a": (("h", 0), ("h", 0) if rng.random() < 0.5 else ("h", 1)),
                             "b": (("h", 1), None)})
    cl = with_current(inst, cur)
    for moves in (0, 1, None):
        r = plan_incremental(cl, "hosts", moves, time_limit=10, threads=1)
        want = _brute(cl, "hosts", moves)
        if want is None:
            assert r.status == "infeasible"
            continue
        assert r.status == "optimal", (moves, r)
        assert r.added == want
        assert r.placement is not None
        assert not check(cl.instance, r.placement, require_all=True)
        assert moves is None or moves_of(cl, r.placement) <= moves


def test_scaled_down_app_removes_without_moves() -> None:
    inst = _inst((App("a", (2.0,), 1),))
    cur = Current({"h": 2}, {"a": (("h", 0), ("h", 1))})
    cl = with_current(inst, cur)
    assert cl.removed == 1
    r = plan_incremental(cl, "hosts", 0, time_limit=10, threads=1)
    assert r.status == "optimal" and r.added == 0.0 and r.moves == 0


def test_must_add_bound_of_the_start_plan() -> None:
    from solvers.plan.incremental import first_fit

    inst, cur = _hand()
    cl = with_current(inst, cur)
    p, bound = first_fit(cl, 0, rest="solve", time_limit=5)
    assert p is not None and not check(cl.instance, p, require_all=True)
    assert bound == 1.0  # b (4 cpu) fits on neither existing host next to its running a
    _, moved = first_fit(cl, 1, rest="solve", time_limit=5)
    assert moved is None  # with moves allowed the bound does not hold (a move frees a host)


def _running(seed: int) -> tuple[Instance, Current]:
    """A cluster with a rule (so CP-SAT climbs the budgets, not the consolidation search): six
    running hosts filled unevenly, one app scaled up by two containers and a new app."""
    rng = np.random.default_rng(seed)
    apps = [App(f"a{k}", (float(rng.integers(1, 4)), float(rng.integers(1, 6))), int(rng.integers(3, 6)),
                max_per_host=2 if k == 0 else None) for k in range(6)]
    running = {a.name: a.count for a in apps}
    apps[1] = App(apps[1].name, apps[1].demand, apps[1].count + 2)
    apps.append(App("new", (3.0, 4.0), 3))
    inst = Instance("r", ("cpu", "memory"), (HostType("h", (8.0, 16.0), 8),), tuple(apps),
                    rules=(Rule("a2", "a3", 1),))
    load = np.zeros((6, 2))
    hosts: dict[str, list[tuple[str, int]]] = {}
    per: dict[tuple[str, int], int] = {}
    for a in apps[:6]:
        for _ in range(running[a.name]):
            order = rng.permutation(6)  # random hosts, not first fit: room to consolidate
            for h in order.tolist():
                ok = (load[h] + a.demand <= (8.0, 16.0)).all() and per.get((a.name, h), 0) < 2
                if ok:
                    load[h] += a.demand
                    per[a.name, h] = per.get((a.name, h), 0) + 1
                    hosts.setdefault(a.name, []).append(("h", h))
                    break
    return inst, Current({"h": 6}, {k: tuple(v) for k, v in hosts.items()})


@pytest.mark.parametrize("seed", [4, 5])
def test_rules_path_more_moves_never_cost_more_and_the_seed_repeats(seed: int) -> None:
    inst, cur = _running(seed)
    cl = with_current(inst, cur)
    assert not check(cl.instance, running_placement(cl), require_all=False)
    budgets = (0, 1, 2, 3, 5, 10, None)  # 10 is no rung of the ladder (8, then 12)
    runs = [plan_incremental(cl, "hosts", b, time_limit=120, threads=2, seed=seed, work=2.0)
            for b in budgets]
    assert runs[-2].status == "optimal" and runs[-2].added == runs[-1].added  # its own bound
    assert runs[-1].moves <= 10
    added = [r.added for r in runs]
    assert None not in added
    assert added == sorted(added, reverse=True), added  # type: ignore[type-var]
    assert added[-1] < added[0]  # moves pay here (an app scaled up next to the rule)
    for r, b in zip(runs, budgets, strict=True):
        assert r.placement is not None and not check(cl.instance, r.placement, require_all=True)
        assert b is None or r.moves <= b
        assert r.bound <= r.added + 1e-9  # type: ignore[operator]
    again = [plan_incremental(cl, "hosts", b, time_limit=120, threads=2, seed=seed, work=2.0)
             for b in budgets]
    assert [(r.added, r.moves, r.status) for r in again] == [(r.added, r.moves, r.status) for r in runs]
    assert all(a.placement == b.placement for a, b in zip(again, runs, strict=True))

