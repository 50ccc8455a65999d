"""Clairvoyant schedule search on one DAG workload: how low can a schedule's mean JCT go?

Not a policy: every candidate is a whole seeded episode of the workload on its cluster, so the search
knows every arrival and every draw; its best mean JCT is a schedule that exists, an upper bound on
the optimum (the capacity bound of :mod:`packing.dag.bounds` is a lower one). A candidate is an
SJF-family policy (its key of a job is the job's remaining task-seconds) whose key of each job is
multiplied by a per-job factor (:func:`key_scaled`). From all factors 1 (the policy itself), each
step changes one or two factors at random (times 0, 0.1, 0.3, 3, 10 or 100; a factor of 0 stays 0:
that job keeps the first claim) and keeps the change when the mean JCT drops.

:func:`search_schedule` is seeded (``search_seed``) and counted in episodes (``evaluations``), so a
run gives the same result on every machine. Every episode runs through
:func:`packing.dag.policy.run_dag`, whose engine checks every launch.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from packing.dag.engine import Cluster, DagEngine, DagObservation, DagResult, Overheads
from packing.dag.model import Workload
from packing.dag.policy import run_dag
from packing.errors import input_error
from policies.dag import DAG_POLICIES, StagePriority

SEARCH_BASES: tuple[str, ...] = ("sjf-headroom", "sjf-reserve", "sjf-cp", "sjf")
"""The policies of :data:`policies.dag.DAG_POLICIES` whose key of a job is its remaining task-seconds."""

FACTORS: tuple[float, ...] = (0.0, 0.1, 0.3, 3.0, 10.0, 100.0)
"""What one step multiplies a job's factor by (one drawn uniformly)."""


def search_base(name: str, source: str = "--search-policy") -> type[StagePriority]:
    """The class of SJF-family policy ``name`` (one of :data:`SEARCH_BASES`).

    Args:
        name: a policy name.
        source: the option the name came from (the error names it).

    Raises:
        InputError: ``name`` is not one of :data:`SEARCH_BASES`.
    """
    if name not in SEARCH_BASES:
        what = "a DAG policy whose key is not a job's remaining work" if name in DAG_POLICIES \
            else "unknown DAG policy"
        raise input_error(source, name[:100], f"{what}; the search scales that key, so it starts from one "
                          f"of {', '.join(SEARCH_BASES)}")
    return DAG_POLICIES[name]


class KeyScaled(StagePriority):
    """Mixin: the key of job ``j`` multiplied by ``factor[j]`` (see :func:`key_scaled`).

    Attributes:
        factor: the per-job factors, shape ``(J,)``.
    """

    factor: np.ndarray

    def reset(self, engine: DagEngine) -> None:  # noqa: D102
        if len(self.factor) != engine.workload.n_jobs:
            raise ValueError(f"{len(self.factor)} factors for {engine.workload.n_jobs} jobs")
        super().reset(engine)

    def keys(self, obs: DagObservation, stages: np.ndarray) -> np.ndarray:
        """The base's keys times the factor of each stage's job, shape ``(K',)``."""
        assert self.engine is not None
        scaled: np.ndarray = super().keys(obs, stages) * self.factor[self.engine.stage_job[stages]]
        return scaled


_SCALED: dict[type[StagePriority], type[StagePriority]] = {}


def _scaled_class(base: type[StagePriority]) -> type[StagePriority]:
    """``base`` with :class:`KeyScaled` in front (one class per base)."""
    if base not in _SCALED:
        _SCALED[base] = type(f"KeyScaled{base.__name__}", (KeyScaled, base),
                             {"__doc__": f"{base.__name__}, key scaled."})
    return _SCALED[base]


def key_scaled(base: str | type[StagePriority], factor: np.ndarray) -> StagePriority:
    """SJF-family policy ``base`` whose key of job ``j`` is multiplied by ``factor[j]``.

    Args:
        base: a name of :data:`SEARCH_BASES` or a :class:`~policies.dag.StagePriority` subclass.
        factor: non-negative per-job factors, shape ``(J,)`` (all 1: the policy itself).

    Returns:
        The policy (named as ``base``, on ``base``'s partition).

    Raises:
        InputError: ``base`` is a name but not one of :data:`SEARCH_BASES`.
    """
    cls = search_base(base) if isinstance(base, str) else base
    pol = _scaled_class(cls)(None)
    assert isinstance(pol, KeyScaled)
    pol.factor = np.array(factor, dtype=np.float64)
    return pol


@dataclass(frozen=True, eq=False)
class ScheduleSearch:
    """What :func:`search_schedule` found.

    Attributes:
        base: the policy the search starts from.
        evaluations: episodes after the policy's own.
        search_seed: the seed of the steps.
        start_mean_jct: the policy's own mean JCT (all factors 1).
        mean_jct: the best mean JCT found (<= ``start_mean_jct``).
        factors: the per-job factors of the best, shape ``(J,)``.
        jct: the completion time of each job in the best episode, shape ``(J,)``.
        result: the best episode's result (makespan, utilisation, ...).
        decision_ms: mean milliseconds per decision of the best episode.
        improvements: ``(episode, mean JCT)`` of each improvement (episode 1 is the first step).
        seconds: wall time of the search.
    """

    base: str
    evaluations: int
    search_seed: int
    start_mean_jct: float
    mean_jct: float
    factors: np.ndarray
    jct: np.ndarray
    result: DagResult
    decision_ms: float
    improvements: tuple[tuple[int, float], ...]
    seconds: float

    @property
    def episodes(self) -> int:
        """Episodes run: the policy's own and one per evaluation."""
        return self.evaluations + 1

    @property
    def jobs_reordered(self) -> int:
        """Jobs whose factor is not 1 in the best."""
        return int((self.factors != 1).sum())


def search_schedule(workload: Workload, cluster: Cluster, base_name: str, *, seed: int, evaluations: int,
                    search_seed: int = 0, overheads: Overheads | None = None, preempt: bool = False,
                    on_improve: Callable[[int, float], None] | None = None) -> ScheduleSearch:
    """Local search over per-job key factors of ``base_name`` (module docstring).

    Args:
        workload: the jobs.
        cluster: the carved cluster they run on.
        base_name: one of :data:`SEARCH_BASES`.
        seed: the engine's seed (every episode uses it: the same draws).
        evaluations: episodes after the policy's own (0: the policy itself).
        search_seed: the seed of the steps.
        overheads: the engine's overheads (``None``: the default :class:`Overheads`).
        preempt: whether surges kill running tasks (as the engine's ``preempt``).
        on_improve: called with ``(episode, mean JCT)`` at each improvement.

    Raises:
        InputError: ``base_name`` is not one of :data:`SEARCH_BASES`.
        ValueError: ``evaluations`` < 0.
    """
    base = search_base(base_name)
    if evaluations < 0:
        raise ValueError(f"evaluations must be 0 or more, got {evaluations}")
    oh = Overheads() if overheads is None else overheads
    t0 = time.perf_counter()

    def episode(f: np.ndarray) -> tuple[DagResult, np.ndarray]:
        return run_dag(DagEngine(workload, cluster, overheads=oh, seed=seed, preempt=preempt),
                       key_scaled(base, f))

    factor = np.ones(workload.n_jobs)
    res, secs = episode(factor)
    start = best = float(res.mean_jct)
    improvements: list[tuple[int, float]] = []
    rng = np.random.default_rng(search_seed)
    for it in range(1, evaluations + 1 if workload.n_jobs else 1):
        trial = factor.copy()
        for _ in range(int(rng.integers(1, 3))):
            j = int(rng.integers(len(trial)))
            trial[j] *= float(rng.choice(FACTORS)) if trial[j] > 0 else 1.0
        r, s = episode(trial)
        v = float(r.mean_jct)
        if v < best:
            best, factor, res, secs = v, trial, r, s
            improvements.append((it, best))
            if on_improve is not None:
                on_improve(it, best)
    return ScheduleSearch(base_name, evaluations, search_seed, start, best, factor, res.jct.copy(), res,
                          float(secs.mean() * 1e3) if len(secs) else 0.0, tuple(improvements),
                          time.perf_counter() - t0)


__all__ = ["FACTORS", "SEARCH_BASES", "KeyScaled", "ScheduleSearch", "key_scaled", "search_base",
           "search_schedule"]
