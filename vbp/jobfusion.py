"""JobFusion on vbp: run DAG jobs on carved clusters, compare to bounds.

* **Carving** (:mod:`packing.dag.carving`: the model and job samples; :mod:`solvers.dag.carving`:
  the proven sweep and the fixed cluster, every carving through :func:`packing.feasibility.checker.check`).
  :func:`tune_large_share` picks how much of the large types the nested carving keeps by simulated
  mean JCT on training samples; :func:`build_envs` makes the agent's training environments.
* **Bounds** (:mod:`packing.dag.bounds`): the critical-path bound (:func:`dag_bounds`: a job
  cannot finish sooner than its longest path of durations plus each stage's first launch delay with
  the run's seed, or the least delay with preemption (:mod:`packing.dag.delays`); the makespan is at
  least the longest ``arrival + that`` and the work bound ``max_r sum(work_r) / offline capacity_r``)
  and the capacity bound (:func:`packing.dag.bounds.capacity_bound`: slot-limited critical paths and
  the cluster's slots and resources as single machines under SRPT), computed on each carved cluster;
  the comparison reports the least over the clusters compared, valid for every policy in it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from packing.dag.bounds import capacity_bound
from packing.dag.bounds import critical_path_bounds as dag_bounds
from packing.dag.carving import HOST_SHAPES, parse_hosts, sample_jobs
from packing.dag.engine import DagEngine, DagResult, Overheads
from packing.dag.model import Workload
from packing.dag.partition import partition
from packing.dag.policy import DagPolicy, run_dag
from policies.dag import resolve_dag_policy
from policies.dag_search import search_base, search_schedule
from solvers.dag.carving import Carved, carve_cluster, carve_sweep


def tune_large_share(samples: list[Workload], hosts: list[tuple[str, tuple[float, float], int]], *,
                     q: int = 4, method: str = "constrained", policy: str = "sjf",
                     grid: tuple[float, ...] = (0.25, 0.5, 0.6, 0.75, 0.9, 1.0),
                     overheads: Overheads | None = None, seed: int = 0) -> tuple[float, dict[float, float]]:
    """The nested carving's ``large_share`` with the least simulated mean JCT on ``samples``.

    Pass TRAINING samples only: the share is a setting of the cluster, chosen like any other
    hyper-parameter. Each sample is partitioned (``q``, ``method``), carved nested with every share of
    ``grid`` and run by the DAG baseline ``policy`` (engine seed ``seed``).

    Returns:
        ``(best share, {share: mean JCT over the samples})`` (ties: the larger share).
    """
    from policies.dag import make_dag_policy

    oh = Overheads() if overheads is None else overheads
    parts = [partition(s, q, method) for s in samples]
    means: dict[float, float] = {}
    for f in grid:
        jct = []
        for s, part in zip(samples, parts, strict=True):
            c = carve_cluster(part, hosts, carving="nested", large_share=f, seed=seed)
            res, _ = run_dag(DagEngine(s, c.cluster, overheads=oh, seed=seed), make_dag_policy(policy, seed))
            jct.append(res.mean_jct)
        means[float(f)] = float(np.mean(jct))
    best = min(sorted(means, reverse=True), key=lambda f: means[f])
    return best, means


# -- the comparison -----------------------------------------------------------------------------
@dataclass
class PolicyRow:
    """One policy's result in :func:`compare_dag`."""

    name: str
    partition: str
    n_types: int
    containers: int
    mean_jct: float
    makespan: float
    mean_utilisation: float
    idle_share: float
    decision_ms: float
    decisions: int
    jct_excess: float
    capacity_excess: float
    makespan_excess: float
    preempted: int
    jct: list[float]


COMPARE_HOSTS: list[tuple[str, tuple[float, float], int]] = [
    ("32c64g", HOST_SHAPES["32c64g"], 8), ("92c288g", HOST_SHAPES["92c288g"], 8)]
"""The cluster of :func:`compare_dag` when no hosts are given: 8 x 32c64g + 8 x 92c288g."""


def carve_sample(workload: Workload, method: str, *, q: int = 4,
                 hosts: list[tuple[str, tuple[float, float], int]] | None = None,
                 online: np.ndarray | None = None, online_share: float = 0.0, surges: int = 0, seed: int = 0,
                 carving: str = "proportional", large_share: float = 1.0) -> Carved:
    """The carved cluster :func:`compare_dag` runs the policies of partition ``method`` on."""
    part = partition(workload, 1 if method == "single" else q, method)
    horizon = max((j.arrival for j in workload.jobs), default=0.0) + 600.0
    return carve_cluster(part, hosts or COMPARE_HOSTS, online=online, online_share=online_share,
                         surges=surges, horizon=horizon, seed=seed, carving=carving, large_share=large_share)


def compare_dag(workload: Workload, policies: list[DagPolicy], *, q: int = 4,
                hosts: list[tuple[str, tuple[float, float], int]] | None = None,
                online: np.ndarray | None = None, online_share: float = 0.0, surges: int = 0,
                preempt: bool = False, overheads: Overheads | None = None, seed: int = 0,
                carving: str = "proportional", large_share: float = 1.0, search: int = 0,
                search_policy: str = "sjf-headroom", search_seed: int = 0,
                on_improve: Callable[[int, float], None] | None = None) -> dict[str, Any]:
    """Run each policy on its partition's carved cluster; bounds and excesses; optionally a schedule search.

    ``carving`` and ``large_share`` choose the container counts (see :func:`carve_cluster`). With
    ``search`` > 0, :func:`policies.dag_search.search_schedule` runs ``search`` episodes from the
    SJF-family policy ``search_policy`` on that policy's carved cluster (same engine settings as the
    policies; steps seeded by ``search_seed``): a clairvoyant schedule, an upper bound on the optimum.

    Returns:
        ``{"bounds": {...}, "policies": [PolicyRow as dict, ...], "clusters": {...}, "search": None or
        {PolicyRow as dict (named ``search (<policy>)``), "base", "evaluations", "search_seed",
        "start_mean_jct", "jobs_reordered", "episodes", "factors", "improvements", "seconds"},
        "best_found_mean_jct": least mean JCT of the policies and the search, ...}``.

    Raises:
        InputError: ``search_policy`` is not an SJF-family policy (:data:`policies.dag_search.SEARCH_BASES`).
        ValueError: ``search`` < 0.
    """
    if search < 0:
        raise ValueError(f"search must be 0 or more episodes, got {search}")
    oh = Overheads() if overheads is None else overheads
    partitions = [p.partition for p in policies]
    if search > 0:
        partitions.append(search_base(search_policy).partition)
    carved: dict[str, Carved] = {}
    for part in partitions:
        if part not in carved:
            carved[part] = carve_sample(workload, part, q=q, hosts=hosts, online=online,
                                        online_share=online_share, surges=surges, seed=seed,
                                        carving=carving, large_share=large_share)
    cap = np.max([c.cluster.capacity for c in carved.values()], axis=0)
    drawn = None if preempt else seed  # a preemption's relaunch leaves the stages' own streams
    b = dag_bounds(workload, cap, oh, seed=drawn)
    cb = {k: capacity_bound(workload, c.cluster, oh, seed=drawn) for k, c in carved.items()}
    cap_jct = min(v.mean_jct for v in cb.values())
    makespan = max(b["makespan"], min(v.makespan for v in cb.values()))

    def row(name: str, part: str, res: DagResult, decision_ms: float) -> dict[str, Any]:
        c = carved[part].cluster
        return asdict(PolicyRow(
            name, part, c.n_types, int(len(c.slot_type)), res.mean_jct, res.makespan,
            res.utilisation, res.idle_share, decision_ms, res.decisions,
            res.mean_jct / b["critical_path_mean_jct"] - 1.0 if b["critical_path_mean_jct"] > 0 else 0.0,
            res.mean_jct / cb[part].mean_jct - 1.0 if cb[part].mean_jct > 0 else 0.0,
            res.makespan / makespan - 1.0 if makespan > 0 else 0.0, res.preempted,
            res.jct.tolist()))

    rows = []
    for p in policies:
        eng = DagEngine(workload, carved[p.partition].cluster, overheads=oh, seed=seed, preempt=preempt)
        res, secs = run_dag(eng, p)
        rows.append(row(p.name, p.partition, res, float(secs.mean() * 1e3) if len(secs) else 0.0))
    found: dict[str, Any] | None = None
    if search > 0:
        part = search_base(search_policy).partition
        s = search_schedule(workload, carved[part].cluster, search_policy, seed=seed, evaluations=search,
                            search_seed=search_seed, overheads=oh, preempt=preempt, on_improve=on_improve)
        found = row(f"search ({search_policy})", part, s.result, s.decision_ms)
        found.update(base=search_policy, evaluations=search, search_seed=search_seed,
                     start_mean_jct=s.start_mean_jct, jobs_reordered=s.jobs_reordered, episodes=s.episodes,
                     factors=s.factors.tolist(), improvements=[list(i) for i in s.improvements],
                     seconds=s.seconds)
    best = min([r["mean_jct"] for r in rows] + ([found["mean_jct"]] if found is not None else []),
               default=None)
    return {
        "bounds": {"critical_path_mean_jct": b["critical_path_mean_jct"], "capacity_mean_jct": cap_jct,
                   "overheads": "least" if drawn is None else "drawn",
                   "capacity_by_partition": {k: v.mean_jct for k, v in cb.items()},
                   "capacity_parts": {k: v.parts for k, v in cb.items()}, "makespan": makespan},
        "policies": rows,
        "search": found,
        "best_found_mean_jct": best,
        "carving": {"method": carving, "large_share": large_share},
        "clusters": {k: {"types": v.cluster.types.round(3).tolist(), "containers": v.cluster.counts.tolist(),
                         "online_share": v.online_share, "carved_share": v.carved_share}
                     for k, v in carved.items()},
        "jobs": workload.n_jobs, "tasks": workload.n_tasks,
    }


def build_envs(workload: Any, *, n_envs: int, jobs: int, seed: int, partition_method: str, q: int,
               hosts: list[tuple[str, tuple[float, float], int]], interarrival: float,
               carving: str = "proportional", large_share: float = 1.0, long_samples: int = 0,
               first: int = 0) -> list[Any]:
    """``n_envs`` training environments: seeded samples of ``jobs`` jobs, each on its own carved cluster.

    Sample ``i`` uses seed ``seed * 1000 + first + i`` (Poisson arrivals of mean ``interarrival``;
    held-out samples start at ``first`` = the number of training samples); the
    partition is computed on the sample (as ``vbp jobs compare`` does) and carved on ``hosts``
    (``carving``, ``large_share``: see :func:`solvers.dag.carving.carve_cluster`). With ``long_samples``
    the environments also hold that many *long* samples of ``jobs`` jobs: the ones with the most
    task-seconds among ``10 * long_samples`` more seeded draws (seeds ``10**6 + seed * 1000 + i``)
    from the same ``workload``, so training also sees job sets with thousands of decisions.
    """
    from policies.agents.jobfusion_train import Env  # torch, only when training

    samples = [sample_jobs(workload, jobs, seed * 1000 + first + i, interarrival) for i in range(n_envs)]
    if long_samples > 0:
        draws = [sample_jobs(workload, jobs, 10**6 + seed * 1000 + i, interarrival)
                 for i in range(10 * long_samples)]
        work = [sum(st.n_tasks * st.duration for j in d.jobs for st in j.stages) for d in draws]
        samples += [draws[i] for i in sorted(np.argsort(work)[::-1][:long_samples].tolist())]
    out = []
    for s in samples:
        part = partition(s, 1 if partition_method == "single" else q, partition_method)
        out.append(Env(s, carve_cluster(part, hosts, seed=seed, carving=carving,
                                        large_share=large_share).cluster))
    return out


__all__ = ["COMPARE_HOSTS", "PolicyRow", "build_envs", "carve_sample", "carve_sweep", "compare_dag",
           "dag_bounds", "parse_hosts", "resolve_dag_policy", "sample_jobs", "tune_large_share"]
