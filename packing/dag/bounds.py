"""Lower bounds on DAG job completion times in :class:`packing.dag.engine.DagEngine`, for every schedule.

Every bound here holds for every policy the engine can run, clairvoyant or not, with surges; it only
uses facts every episode obeys. Given the engine's seed (and no preemption) the bounds charge the
launch delays the stages meet with that seed; without it, the least delay of every decision, which
holds for every seed and with preemption.

Facts about an episode (see :mod:`packing.dag.engine`)
    * a stage's tasks launch at or after the stage becomes runnable (its job arrived, all tasks of its
      parents finished);
    * a task holds one container slot from its launch until it finishes: its duration plus the launch
      delay of the decision that launched it, in a slot whose type dominates its demand (the engine's
      ``stage_fits``); the ``k``-th decision of a stage draws the ``k``-th delay of the stage's own
      stream, at least ``Overheads.min_per_stage`` (:mod:`packing.dag.delays`), so a stage ends at
      least its first delay plus its duration after it became runnable, and its tasks hold at least
      :func:`packing.dag.delays.least_stage_overheads` overhead seconds (``tau`` below: a task's
      duration plus its share of them);
    * a slot runs one task at a time, and the slots of a cluster are fixed (surges only take them away,
      preemption only adds work).

Critical-path bound (:func:`critical_path_bounds`)
    A job finishes no sooner than ``arrival + max over paths of sum(duration + first delay)``.

Capacity bound (:func:`capacity_bound`)
    Per job, the *slot-limited critical path*: a stage of ``n`` tasks that fit ``N`` slots needs some
    slot to run ``m = ceil(n / N)`` of its tasks one after another, from ``m`` different decisions, so
    it lasts at least ``m * duration`` plus the ``m`` least delays of its decisions after it became
    runnable; the longest path with these stage lengths bounds the job alone.
    With these lengths every stage has a *head* (least time from the arrival until it is runnable)
    and a *tail* (least time from the end of any of its tasks until the job ends); on every *machine*
    below, the work of the stages with head ``>= h`` and tail ``>= t`` lies in ``[arrival + h, finish
    - t]``, so the job alone needs ``h + t + that volume`` (over every non-empty such set).

    The jobs share the cluster. A *machine* is a set of slot types ``F`` and a measure of a slot: 1
    (a slot count), or its cpu or memory size. A task whose stage fits only types in ``F`` holds, on
    that machine, at least ``tau`` times its smallest fitting type's measure (1 for the count); at any
    time the held measure is at most the total measure of ``F``'s slots, the machine's capacity. So
    divided by the capacity, every episode projects onto a machine as a fractional one-machine
    schedule of job volumes ``V_j``, each released at its arrival plus the least head of its stages
    on the machine; by Horn's interval condition a
    preemptive schedule with no later completions exists, and the preemptive shortest remaining
    processing time rule (SRPT) completes, by every time ``T``, the most jobs any preemptive schedule
    can (Smith 1978: SRPT's ``k``-th completion is the earliest possible ``k``-th completion; the
    tests check it against every subset of small random instances).

    Combination. Let ``b_j`` be job ``j``'s own bound (arrival + the larger of its slot-limited
    critical path and its windows) and ``C_(k)`` the ``k``-th smallest finish time of an episode.
    The ``k`` first jobs all have ``b_j <= C_(k)`` and are all done by ``C_(k)`` on every machine, so
    ``C_(k) >= T_k = max over machines of min {T : SRPT on {j : b_j <= T} completes k jobs by T}``,
    which is ``min over i of max(b_(i), k-th SRPT completion of the i jobs with least b)``. Summing,
    ``sum_j finish_j >= sum_k T_k``: at least the sum of the ``b_j`` and at least every machine's SRPT
    sum.

    Tails. On a machine, a job's work ends at least ``q_j`` before the job does, ``q_j`` the least
    tail of the stages counted (any subset of the job's stages on the machine may be counted: fewer
    stages, less volume but a longer least tail; :data:`TAIL_LEVELS` picks a few). With ``D_j = C_j -
    q_j``, every ``D_j`` is at least ``b_j - q_j`` and at least the job's completion on the machine,
    so the combination above applies to the ``D_j`` with own bounds ``b_j - q_j``, and ``sum_j C_j >=
    sum_k T'_k + sum_j q_j`` (:func:`tail_order_sum`). This sees that two jobs whose work on one pool
    of slots is followed by long stages elsewhere cannot both do that work first.

    Shifts. The same holds on all the machines at once when each job counts, on every machine, the
    same stages: with a shift ``q_j >= 0`` per job and the stages whose tail is at least ``q_j``
    counted, their work on every machine is done by ``D_j = C_j - q_j``, so the combination over all
    the machines applies to the ``D_j`` and ``sum_j C_j >= sum_k T'_k + sum_j q_j`` for every choice of
    shifts (all 0: the combination itself). :func:`shift_search` looks for large ones: a long job
    whose early stages wait behind the others' work on some pools cannot then run its long tail of
    stages earlier.

    Busy times (:mod:`packing.dag.busy_lp`). A time-indexed LP over a few machines together: each job's
    work on a machine runs no earlier than its stages' heads allow and no faster than their tasks and
    the machine allow, and the job ends at least its work's mean time plus how far, on average, its
    stages' tails and rates keep that work from its end. This sees that a job whose work waits behind
    the others' still needs its own DAG's time afterwards.

    The bound on the sum of finish times is the largest of these sums; the mean JCT bound is that
    minus ``sum_j arrival_j``, over ``J``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np

from packing.dag.busy_lp import (
    LP_INTERVALS,
    LP_JOBS,
    LP_MACHINES,
    LP_STEP_SHARE,
    BusyMachine,
    busy_grid,
    busy_time_bound,
)
from packing.dag.delays import least_stage_overheads, stage_delays
from packing.dag.engine import Cluster, Overheads
from packing.dag.model import Job, Workload
from packing.errors import input_error
from packing.feasibility.predicates import fits as within

EXACT_JOBS = 200
"""Above this many jobs the threshold search of :func:`order_bounds` runs on a grid (still valid)."""


ROUND_DOWN = 1e-12
"""Relative amount every reported bound is lowered by (:func:`down`)."""


def down(x: Any) -> Any:
    """A bound lowered past its float rounding: ``x - ROUND_DOWN * max(1, |x|)`` (elementwise).

    A bound is a sum of many floats; a schedule's JCT sums the same amounts in another order, so
    without this a bound equal to an optimum can print one ulp above it (a gap of -0.0%).
    """
    return x - ROUND_DOWN * np.maximum(1.0, np.abs(x))


def path_lengths(job: Job, stage_length: np.ndarray) -> float:
    """Longest path through ``job``'s DAG with the given stage lengths, shape ``(n_stages,)`` -> seconds."""
    if not job.stages:
        return 0.0
    finish = np.zeros(len(job.stages))
    for i in job.topo_order:
        finish[i] = stage_length[i] + max((finish[p] for p in job.stages[i].parents), default=0.0)
    return float(finish.max())


def critical_path_bounds(workload: Workload, capacity: np.ndarray, overheads: Overheads | None, *,
                         seed: int | None = None) -> dict[str, Any]:
    """Per-job critical-path bounds and a makespan bound.

    A job's JCT is at least its longest path with stage lengths ``duration + first delay`` (every
    stage on a path waits for its first decision's delay before its tasks run). The makespan is at
    least the latest ``arrival + that`` and the work bound ``max_r sum(work_r) / capacity_r``.

    Args:
        workload: the jobs.
        capacity: capacity per resource, shape ``(2,)`` (the largest over the compared clusters keeps
            the bound valid for all of them).
        overheads: the engine's overheads (None: none).
        seed: the engine's seed: charge each stage's own first delay (valid for episodes of that seed
            without preemption, :mod:`packing.dag.delays`); None: the least delay (every episode).

    Returns:
        ``{"jct": (J,) array, "critical_path_mean_jct": float, "makespan": float}``, each lowered
        past its float rounding (:func:`down`).
    """
    _, _, ntask, dur = workload.stage_table()
    first, _, _ = _stage_overheads(ntask, np.ones(len(ntask)), overheads, seed)
    length = dur + first
    starts = workload.stage_offsets()
    jct = np.array([path_lengths(j, length[starts[i]:starts[i + 1]]) for i, j in enumerate(workload.jobs)])
    arr = np.array([j.arrival for j in workload.jobs])
    t0 = float(arr.min()) if len(arr) else 0.0
    work = np.sum([j.work for j in workload.jobs], axis=0) if workload.jobs else np.zeros(2)
    mk = max(float((arr + jct).max() - t0) if len(arr) else 0.0,
             float((work / np.maximum(capacity, 1e-12)).max()))
    return {"jct": down(jct), "critical_path_mean_jct": float(down(jct.mean())) if len(jct) else 0.0,
            "makespan": float(down(mk))}


def _stage_overheads(ntask: np.ndarray, per_slot: np.ndarray, overheads: Overheads | None,
                     seed: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`packing.dag.delays.least_stage_overheads` for the engine's ``overheads`` and ``seed``."""
    if overheads is None:
        z = np.zeros(len(ntask))
        return z, z.copy(), z.copy()
    delays = None if seed is None else stage_delays(overheads.sched, overheads.start, seed, ntask)
    return least_stage_overheads(ntask, per_slot, overheads.min_per_stage, delays)


# -- one machine --------------------------------------------------------------------------------
@numba.njit(cache=True)
def _heap_push(key: np.ndarray, val: np.ndarray, n: int, k: float, v: int) -> int:  # pragma: no cover
    i = n
    key[i], val[i] = k, v
    while i > 0:
        p = (i - 1) // 2
        if key[p] < key[i] or (key[p] == key[i] and val[p] <= val[i]):
            break
        key[p], key[i] = key[i], key[p]
        val[p], val[i] = val[i], val[p]
        i = p
    return n + 1


@numba.njit(cache=True)
def _heap_pop(key: np.ndarray, val: np.ndarray, n: int) -> int:  # pragma: no cover
    n -= 1
    key[0], val[0] = key[n], val[n]
    i = 0
    while True:
        a, b, m = 2 * i + 1, 2 * i + 2, i
        if a < n and (key[a] < key[m] or (key[a] == key[m] and val[a] < val[m])):
            m = a
        if b < n and (key[b] < key[m] or (key[b] == key[m] and val[b] < val[m])):
            m = b
        if m == i:
            return n
        key[m], key[i] = key[i], key[m]
        val[m], val[i] = val[i], val[m]
        i = m


@numba.njit(cache=True)
def _srpt(release: np.ndarray, proc: np.ndarray) -> np.ndarray:  # pragma: no cover
    n = len(release)
    out = np.zeros(n)
    order = np.argsort(release, kind="mergesort")
    key = np.empty(n)
    val = np.empty(n, dtype=np.int64)
    size = 0
    t = -np.inf
    i = 0
    while i < n or size > 0:
        if size == 0:
            t = max(t, release[order[i]])
        while i < n and release[order[i]] <= t:
            size = _heap_push(key, val, size, proc[order[i]], order[i])
            i += 1
        rem, j = key[0], val[0]
        size = _heap_pop(key, val, size)
        nxt = release[order[i]] if i < n else np.inf
        if t + rem <= nxt:
            t += rem
            out[j] = t
        else:
            size = _heap_push(key, val, size, rem - (nxt - t), j)
            t = nxt
    return out


@numba.njit(cache=True)
def _threshold_search(b_sorted: np.ndarray, order: np.ndarray, release: np.ndarray, volume: np.ndarray,
                      grid: np.ndarray, ends: np.ndarray) -> np.ndarray:  # pragma: no cover
    J = len(b_sorted)
    best = np.full(J, np.inf)
    for k in range(len(grid)):
        e = ends[k]
        sel = order[:e]
        comp = np.sort(_srpt(release[sel], volume[sel]))
        for x in range(e):
            c = max(b_sorted[grid[k]], comp[x])
            if c < best[x]:
                best[x] = c
    return best


def srpt_completions(release: np.ndarray, proc: np.ndarray) -> np.ndarray:
    """Completion times of preemptive SRPT on one unit-speed machine.

    Args:
        release: release times, shape ``(n,)``.
        proc: processing times ``>= 0``, shape ``(n,)``.

    Returns:
        Completion time of each job, shape ``(n,)`` (input order).
    """
    return _srpt(np.ascontiguousarray(release, dtype=np.float64),
                 np.ascontiguousarray(proc, dtype=np.float64))


def order_bounds(own: np.ndarray, release: np.ndarray, volume: np.ndarray) -> np.ndarray:
    """Lower bounds ``T_k`` on the ``k``-th smallest finish time (see the module docstring).

    Args:
        own: each job's own lower bound on its finish time ``b_j``, shape ``(J,)``.
        release: when each job's work on each machine can start at the earliest, shape ``(J, M)``.
        volume: each job's volume on each machine in seconds, shape ``(J, M)`` (``M`` may be 0).

    Returns:
        ``T_k`` for ``k = 1..J``, non-decreasing, shape ``(J,)``; at least the sorted ``own`` and
        every machine's sorted SRPT completions.
    """
    J = len(own)
    order = np.argsort(own, kind="stable")
    b_sorted = np.asarray(own, dtype=np.float64)[order]
    out = b_sorted.copy()
    if J == 0:
        return out
    # thresholds b_sorted[g_0 = 0] < b_sorted[g_1] < ...: every job with b < b_sorted[g_{l+1}] is among
    # order[:g_{l+1}], so those jobs over-cover the eligible set of [b[g_l], b[g_{l+1}]): still valid
    grid = np.arange(J) if J <= EXACT_JOBS else np.unique(np.linspace(0, J - 1, EXACT_JOBS).astype(np.int64))
    ends = np.append(grid[1:], J).astype(np.int64)
    for m in range(volume.shape[1]):
        best = _threshold_search(b_sorted, order.astype(np.int64),
                                 np.ascontiguousarray(release[:, m], dtype=np.float64),
                                 np.ascontiguousarray(volume[:, m], dtype=np.float64),
                                 grid.astype(np.int64), ends)
        out = np.maximum(out, best)
    return np.maximum.accumulate(out)


# -- the cluster's machines ---------------------------------------------------------------------
@dataclass(frozen=True)
class CapacityBound:
    """What :func:`capacity_bound` proves.

    Attributes:
        mean_jct: lower bound on the mean JCT of every episode.
        jct: per-job bound on the JCT alone (slot-limited critical path, own volumes), shape ``(J,)``.
        finish_order: lower bounds on the ``k``-th smallest finish time, shape ``(J,)`` (their sum may
            be below ``J * mean_jct + sum of arrivals`` when a tail bound is larger).
        makespan: lower bound on last finish - first arrival.
        parts: mean-JCT bounds of the ingredients: ``"critical_path"`` (paths with least overheads),
            ``"slot_path"`` (slot-limited critical paths), ``"own"`` (the per-job bounds), ``"srpt"``
            (the best single machine without critical paths), ``"order"`` (the combination over all
            machines), ``"tails"`` (the best one-machine tail bound), ``"shifts"`` (the shifted
            combination over the machines of the tail bound, :func:`shift_search`) and ``"busy"``
            (the mean-busy-time LP, :mod:`packing.dag.busy_lp`; the own bounds above
            :data:`~packing.dag.busy_lp.LP_JOBS` jobs).
        machines: names of the machines, e.g. ``"slots[0,1]"`` or ``"cpu[*]"``.
    """

    mean_jct: float
    jct: np.ndarray
    finish_order: np.ndarray
    makespan: float
    parts: dict[str, float] = field(default_factory=dict)
    machines: tuple[str, ...] = ()


def stage_fit(workload: Workload, cluster: Cluster) -> np.ndarray:
    """``(S, Q)`` bool: a task of stage ``s`` fits a slot of type ``q`` and the cluster has such slots."""
    _, dem, _, _ = workload.stage_table()
    fits = np.asarray(within(dem[:, None, :], cluster.types[None, :, :])).all(axis=2)
    return fits & (cluster.counts > 0)[None, :]


def _fit_unions(fit_sets: set[tuple[int, ...]], limit: int) -> list[tuple[int, ...]]:
    """The fitting sets and their unions (at most ``limit``; the fitting sets always), smallest first."""
    out = set(fit_sets)
    frontier = set(fit_sets)
    while frontier and len(out) < limit:
        new = {tuple(sorted(set(a) | set(b))) for a in frontier for b in fit_sets} - out
        for u in sorted(new, key=lambda x: (len(x), x)):
            if len(out) >= limit:
                break
            out.add(u)
        frontier = new
    return sorted(out, key=lambda x: (len(x), x))


def _window(head: np.ndarray, tail: np.ndarray, vol: np.ndarray) -> float:
    """``max over h, t of h + t + sum(vol[head >= h and tail >= t])`` over non-empty sets; shapes ``(k,)``."""
    keep = vol > 0
    if not keep.any():
        return 0.0
    h, t, v = head[keep], tail[keep], vol[keep]
    hs, ts = np.unique(h), np.unique(t)
    a = (h[:, None] >= hs[None, :]).astype(np.float64)  # (k, |H|)
    b = (t[:, None] >= ts[None, :]).astype(np.float64)  # (k, |T|)
    inside = a.T @ b  # (|H|, |T|) stages in each window; an empty window proves nothing
    val = hs[:, None] + ts[None, :] + (a * v[:, None]).T @ b
    return float(np.where(inside > 0, val, -np.inf).max())


TAIL_LEVELS = (0, 1, 2, -1)
"""Stage subsets of each job on each machine for the tail bound (see :func:`_tail_machine`)."""


def _tail_machine(per_stage: np.ndarray, head: np.ndarray, tail: np.ndarray, first: np.ndarray,
                  level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per job, a subset of its stages on a machine: volume, least head and least tail.

    The subset is the stages with volume whose tail is at least a threshold: the ``level``-th smallest
    distinct tail of the job's stages with volume (the largest when there are fewer), or with
    ``level == -1`` the threshold maximising the job's volume plus threshold.

    Args:
        per_stage: volume of each stage on the machine in seconds, shape ``(S,)``.
        head: least time from arrival until each stage is runnable, shape ``(S,)``.
        tail: least time from the end of any task of each stage until its job ends, shape ``(S,)``.
        first: index of each job's first stage, shape ``(J + 1,)``.
        level: which threshold (see above).

    Returns:
        ``(volume, release offset, tail)`` per job, each shape ``(J,)`` (zeros for a job without volume).
    """
    J = len(first) - 1
    vol, rel, q = np.zeros(J), np.zeros(J), np.zeros(J)
    for j in range(J):
        sl = slice(int(first[j]), int(first[j + 1]))
        v, h, t = per_stage[sl], head[sl], tail[sl]
        on = v > 0
        if not on.any():
            continue
        ts = np.unique(t[on])
        if level >= 0:
            thr = ts[min(level, len(ts) - 1)]
        else:
            gain = [float(v[on & (t >= x)].sum()) + float(x) for x in ts]
            thr = ts[int(np.argmax(gain))]
        pick = on & (t >= thr)
        vol[j], rel[j], q[j] = float(v[pick].sum()), float(h[pick].min()), float(thr)
    return vol, rel, q


def tail_order_sum(own: np.ndarray, release: np.ndarray, volume: np.ndarray, tail: np.ndarray) -> float:
    """A lower bound on the sum of finish times from machines whose jobs end ``tail`` after their work.

    Every job ``j`` finishes at ``C_j >= own_j`` and its volume on every machine is done by ``C_j -
    tail_j``. With ``D_j = C_j - tail_j`` the jobs obey :func:`order_bounds`' premises with own bounds
    ``own_j - tail_j``, so ``sum_j C_j = sum_k D_(k) + sum_j tail_j >= sum_k T_k + sum_j tail_j``.

    Args:
        own: each job's own lower bound on its finish time, shape ``(J,)``.
        release: earliest start of each job's work on each machine, shape ``(J,)`` (one machine) or
            ``(J, M)``.
        volume: each job's volume on each machine in seconds, shape as ``release``.
        tail: least time from the end of each job's work on every machine to its finish, shape ``(J,)``.

    Returns:
        The bound on ``sum_j C_j`` (seconds).
    """
    t = np.asarray(tail, dtype=np.float64)
    rel = np.asarray(release, dtype=np.float64)
    vol = np.asarray(volume, dtype=np.float64)
    if rel.ndim == 1:
        rel, vol = rel[:, None], vol[:, None]
    fo = order_bounds(np.asarray(own, dtype=np.float64) - t, rel, vol)
    total = float(fo.sum() + t.sum())
    return total - 1e-12 * abs(total) if t.any() else total  # less the rounding of taking t off and on


SHIFT_JOBS = 32
"""Jobs (the ones with the largest own bounds) whose shift :func:`shift_search` tries to change."""

SHIFT_ROUNDS = 2
"""Passes of :func:`shift_search` over those jobs (it stops earlier when a pass changes nothing)."""

SHIFT_WORK = 6e7
"""Work :func:`shift_search` may spend, counted as jobs x thresholds x machines per evaluation of the
combination (about 500 evaluations on 100 jobs and 12 machines, 25 on 1,000; a count, not a time, so the
bound is the same on every machine)."""


def _counted(per_stage: np.ndarray, head: np.ndarray, on: np.ndarray,
             arrival: float) -> tuple[np.ndarray, np.ndarray]:
    """Volume and release on each machine of a job's counted stages ``on``.

    Shapes: ``per_stage`` ``(M, k)``, ``head`` and ``on`` ``(k,)``; both results ``(M,)``.
    """
    v = per_stage[:, on]  # (M, k')
    vol = v.sum(axis=1)
    h = np.where(v > 0, head[on][None, :], np.inf).min(axis=1, initial=np.inf)
    return vol, arrival + np.where(np.isfinite(h), h, 0.0)


def shift_search(own: np.ndarray, arrival: np.ndarray, per_stage: np.ndarray, first: np.ndarray,
                 head: np.ndarray, tail: np.ndarray) -> tuple[float, np.ndarray]:
    """The best shifted order sum found by coordinate ascent over per-job shifts (module docstring).

    Each job ``j`` gets a shift ``q_j >= 0`` and counts, on every machine, the stages whose tail is at
    least ``q_j``: their work is done by ``C_j - q_j``. So :func:`tail_order_sum` over all the machines
    at once bounds the sum of finish times for *every* choice of shifts; the search only looks for a
    large one. From all shifts 0 (the order bound on these machines), each of the :data:`SHIFT_JOBS`
    jobs with the largest own bounds tries 0 and every distinct tail of its stages with volume, keeping
    a change that raises the sum or keeps it and shifts more (two jobs may each need the other's shift
    to gain), for at most :data:`SHIFT_ROUNDS` passes and :data:`SHIFT_WORK`.
    Deterministic.

    Args:
        own: each job's own bound on its finish time, shape ``(J,)``.
        arrival: arrivals, shape ``(J,)``.
        per_stage: each stage's volume on each machine in seconds, shape ``(M, S)``.
        first: index of each job's first stage, shape ``(J + 1,)``.
        head: least time from arrival until each stage is runnable, shape ``(S,)``.
        tail: least time from the end of any task of each stage until its job ends, shape ``(S,)``.

    Returns:
        ``(bound on sum_j C_j, shifts (J,))``.
    """
    J, M = len(own), per_stage.shape[0]
    q = np.zeros(J)
    vol, rel = np.zeros((J, M)), np.zeros((J, M))
    for j in range(J):
        sl = slice(int(first[j]), int(first[j + 1]))
        vol[j], rel[j] = _counted(per_stage[:, sl], head[sl], np.ones(sl.stop - sl.start, dtype=bool),
                                  float(arrival[j]))
    best = tail_order_sum(own, rel, vol, q)
    evals = int(SHIFT_WORK // max(J * min(J, EXACT_JOBS) * M, 1))
    jobs = np.argsort(-(own - arrival), kind="stable")[:SHIFT_JOBS]
    for _ in range(SHIFT_ROUNDS):
        changed = False
        for j in jobs:
            sl = slice(int(first[j]), int(first[j + 1]))
            t = tail[sl]
            with_volume = per_stage[:, sl].max(axis=0, initial=0.0) > 0
            for x in np.unique(np.concatenate([[0.0], t[with_volume]])):
                if x == q[j]:
                    continue
                if evals <= 0:
                    return best, q
                evals -= 1
                keep = (q[j], vol[j].copy(), rel[j].copy())
                q[j] = x
                vol[j], rel[j] = _counted(per_stage[:, sl], head[sl], t >= x, float(arrival[j]))
                v = tail_order_sum(own, rel, vol, q)
                if v > best + 1e-9 or (v > best - 1e-9 and x > keep[0]):  # ties: the larger shift
                    best, changed = v, True  # the value of the shifts kept, exactly
                else:
                    q[j], vol[j], rel[j] = keep
        if not changed:
            break
    return best, q


MAX_MACHINES = 48
"""Most machines (slot-type sets x measures) :func:`capacity_bound` builds."""

TAIL_MACHINES = 12
"""Machines (the first of the threshold search's) that enter the tail bound, each with every level of
:data:`TAIL_LEVELS`, and all together :func:`shift_search`."""

SEARCH_MACHINES = 48
"""Machines that enter the threshold search of :func:`order_bounds`: the ones with the largest
``sum_k max(b_(k), k-th SRPT completion)`` (any subset keeps the bound valid)."""


def _busy(own: np.ndarray, arrival: np.ndarray, machines: list[BusyMachine], first: np.ndarray,
          head: np.ndarray, tail: np.ndarray) -> float:
    """Item 6, :mod:`packing.dag.busy_lp`: a bound on the sum of finish times.

    Each machine's LP alone on a grid twice as coarse, then the :data:`~packing.dag.busy_lp.LP_MACHINES`
    best together; the largest of them. ``sum(own)`` above :data:`~packing.dag.busy_lp.LP_JOBS` jobs.
    """
    if len(own) > LP_JOBS or not machines:
        return float(own.sum())
    totals = [float(m.volume.sum()) for m in machines]
    single = np.array([busy_time_bound(own, arrival, [m], first, head, tail, busy_grid(
        arrival, own, t, step_share=2 * LP_STEP_SHARE, intervals=LP_INTERVALS // 2))
        for m, t in zip(machines, totals, strict=True)])
    top = np.argsort(-single, kind="stable")[:LP_MACHINES]
    joint = busy_time_bound(own, arrival, [machines[m] for m in top], first, head, tail,
                            busy_grid(arrival, own, max(totals[m] for m in top)))
    return max(float(single.max()), joint)


def capacity_bound(workload: Workload, cluster: Cluster, overheads: Overheads | None, *,
                   seed: int | None = None) -> CapacityBound:
    """The capacity-aware lower bound on mean JCT of ``workload`` on ``cluster`` (module docstring).

    Args:
        workload: the jobs (any arrivals).
        cluster: the carved slots (surges are ignored: they only remove capacity).
        overheads: the engine's overheads (None: none).
        seed: the engine's seed: charge the launch delays the stages meet with it (valid for episodes
            of that seed without preemption, :mod:`packing.dag.delays`); None: the least delay of a
            decision (every seed, with preemption).

    Raises:
        InputError: a stage no slot of the cluster runs (as :class:`~packing.dag.engine.DagEngine`).
    """
    J = workload.n_jobs
    if J == 0:
        return CapacityBound(0.0, np.zeros(0), np.zeros(0), 0.0)
    job, dem, ntask, dur = workload.stage_table()
    counts = cluster.counts.astype(np.float64)
    types = cluster.types
    fit = stage_fit(workload, cluster)
    n_fit = fit.astype(np.float64) @ counts  # (S,) slots a task of the stage may use
    if np.any(n_fit <= 0):
        s = int(np.flatnonzero(n_fit <= 0)[0])
        jb = workload.jobs[int(job[s])]
        st = jb.stages[s - sum(len(j.stages) for j in workload.jobs[: int(job[s])])]
        raise input_error(workload.name, f"job {jb.name}, stage {st.name}",
                          f"no container type runs a task of demand {dem[s].tolist()} "
                          f"(types: {types.tolist()}, containers per type: {cluster.counts.tolist()})")
    per_slot = np.ceil(ntask / n_fit)  # (S,) tasks some slot runs one after another
    first_delay, over, busiest = _stage_overheads(ntask, per_slot, overheads, seed)
    work = ntask * dur + over  # (S,) least slot-seconds the stage's tasks hold
    length = np.maximum(per_slot * dur + busiest, dur + first_delay)  # (S,) least time once runnable
    first = workload.stage_offsets()
    head = np.zeros(len(ntask))  # least time from arrival until the stage is runnable
    tail = np.zeros(len(ntask))  # least time from the end of any task of the stage to the job's end
    for j, jb in enumerate(workload.jobs):
        o = int(first[j])
        for i in jb.topo_order:
            head[o + i] = max((head[o + p] + length[o + p] for p in jb.stages[i].parents), default=0.0)
        for i in reversed(jb.topo_order):
            tail[o + i] = max((length[o + c] + tail[o + c] for c in jb.children[i]), default=0.0)
    least = np.where(fit[:, :, None], types[None, :, :], np.inf).min(axis=1)  # (S, R) least fitting slot
    fit_sets = {tuple(int(q) for q in np.flatnonzero(f)) for f in fit}
    fit_sets.add(tuple(int(q) for q in np.flatnonzero(counts > 0)))
    arr = np.array([j.arrival for j in workload.jobs], dtype=np.float64)
    names: list[str] = []
    vols: list[np.ndarray] = []
    rels: list[np.ndarray] = []
    tails: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = []  # per machine, per level
    stage_vols: list[np.ndarray] = []  # per machine, (S,)
    stage_rates: list[np.ndarray] = []  # per machine, (S,): the most counted work per second
    windows: list[np.ndarray] = []
    for F in _fit_unions(fit_sets, MAX_MACHINES // (1 + types.shape[1])):
        inside = np.zeros(len(counts), dtype=bool)
        inside[list(F)] = True
        only = ~np.any(fit & ~inside[None, :], axis=1)  # (S,) stages that fit only types in F
        label = ",".join(map(str, F)) if len(F) < int((counts > 0).sum()) else "*"
        measures = [("slots", np.ones(len(ntask)), float(counts[inside].sum()))]
        measures += [(r, least[:, k], float((counts[inside] * types[inside, k]).sum()))
                     for k, r in enumerate(("cpu", "mem")[: types.shape[1]])]
        for rname, size, cap in measures:
            per_stage = np.where(only, work * size, 0.0) / cap if cap > 0 else np.zeros(len(ntask))
            if not np.any(per_stage > 0):
                continue
            names.append(f"{rname}[{label}]")
            stage_vols.append(per_stage)
            stage_rates.append(np.where(only, np.minimum(ntask, n_fit) * size, 0.0) / cap)
            vols.append(np.bincount(job, weights=per_stage, minlength=J))
            start = np.where(per_stage > 0, head, np.inf)
            rel = np.array([start[first[j]:first[j + 1]].min(initial=np.inf) for j in range(J)])
            rels.append(arr + np.where(np.isfinite(rel), rel, 0.0))
            tails.append([_tail_machine(per_stage, head, tail, first, level) for level in TAIL_LEVELS])
            windows.append(np.array([_window(head[first[j]:first[j + 1]], tail[first[j]:first[j + 1]],
                                             per_stage[first[j]:first[j + 1]]) for j in range(J)]))
    volume = np.stack(vols, axis=1) if vols else np.zeros((J, 0))
    release = np.stack(rels, axis=1) if rels else np.zeros((J, 0))
    slot_path = np.array([path_lengths(jb, length[first[j]:first[j + 1]])
                          for j, jb in enumerate(workload.jobs)])
    cp = np.array([path_lengths(jb, (dur + first_delay)[first[j]:first[j + 1]])
                   for j, jb in enumerate(workload.jobs)])
    own_jct = np.maximum(slot_path, np.max(windows, axis=0) if windows else 0.0)
    own = arr + own_jct
    srpt = [srpt_completions(release[:, m], volume[:, m]) for m in range(volume.shape[1])]
    sums = np.array([float(c.sum()) for c in srpt])
    b_sorted = np.sort(own)
    quick = np.array([float(np.maximum(b_sorted, np.sort(c)).sum()) for c in srpt])  # max(b_(k), S_(k))
    keep = np.argsort(-quick, kind="stable")[:SEARCH_MACHINES]
    fo = order_bounds(own, release[:, keep], volume[:, keep])
    tail_sums = [tail_order_sum(own, arr + r, v, q) for m in keep[:TAIL_MACHINES] for v, r, q in tails[m]]
    shifted, _ = shift_search(own, arr, np.array([stage_vols[m] for m in keep[:TAIL_MACHINES]]).reshape(
        -1, len(ntask)), first, head, tail)
    busy = _busy(own, arr, [BusyMachine(v, r) for v, r in zip(stage_vols, stage_rates, strict=True)], first,
                 head, tail)
    total = max([float(fo.sum()), shifted, busy] + tail_sums)
    t0 = float(arr.min())
    mk = max([float(fo[-1]) - t0] + [float(c.max()) - t0 for c in srpt])
    parts = {"critical_path": float(cp.mean()), "slot_path": float(slot_path.mean()),
             "own": float(own_jct.mean()),
             "srpt": (float(sums.max()) - float(arr.sum())) / J if len(sums) else 0.0,
             "order": float((fo.sum() - arr.sum()) / J),
             "tails": (max(tail_sums) - float(arr.sum())) / J if tail_sums else 0.0,
             "shifts": (shifted - float(arr.sum())) / J, "busy": (busy - float(arr.sum())) / J}
    return CapacityBound(float(down((total - arr.sum()) / J)), down(own_jct), down(fo),
                         float(down(mk)), {k: float(down(v)) for k, v in parts.items()},
                         tuple(names))


__all__ = ["EXACT_JOBS", "MAX_MACHINES", "ROUND_DOWN", "SEARCH_MACHINES", "SHIFT_JOBS", "SHIFT_ROUNDS",
           "TAIL_LEVELS", "down",
           "TAIL_MACHINES", "CapacityBound", "capacity_bound", "critical_path_bounds", "order_bounds",
           "path_lengths", "shift_search", "srpt_completions", "stage_fit", "tail_order_sum"]
