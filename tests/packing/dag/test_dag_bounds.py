"""packing.dag.bounds: every bound against brute force on tiny cases with non-integer data, and below
every DAG policy on the fixture and on random DAG sets.

Exactness of the brute force over episodes (:func:`best_episode`): given its seed the engine is
deterministic given its decisions (without preemption every launch delay is the ``k``-th draw of
its stage's own stream, :mod:`packing.dag.delays`), and a depth-first search over every action the
mask allows (every runnable stage, every allowed type, every count) and ``WAIT`` enumerates every
episode the engine can produce; any policy, clairvoyant or not, produces one of them. So the least
mean JCT found is the exact optimum over the engine's schedules for that seed.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from packing.dag.bounds import (
    capacity_bound,
    critical_path_bounds,
    order_bounds,
    shift_search,
    srpt_completions,
    tail_order_sum,
)
from packing.dag.engine import NO_OVERHEADS, WAIT, Cluster, DagAction, DagEngine, Overheads, Surge
from packing.dag.generator import generate_dag_workload
from packing.dag.loader import load_dag_folder
from packing.dag.model import Job, Stage, Workload, make_workload
from packing.dag.partition import partition
from packing.dag.policy import run_dag
from packing.errors import InputError
from policies.dag import DAG_POLICIES, make_dag_policy

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "dag"


# -- one machine: SRPT and the order bounds against enumeration of job subsets ---------------------
def makespan(release: np.ndarray, proc: np.ndarray) -> float:
    """Least preemptive one-machine makespan of these jobs: run them in release order, never idle."""
    t = -np.inf
    for j in np.argsort(release, kind="stable"):
        t = max(t, float(release[j])) + float(proc[j])
    return t


def brute_kth(release: np.ndarray, proc: np.ndarray, k: int) -> float:
    """Earliest possible k-th completion: the least makespan over the k-subsets (then finish those first)."""
    return min(makespan(release[list(c)], proc[list(c)]) for c in itertools.combinations(range(len(proc)), k))


@pytest.mark.parametrize("seed", range(40))
def test_srpt_kth_completion_is_the_earliest_possible(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    release = np.round(rng.uniform(0, 6, n), 2) * (rng.random(n) < 0.7)
    proc = np.round(rng.uniform(0.1, 4, n), 3) * (rng.random(n) < 0.9)  # some zero-length jobs
    got = np.sort(srpt_completions(release, proc))
    want = [brute_kth(release, proc, k) for k in range(1, n + 1)]
    assert got == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("seed", range(30))
def test_order_bounds_equal_the_joint_subset_minimum(seed: int) -> None:
    # T_k = min over k-sets K of max(max_{j in K} b_j, least makespan of K), for each machine; then the max
    rng = np.random.default_rng(100 + seed)
    n, m = int(rng.integers(1, 7)), int(rng.integers(1, 3))
    release = np.round(rng.uniform(0, 5, (n, m)), 2)
    volume = np.round(rng.uniform(0, 3, (n, m)), 3)
    own = release.min(axis=1) + np.round(rng.uniform(0.5, 8, n), 2)
    got = order_bounds(own, release, volume)
    want = np.zeros(n)
    for k in range(1, n + 1):
        per_machine = [min(max(own[list(c)].max(), makespan(release[list(c), q], volume[list(c), q]))
                           for c in itertools.combinations(range(n), k)) for q in range(m)]
        want[k - 1] = max(max(per_machine), np.sort(own)[k - 1])
    assert got == pytest.approx(np.maximum.accumulate(want), abs=1e-9)


def test_order_bounds_grid_is_below_the_exact_search(monkeypatch: pytest.MonkeyPatch) -> None:
    import packing.dag.bounds as b

    rng = np.random.default_rng(5)
    n = 40
    release = rng.uniform(0, 50, (n, 2))
    volume = rng.exponential(3.0, (n, 2))
    own = release.min(axis=1) + rng.uniform(1, 30, n)
    exact = order_bounds(own, release, volume)
    monkeypatch.setattr(b, "EXACT_JOBS", 7)
    coarse = b.order_bounds(own, release, volume)
    assert np.all(coarse <= exact + 1e-9) and np.all(coarse >= np.sort(own) - 1e-9)


def least_tail_sum(own: np.ndarray, release: np.ndarray, volume: np.ndarray, tail: np.ndarray) -> float:
    """Least ``sum_j max(own_j, M_j + tail_j)`` over every preemptive one-machine schedule.

    Exact by enumeration of the completion orders: with order ``pi`` the ``i``-th job completes no
    sooner than the least makespan of the first ``i`` jobs, and the preemptive priority schedule in
    order ``pi`` completes each job by then (the objective is non-decreasing in every ``M_j``).
    """
    best = np.inf
    for pi in itertools.permutations(range(len(own))):
        tot = 0.0
        for i, j in enumerate(pi):
            pre = list(pi[: i + 1])
            tot += max(float(own[j]), makespan(release[pre], volume[pre]) + float(tail[j]))
        best = min(best, tot)
    return float(best)


@pytest.mark.parametrize("seed", range(40))
def test_tail_order_sum_below_every_one_machine_schedule(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(1, 6))
    release = np.round(rng.uniform(0, 4, n), 2)
    volume = np.round(rng.uniform(0, 3, n), 3) * (rng.random(n) < 0.9)
    tail = np.round(rng.uniform(0, 5, n), 2) * (rng.random(n) < 0.8)
    own = release + volume + tail + np.round(rng.uniform(0, 3, n), 2) * (rng.random(n) < 0.6)
    got = tail_order_sum(own, release, volume, tail)
    want = least_tail_sum(own, release, volume, tail)
    assert got <= want + 1e-9
    if n <= 2:  # one or two jobs: the threshold search sees every subset, so the bound is exact
        assert got == pytest.approx(want, abs=1e-9)


def test_tail_order_sum_by_hand() -> None:
    # two jobs, volume 1 from 0, then 2 s more each: one finishes at 3, the other at 4 (sum 7); without
    # the tails the order bound only says 3 + 3
    one = np.ones(2)
    assert tail_order_sum(3 * one, 0 * one, one, 2 * one) == pytest.approx(7.0)
    assert order_bounds(3 * one, np.zeros((2, 1)), np.ones((2, 1))).sum() == pytest.approx(6.0)


def least_shifted_sum(own: np.ndarray, release: np.ndarray, volume: np.ndarray, tail: np.ndarray) -> float:
    """Least ``sum_j max(own_j, max_m M^m_j + tail_j)`` over every preemptive schedule of each machine.

    The machines are independent (each may finish the jobs in its own order), so every pair of
    completion orders is tried, with each machine's priority schedule as in :func:`least_tail_sum`.
    """
    n, m = volume.shape
    done = []
    for q in range(m):
        per_order = []
        for pi in itertools.permutations(range(n)):
            c = np.zeros(n)
            for i, j in enumerate(pi):
                pre = list(pi[: i + 1])
                c[j] = makespan(release[pre, q], volume[pre, q])
            per_order.append(c)
        done.append(per_order)
    best = np.inf
    for combo in itertools.product(*done):
        finish = np.max(np.stack(combo), axis=0) + tail
        best = min(best, float(np.maximum(own, finish).sum()))
    return best


@pytest.mark.parametrize("seed", range(30))
def test_tail_order_sum_below_every_schedule_of_two_machines(seed: int) -> None:
    rng = np.random.default_rng(700 + seed)
    n = int(rng.integers(1, 5))
    release = np.round(rng.uniform(0, 4, (n, 2)), 2)
    volume = np.round(rng.uniform(0, 3, (n, 2)), 3) * (rng.random((n, 2)) < 0.8)
    tail = np.round(rng.uniform(0, 5, n), 2) * (rng.random(n) < 0.8)
    own = release.min(axis=1) + np.round(rng.uniform(0, 6, n), 2)
    got = tail_order_sum(own, release, volume, tail)
    assert got <= least_shifted_sum(own, release, volume, tail) + 1e-9
    assert got >= tail_order_sum(own, release[:, 0], volume[:, 0], tail) - 1e-9  # more machines, more proof


def test_shift_search_by_hand() -> None:
    # two jobs arriving at 0, each: stage A (volume 1 on machine X, tail 2) then stage B (volume 1 on
    # machine Y, tail 0). Shift 0 counts both stages on both machines: X and Y each finish one job's
    # work by 1 and both by 2, so the order bound is 2 + 2 (own bounds 2: A then B). Shift 2 for both
    # counts only A (tail 2 >= 2): its work ends by C - 2, at 1 and 2, so C >= 3 and 4: sum 7, the
    # optimum (A of one job, then A of the other while B of the first runs).
    per_stage = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])  # (M = 2, S = 4)
    first = np.array([0, 2, 4])
    head = np.array([0.0, 1.0, 0.0, 1.0])
    tail = np.array([1.0, 0.0, 1.0, 0.0]) * 2
    own = np.array([2.0, 2.0])
    best, q = shift_search(own, np.zeros(2), per_stage, first, head, tail)
    assert best == pytest.approx(7.0)
    assert q.tolist() == [2.0, 2.0]


# -- whole episodes: exhaustive search over the engine's decisions ---------------------------------
def best_episode(workload: Workload, cluster: Cluster, overheads: Overheads, cap: int = 300_000,
                 seed: int = 0) -> float:
    """Least mean JCT over every episode of the engine with ``seed`` (see the module docstring).

    Two reductions keep it exact: launches at one time point are tried in increasing stage order only
    (launches of different stages commute: each draws from its own stage's stream, and slots of a type
    are interchangeable without surges; launches of one stage do not, its ``k``-th launch meets its
    ``k``-th delay, so they are tried in every order and split every way); and a
    branch stops when its partial sum (finished jobs' finish times, and the current time for the
    others: they finish later) cannot beat the best episode found.
    """
    eng = DagEngine(workload, cluster, overheads=overheads, seed=seed)
    eng.reset()
    arr = np.array([j.arrival for j in workload.jobs])
    best = np.inf
    nodes = 0

    def dfs(e: DagEngine, last: tuple[float, int, int]) -> None:
        nonlocal best, nodes
        nodes += 1
        assert nodes < cap, "brute force too large"
        if e.decision is None:
            best = min(best, e.result().mean_jct)
            return
        part = float(np.where(e.done, e.finish, np.maximum(e.time, arr)).sum() - arr.sum()) / len(arr)
        if part >= best - 1e-12:
            return
        obs, mask = e.observation(), e.mask()
        same_time = last[0] == e.time
        acts: list[DagAction] = []
        for r, s in enumerate(obs.runnable):
            for q in np.flatnonzero(mask[r]):
                if same_time and int(s) < last[1]:
                    continue
                for k in range(int(min(obs.pending[s], obs.free[q])), 0, -1):
                    acts.append(DagAction(int(s), int(q), k))
        if e._heap:
            acts.append(WAIT)
        for a in acts:
            c = e.clone()
            t = c.time
            c.step(a)
            dfs(c, (t, a.stage, a.ctype) if a != WAIT else (-1.0, -1, -1))

    dfs(eng, (-1.0, -1, -1))
    return float(best)


def tiny_case(seed: int) -> tuple[Workload, Cluster]:
    """2-3 jobs, 3-4 stages, at most 5 tasks, 2-3 slots of two types; non-integer data."""
    rng = np.random.default_rng(seed)
    types = np.array([[1.0, 2.5], [2.0, 1.25]])
    counts = np.array([int(rng.integers(1, 3)), 1])
    n_jobs = int(rng.integers(2, 4))
    jobs, tasks, stages = [], 0, 0
    for j in range(n_jobs):
        n_st = int(rng.integers(1, 3)) if stages < 3 else 1
        sts = []
        for i in range(n_st):
            k = 1 + int(rng.random() < 0.3) if tasks < 4 else 1
            tasks += k
            dem = (float(rng.choice([0.5, 0.75, 1.0, 1.5])), float(rng.choice([0.4, 1.2, 2.2])))
            if dem[0] > 1.0 and dem[1] > 1.25:
                dem = (dem[0], 1.1)
            par = (0,) if i == 1 and rng.random() < 0.7 else ()
            sts.append(Stage(f"S{i}", k, dem, float(np.round(rng.uniform(0.3, 3.0), 2)), par))
        stages += n_st
        jobs.append(Job(f"j{j}", float(np.round(rng.uniform(0, 2.0), 2)) if j else 0.0, tuple(sts)))
    return make_workload("tiny", jobs, "test"), Cluster.from_counts(types, counts)


DETERMINISTIC = Overheads((0.25, 0.25), (0.6, 0.6), (1.0, 1.0))
DRAWN = Overheads((0.1, 0.6), (0.2, 1.9), (1.0, 1.0))


@pytest.mark.parametrize("seed", range(1, 15))
@pytest.mark.parametrize("overheads", [NO_OVERHEADS, DETERMINISTIC, DRAWN],
                         ids=["no-overheads", "overheads", "drawn"])
def test_capacity_bound_below_the_best_episode(seed: int, overheads: Overheads) -> None:
    w, cl = tiny_case(seed)
    best = best_episode(w, cl, overheads, seed=seed)
    cb = capacity_bound(w, cl, overheads, seed=seed)
    cp = critical_path_bounds(w, cl.capacity, overheads, seed=seed)
    least = capacity_bound(w, cl, overheads)
    assert cb.mean_jct <= best + 1e-9
    assert cb.mean_jct >= cp["critical_path_mean_jct"] - 1e-9
    assert cb.mean_jct >= least.mean_jct - 1e-9
    assert np.all(cb.jct >= least.jct - 1e-9)


def shift_case(seed: int) -> tuple[Workload, Cluster]:
    """2-3 jobs of chains of 1-3 stages, each stage fitting one of three types; at most 8 tasks."""
    types = np.array([[1.0, 1.0], [0.5, 3.0], [3.0, 0.5]])
    demand = [(1.0, 0.5), (0.5, 2.0), (2.0, 0.4)]
    rng = np.random.default_rng(seed)
    counts = np.array([int(rng.integers(1, 3)), int(rng.integers(1, 3)), 1])
    jobs = []
    for j in range(int(rng.integers(2, 4))):
        sts = [Stage(f"S{i}", int(rng.integers(1, 3)), demand[int(rng.integers(0, 3))],
                     float(np.round(rng.uniform(0.5, 4.0), 2)), (i - 1,) if i else ())
               for i in range(int(rng.integers(1, 4)))]
        jobs.append(Job(f"j{j}", float(np.round(rng.uniform(0, 1.0), 2)) if j else 0.0, tuple(sts)))
    return make_workload("chains", jobs, "test"), Cluster.from_counts(types, counts)


@pytest.mark.parametrize("seed", [6, 161, 336, 555, 670, 727])
def test_shifts_prove_more_and_stay_below_the_best_episode(seed: int) -> None:
    # instances (found by a search over shift_case's seeds) where the shifted combination over the
    # machines proves more than the combination and every one-machine tail bound, and still no more
    # than the best episode of the engine
    w, cl = shift_case(seed)
    cb = capacity_bound(w, cl, NO_OVERHEADS)
    assert cb.parts["shifts"] > max(cb.parts["order"], cb.parts["tails"]) + 0.05
    assert cb.mean_jct <= best_episode(w, cl, NO_OVERHEADS) + 1e-9


CHAIN_SEEDS = [s for s in range(20, 80) if shift_case(s)[0].n_tasks <= 7][:16]  # small enough to enumerate


@pytest.mark.parametrize("seed", CHAIN_SEEDS)
def test_chains_capacity_bound_below_the_best_episode(seed: int) -> None:
    w, cl = shift_case(seed)
    assert capacity_bound(w, cl, DRAWN, seed=seed).mean_jct <= best_episode(w, cl, DRAWN, seed=seed) + 1e-9


def test_contention_brute_force_by_hand() -> None:
    # two jobs of one stage each, 2 tasks x 1.5 s, arriving at 0 on 2 slots: one job first (1.5 s),
    # the other after (3.0 s) is optimal, mean 2.25; the critical path says 1.5; the capacity bound is
    # exact here (slots machine: SRPT completions 1.5 and 3.0)
    st = (Stage("S", 2, (0.5, 0.5), 1.5),)
    w = make_workload("two", [Job("a", 0.0, st), Job("b", 0.0, st)], "test")
    cl = Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([2]))
    assert best_episode(w, cl, NO_OVERHEADS) == pytest.approx(2.25)
    assert critical_path_bounds(w, cl.capacity, NO_OVERHEADS)["critical_path_mean_jct"] == pytest.approx(1.5)
    assert capacity_bound(w, cl, NO_OVERHEADS).mean_jct == pytest.approx(2.25)


def test_tails_by_hand() -> None:
    # two jobs: stage A (2 tasks x 1.5 s, fits only the 2 X slots), then B (1 task x 4.25 s, fits only the
    # 2 Y slots). Alone a job takes 5.75 s; together one job's A runs first, the other's B ends at
    # 3 + 4.25 = 7.25: sum 13, mean 6.5. The machines without tails only prove 5.75; the X machine with
    # B's 4.25 s tail proves 6.5.
    job = (Stage("A", 2, (1.0, 0.5), 1.5), Stage("B", 1, (0.5, 2.0), 4.25, (0,)))
    w = make_workload("tails", [Job("a", 0.0, job), Job("b", 0.0, job)], "test")
    cl = Cluster.from_counts(np.array([[1.0, 1.0], [0.5, 3.0]]), np.array([2, 2]))
    assert best_episode(w, cl, NO_OVERHEADS) == pytest.approx(6.5)
    cb = capacity_bound(w, cl, NO_OVERHEADS)
    assert cb.parts["order"] == pytest.approx(5.75)
    assert cb.mean_jct == pytest.approx(6.5)


def test_critical_path_pays_overheads_per_stage_of_the_same_path() -> None:
    # a long stage (10 s) beside a chain of three short ones (0.5 s): the longest path of
    # durations + overheads is 2 + 10 = 12 (the chain: 3 x 2.5 = 7.5), not 10 + 3 x 2
    oh = Overheads((0.5, 0.5), (1.5, 1.5), (1.0, 1.0))
    job = Job("j", 0.0, (Stage("A", 1, (1.0, 1.0), 10.0), Stage("B", 1, (1.0, 1.0), 0.5),
                         Stage("C", 1, (1.0, 1.0), 0.5, (1,)), Stage("D", 1, (1.0, 1.0), 0.5, (2,))))
    w = make_workload("one", [job], "test")
    cl = Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([2]))
    assert critical_path_bounds(w, cl.capacity, oh)["jct"] == pytest.approx([12.0])
    res, _ = run_dag(DagEngine(w, cl, overheads=oh), make_dag_policy("cpf"))
    assert res.mean_jct == pytest.approx(12.0)
    assert capacity_bound(w, cl, oh).mean_jct == pytest.approx(12.0)


def test_slot_rounds_by_hand() -> None:
    # 5 tasks of 2.5 s on 2 fitting slots: some slot runs 3 of them, 7.5 s (+ 3 x 0.4 overhead)
    oh = Overheads((0.1, 1.0), (0.3, 4.0), (5.0, 25.0))
    w = make_workload("r", [Job("j", 0.0, (Stage("S", 5, (1.0, 2.0), 2.5),))], "test")
    cl = Cluster.from_counts(np.array([[1.0, 2.0], [0.5, 4.0]]), np.array([2, 3]))
    cb = capacity_bound(w, cl, oh)
    assert cb.jct == pytest.approx([3 * 2.9])


# -- against every policy --------------------------------------------------------------------------
def check_against_policies(w: Workload, cl: Cluster, overheads: Overheads, seed: int,
                           preempt: bool = False) -> None:
    drawn = None if preempt else seed  # a relaunch after a preemption leaves the stage's own stream
    cb = capacity_bound(w, cl, overheads, seed=drawn)
    cp = critical_path_bounds(w, cl.capacity, overheads, seed=drawn)
    assert cb.mean_jct >= cp["critical_path_mean_jct"] - 1e-9
    assert np.all(cb.jct >= cp["jct"] - 1e-9)
    arr = np.array([j.arrival for j in w.jobs])
    for name in DAG_POLICIES:
        res, _ = run_dag(DagEngine(w, cl, overheads=overheads, seed=seed, preempt=preempt),
                         make_dag_policy(name, seed))
        assert res.mean_jct >= cb.mean_jct - 1e-6, name
        assert np.all(res.jct >= cb.jct - 1e-6), name
        assert np.all(np.sort(res.finish) >= cb.finish_order - 1e-6), name
        assert float(res.finish.max() - arr.min()) >= cb.makespan - 1e-6, name


@pytest.mark.parametrize("overheads", [Overheads(), NO_OVERHEADS], ids=["overheads", "no-overheads"])
def test_fixture_every_policy_above_the_bound(overheads: Overheads) -> None:
    w = load_dag_folder(FIXTURE)
    for q, method in ((1, "single"), (3, "constrained")):
        part = partition(w, q, method)
        for n in (1, 3):
            cl = Cluster.from_counts(part.types, np.full(part.n_types, n))
            check_against_policies(w, cl, overheads, seed=n)


@pytest.mark.parametrize("seed", range(6))
def test_random_dag_sets_every_policy_above_the_bound(seed: int) -> None:
    rng = np.random.default_rng(seed)
    w = generate_dag_workload(int(rng.integers(3, 12)), seed=seed,
                              mean_interarrival=float(rng.uniform(0, 20)), max_tasks=int(rng.integers(2, 30)),
                              max_stages=int(rng.integers(1, 6)), median_duration=float(rng.uniform(2, 40)))
    part = partition(w, int(rng.integers(1, 4)), "constrained")
    counts = rng.integers(1, 6, part.n_types)
    cl = Cluster.from_counts(part.types, counts)
    oh = Overheads() if seed % 2 else NO_OVERHEADS
    check_against_policies(w, cl, oh, seed)
    if seed < 2:  # surges only take slots away and preemption only adds work
        sl = Cluster(cl.types, cl.slot_type, cl.slot_host % 2, cl.capacity, (Surge(5.0, 0, 30.0),))
        check_against_policies(w, sl, oh, seed, preempt=bool(seed))


def test_no_slot_runs_a_stage() -> None:
    w = make_workload("x", [Job("j", 0.0, (Stage("S", 1, (3.0, 1.0), 1.0),))], "test")
    with pytest.raises(InputError, match="no container type runs"):
        capacity_bound(w, Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([1])), None)


def test_empty_workload() -> None:
    cb = capacity_bound(Workload("e", ()), Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([1])), None)
    assert cb.mean_jct == 0.0 and len(cb.jct) == 0


@pytest.mark.parametrize("seed", [25, pytest.param(21, marks=pytest.mark.slow),
                                  pytest.param(28, marks=pytest.mark.slow)])
def test_real_samples_every_policy_above_the_bound(shared_data: Path, seed: int) -> None:
    # 30 Alibaba v2018 DAG jobs on the small cluster (the tail bound is the largest part on these
    # samples); every policy on its own carving, with drawn overheads, stays above both bounds
    from packing.dag.carving import parse_hosts, sample_jobs
    from solvers.dag.carving import carve_cluster

    w = sample_jobs(load_dag_folder(shared_data / "alibaba-v2018-batch-dag"), 30, seed, 10.0)
    for name in DAG_POLICIES:
        pol = make_dag_policy(name, seed)
        q = 1 if pol.partition == "single" else 4
        cl = carve_cluster(partition(w, q, pol.partition), parse_hosts("32c64g:4,92c288g:2"), seed=seed,
                           carving="nested", large_share=0.6).cluster
        cb = capacity_bound(w, cl, Overheads(), seed=seed)
        cp = critical_path_bounds(w, cl.capacity, Overheads(), seed=seed)["critical_path_mean_jct"]
        assert cb.mean_jct >= cp - 1e-9
        res, _ = run_dag(DagEngine(w, cl, overheads=Overheads(), seed=seed), pol)
        assert res.mean_jct >= cb.mean_jct - 1e-6, name
        assert np.all(res.jct >= cb.jct - 1e-6), name


@pytest.mark.parametrize(("seed", "overheads"), [(2, DRAWN), (3, DETERMINISTIC), (5, DETERMINISTIC),
                                                 (53, DRAWN), (84, DRAWN)])
def test_bounds_never_sit_above_the_best_episode_by_rounding(seed: int, overheads: Overheads) -> None:
    """Cases where a bound equals the optimum: its float sum may not land an ulp above the
    episode's (a gap of -0.0%), so the comparison is strict, with no tolerance."""
    w, cl = tiny_case(seed)
    best = best_episode(w, cl, overheads, seed=seed)
    assert capacity_bound(w, cl, overheads, seed=seed).mean_jct <= best
    assert critical_path_bounds(w, cl.capacity, overheads, seed=seed)["critical_path_mean_jct"] <= best
