"""Test helpers: run a DAG policy on a hand-made workload without overheads and read what it did."""

from __future__ import annotations

from packing.dag.engine import NO_OVERHEADS, Cluster, DagAction, DagEngine
from packing.dag.model import Workload
from packing.dag.policy import DagPolicy, run_dag


def jct_by_name(w: Workload, cluster: Cluster, policy: DagPolicy) -> dict[str, float]:
    """Each job's completion time by job name (no overheads)."""
    res, _ = run_dag(DagEngine(w, cluster, overheads=NO_OVERHEADS), policy)
    return {j.name: float(t) for j, t in zip(w.jobs, res.jct, strict=True)}


def first_actions(w: Workload, cluster: Cluster, policy: DagPolicy, n: int
                  ) -> tuple[list[DagAction], list[float]]:
    """The policy's first ``n`` decisions and the engine time of each (no overheads)."""
    eng = DagEngine(w, cluster, overheads=NO_OVERHEADS)
    eng.reset()
    policy.reset(eng)
    acts: list[DagAction] = []
    times: list[float] = []
    for _ in range(n):
        times.append(eng.time)
        acts.append(policy.act(eng.observation(), eng.mask()))
        eng.step(acts[-1])
    return acts, times
