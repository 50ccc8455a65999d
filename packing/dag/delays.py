"""Launch delays of the DAG engine: one seeded stream per stage, shared by every policy.

A decision that launches tasks of a stage makes them wait a scheduling delay and a container start
(:class:`packing.dag.engine.Overheads`) before they run. The ``k``-th decision that launches tasks of
stage ``s`` draws the ``k``-th delay of stage ``s``'s own stream, seeded by ``(seed, s)``: the draws
do not depend on what other stages did, so with the same seed every policy meets the same delays
(common random numbers: policies are compared on the same luck), and a lower bound may charge the
delays a stage will meet instead of the least possible one (:func:`least_stage_overheads`).

Without preemption a stage of ``n`` tasks has at most ``n`` decisions (each launches at least one
task), so its first ``n`` draws are all it can meet. A relaunch after a preemption beyond those
draws from the engine's other generator; the bounds then use the least overheads only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

SPAWN_TAG = 0xDA6
"""Separates the stage streams from the engine's other generator (same seed, different stream)."""


def launch_delays(sched: tuple[float, float], start: tuple[float, float], seed: int, stage: int,
                  n: int) -> np.ndarray:
    """The delays of the first ``n`` decisions of ``stage`` (scheduling delay + container start).

    Args:
        sched: uniform range of the scheduling delay in seconds.
        start: uniform range of the container start in seconds.
        seed: the episode's seed (non-negative).
        stage: the stage's index in the workload (job by job, stage by stage).
        n: how many draws.

    Returns:
        Seconds, shape ``(n,)``.
    """
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(SPAWN_TAG, int(stage))))
    lo = np.array([sched[0], start[0]], dtype=np.float64)
    hi = np.array([sched[1], start[1]], dtype=np.float64)
    return np.asarray(rng.uniform(lo, hi, size=(int(n), 2)).sum(axis=1))


def least_stage_overheads(n_tasks: np.ndarray, per_slot: np.ndarray, least: float,
                          delays: Sequence[np.ndarray] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the launch delays cost each stage at least, in every episode.

    With ``delays`` (each stage's first ``n`` draws, no preemption): the stage ends at least its first
    decision's delay after it became runnable (that decision's tasks run ``duration`` after it); its
    tasks hold their slots for at least ``sum_k c_k * delay_k`` overhead seconds for some counts
    ``c_k >= 1`` on decisions ``0..K-1`` summing to ``n``, whose least value is ``min over K of
    (delay_0 + ... + delay_(K-1)) + (n - K) * min(delay_0..delay_(K-1))``; and a slot running ``m``
    of its tasks, from ``m`` different decisions, waits at least the ``m`` smallest draws in all.
    Without: ``least`` for each decision (any seed, with preemption).

    Args:
        n_tasks: tasks per stage, shape ``(S,)``.
        per_slot: tasks some slot must run one after another, per stage, shape ``(S,)`` (``>= 1``).
        least: the least delay of a decision (``Overheads.min_per_stage``).
        delays: per stage, its draws, shapes ``(n_tasks[s],)``; or None.

    Returns:
        ``(first, total, busiest)`` in seconds, each shape ``(S,)``: the least delay of a stage's
        first decision, the least overhead its tasks hold slots for in all, the least overhead on its
        busiest slot.
    """
    n = np.asarray(n_tasks, dtype=np.int64)
    m = np.asarray(per_slot, dtype=np.int64)
    if delays is None:
        return np.full(len(n), least), n * least, m * least
    first, total, busiest = np.zeros(len(n)), np.zeros(len(n)), np.zeros(len(n))
    for s, d in enumerate(delays):
        if len(d) == 0:
            continue
        k = np.arange(1, len(d) + 1)
        low = np.minimum.accumulate(d)
        first[s] = d[0]
        total[s] = float((np.cumsum(d) + (n[s] - k) * low).min())
        ms = int(m[s])
        busiest[s] = float(np.partition(d, ms - 1)[:ms].sum()) if ms < len(d) else float(d.sum())
    return first, total, busiest


def stage_delays(sched: tuple[float, float], start: tuple[float, float], seed: int,
                 n_tasks: np.ndarray) -> list[np.ndarray]:
    """:func:`launch_delays` of every stage: its first ``n_tasks[s]`` draws, shapes ``(n_tasks[s],)``."""
    return [launch_delays(sched, start, seed, s, int(n)) for s, n in enumerate(n_tasks)]


__all__ = ["SPAWN_TAG", "launch_delays", "least_stage_overheads", "stage_delays"]
