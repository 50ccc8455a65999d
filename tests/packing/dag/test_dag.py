"""packing.dag: loader (fixture and full files), generator, partition, engine (hand-computed JCT)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packing.dag.engine import NO_OVERHEADS, WAIT, Cluster, DagAction, DagEngine, Overheads
from packing.dag.generator import generate_dag_workload
from packing.dag.loader import load_dag_folder, parse_task_name
from packing.dag.model import Job, Stage, Workload, make_workload
from packing.dag.partition import comparable, constrained_clustering, dominates, partition, plain_clustering
from packing.dag.policy import drive_dag, run_dag
from packing.errors import InputError, PolicyError

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "dag"
HEADER = "task_name,instance_num,job_name,task_type,status,start_time,end_time,plan_cpu,plan_mem\n"


def test_task_names() -> None:
    assert parse_task_name("J3_1_2") == (3, (1, 2))
    assert parse_task_name("M1") == (1, ())
    assert parse_task_name("R4_2_Stg9") == (4, (2,))
    assert parse_task_name("R3_1_") == (3, (1,))
    assert parse_task_name("task_abc") is None


def test_fixture_loads() -> None:
    w = load_dag_folder(FIXTURE)
    assert (w.n_jobs, w.n_stages) == (6, 27)
    assert w.meta["skipped"]["unfinished"] == 1
    j = {jb.name: jb for jb in w.jobs}["j_2594644"]
    byname = {s.name: s for s in j.stages}
    assert byname["J3_1_2"].n_tasks == 3
    assert {j.stages[p].name for p in byname["J3_1_2"].parents} == {"M1", "M2"}
    assert byname["J3_1_2"].demand == pytest.approx((1.0, 0.59 * 5.12))
    assert w.jobs[0].arrival == 0.0  # shifted
    # j_1292 (spans): M1 1, R2_1 1, M3 27, R4_3 47, J5_2_4 274, R6_5 342;
    # longest path M3 -> R4_3 -> J5_2_4 -> R6_5 (the other branch, M1 -> R2_1, is 2 s)
    j2 = {jb.name: jb for jb in w.jobs}["j_1292"]
    assert j2.critical_path == pytest.approx(27 + 47 + 274 + 342)
    assert j2.depth == 4


def _write(tmp_path: Path, body: str) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    (d / "batch_task_x.csv").write_text(HEADER + body)
    return d


@pytest.mark.parametrize("body, needle", [
    ("M1,x,j_1,,Terminated,0,5,100,0.3\n", "line 2, column instance_num"),
    ("Q,1,j_1,,Terminated,0,5,100,0.3\n", "line 2, column task_name"),
    ("M1,1,j_1,,Terminated,0,5,100,0.3\nR2_7,1,j_1,,Terminated,0,5,100,0.3\n", "parent 7 is not a stage"),
    ("R1_2,1,j_1,,Terminated,0,5,100,0.3\nR2_1,1,j_1,,Terminated,0,5,100,0.3\n", "cycle"),
    ("M1,1,j_1,,Terminated,9,5,100,0.3\n", "before start_time"),
    ("M1,1,j_1,,Terminated,0,5,-1,0.3\n", "column plan_cpu"),
    ("M1,1,j_1,,Terminated,0,5,100,0.3\nM1,1,j_1,,Terminated,0,5,100,0.3\n", "stage id 1 twice"),
])
def test_bad_rows_are_named(tmp_path: Path, body: str, needle: str) -> None:
    with pytest.raises(InputError) as e:
        load_dag_folder(_write(tmp_path, body))
    assert needle in str(e.value) and "batch_task_x.csv" in str(e.value)


def test_missing_folder_and_empty(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_dag_folder(tmp_path / "nope")
    with pytest.raises(InputError, match="no batch_task"):
        load_dag_folder(tmp_path)


def test_full_files_counts(shared_data: Path) -> None:
    folder = shared_data / "alibaba-v2018-batch-dag"
    w = load_dag_folder(folder / "batch_task_dags_medium.csv")
    assert w.n_jobs == 2963 and w.n_stages == 17997 and w.meta["rows"] == 17997
    s0 = load_dag_folder(folder / "batch_task_dags_set0.csv")
    assert s0.meta["rows"] == 20371 and s0.n_jobs == 5307 - 49
    both = load_dag_folder(folder)
    assert both.n_jobs == 8211 and both.n_stages == 37979 and both.meta["skipped"]["duplicates"] == 10


def test_generator_is_seeded() -> None:
    a, b = generate_dag_workload(20, seed=3), generate_dag_workload(20, seed=3)
    assert a.jobs == b.jobs and a.jobs != generate_dag_workload(20, seed=4).jobs
    for j in a.jobs:
        assert len(j.topo_order) == len(j.stages)


def test_cycle_check() -> None:
    st = (Stage("A", 1, (1, 1), 1, (1,)), Stage("B", 1, (1, 1), 1, (0,)))
    with pytest.raises(InputError, match="cycle"):
        make_workload("w", [Job("j", 0, st)], "test")


# -- partition -------------------------------------------------------------------------------------
def test_constrained_merges_only_comparable() -> None:
    pts = np.array([[1.0, 1.0], [2.0, 2.0], [1.0, 3.0], [3.0, 1.0]])
    p = constrained_clustering(pts, np.ones(4), 1)
    # (2,2), (1,3), (3,1) are pairwise incomparable: at best (1,1) joins one of them
    assert p.n_types == 3 and not p.reached
    for q in range(p.n_types):
        for m in np.flatnonzero(p.assign == q):
            assert dominates(p.types[q], pts[m])
    assert plain_clustering(pts, np.ones(4), 1).n_types == 1


def test_constrained_picks_the_least_distance() -> None:
    # weights: merging the light point costs less than merging the two heavy ones
    pts = np.array([[1.0, 1.0], [1.0, 2.0], [2.0, 2.0]])
    p = constrained_clustering(pts, np.array([100.0, 100.0, 1.0]), 2)
    assert p.reached and p.assign[1] == p.assign[2] != p.assign[0]
    assert np.allclose(p.types, [[1, 1], [2, 2]])
    assert comparable(np.array([1, 2]), np.array([2, 2]))
    assert not comparable(np.array([1, 3]), np.array([3, 1]))


def test_partition_covers_every_task() -> None:
    w = generate_dag_workload(30, seed=1)
    _, dem, _, _ = w.stage_table()
    for method in ("constrained", "single", "plain"):
        p = partition(w, 3, method)
        assert np.all(np.any(np.all(p.types[None] >= dem[:, None] - 1e-9, axis=2), axis=1))
    assert partition(w, 3, "single").n_types == 1


# -- engine ----------------------------------------------------------------------------------------
def four_stage() -> Workload:
    st = (Stage("A", 1, (1, 1), 10, ()), Stage("B", 2, (1, 1), 5, (0,)), Stage("C", 1, (1, 1), 20, (0,)),
          Stage("D", 1, (1, 1), 3, (1, 2)))
    return make_workload("four", [Job("j", 0.0, st)], "test")


class FirstStage:
    """Lowest runnable stage id, type 0, all tasks that fit; records what it saw."""

    name = "first"
    partition = "single"

    def reset(self, engine: DagEngine) -> None:
        self.engine = engine
        self.seen: list[tuple[float, list[int]]] = []

    def act(self, obs, mask):  # type: ignore[no-untyped-def]
        rows = np.flatnonzero(mask.any(axis=1))
        s = int(obs.runnable[rows[0]])
        self.seen.append((obs.time, obs.runnable.tolist()))
        for p in self.engine.parents[s]:  # dependencies: every parent task finished
            assert obs.finished[p] == self.engine.stage_tasks[p]
        return DagAction(s, 0, int(min(obs.pending[s], obs.free[0])))


FIXED = Overheads(sched=(1.0, 1.0), start=(2.0, 2.0), preempt=(5.0, 5.0))


@pytest.mark.parametrize("slots, jct", [(2, 50.0), (3, 42.0)])
def test_hand_computed_jct(slots: int, jct: float) -> None:
    # A: 0 -> +3 overheads +10 = 13; 2 slots: B (2 tasks) 13 -> 21, C waits, 21 -> 44, D 44 -> 50.
    # 3 slots: B 13 -> 21 and C 13 -> 36 together, D 36 -> 42 (= critical path 33 + 3 stages x 3 s).
    w = four_stage()
    eng = DagEngine(w, Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([slots])), overheads=FIXED)
    res, secs = run_dag(eng, FirstStage())
    assert res.jct[0] == pytest.approx(jct)
    assert len(secs) == res.decisions
    assert w.jobs[0].critical_path + 3 * FIXED.min_per_stage == pytest.approx(42.0)


def test_drive_dag_hook_sees_each_decision_and_run_dag_agrees() -> None:
    w = four_stage()
    cl = Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([2]))
    want, _ = run_dag(DagEngine(w, cl, overheads=FIXED), FirstStage())
    eng = DagEngine(w, cl, overheads=FIXED)
    eng.reset()
    pol = FirstStage()
    pol.reset(eng)
    steps: list = []
    n = drive_dag(eng, pol.act, steps.append)
    res = eng.result()
    assert res.jct.tolist() == want.jct.tolist() and len(steps) == n == res.decisions == want.decisions
    assert [s.observation.time for s in steps] == sorted(s.observation.time for s in steps)
    assert all(s.mask[list(s.observation.runnable).index(s.action.stage)].any() for s in steps
               if s.action.stage >= 0)


def test_drive_dag_stops_at_the_limit() -> None:
    w = four_stage()
    eng = DagEngine(w, Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([2])), overheads=FIXED)
    eng.reset()
    pol = FirstStage()
    pol.reset(eng)
    assert drive_dag(eng, pol.act, limit=1) == 1 and eng.decision is not None
    assert drive_dag(eng, pol.act) >= 1 and eng.decision is None


def test_no_overheads_is_the_critical_path() -> None:
    w = four_stage()
    eng = DagEngine(w, Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([3])), overheads=NO_OVERHEADS)
    res, _ = run_dag(eng, FirstStage())
    assert res.jct[0] == pytest.approx(33.0) and res.makespan == pytest.approx(33.0)
    # utilisation: task demand-seconds over capacity x makespan: (10 + 2*5 + 20 + 3) / (3 * 33)
    assert res.utilisation == pytest.approx(43 / 99)
    assert res.idle_share == pytest.approx(1 - 43 / 99)


def test_bad_actions_raise() -> None:
    eng = DagEngine(four_stage(), Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([2])))
    eng.reset()
    with pytest.raises(PolicyError, match="not runnable"):
        eng.step(DagAction(3, 0, 1))
    with pytest.raises(PolicyError, match="outside"):
        eng.step(DagAction(0, 0, 2))
    with pytest.raises(PolicyError, match="WAIT"):
        eng.step(WAIT)  # nothing to wait for at the start


def test_a_stage_no_type_fits_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no container type"):
        DagEngine(four_stage(), Cluster.from_counts(np.array([[0.5, 1.0]]), np.array([2])))


def test_preemption_requeues_and_is_seeded() -> None:
    w = generate_dag_workload(15, seed=2)
    p = partition(w, 1, "single")
    types = p.types
    counts = np.array([12])
    base = Cluster.from_counts(types, counts)
    hosts = np.repeat(np.arange(3), 4)
    from packing.dag.engine import Surge

    cl = Cluster(types, base.slot_type, hosts, base.capacity, (Surge(30.0, 0, 200.0), Surge(100.0, 1, 100.0)))
    out = []
    for preempt in (True, True, False):
        res, _ = run_dag(DagEngine(w, cl, seed=5, preempt=preempt), FirstStage())
        out.append(res)
    assert np.array_equal(out[0].jct, out[1].jct)
    assert out[0].preempted > 0 and out[2].preempted == 0 and out[2].online_wait >= 0
