"""Tuning FGD+ and FGD-Pack by particle swarm in the FGD paper's protocol (:mod:`packing.gpu.fgd_protocol`).

The cost of a parameter vector is the mean, over training workloads (seeds), of the unallocated GPU %
at one arrival level when the policy replays the workload. Every particle of an iteration is scored
on the *same* workloads (common random numbers). Each (vector, workload) run is one
:class:`GpuCostTask` on an executor of :mod:`packing.sim.evaluation` (serial, local processes or Ray):
the workloads are shared with the workers once, and every executor gives the same costs (a replay is
deterministic given its policy and workload). The optimiser is :class:`policies.swarm.optimizer.PSO`,
the one the swarm scoring policies train with.

* FGD+ (:class:`policies.gpu.FGDPlus`): weights of its extra features; particle 0 starts at
  ``theta = 0``, exactly FGD, so the result is never worse than FGD on the training seeds.
* FGD-Pack (:class:`policies.gpu.FGDPack`): ``(lam, threshold)``; particle 0 starts at (0.4, 0.9).

Keep the training seeds disjoint from the reported ones (42..51).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from packing.gpu.fgd_protocol import Workload, build_workload, run_policy
from packing.gpu.fragmentation import shape_distribution
from packing.model.instance import Instance
from packing.sim.evaluation import Executor, make_executor, shared
from policies.gpu import PLUS_FEATURES, FGDPack, FGDPlus
from policies.swarm.optimizer import PSO, PSOSettings

Tuned = Literal["fgd-plus", "fgd-pack"]


@dataclass(frozen=True)
class GpuCostTask:
    """One replay: a policy's parameters on one shared training workload.

    Attributes:
        policy: ``"fgd-plus"`` (``params``: the weights, shape ``(len(PLUS_FEATURES),)``) or
            ``"fgd-pack"`` (``params``: ``(lam, threshold)``).
        params: the parameters, as plain floats.
        workloads: a reference (:meth:`packing.sim.evaluation.Executor.share`) to the tuple of training
            workloads.
        index: which workload.
        level: the arrival level (%) whose unallocated GPU is the cost.
    """

    policy: Tuned
    params: tuple[float, ...]
    workloads: str
    index: int
    level: int


def gpu_cost(task: GpuCostTask) -> float:
    """Unallocated GPU % at ``task.level`` of the task's policy on its workload (placement checked)."""
    wl: Workload = shared(task.workloads)[task.index]
    if task.policy == "fgd-plus":
        policy: Any = FGDPlus(shapes=wl.dist, weights=list(task.params))
    else:
        lam, thr = task.params
        assert wl.pod_counts is not None
        policy = FGDPack(lam=lam, threshold=thr,
                         shapes=shape_distribution(wl.instance, wl.pod_counts, threshold=thr))
    run = run_policy(wl, policy)  # checked: the check costs nothing measurable next to the replay
    return float(run.levels("unallocated", task.level + 1)[task.level])


def _executor(workers: int) -> Executor:
    """This process for one worker, else that many local processes."""
    return make_executor("serial") if workers <= 1 else make_executor("process", workers)


class WorkloadCosts:
    """Mean cost of parameter vectors over fixed training workloads, as tasks on an executor.

    Use as a context manager: the workloads are built and shared on entry; an executor made here
    (from ``workers``) is closed on exit, a given one is left open.

    Args:
        policy: ``"fgd-plus"`` or ``"fgd-pack"``.
        instance: the cluster and pod list.
        seeds: training workload seeds.
        until: arrivals stop here (x capacity); must reach ``level + 1``.
        level: the arrival level (%) whose unallocated GPU is the cost.
        workers: local processes when no executor is given (1: this process).
        executor: run the replays here instead.

    Raises:
        ValueError: ``until`` stops before ``level + 1``.
    """

    def __init__(self, policy: Tuned, instance: Instance, seeds: Sequence[int], *, until: float,
                 level: int, workers: int = 1, executor: Executor | None = None) -> None:
        if level + 1 > round(until * 100):
            raise ValueError(f"until={until} stops before level {level} + 1")
        self.policy: Tuned = policy
        self.instance = instance
        self.seeds = [int(s) for s in seeds]
        self.until = until
        self.level = level
        self._given = executor
        self._workers = workers
        self.executor: Executor | None = None
        self.ref: str | None = None

    def __enter__(self) -> WorkloadCosts:
        self.executor = self._given if self._given is not None else _executor(self._workers)
        workloads = tuple(build_workload(self.instance, s, self.until) for s in self.seeds)
        self.ref = self.executor.share(workloads, "gpu-train")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._given is None and self.executor is not None:
            self.executor.close()
        self.executor = None

    def per_workload(self, vectors: Sequence[Sequence[float]]) -> np.ndarray:
        """Cost of every vector on every workload, shape ``(n_vectors, n_seeds)``."""
        assert self.executor is not None and self.ref is not None, "use WorkloadCosts as a context manager"
        tasks = [GpuCostTask(self.policy, tuple(float(v) for v in p), self.ref, i, self.level)
                 for p in vectors for i in range(len(self.seeds))]
        costs = self.executor.map(gpu_cost, tasks)
        return np.array(costs, dtype=np.float64).reshape(len(vectors), len(self.seeds))

    def __call__(self, positions: np.ndarray) -> np.ndarray:
        """Mean cost per vector; ``positions`` shape ``(n, dims)`` -> ``(n,)``."""
        return self.per_workload(np.atleast_2d(positions).tolist()).mean(axis=1)


def _train_pso(policy: Tuned, instance: Instance, seeds: Sequence[int], *, until: float, level: int,
               box: tuple[np.ndarray, np.ndarray], init: np.ndarray, settings: PSOSettings,
               workers: int, executor: Executor | None, checkpoint: str | Path | None,
               log: Callable[[str], None] | None) -> tuple[np.ndarray, float, list[dict[str, Any]]]:
    """The PSO loop both trainers share: minimise the mean cost over the training workloads.

    ``box`` is the ``(low, high)`` search box and ``init`` particle 0's position, both shape
    ``(dims,)``.

    Returns:
        ``(best position, its cost, history)`` (one record per iteration: best cost, mean cost, best).
    """
    history: list[dict[str, Any]] = []

    def cb(rec: Any) -> None:
        history.append({"iteration": rec.iteration, "best_cost": round(rec.best_cost, 4),
                        "mean_cost": round(rec.mean_cost, 4),
                        "best": [round(v, 4) for v in rec.best_position]})
        if log is not None:
            log(f"iter {rec.iteration}: best {rec.best_cost:.3f} mean {rec.mean_cost:.3f} "
                f"at {[round(v, 3) for v in rec.best_position]}")

    with WorkloadCosts(policy, instance, seeds, until=until, level=level, workers=workers,
                       executor=executor) as costs:
        res = PSO(settings, checkpoint_path=checkpoint, resume=checkpoint is not None).minimize(
            costs, len(init), box, init=init, callback=cb)
    return np.asarray(res.best_position, dtype=np.float64), float(res.best_cost), history


def train_fgd_plus(instance: Instance, seeds: Sequence[int], *, until: float = 1.01, level: int = 100,
                   particles: int = 8, iters: int = 5, bound: float = 2.0, pso_seed: int = 0,
                   workers: int = 1, executor: Executor | None = None,
                   checkpoint: str | Path | None = None, log: Callable[[str], None] | None = None
                   ) -> tuple[np.ndarray, float, list[dict[str, Any]]]:
    """Tune FGD+'s weights (:class:`policies.gpu.FGDPlus`) by PSO (see the module docstring).

    Args:
        instance: the cluster and pod list.
        seeds: training workload seeds.
        until: arrivals stop here (x capacity, to keep runs short); must reach ``level``.
        level: the arrival level (%) whose unallocated GPU is minimised.
        particles: swarm size.
        iters: PSO iterations.
        bound: weights live in ``[-bound, bound]``.
        pso_seed: the optimiser's seed.
        workers: local processes that replay in parallel (when no ``executor`` is given).
        executor: replay on this executor (e.g. Ray) instead; left open.
        checkpoint: PSO checkpoint file (resumed when it exists).
        log: called with one line per iteration.

    Returns:
        ``(weights, cost, history)``: the best weights, shape ``(len(PLUS_FEATURES),)``, their cost,
        and one record per iteration (best cost, mean cost, best weights).
    """
    dims = len(PLUS_FEATURES)
    settings = PSOSettings(n_particles=particles, iters=iters, seed=pso_seed, patience=0, init_scale=0.3)
    return _train_pso("fgd-plus", instance, seeds, until=until, level=level,
                      box=(np.full(dims, -bound), np.full(dims, bound)), init=np.zeros(dims),
                      settings=settings, workers=workers, executor=executor, checkpoint=checkpoint,
                      log=log)


def train_fgd_pack(instance: Instance, seeds: Sequence[int], *, until: float = 1.01, level: int = 100,
                   particles: int = 6, iters: int = 4, pso_seed: int = 0, workers: int = 1,
                   executor: Executor | None = None, log: Callable[[str], None] | None = None
                   ) -> tuple[np.ndarray, float, list[dict[str, Any]]]:
    """Tune FGD-Pack's ``(lam, threshold)`` by PSO (as :func:`train_fgd_plus`).

    ``lam`` in [0, 1], the shape-distribution threshold in [0.8, 1]; particle 0 starts at (0.4, 0.9).

    Returns:
        ``(best (lam, threshold), cost, history)``.
    """
    settings = PSOSettings(n_particles=particles, iters=iters, seed=pso_seed, patience=0, init_scale=0.15)
    return _train_pso("fgd-pack", instance, seeds, until=until, level=level,
                      box=(np.array([0.0, 0.8]), np.array([1.0, 1.0])), init=np.array([0.4, 0.9]),
                      settings=settings, workers=workers, executor=executor, checkpoint=None, log=log)


def grid_fgd_plus(instance: Instance, seeds: Sequence[int], candidates: Sequence[Sequence[float]], *,
                  until: float = 1.01, level: int = 100, workers: int = 1,
                  executor: Executor | None = None
                  ) -> tuple[np.ndarray, float, list[dict[str, Any]]]:
    """Pick FGD+'s weights among ``candidates`` by the cost of :func:`train_fgd_plus` (a short search).

    ``theta = 0`` (exactly FGD) is always among the candidates, so the pick is never worse than FGD on
    the training ``seeds``.

    Returns:
        ``(weights, cost, table)``: the best weights, their cost, and every candidate's cost.

    Raises:
        ValueError: a candidate of the wrong length, or ``until`` stops before ``level + 1``.
    """
    cands = [tuple(0.0 for _ in PLUS_FEATURES)] + [tuple(float(v) for v in c) for c in candidates]
    if any(len(c) != len(PLUS_FEATURES) for c in cands):
        raise ValueError(f"every candidate needs {len(PLUS_FEATURES)} weights")
    with WorkloadCosts("fgd-plus", instance, seeds, until=until, level=level, workers=workers,
                       executor=executor) as costs:
        per = costs.per_workload(cands)
    mean = per.mean(axis=1)
    best = int(np.argmin(mean))  # ties: the earliest candidate (FGD first)
    table = [{"weights": list(c), "cost": round(float(m), 4), "per_seed": [round(float(x), 4) for x in row]}
             for c, m, row in zip(cands, mean, per, strict=True)]
    return np.array(cands[best]), float(mean[best]), table


__all__ = ["GpuCostTask", "WorkloadCosts", "gpu_cost", "grid_fgd_plus", "train_fgd_pack", "train_fgd_plus"]
