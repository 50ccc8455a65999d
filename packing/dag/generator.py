"""A seeded generator of synthetic DAG workloads (for tests and scaling runs).

Shapes follow the staged Alibaba v2018 DAG jobs loosely: 1-``max_stages`` stages per job, each stage
after 0-2 earlier stages, task demands from the trace's dominant plan values (0.5 or 1 core, rarely
2-4; 1-3 GB), task counts mostly small with a heavy tail, log-normal durations (median ~30 s), and
Poisson arrivals.
"""

from __future__ import annotations

import numpy as np

from packing.dag.model import Job, Stage, Workload, make_workload

CPU_CHOICES = np.array([0.5, 1.0, 2.0, 4.0])
CPU_P = np.array([0.42, 0.5, 0.06, 0.02])
MEM_CHOICES = np.array([1.0, 1.5, 2.0, 2.5, 3.0, 6.0])
MEM_P = np.array([0.2, 0.25, 0.25, 0.15, 0.1, 0.05])


def generate_dag_workload(n_jobs: int = 50, *, seed: int = 0, max_stages: int = 8,
                          mean_interarrival: float = 20.0, max_tasks: int = 64,
                          median_duration: float = 30.0, name: str | None = None) -> Workload:
    """A seeded random DAG workload.

    Args:
        n_jobs: number of jobs.
        seed: the seed (the generator owns ``np.random.default_rng(seed)``).
        max_stages: most stages per job.
        mean_interarrival: mean seconds between job arrivals (exponential).
        max_tasks: most tasks per stage.
        median_duration: median task duration in seconds (log-normal, sigma 1).
        name: workload name (default ``"synthetic-<seed>"``).

    Returns:
        The workload (checked: demands, durations, acyclic).
    """
    if n_jobs < 0 or max_stages < 1 or max_tasks < 1 or mean_interarrival < 0 or median_duration <= 0:
        raise ValueError("n_jobs >= 0, max_stages >= 1, max_tasks >= 1, mean_interarrival >= 0 and "
                         "median_duration > 0 are required")
    rng = np.random.default_rng(seed)
    t = 0.0
    jobs = []
    for j in range(n_jobs):
        n = int(rng.integers(1, max_stages + 1))
        stages = []
        for i in range(n):
            k = int(rng.integers(0, min(i, 2) + 1))
            parents = tuple(sorted(int(x) for x in rng.choice(i, size=k, replace=False))) if k else ()
            cpu = float(rng.choice(CPU_CHOICES, p=CPU_P))
            mem = float(rng.choice(MEM_CHOICES, p=MEM_P))
            tasks = int(min(max_tasks, 1 + rng.geometric(0.15) - 1 if rng.random() < 0.8
                            else rng.integers(1, max_tasks + 1)))
            dur = float(max(1.0, round(median_duration * rng.lognormal(0.0, 1.0))))
            stages.append(Stage(f"S{i + 1}" + "".join(f"_{p + 1}" for p in parents), max(tasks, 1),
                                (cpu, mem), dur, parents))
        jobs.append(Job(f"job{j}", round(t, 3), tuple(stages)))
        t += float(rng.exponential(mean_interarrival)) if mean_interarrival > 0 else 0.0
    return make_workload(name or f"synthetic-{seed}", jobs, "generator", {"seed": seed, "generator": "dag"})


__all__ = ["generate_dag_workload"]
