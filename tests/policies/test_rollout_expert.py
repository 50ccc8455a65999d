"""The rollout expert (look-ahead over SJF) and the DAG engine's clone: hand-computed, seeded, independent."""

from __future__ import annotations

import numpy as np

from packing.dag.engine import NO_OVERHEADS, Cluster, DagAction, DagEngine
from packing.dag.generator import generate_dag_workload
from packing.dag.model import Job, Stage, Workload, make_workload
from packing.dag.policy import run_dag
from policies.dag import RolloutExpert, ShortestJobFirst


def two_jobs() -> Workload:
    """Two slots, no overheads, both jobs at t=0.

    Job A: a1 (2 tasks x 2 s) -> a2 (3 x 4 s), 16 task-seconds; job B: b1 (1 x 3 s) -> b2 (3 x 4 s), 15.
    SJF (B first, the lower total): b1 [0,3] and a1 [0,2], a1 [2,4], b2 [3,7], a2 [4,8], b2 [7,11]
    (B 8 task-seconds left < A's 12), a2 [8,12] (8 = 8, lower stage id), b2 [11,15], a2 [12,16]:
    JCTs A 16, B 15, total 31, mean 15.5.
    A first (both a1 tasks at t=0): a1 [0,2] x 2, a2 [2,6] x 2, then b1 [6,9] and a2 [6,10], b2 [9,13],
    [10,14], [13,17]: A 10, B 17, total 27, mean 13.5 -- what the expert finds by simulating with SJF.
    """
    a = Job("A", 0.0, (Stage("J1", 2, (1.0, 1.0), 2.0), Stage("J2_1", 3, (1.0, 1.0), 4.0, (0,))))
    b = Job("B", 0.0, (Stage("J1", 1, (1.0, 1.0), 3.0), Stage("J2_1", 3, (1.0, 1.0), 4.0, (0,))))
    return make_workload("two", [a, b], "test")


ONE_TYPE = Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([2]))


def test_sjf_and_expert_hand_computed() -> None:
    w = two_jobs()
    sjf, _ = run_dag(DagEngine(w, ONE_TYPE, overheads=NO_OVERHEADS), ShortestJobFirst())
    assert sjf.jct.tolist() == [16.0, 15.0]
    eng = DagEngine(w, ONE_TYPE, overheads=NO_OVERHEADS)
    eng.reset()
    ex = RolloutExpert(horizon=None)
    ex.reset(eng)
    obs, mask = eng.observation(), eng.mask()
    cands = ex.candidates(obs, mask)
    assert cands[0] == DagAction(2, 0, 1)  # SJF's: b1 (B has 15 task-seconds left)
    assert DagAction(0, 0, 2) in cands  # the next-shortest job's stage
    assert ex.cost(DagAction(2, 0, 1), 0) == 31.0 and ex.cost(DagAction(0, 0, 2), 0) == 27.0
    assert ex.act(obs, mask) == DagAction(0, 0, 2)
    res, _ = run_dag(DagEngine(w, ONE_TYPE, overheads=NO_OVERHEADS), RolloutExpert(horizon=None))
    assert res.mean_jct == 13.5 and res.mean_jct < sjf.mean_jct


def test_clone_is_independent_and_replays_the_original() -> None:
    w = generate_dag_workload(6, seed=3)
    types = np.array([[4.0, 8.0], [8.0, 16.0]])
    cl = Cluster.from_counts(types, np.array([6, 6]))
    eng = DagEngine(w, cl, seed=1)
    d = eng.reset()
    pol = ShortestJobFirst()
    pol.reset(eng)
    for _ in range(3):
        d = eng.step(pol.act(eng.observation(), eng.mask()))
    assert d is not None
    snap = (eng.pending.copy(), [list(f) for f in eng.free], list(eng._heap))
    copy = eng.clone()
    while copy.decision is not None:  # run the copy to the end: the original must not move
        copy.step(pol.act(copy.observation(), copy.mask()))
    assert (eng.pending == snap[0]).all() and eng.free == snap[1] and eng._heap == snap[2]
    while eng.decision is not None:  # same generator state, same actions: the same finish times
        eng.step(pol.act(eng.observation(), eng.mask()))
    assert np.array_equal(eng.result().finish, copy.result().finish)


def test_clone_known_only_drops_future_arrivals() -> None:
    jobs = [Job(f"j{i}", 10.0 * i, (Stage("J1", 1, (1.0, 1.0), 5.0),)) for i in range(3)]
    eng = DagEngine(make_workload("late", jobs, "test"), ONE_TYPE, overheads=NO_OVERHEADS)
    eng.reset()
    c = eng.clone(known_only=True)
    while c.decision is not None:
        c.step(DagAction(int(c.runnable_stages()[0]), 0, 1))
    assert c.arrived.tolist() == [True, False, False] and c.finish[0] == 5.0 and np.isnan(c.finish[1:]).all()


def test_expert_seeded_and_valid() -> None:
    w = generate_dag_workload(5, seed=4)
    cl = Cluster.from_counts(np.array([[4.0, 8.0], [8.0, 16.0]]), np.array([4, 4]))
    out = []
    for _ in range(2):
        ex = RolloutExpert(seed=7, horizon=20)
        res, _ = run_dag(DagEngine(w, cl, seed=2), ex)  # the engine rejects any action the mask forbids
        out.append((res.finish.tolist(), dict(ex.stats)))
    assert out[0] == out[1] and out[0][1]["rollouts"] > 0


def fork_job() -> Workload:
    """One job, two root stages: s0 (1 x 1 s, no child) and s1 (1 x 1 s) -> s2 (1 x 10 s); one slot.

    SJF takes the lowest stage id (s0) first; SJF-CP the longest path to the job's end (s1: 11 s).
    """
    j = Job("F", 0.0, (Stage("J1", 1, (1.0, 1.0), 1.0), Stage("J2", 1, (1.0, 1.0), 1.0),
                       Stage("J3_2", 1, (1.0, 1.0), 10.0, (1,))))
    return make_workload("fork", [j], "test")


def test_sjf_cp_takes_the_critical_stage_and_the_expert_tries_it() -> None:
    from policies.dag import SjfCriticalPath

    one = Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([1]))
    eng = DagEngine(fork_job(), one, overheads=NO_OVERHEADS)
    eng.reset()
    obs, mask = eng.observation(), eng.mask()
    picks = []
    for pol in (ShortestJobFirst(), SjfCriticalPath()):
        pol.reset(eng)
        picks.append(pol.act(obs, mask).stage)
    assert picks == [0, 1]
    plain, within = RolloutExpert(horizon=None), RolloutExpert(horizon=None, within=True)
    for ex in (plain, within):
        ex.reset(eng)
    assert [a.stage for a in plain.candidates(obs, mask)] == [0]
    assert [a.stage for a in within.candidates(obs, mask)] == [0, 1]
    cp = RolloutExpert(horizon=None, base="sjf-cp")
    cp.reset(eng)
    assert cp.candidates(obs, mask)[0].stage == 1
