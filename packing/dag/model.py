"""DAG batch jobs: a job is a set of stages, a stage is ``n_tasks`` identical parallel tasks.

Conventions
-----------
* Resources are ``("cpu", "mem")``: cores and GB (:data:`DAG_RESOURCES`). Every demand vector has
  shape ``(2,)`` in that order.
* A stage's ``parents`` are indices into its job's ``stages``; the job's stages form a DAG (checked by
  :func:`check_acyclic`, which every constructor path calls). A stage may start only after **all**
  tasks of **all** its parents finished (Alibaba v2018 ``batch_task`` semantics).
* ``duration`` is the run time of one task (seconds); all tasks of a stage take the same time.
* ``arrival`` is when the job is submitted (seconds; the loader makes it relative to the first job).

Everything is immutable; array views (:meth:`Workload.stage_table`) are computed on demand.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from packing.errors import input_error

DAG_RESOURCES: tuple[str, str] = ("cpu", "mem")
"""Resource names of every DAG demand vector: cores and GB."""


@dataclass(frozen=True)
class Stage:
    """One stage (Alibaba: a *task*) of a job: ``n_tasks`` parallel identical tasks.

    Attributes:
        name: the stage's name in the trace, e.g. ``"J3_1_2"``.
        n_tasks: number of parallel tasks (Alibaba ``instance_num``), ``>= 1``.
        demand: demand of one task, ``(cpu cores, mem GB)``, shape ``(2,)``.
        duration: run time of one task in seconds, ``> 0``.
        parents: indices (into the job's stages) of the stages that must finish first.
    """

    name: str
    n_tasks: int
    demand: tuple[float, float]
    duration: float
    parents: tuple[int, ...] = ()


@dataclass(frozen=True)
class Job:
    """A DAG job.

    Attributes:
        name: job name (Alibaba ``job_name``, e.g. ``"j_1292"``).
        arrival: submission time in seconds.
        stages: the stages; ``parents`` index into this tuple.
    """

    name: str
    arrival: float
    stages: tuple[Stage, ...]

    @functools.cached_property
    def children(self) -> tuple[tuple[int, ...], ...]:
        """Children of each stage, ``len == n_stages``."""
        out: list[list[int]] = [[] for _ in self.stages]
        for i, s in enumerate(self.stages):
            for p in s.parents:
                out[p].append(i)
        return tuple(tuple(c) for c in out)

    @functools.cached_property
    def topo_order(self) -> tuple[int, ...]:
        """Stage indices in a topological order (parents first; ties by index)."""
        return tuple(check_acyclic(self, self.name))

    @functools.cached_property
    def downward_path(self) -> np.ndarray:
        """Longest duration path from each stage to a sink, the stage included, shape ``(n_stages,)``."""
        out = np.zeros(len(self.stages))
        for i in reversed(self.topo_order):
            out[i] = self.stages[i].duration + max((out[c] for c in self.children[i]), default=0.0)
        return out

    @property
    def critical_path(self) -> float:
        """Length (seconds) of the longest duration path: no schedule finishes the job sooner."""
        return float(self.downward_path.max()) if self.stages else 0.0

    @functools.cached_property
    def depth(self) -> int:
        """Stages on the longest path counted in stages (every stage on it pays its overheads)."""
        d = [0] * len(self.stages)
        for i in self.topo_order:
            d[i] = 1 + max((d[p] for p in self.stages[i].parents), default=0)
        return max(d, default=0)

    @functools.cached_property
    def work(self) -> np.ndarray:
        """Resource-seconds of the job, ``sum n_tasks * demand * duration``, shape ``(2,)``."""
        if not self.stages:
            return np.zeros(2)
        return np.sum([np.asarray(s.demand) * s.n_tasks * s.duration for s in self.stages], axis=0)

    @property
    def n_tasks(self) -> int:
        """Tasks over all stages."""
        return sum(s.n_tasks for s in self.stages)


def check_acyclic(job: Job, source: str) -> list[int]:
    """A topological order of ``job``'s stages, or an :class:`~packing.errors.InputError`.

    Raises:
        InputError: a parent index out of range, a self-dependency or a cycle (naming the stages).
    """
    n = len(job.stages)
    indeg = [0] * n
    kids: list[list[int]] = [[] for _ in range(n)]
    for i, s in enumerate(job.stages):
        for p in s.parents:
            if not 0 <= p < n:
                raise input_error(source, f"job {job.name}, stage {s.name}", f"parent index {p} is not "
                                  f"a stage of the job (0..{n - 1})")
            if p == i:
                raise input_error(source, f"job {job.name}, stage {s.name}", "depends on itself")
            indeg[i] += 1
            kids[p].append(i)
    order = [i for i in range(n) if indeg[i] == 0]
    k = 0
    while k < len(order):
        for c in kids[order[k]]:
            indeg[c] -= 1
            if indeg[c] == 0:
                order.append(c)
        k += 1
    if len(order) < n:
        stuck = sorted(job.stages[i].name for i in range(n) if indeg[i] > 0)
        raise input_error(source, f"job {job.name}", "the dependencies form a cycle through stages "
                          + ", ".join(stuck[:10]) + (" ..." if len(stuck) > 10 else ""))
    return order


@dataclass(frozen=True)
class Workload:
    """A set of DAG jobs, sorted by arrival (ties: input order).

    Attributes:
        name: a label (e.g. the data folder).
        jobs: the jobs.
        meta: provenance (source files, skipped jobs and why, units).
    """

    name: str
    jobs: tuple[Job, ...]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return len(self.jobs)

    @property
    def n_stages(self) -> int:
        """Stages over all jobs."""
        return sum(len(j.stages) for j in self.jobs)

    @property
    def n_tasks(self) -> int:
        """Tasks over all jobs."""
        return sum(j.n_tasks for j in self.jobs)

    def stage_offsets(self) -> np.ndarray:
        """Index of each job's first stage in :meth:`stage_table`'s arrays, and the stage count last.

        Returns:
            shape ``(J + 1,)``, int64: job ``j``'s stages are ``offsets[j]:offsets[j + 1]``.
        """
        out = np.zeros(self.n_jobs + 1, dtype=np.int64)
        out[1:] = np.cumsum([len(j.stages) for j in self.jobs])
        return out

    def stage_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Flat arrays over all stages (job by job, stage by stage).

        Returns:
            ``(job index (S,), demand (S, 2), n_tasks (S,), duration (S,))``.
        """
        job = np.array([j for j, jb in enumerate(self.jobs) for _ in jb.stages], dtype=np.int64)
        dem = np.array([s.demand for jb in self.jobs for s in jb.stages], dtype=np.float64).reshape(-1, 2)
        nt = np.array([s.n_tasks for jb in self.jobs for s in jb.stages], dtype=np.int64)
        dur = np.array([s.duration for jb in self.jobs for s in jb.stages], dtype=np.float64)
        return job, dem, nt, dur

    def subset(self, idx: Sequence[int], name: str | None = None) -> Workload:
        """The jobs at ``idx`` (kept in arrival order)."""
        keep = sorted(set(int(i) for i in idx))
        return Workload(name or self.name, tuple(self.jobs[i] for i in keep), dict(self.meta))

    def shifted(self) -> Workload:
        """The same jobs with arrivals shifted so the first job arrives at 0."""
        if not self.jobs:
            return self
        t0 = min(j.arrival for j in self.jobs)
        return Workload(self.name, tuple(Job(j.name, j.arrival - t0, j.stages) for j in self.jobs),
                        dict(self.meta))


def make_workload(name: str, jobs: Sequence[Job], source: str,
                  meta: dict[str, Any] | None = None) -> Workload:
    """Check every job (demands, durations, task counts, acyclic) and sort by arrival.

    Raises:
        InputError: the first bad stage or cycle, naming job and stage.
    """
    for jb in jobs:
        for s in jb.stages:
            where = f"job {jb.name}, stage {s.name}"
            if s.n_tasks < 1:
                raise input_error(source, where, f"n_tasks must be >= 1, got {s.n_tasks}")
            if not (len(s.demand) == 2 and all(np.isfinite(s.demand)) and min(s.demand) >= 0
                    and max(s.demand) > 0):
                raise input_error(source, where, f"demand must be 2 finite numbers >= 0, not both 0, "
                                  f"got {s.demand}")
            if not (np.isfinite(s.duration) and s.duration > 0):
                raise input_error(source, where, f"duration must be a finite number > 0, got {s.duration}")
        if not np.isfinite(jb.arrival):
            raise input_error(source, f"job {jb.name}", f"arrival must be finite, got {jb.arrival}")
        check_acyclic(jb, source)
    order = sorted(range(len(jobs)), key=lambda i: (jobs[i].arrival, i))
    return Workload(name, tuple(jobs[i] for i in order), dict(meta or {}))


__all__ = ["DAG_RESOURCES", "Job", "Stage", "Workload", "check_acyclic", "make_workload"]
