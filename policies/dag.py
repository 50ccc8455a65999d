"""DAG baseline policies for :class:`packing.dag.engine.DagEngine`.

FIFO, shortest job first,
critical path first, random and a Decima-like slot (one container type, heuristic stage choice).

Each picks a runnable stage by its own priority, then the smallest container type (by size relative
to the largest type) the mask allows for it, and launches as many tasks as are pending and free
(JobFusion's action triple). A learned agent plugs into the same contract
(:class:`packing.dag.policy.DagPolicy`): ``name``, ``partition``, ``reset(engine)``, ``act(obs, mask)``.
"""

from __future__ import annotations

import numpy as np

from packing.dag.engine import DagAction, DagEngine, DagObservation


class StagePriority:
    """Base: lowest :meth:`keys` wins among the stages the mask allows; smallest allowed type; all tasks.

    Args:
        partition: the partition the policy runs on (``"constrained"`` by default).
    """

    name = "stage-priority"
    partition = "constrained"

    def __init__(self, partition: str | None = None) -> None:
        if partition is not None:
            self.partition = partition
        self.engine: DagEngine | None = None

    def reset(self, engine: DagEngine) -> None:
        """Read the static tables of the episode."""
        self.engine = engine
        types = engine.cluster.types
        self.type_size = (types / np.maximum(types.max(axis=0), 1e-12)).sum(axis=1)
        self.job_arrival = np.array([j.arrival for j in engine.workload.jobs])
        self.down = np.concatenate([j.downward_path for j in engine.workload.jobs]) \
            if engine.workload.jobs else np.zeros(0)
        self.task_seconds = engine.stage_tasks * engine.stage_duration

    def keys(self, obs: DagObservation, stages: np.ndarray) -> np.ndarray:
        """Priority of each candidate stage, shape ``(K',)`` (lower first); ties by stage id."""
        return stages.astype(np.float64)

    def choose(self, obs: DagObservation, stages: np.ndarray) -> int:
        """Index into ``stages`` of the stage to run."""
        return int(np.lexsort((stages, self.keys(obs, stages)))[0])

    def act(self, obs: DagObservation, mask: np.ndarray) -> DagAction:
        """Best stage, smallest allowed type, as many tasks as fit."""
        rows = np.flatnonzero(mask.any(axis=1))
        stages = obs.runnable[rows]
        k = self.choose(obs, stages)
        allowed = np.flatnonzero(mask[rows[k]])
        q = int(allowed[np.argmin(self.type_size[allowed])])
        s = int(stages[k])
        return DagAction(s, q, int(min(obs.pending[s], obs.free[q])))


class Fifo(StagePriority):
    """First in, first out: the earliest-arrived job's stages first."""

    name = "fifo"

    def keys(self, obs: DagObservation, stages: np.ndarray) -> np.ndarray:  # noqa: D102
        assert self.engine is not None
        return self.job_arrival[self.engine.stage_job[stages]]


class ShortestJobFirst(StagePriority):
    """The job with the least remaining task-seconds first."""

    name = "sjf"

    def keys(self, obs: DagObservation, stages: np.ndarray) -> np.ndarray:  # noqa: D102
        assert self.engine is not None
        eng = self.engine
        left = (eng.stage_tasks - obs.finished) * eng.stage_duration
        per_job = np.bincount(eng.stage_job, weights=left, minlength=len(self.job_arrival))
        return per_job[eng.stage_job[stages]]


class CriticalPathFirst(StagePriority):
    """The stage with the longest duration path to the end of its job first."""

    name = "cpf"

    def keys(self, obs: DagObservation, stages: np.ndarray) -> np.ndarray:  # noqa: D102
        return -self.down[stages]


class RandomDag(StagePriority):
    """A seeded random allowed stage and type, all tasks that fit."""

    name = "random"

    def __init__(self, seed: int = 0, partition: str | None = None) -> None:
        super().__init__(partition)
        self.seed = seed

    def reset(self, engine: DagEngine) -> None:  # noqa: D102
        super().reset(engine)
        self.rng = np.random.default_rng(self.seed)

    def act(self, obs: DagObservation, mask: np.ndarray) -> DagAction:  # noqa: D102
        rows = np.flatnonzero(mask.any(axis=1))
        r = int(self.rng.choice(rows))
        q = int(self.rng.choice(np.flatnonzero(mask[r])))
        s = int(obs.runnable[r])
        return DagAction(s, q, int(min(obs.pending[s], obs.free[q])))


class DecimaLike(CriticalPathFirst):
    """Decima-like slot: one container type (no clustering).

    The stage choice is critical-path-first until a learned agent replaces :meth:`choose`.
    """

    name = "decima-like"
    partition = "single"


DAG_POLICIES: dict[str, type[StagePriority]] = {
    "fifo": Fifo, "sjf": ShortestJobFirst, "cpf": CriticalPathFirst, "random": RandomDag,
    "decima-like": DecimaLike,
}
"""Name -> class of the DAG baselines."""

DEFAULT_DAG_POLICIES = ("fifo", "sjf", "cpf", "random", "decima-like")


def make_dag_policy(name: str, seed: int = 0) -> StagePriority:
    """A DAG baseline by name (``random`` takes the seed).

    Raises:
        ValueError: an unknown name.
    """
    if name not in DAG_POLICIES:
        raise ValueError(f"unknown DAG policy {name!r}; known: {', '.join(DAG_POLICIES)}")
    return RandomDag(seed) if name == "random" else DAG_POLICIES[name]()


__all__ = ["DAG_POLICIES", "DEFAULT_DAG_POLICIES", "CriticalPathFirst", "DecimaLike", "Fifo", "RandomDag",
           "ShortestJobFirst", "StagePriority", "make_dag_policy"]
