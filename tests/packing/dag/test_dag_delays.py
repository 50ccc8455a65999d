"""packing.dag.delays: each stage's own launch-delay stream, and what it costs a stage at least.

The least costs are checked against enumeration of every way to launch a stage's tasks (every number
of decisions, every count per decision); the engine is checked to hand the ``k``-th decision of a stage
its ``k``-th draw whatever other stages do (so two policies meet the same delays).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from packing.dag.delays import launch_delays, least_stage_overheads, stage_delays
from packing.dag.engine import Cluster, DagAction, DagEngine, Overheads, Surge
from packing.dag.model import Job, Stage, make_workload

OH = Overheads()


def compositions(n: int) -> list[tuple[int, ...]]:
    """Every sequence of positive counts summing to ``n``."""
    out = []
    for k in range(1, n + 1):
        for cuts in itertools.combinations(range(1, n), k - 1):
            edges = (0, *cuts, n)
            out.append(tuple(edges[i + 1] - edges[i] for i in range(k)))
    return out


@pytest.mark.parametrize("seed", range(25))
def test_least_overheads_equal_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 8))
    m = int(rng.integers(1, n + 1))
    d = rng.uniform(0.3, 4.7, n)  # non-integer, in any order
    first, total, busiest = least_stage_overheads(np.array([n]), np.array([m]), 0.3, [d])
    # every launch sequence: counts c_0..c_(K-1) >= 1 on decisions 0..K-1
    assert total[0] == pytest.approx(min(float(np.dot(c, d[: len(c)])) for c in compositions(n)))
    # a slot that runs m tasks runs them from m different decisions
    subsets = itertools.combinations(range(n), m)
    assert busiest[0] == pytest.approx(min(float(d[list(c)].sum()) for c in subsets))
    assert first[0] == d[0]


def test_least_overheads_without_draws() -> None:
    first, total, busiest = least_stage_overheads(np.array([3, 5]), np.array([1, 2]), 1.4, None)
    assert first == pytest.approx([1.4, 1.4])
    assert total == pytest.approx([4.2, 7.0])
    assert busiest == pytest.approx([1.4, 2.8])


def test_streams_are_seeded_per_stage() -> None:
    a = launch_delays(OH.sched, OH.start, 7, 3, 50)
    assert a.shape == (50,)
    assert np.all((a >= OH.min_per_stage) & (a <= OH.sched[1] + OH.start[1]))
    assert np.array_equal(a[:20], launch_delays(OH.sched, OH.start, 7, 3, 20))  # a prefix is a prefix
    assert not np.array_equal(a[:20], launch_delays(OH.sched, OH.start, 7, 4, 20))
    assert not np.array_equal(a[:20], launch_delays(OH.sched, OH.start, 8, 3, 20))
    assert [len(x) for x in stage_delays(OH.sched, OH.start, 7, np.array([2, 0, 5]))] == [2, 0, 5]


def two_stage_episode(order: tuple[int, int], seed: int) -> np.ndarray:
    """Jobs a and b, one stage of 2 tasks of 10 s each, launched one task at a time in ``order``."""
    st = (Stage("S", 2, (1.0, 1.0), 10.0),)
    w = make_workload("crn", [Job("a", 0.0, st), Job("b", 0.0, st)], "test")
    eng = DagEngine(w, Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([4])), overheads=OH, seed=seed)
    eng.reset()
    for s in (*order, *order):
        eng.step(DagAction(s, 0, 1))
    return eng.result().finish


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_stage_meets_its_own_draws_whatever_the_order(seed: int) -> None:
    # a stage's two launches meet its draws 0 and 1, whichever stage goes first (one stream for the
    # whole episode would hand them out in decision order)
    one, other = two_stage_episode((0, 1), seed), two_stage_episode((1, 0), seed)
    assert np.array_equal(one, other)
    for s in (0, 1):
        d = launch_delays(OH.sched, OH.start, seed, s, 2)
        assert one[s] == pytest.approx(10.0 + d.max())


def test_a_reseeded_clone_draws_fresh_delays() -> None:
    st = (Stage("S", 3, (1.0, 1.0), 10.0),)
    w = make_workload("clone", [Job("a", 0.0, st)], "test")
    eng = DagEngine(w, Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([3])), overheads=OH, seed=5)
    eng.reset()
    eng.step(DagAction(0, 0, 1))
    same, fresh = eng.clone(), eng.clone()
    fresh.reseed(99)
    for e in (eng, same, fresh):
        assert e.step(DagAction(0, 0, 2)) is None  # the last launch: the episode runs to its end
    d = launch_delays(OH.sched, OH.start, 5, 0, 3)
    assert eng.finish[0] == same.finish[0] == pytest.approx(10.0 + d[:2].max())
    assert fresh.finish[0] == pytest.approx(10.0 + max(d[0], launch_delays(OH.sched, OH.start, 99, 0, 3)[1]))


def test_a_relaunch_after_preemption_draws_beyond_the_stage_stream() -> None:
    # one task of 10 s on host 0's only slot; a surge takes the host at 4 s for 6 s and kills it; the
    # task returns to its stage after the preemption delay and relaunches when the surge ends. Its stage
    # has one draw, so the relaunch (its second decision) meets the engine's own generator: after the
    # preemption delay, a scheduling and a start delay, in that order.
    oh = Overheads((0.5, 2.0), (1.0, 3.0), (0.5, 1.5))
    st = (Stage("S", 1, (1.0, 1.0), 10.0),)
    w = make_workload("relaunch", [Job("a", 0.0, st)], "test")
    base = Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([1]))
    cl = Cluster(base.types, base.slot_type, base.slot_host, base.capacity, (Surge(4.0, 0, 6.0),))
    eng = DagEngine(w, cl, overheads=oh, seed=3, preempt=True)
    eng.reset()
    eng.step(DagAction(0, 0, 1))
    assert eng.decision is not None and eng.decision.time == pytest.approx(10.0)  # the surge ended
    eng.step(DagAction(0, 0, 1))
    assert eng.decision is None and int(eng.launches[0]) == 2 and eng.preempted == 1
    rng = np.random.default_rng(3)
    rng.uniform(*oh.preempt)
    again = float(rng.uniform(*oh.sched)) + float(rng.uniform(*oh.start))
    assert eng.finish[0] == pytest.approx(10.0 + again + 10.0)
    assert again != pytest.approx(float(launch_delays(oh.sched, oh.start, 3, 0, 1)[0]))
