"""Training swarm-tuned scoring policies in the simulator (SwarmRL, as in Alibaba Sigma).

Every candidate weight vector of an iteration is scored on the *same* S sampled request orders
(common random numbers). The cost of one run is

    cost = objective + penalty * rejected + tie_break * (1 - allocation)

with ``objective`` the hosts used (or their total cost when host types are priced), ``rejected`` the
containers no host could take, and ``allocation`` the Sigma allocation rate of the bottleneck
resource (allocated / capacity of the used hosts), which only breaks ties between equal objectives
(``tie_break < 1``). A candidate's cost is the mean over the S orders.

Evaluation backends, all giving the same numbers for the same seed (a run is deterministic given its
weights and order):

* ``"local"``: in this process, all candidates of an iteration in one batch;
* ``"process"``: a pool of local worker processes (``workers``), candidates split in chunks;
* ``"ray"``: Ray tasks (``ray.init`` costs ~5 s; install ``vbp[ray]``).

The final report uses a separate set of held-out orders, never the training orders.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from packing.model import Instance
from packing.simulator import run_seed, sample_orders, simulate
from policies.swarm.features import FEATURES, N_FEATURES
from policies.swarm.optimizer import (
    PSO,
    DESettings,
    DifferentialEvolution,
    IterationRecord,
    Optimizer,
    PSOSettings,
)
from policies.swarm.policy import SwarmPolicy, named_weights, project

Backend = Literal["local", "process", "ray"]


@dataclass(frozen=True)
class TrainSettings:
    """What to train on and how to score.

    Attributes:
        samples: training orders per iteration (the same for every candidate).
        held_out: held-out orders for the final report.
        seed: seed of the orders (training and held-out orders come from different streams).
        penalty: cost of one rejected container (in objective units).
        tie_break: weight of ``1 - allocation`` in the cost (below 1: only breaks ties).
        backend: ``"local"``, ``"process"`` or ``"ray"``.
        workers: processes (or Ray tasks) for the parallel backends.
        optimizer: ``"pso"`` or ``"de"``.
        init: start the search from this named policy's weights (``"bf"``, ``"ff"`` or ``None``).
    """

    samples: int = 8
    held_out: int = 20
    seed: int = 0
    penalty: float = 10.0
    tie_break: float = 0.5
    backend: Backend = "local"
    workers: int = 2
    optimizer: Literal["pso", "de"] = "pso"
    init: str | None = "bf"


INIT_WEIGHTS: dict[str, np.ndarray] = {
    "bf": named_weights(best_fit=1.0),
    "ff": named_weights(first_fit=1.0),
}


@dataclass(frozen=True)
class HeldOutReport:
    """Hosts used on the held-out orders.

    Attributes:
        policy: name.
        hosts: hosts used per held-out order, shape ``(n_orders,)``.
        allocation: bottleneck Sigma allocation per order, shape ``(n_orders,)``.
        rejected: rejected containers per order, shape ``(n_orders,)``.
    """

    policy: str
    hosts: np.ndarray
    allocation: np.ndarray
    rejected: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """Summary numbers (mean, min, max, range of hosts; mean allocation)."""
        return {"policy": self.policy, "hosts_mean": float(self.hosts.mean()),
                "hosts_min": int(self.hosts.min()), "hosts_max": int(self.hosts.max()),
                "hosts_range": int(self.hosts.max() - self.hosts.min()),
                "allocation_mean": float(self.allocation.mean()),
                "rejected_mean": float(self.rejected.mean())}


@dataclass(frozen=True)
class TrainResult:
    """The outcome of :func:`train_swarm`.

    Attributes:
        policy: the tuned policy (weights projected, provenance filled in).
        history: one record per optimiser iteration.
        initial_cost: the best cost in the first iteration (the initial swarm).
        best_cost: the best training cost.
        seconds: wall time of training (without the held-out evaluation).
        held_out: the tuned policy and the baselines on the held-out orders.
    """

    policy: SwarmPolicy
    history: tuple[IterationRecord, ...]
    initial_cost: float
    best_cost: float
    seconds: float
    held_out: tuple[HeldOutReport, ...] = field(default_factory=tuple)


# ------------------------------------------------------------------------------------------------
# evaluation
def run_cost(instance: Instance, policy: Any, order: np.ndarray, seed: int, penalty: float,
             tie_break: float) -> tuple[float, int, float, int]:
    """Cost of one run, and its hosts, allocation and rejections (see the module docstring)."""
    r = simulate(instance, policy, order, seed=seed, check_result=False)
    priced = bool(np.any(instance.type_cost != 1.0))
    obj = r.cost if priced else float(r.hosts_used)
    alloc = float(r.trajectory.allocation[-1].max()) if len(r.trajectory.allocation) else 0.0
    return obj + penalty * r.n_rejected + tie_break * (1.0 - alloc), r.hosts_used, alloc, r.n_rejected


def _costs(instance: Instance, thetas: np.ndarray, orders: Sequence[np.ndarray], seed: int,
           penalty: float, tie_break: float) -> np.ndarray:
    """Mean cost over the orders for each weight vector; ``(n, F) -> (n,)``."""
    out = np.empty(len(thetas))
    for p, theta in enumerate(thetas):
        pol = SwarmPolicy(theta)
        out[p] = np.mean([run_cost(instance, pol, o, run_seed(seed, i), penalty, tie_break)[0]
                          for i, o in enumerate(orders)])
    return out


_WORKER: dict[str, Any] = {}


def _init_worker(instance: Instance, orders: list[np.ndarray], seed: int, penalty: float,
                 tie_break: float) -> None:
    _WORKER.update(instance=instance, orders=orders, seed=seed, penalty=penalty, tie_break=tie_break)


def _worker_costs(thetas: np.ndarray) -> np.ndarray:
    w = _WORKER
    return _costs(w["instance"], thetas, w["orders"], w["seed"], w["penalty"], w["tie_break"])


class Evaluator:
    """Scores weight vectors on fixed orders with one of the backends.

    Use as a context manager so worker pools are shut down.

    Args:
        instance: the instance.
        orders: the training orders.
        settings: backend, workers, penalty and tie-break.
    """

    def __init__(self, instance: Instance, orders: Sequence[np.ndarray],
                 settings: TrainSettings) -> None:
        self.instance = instance
        self.orders = [np.asarray(o) for o in orders]
        self.settings = settings
        self._pool: ProcessPoolExecutor | None = None
        self._ray: Any = None
        self._started_ray = False

    def __enter__(self) -> Evaluator:
        s = self.settings
        args = (self.instance, self.orders, s.seed, s.penalty, s.tie_break)
        if s.backend == "process":
            self._pool = ProcessPoolExecutor(max_workers=s.workers, initializer=_init_worker,
                                             initargs=args)
        elif s.backend == "ray":
            try:
                import ray
            except ImportError as e:  # pragma: no cover - depends on the extra
                raise RuntimeError("backend 'ray' needs Ray: pip install 'vbp[ray]'") from e
            self._started_ray = not ray.is_initialized()
            if self._started_ray:
                ray.init(num_cpus=s.workers, include_dashboard=False, log_to_driver=False)

            @ray.remote
            def task(ref: Any, thetas: np.ndarray) -> np.ndarray:
                inst, orders, seed, penalty, tie_break = ref
                return _costs(inst, thetas, orders, seed, penalty, tie_break)

            self._ray = (ray, task, ray.put(args))
        elif s.backend != "local":
            raise ValueError(f"unknown backend {s.backend!r}; use local, process or ray")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        if self._ray is not None:
            if self._started_ray:  # leave a Ray the caller started running
                self._ray[0].shutdown()
            self._ray = None

    def __call__(self, thetas: np.ndarray) -> np.ndarray:
        """Mean cost per weight vector; ``thetas`` shape ``(n, F)`` -> ``(n,)``."""
        thetas = project(np.atleast_2d(thetas))
        s = self.settings
        if s.backend == "local" or (self._pool is None and self._ray is None):
            return _costs(self.instance, thetas, self.orders, s.seed, s.penalty, s.tie_break)
        chunks = np.array_split(thetas, min(len(thetas), max(1, s.workers)))
        if self._pool is not None:
            return np.concatenate(list(self._pool.map(_worker_costs, chunks)))
        ray, task, ref = self._ray
        return np.concatenate(ray.get([task.remote(ref, c) for c in chunks]))


def training_orders(instance: Instance, settings: TrainSettings) -> tuple[list[np.ndarray],
                                                                       list[np.ndarray]]:
    """Training and held-out orders, from independent streams of ``settings.seed``."""
    ss = np.random.SeedSequence(settings.seed).spawn(2)
    train_seed = int(ss[0].generate_state(1)[0])
    held_seed = int(ss[1].generate_state(1)[0])
    train = sample_orders(instance, settings.samples, seed=train_seed, include_own=False)
    held = sample_orders(instance, settings.held_out, seed=held_seed, include_own=False)
    return [np.asarray(o) for o in train], [np.asarray(o) for o in held]


def held_out_report(instance: Instance, policy: Any, orders: Sequence[np.ndarray], seed: int,
                    name: str | None = None) -> HeldOutReport:
    """Run ``policy`` on every held-out order (checking every placement)."""
    hosts, alloc, rej = [], [], []
    for i, o in enumerate(orders):
        r = simulate(instance, policy, o, seed=run_seed(seed, i), check_result=True)
        hosts.append(r.hosts_used)
        alloc.append(float(r.trajectory.allocation[-1].max()) if len(r.trajectory.allocation)
                     else 0.0)
        rej.append(r.n_rejected)
    return HeldOutReport(name or str(getattr(policy, "name", "?")), np.array(hosts),
                         np.array(alloc), np.array(rej))


# ------------------------------------------------------------------------------------------------
def train_swarm(
    instance: Instance,
    pso: PSOSettings | DESettings | None = None,
    settings: TrainSettings | None = None,
    *,
    checkpoint: str | Path | None = None,
    resume: bool = False,
    callback: Callable[[IterationRecord], bool | None] | None = None,
    baselines: Sequence[str] = ("bf", "ff"),
) -> TrainResult:
    """Tune the weights of a :class:`SwarmPolicy` on ``instance``.

    Args:
        instance: the instance to train on (its request stream gives the arrivals).
        pso: optimiser settings (:class:`PSOSettings`, or :class:`DESettings` with
            ``settings.optimizer == "de"``).
        settings: orders, cost and backend.
        checkpoint: PSO checkpoint file (written after every iteration).
        resume: continue from ``checkpoint`` if it exists.
        callback: called after every iteration; returning ``False`` stops early.
        baselines: registry names of policies also evaluated on the held-out orders.

    Returns:
        The :class:`TrainResult`; its policy's placements on held-out orders passed the checker.
    """
    from policies.registry import get_policy

    s = settings or TrainSettings()
    train, held = training_orders(instance, s)
    opt: Optimizer
    if s.optimizer == "de":
        ds = pso if isinstance(pso, DESettings) else DESettings(seed=s.seed)
        opt = DifferentialEvolution(ds)
        opt_settings: dict[str, Any] = ds.to_dict()
    else:
        ps = pso if isinstance(pso, PSOSettings) else PSOSettings(seed=s.seed)
        opt = PSO(ps, checkpoint_path=checkpoint, resume=resume)
        opt_settings = ps.to_dict()
    init = INIT_WEIGHTS[s.init] if s.init else None
    bounds = (np.full(N_FEATURES, -1.0), np.full(N_FEATURES, 1.0))
    t0 = time.perf_counter()
    with Evaluator(instance, train, s) as ev:
        res = opt.minimize(ev, N_FEATURES, bounds, init=init, callback=callback)
    seconds = time.perf_counter() - t0
    weights = project(res.best_position)
    provenance = {
        "instance": instance.name, "optimizer": s.optimizer, "optimizer_settings": opt_settings,
        "train_settings": asdict(s), "training_cost": res.best_cost,
        "initial_cost": res.history[0].best_cost if res.history else None,
        "iterations": len(res.history), "evaluations": res.evaluations,
        "seconds": round(seconds, 3), "features": list(FEATURES),
    }
    policy = SwarmPolicy(weights, name="swarm", provenance=provenance)
    reports = [held_out_report(instance, policy, held, s.seed)]
    for b in baselines:
        reports.append(held_out_report(instance, get_policy(b), held, s.seed, name=b))
    return TrainResult(policy, res.history,
                       res.history[0].best_cost if res.history else float("nan"),
                       res.best_cost, seconds, tuple(reports))
