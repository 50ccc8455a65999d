"""Consolidation: hand-computed answers, an independent CP-SAT model, budgets, seeds, waves, proofs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from ortools.sat.python import cp_model

from packing.cluster.budgets import budget_state
from packing.cluster.problem import build_problem
from packing.cluster.snapshot import Snapshot
from packing.cluster.waves import evictions_per_budget, plan_waves
from packing.loaders.host_types import load_hosts
from packing.loaders.snapshot import read_snapshot
from packing.model.selection import allowed
from packing.plan.model import HostOffer
from solvers.consolidate.solve import consolidate, consolidate_budgets, ladder, shares, verify
from tests.solvers.consolidate.cluster_cases import offers, small_cluster, snapshot_of

DATA = Path(__file__).resolve().parents[2] / "data" / "k8s-snapshots"
FIXTURE_OFFERS = ("m5.large=2c8g:price=0.096", "m5.xlarge=4c16g:price=0.192",
                  "g4dn.xlarge=4c16g1gpu:price=0.526")


def fixture_problem(replace: bool = False):
    return build_problem(read_snapshot(DATA / "cluster.yaml"), load_hosts(list(FIXTURE_OFFERS)),
                         replace=replace)


# ------------------------------------------------------------------------------------------------
# by hand: six nodes, prices 2 x 0.192 + 3 x 0.096 + 0.526 = 1.198
@pytest.mark.parametrize(("budget", "cost", "moves", "removed"), [
    (0, 1.102, 0, {"ip-10-0-3-32.ec2.internal"}),                 # only DaemonSets run there
    (1, 1.006, 1, {"ip-10-0-3-32.ec2.internal", "ip-10-0-2-22.ec2.internal"}),  # cart leaves cordoned 22
    (2, 1.006, 1, {"ip-10-0-3-32.ec2.internal", "ip-10-0-2-22.ec2.internal"}),  # web + coredns need 2 more
    (3, 0.910, 3, {"ip-10-0-3-32.ec2.internal", "ip-10-0-2-22.ec2.internal",
                   "ip-10-0-2-21.ec2.internal"}),
    (None, 0.910, 3, {"ip-10-0-3-32.ec2.internal", "ip-10-0-2-22.ec2.internal",
                      "ip-10-0-2-21.ec2.internal"}),                # the others run pinned or batch pods
])
def test_fixture_by_hand(budget, cost: float, moves: int, removed: set[str]) -> None:
    r = consolidate(fixture_problem(), budget, time_limit=20)
    assert r.status == "optimal" and r.cost_before == pytest.approx(1.198)
    assert r.cost_after == pytest.approx(cost) and r.bound == pytest.approx(cost)
    assert (r.moves, set(r.removed), r.nodes_after) == (moves, removed, 6 - len(removed))
    assert r.placed == (("shop/search-6f5e4d3c2-p0p0p", r.placed[0][1]),)  # the Pending pod
    assert {p for p, _ in r.pinned} == {"shop/redis-0", "default/debug", "batch/ml-train-0"}
    assert all(e.to not in r.removed and e.to != "ip-10-0-2-22.ec2.internal" for e in r.evictions)


# ------------------------------------------------------------------------------------------------
# an independent model: one boolean per pod and node, written from the snapshot alone
def independent(snap: Snapshot, offers_: tuple[HostOffer, ...], max_moves: int | None,
                replace: bool = False) -> tuple[float, int]:
    """The least (cost, moves) by a model that places pods one by one (see the module docstring)."""
    res = snap.resources
    price = {o.name: round(1000 * float(o.price)) for o in offers_}
    pods = snap.pods
    states = [budget_state(b, pods) for b in snap.budgets]
    blocked = {i for s in states if s.allowed == 0 for i in s.pods}
    hosts = []  # (name, free capacity, labels, taints, closed, price)
    for n in snap.nodes:
        ds = [sum(p.request.get(r, 0) for p in pods if p.daemon and p.node == n.name) for r in res]
        hosts.append((n.name, [n.allocatable.get(r, 0) - d for r, d in zip(res, ds, strict=True)],
                      n.labels, n.taints, n.unschedulable, price[n.type]))
    movable = [i for i, p in enumerate(pods) if not p.daemon and not (
        p.node is not None and (p.pinned or i in blocked))]
    if replace:
        daemons = {p.controller: p for p in pods if p.daemon}
        for o in offers_:
            same = [n for n in snap.nodes if n.type == o.name]
            cap = [same[0].allocatable.get(r, 0) for r in res] if same else \
                [{"cpu": o.cpu_milli, "memory": o.memory_bytes, "pods": 110}.get(r, 0) for r in res]
            for d in daemons.values():
                if allowed(d.node_selector, None, d.tolerations, (), ()):
                    cap = [c - d.request.get(r, 0) for c, r in zip(cap, res, strict=True)]
            hosts += [(f"{o.name}+{k}", cap, (), (), False, price[o.name]) for k in range(len(movable))]
    m = cp_model.CpModel()
    where = {n: h for h, (n, *_) in enumerate(hosts)}
    a = {}
    for i in movable:
        p = pods[i]
        for h, (name, _cap, labels, taints, closed, _pr) in enumerate(hosts):
            here = p.node == name
            if here or (not closed and allowed(p.node_selector, p.node_affinity, p.tolerations,
                                               labels, taints)):
                a[i, h] = m.new_bool_var("")
        m.add_exactly_one(v for (j, _h), v in a.items() if j == i)
    y = [m.new_bool_var("") for _ in hosts]
    fixed = {i for i, p in enumerate(pods) if not p.daemon and i not in movable}
    for h, (_name, cap, *_rest) in enumerate(hosts):
        if any(where[pods[i].node] == h for i in fixed):
            m.add(y[h] == 1)
        for k, r in enumerate(res):
            pinned_load = sum(pods[i].request.get(r, 0) for i in fixed if where[pods[i].node] == h)
            terms = [pods[i].request.get(r, 0) * v for (i, hh), v in a.items() if hh == h]
            m.add(sum(terms) + pinned_load <= cap[k] * y[h])
    for i in movable:
        for j in movable:
            p, q = pods[i], pods[j]
            if i < j and any((nss is None or q.namespace in nss) and all(
                    dict(q.labels).get(r.key) in r.values for r in sel) for sel, nss, _k, _f in p.anti):
                for h in range(len(hosts)):
                    if (i, h) in a and (j, h) in a:
                        m.add(a[i, h] + a[j, h] <= 1)
    moved = [1 - a[i, where[pods[i].node]] for i in movable if pods[i].node is not None]
    if max_moves is not None:
        m.add(sum(moved) <= max_moves)
    w = len(moved) + 1
    m.minimize(w * sum(pr * y[h] for h, (*_r, pr) in enumerate(hosts)) + sum(moved))
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = 120
    s.parameters.num_workers = 2
    assert s.solve(m) == cp_model.OPTIMAL
    obj = round(s.objective_value)
    return (obj // w) / 1000, obj % w


@pytest.mark.parametrize("seed", range(6))
def test_equal_to_an_independent_model(seed: int, tmp_path: Path) -> None:
    snap = snapshot_of(small_cluster(seed), tmp_path)
    problem = build_problem(snap, offers())
    for budget in (0, 1, 3, None):
        r = consolidate(problem, budget, time_limit=30, seed=seed)
        cost, moves = independent(snap, offers(), budget)
        assert r.status == "optimal"
        assert (r.cost_after, r.moves) == (pytest.approx(cost), moves), budget
        assert r.bound <= cost + 1e-9


@pytest.mark.parametrize("seed", [0, 3])
def test_replace_equal_to_an_independent_model(seed: int, tmp_path: Path) -> None:
    snap = snapshot_of(small_cluster(seed, nodes=4, pods=20), tmp_path)
    problem = build_problem(snap, offers(), replace=True)
    r = consolidate(problem, None, time_limit=60, seed=seed)
    cost, moves = independent(snap, offers(), None, replace=True)
    assert r.status == "optimal" and (r.cost_after, r.moves) == (pytest.approx(cost), moves)


# ------------------------------------------------------------------------------------------------
BUDGETS = (0, 1, 2, 4, 8, None)


WORK, WALL = 10.0, 120.0
"""Deterministic work and wall time of the repeatability test: the wall clock never decides."""


@pytest.mark.parametrize("seed", range(4))
def test_more_moves_never_cost_more_and_the_seed_repeats(seed: int, tmp_path: Path) -> None:
    problem = build_problem(snapshot_of(small_cluster(seed, nodes=8, pods=44), tmp_path), offers())
    rs = consolidate_budgets(problem, BUDGETS, time_limit=WALL, seed=seed, work=WORK)
    costs = [r.cost_after for r in rs]
    assert costs == sorted(costs, reverse=True)
    assert all(r.moves <= (b if b is not None else math.inf) for r, b in zip(rs, BUDGETS, strict=True))
    again = consolidate_budgets(problem, BUDGETS, time_limit=WALL, seed=seed, work=WORK)
    strip = [dict(r.to_dict(), seconds=0) for r in rs]
    assert strip == [dict(r.to_dict(), seconds=0) for r in again]
    # separate runs climb the same ladder: the same answers
    alone = [consolidate(problem, b, time_limit=WALL, seed=seed, work=WORK) for b in BUDGETS]
    assert [r.cost_after for r in alone] == costs


@pytest.mark.parametrize("seed", [0, 2])
def test_a_start_joins_the_rung_its_moves_fit(seed: int, tmp_path: Path) -> None:
    """A good solution with many moves (found with much work) lifts the first rung that admits it,
    a middle rung with little work that does not find as good alone; the rungs below are as if
    it were not given; a start that breaks the rules (everything on one node) is ignored."""
    problem = build_problem(snapshot_of(small_cluster(seed, nodes=12, pods=70), tmp_path), offers())
    good = consolidate(problem, None, time_limit=WALL, seed=seed, work=WORK)
    assert good.outcome is not None and good.cost_after is not None
    x, m = good.outcome.x, good.moves
    rung = min(r for r in ladder(problem) if r is not None and r >= m)
    bad = np.zeros_like(x)
    bad[:, 0] = x.sum(axis=1)
    budgets = (0, max(0, m - 1), rung)
    plain = consolidate_budgets(problem, budgets, time_limit=WALL, seed=seed, work=0.05)
    seeded = consolidate_budgets(problem, budgets, time_limit=WALL, seed=seed, work=0.05,
                                 starts=[bad, x])
    assert [r.to_dict() | {"seconds": 0} for r in seeded[:2]] == \
        [r.to_dict() | {"seconds": 0} for r in plain[:2]]  # below its moves: as if not given
    assert plain[2].cost_after is not None and plain[2].cost_after > good.cost_after + 1e-9
    assert seeded[2].cost_after == pytest.approx(good.cost_after)
    assert seeded[2].outcome is not None and not verify(problem, seeded[2].outcome.x, rung)
    ignored = consolidate_budgets(problem, budgets, time_limit=WALL, seed=seed, work=0.05,
                                  starts=[bad])
    assert [r.cost_after for r in ignored] == [r.cost_after for r in plain]


def test_a_stopped_climb_skips_to_the_highest_rung(tmp_path: Path) -> None:
    """Stopped (Ctrl-C) before it starts, the climb runs rung 0 and the highest rung only, where a
    start joins: the answers stay within their budgets and no dearer than the start."""
    from solvers.base import StopFlag

    problem = build_problem(snapshot_of(small_cluster(1, nodes=12, pods=70), tmp_path), offers())
    good = consolidate(problem, None, time_limit=WALL, seed=1, work=WORK)
    assert good.outcome is not None and good.cost_after is not None
    flag = StopFlag()
    flag.set()
    lines: list[str] = []
    r0, r = consolidate_budgets(problem, [0, None], time_limit=WALL, seed=1, work=WORK, stop=flag,
                                starts=[good.outcome.x], progress=lines.append)
    assert [ln.split("max moves ")[1].split(":")[0] for ln in lines] == ["0", "all"]
    assert r0.moves == 0 and r.cost_after is not None
    assert r.cost_after <= good.cost_after + 1e-9


def test_the_ladder() -> None:
    problem = fixture_problem()
    assert ladder(problem) == (0, 1, 2, 3, 4, 5, 6, 7, 8, None)  # 10 pods can move
    assert sum(shares(ladder(problem))) == pytest.approx(1.0)
    w = shares(ladder(problem), first=1.0, last=0.5)
    assert w[0] == pytest.approx(2 * w[-1]) and w[1] == pytest.approx(w[0] / 10)


@pytest.mark.parametrize("seed", range(3))
def test_no_move_changes_nothing(seed: int, tmp_path: Path) -> None:
    problem = build_problem(snapshot_of(small_cluster(seed), tmp_path), offers())
    r = consolidate(problem, 0, time_limit=10)
    assert r.moves == 0 and not r.evictions and not r.waves
    x = r.outcome.x
    before, after = problem.assign(problem.orig), problem.assign(x)
    running = before >= 0
    assert (after[running] == before[running]).all()  # every running pod stays where it runs
    assert set(r.removed) == {problem.host_names[h] for h in np.flatnonzero(
        problem.existing & (problem.orig.sum(axis=0) == 0))}  # only nodes no pod runs on


@pytest.mark.parametrize("seed", range(8))
def test_waves_keep_every_budget_and_fit(seed: int, tmp_path: Path) -> None:
    problem = build_problem(snapshot_of(small_cluster(seed, nodes=8, pods=48, pending=2), tmp_path),
                            offers())
    r = consolidate(problem, None, time_limit=10, seed=seed)
    assert not verify(problem, r.outcome.x, None)
    w = plan_waves(problem, r.outcome.x)
    assert not w.stuck and sum(len(t) for t in w.waves) == len(w.moves)
    load = problem.load(problem.orig)
    for wave in w.waves:
        assert all(n <= s.allowed for n, s in zip(evictions_per_budget(problem, w.moves, wave),
                                                  problem.budgets, strict=True))
        for k in wave:
            mv = w.moves[k]
            if mv.src >= 0:
                load[mv.src] -= problem.demand[mv.app]
            load[mv.dst] += problem.demand[mv.app]
        grew = load > problem.load(problem.orig)
        assert not ((load > problem.capacity) & grew).any()  # every pod of the wave has room
    assert len(r.evictions) == sum(1 for mv in w.moves if mv.src >= 0)


def test_infeasible_names_the_hosts_over(tmp_path: Path) -> None:
    objs = small_cluster(1)
    node = next(o for o in objs if o["kind"] == "Node")
    node["status"]["allocatable"]["cpu"] = "400m"  # less than its pods ask
    problem = build_problem(snapshot_of(objs, tmp_path), offers())
    r = consolidate(problem, 0, time_limit=10)
    assert r.status == "infeasible" and r.cost_after is None
    assert node["metadata"]["name"] in r.reason and "cpu over by" in r.reason
    moved = consolidate(problem, None, time_limit=10)
    assert moved.status in ("optimal", "feasible") and moved.moves > 0
