"""Training swarm-tuned scoring policies in the simulator (SwarmRL, as in Alibaba Sigma).

Every candidate weight vector of an iteration is scored on the *same* S sampled request orders
(common random numbers). The cost of one run is

    cost = objective + penalty * rejected + tie_break * (1 - allocation)

with ``objective`` the hosts used (or their total cost when host types are priced), ``rejected`` the
containers no host could take, and ``allocation`` the Sigma allocation rate of the bottleneck
resource (allocated / capacity of the used hosts), which only breaks ties between equal objectives
(``tie_break < 1``). A candidate's cost is the mean over the S orders.

Every run is a :class:`~packing.sim.evaluation.RunTask` (weight vector, order index, seed) and its numbers
come from the :class:`~packing.sim.evaluation.RunRecord`, i.e. from :mod:`packing.feasibility.metrics` — the
same
numbers ``vbp compare`` shows. The tasks run on an executor of :mod:`packing.sim.evaluation`, chosen by
``TrainSettings.backend``; all give the same numbers for the same seed (a run is deterministic given
its weights, order and seed):

* ``"local"``: :class:`~packing.sim.evaluation.SerialExecutor`, in this process;
* ``"process"``: :class:`~packing.sim.evaluation.ProcessExecutor`, ``workers`` local processes;
* ``"ray"``: :class:`~packing.sim.evaluation.RayExecutor`, a local Ray with ``workers`` CPUs (``ray.init``
  costs a few seconds; install ``vbp-toolkit[ray]``), or the cluster at ``address`` / ``RAY_ADDRESS``.

The final report uses a separate set of held-out orders, never the training orders.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from packing.model.instance import Instance
from packing.sim.evaluation import (
    Executor,
    ProcessExecutor,
    RayExecutor,
    RunOptions,
    RunRecord,
    RunTask,
    Scenario,
    SerialExecutor,
    run,
)
from packing.sim.simulator import run_seed, sample_orders
from policies.agents.heldout import HeldOut, Sense
from policies.runner import order_tasks, run_task
from policies.swarm.features import FEATURES, N_FEATURES
from policies.swarm.optimizer import (
    PSO,
    DESettings,
    DifferentialEvolution,
    IterationRecord,
    Optimizer,
    PSOCheckpoint,
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
        workers: processes (process) or CPUs of a local Ray (ray).
        address: Ray cluster address for ``backend="ray"`` (default: ``RAY_ADDRESS``, else a local
            Ray).
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
    address: str | None = None
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

    def comparison(self) -> HeldOut | None:
        """The tuned policy against Best-Fit on the held-out orders (``None`` without both reports)."""
        return held_out_comparison(self.held_out)


SWARM_METRICS: tuple[tuple[str, Sense], ...] = (("rejected", "min"), ("hosts", "min"))
"""The held-out comparison of a tuned policy: rejected containers first, then hosts in use."""


def held_out_comparison(reports: Sequence[HeldOutReport], policy: str = "swarm", baseline: str = "bf"
                        ) -> HeldOut | None:
    """``policy`` against ``baseline`` from the held-out reports (``None`` unless both are there)."""
    by = {r.policy: r for r in reports}
    if policy not in by or baseline not in by:
        return None
    a, b = by[policy], by[baseline]
    runs = [{"rejected": r.rejected, "hosts": r.hosts} for r in (a, b)]
    return HeldOut.of_runs("orders", policy, baseline, SWARM_METRICS, runs[0], runs[1])


# ------------------------------------------------------------------------------------------------
# evaluation
def record_cost(record: RunRecord, priced: bool, penalty: float, tie_break: float) -> float:
    """Cost of one run from its record (see the module docstring).

    The objective is the record's hosts used (or host cost when ``priced``); the allocation is the
    record's Sigma allocation rate of the bottleneck resource, computed by :mod:`packing.feasibility.metrics`.
    """
    obj = record.cost if priced else float(record.hosts)
    return obj + penalty * record.rejected + tie_break * (1.0 - record.allocation)


def is_priced(instance: Instance) -> bool:
    """Whether host types have different costs (then the objective is the cost, not the hosts)."""
    return bool(np.any(instance.type_cost != 1.0))


def run_cost(instance: Instance, policy: Any, order: np.ndarray, seed: int, penalty: float,
             tie_break: float) -> tuple[float, int, float, int]:
    """Cost of one run, and its hosts, allocation and rejections (see the module docstring)."""
    r = run(instance, policy, order, seed=seed, options=RunOptions(check=False))
    return (record_cost(r, is_priced(instance), penalty, tie_break), r.hosts, r.allocation,
            r.rejected)


def weight_spec(theta: np.ndarray) -> tuple[float, ...]:
    """The policy spec of a weight vector (plain floats: exact through pickling)."""
    return tuple(float(x) for x in np.asarray(theta, dtype=np.float64).ravel())


def executor_for(settings: TrainSettings) -> Executor:
    """The executor of ``settings.backend``: local -> serial, process -> processes, ray -> Ray."""
    if settings.backend == "local":
        return SerialExecutor()
    if settings.backend == "process":
        return ProcessExecutor(settings.workers)
    if settings.backend == "ray":
        return RayExecutor(settings.address, settings.workers)
    raise ValueError(f"unknown backend {settings.backend!r}; use local, process or ray")


class Evaluator:
    """Scores weight vectors on fixed orders: a :class:`~packing.sim.evaluation.RunTask` per (vector, order).

    The tasks run on an executor (:mod:`packing.sim.evaluation`): the one given, or one made from
    ``settings.backend`` (closed on exit). The instance and the orders are shipped once per worker.
    Use as a context manager.

    Args:
        instance: the instance.
        orders: the training orders.
        settings: backend, workers, seed, penalty and tie-break.
        executor: run on this executor (left open on exit) instead of one made from the settings.
    """

    def __init__(self, instance: Instance, orders: Sequence[np.ndarray],
                 settings: TrainSettings, executor: Executor | None = None) -> None:
        self.instance = instance
        self.orders = [np.asarray(o) for o in orders]
        self.settings = settings
        self.priced = is_priced(instance)
        self._given = executor
        self.executor: Executor | None = executor
        self.ref: str | None = None

    def __enter__(self) -> Evaluator:
        if self.executor is None:
            self.executor = executor_for(self.settings)
        self.ref = self.executor.share(Scenario(self.instance, tuple(self.orders), "train"), "train")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._given is None and self.executor is not None:
            self.executor.close()
            self.executor = None

    def tasks(self, thetas: np.ndarray) -> list[RunTask]:
        """The tasks of one batch: every vector on every training order (vector-major)."""
        assert self.ref is not None, "use the Evaluator as a context manager"
        opts = RunOptions(check=False)
        seed = self.settings.seed
        return [RunTask(weight_spec(th), self.ref, i, run_seed(seed, i), opts)
                for th in thetas for i in range(len(self.orders))]

    def __call__(self, thetas: np.ndarray) -> np.ndarray:
        """Mean cost per weight vector; ``thetas`` shape ``(n, F)`` -> ``(n,)``."""
        thetas = project(np.atleast_2d(thetas))
        if self.executor is None:
            with self:
                return self(thetas)
        s = self.settings
        recs = self.executor.map(run_task, self.tasks(thetas))
        cost = np.array([record_cost(r, self.priced, s.penalty, s.tie_break) for r in recs])
        return cost.reshape(len(thetas), len(self.orders)).mean(axis=1)


def training_orders(instance: Instance, settings: TrainSettings) -> tuple[list[np.ndarray],
                                                                       list[np.ndarray]]:
    """Training and held-out orders, from independent streams of ``settings.seed``."""
    ss = np.random.SeedSequence(settings.seed).spawn(2)
    train_seed = int(ss[0].generate_state(1)[0])
    held_seed = int(ss[1].generate_state(1)[0])
    train = sample_orders(instance, settings.samples, seed=train_seed, include_own=False)
    held = sample_orders(instance, settings.held_out, seed=held_seed, include_own=False)
    return [np.asarray(o) for o in train], [np.asarray(o) for o in held]


def _report(name: str, recs: Sequence[RunRecord]) -> HeldOutReport:
    return HeldOutReport(name, np.array([r.hosts for r in recs]),
                         np.array([r.allocation for r in recs]), np.array([r.rejected for r in recs]))


def held_out_report(instance: Instance, policy: Any, orders: Sequence[np.ndarray], seed: int,
                    name: str | None = None) -> HeldOutReport:
    """Run ``policy`` on every held-out order in this process (checking every placement)."""
    recs = [run(instance, policy, o, seed=run_seed(seed, i)) for i, o in enumerate(orders)]
    return _report(name or str(getattr(policy, "name", "?")), recs)


def held_out_reports(executor: Executor, instance: Instance, policies: Sequence[tuple[str, Any]],
                     orders: Sequence[np.ndarray], seed: int) -> list[HeldOutReport]:
    """:func:`held_out_report` for several ``(name, policy spec)`` pairs, as tasks on ``executor``."""
    ref = executor.share(Scenario(instance, tuple(np.asarray(o) for o in orders), "held-out"),
                         "held-out")
    return _held_out(executor, ref, policies, len(orders), seed)


def _held_out(executor: Executor, ref: str, policies: Sequence[tuple[str, Any]], n: int,
              seed: int) -> list[HeldOutReport]:
    recs = executor.map(run_task, order_tasks(ref, [spec for _, spec in policies], n, seed))
    return [_report(name, recs[k * n:(k + 1) * n]) for k, (name, _) in enumerate(policies)]


def interrupted_message(checkpoint: str | None, iterations: int, resume: str) -> str:
    """What an interrupted training kept, in one line.

    Args:
        checkpoint: the checkpoint file (``None``: none was asked for).
        iterations: iterations completed (resumed ones included).
        resume: the command line that resumes the run.
    """
    if checkpoint is None:
        return (f"interrupted after {iterations} iteration(s); nothing was saved (train with "
                "--checkpoint FILE to be able to resume)")
    try:
        kept: int | None = PSOCheckpoint.load(checkpoint).iteration
    except Exception:  # noqa: BLE001 - no (valid) checkpoint yet: say so, do not fail again
        kept = None
    if kept is None:
        return (f"interrupted before the first iteration finished; no checkpoint was written to "
                f"{checkpoint}")
    return f"interrupted; {checkpoint} holds {kept} complete iteration(s); resume with: {resume}"


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
    executor: Executor | None = None,
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
        executor: run every evaluation on this executor (left open) instead of one made from
            ``settings.backend``.

    Returns:
        The :class:`TrainResult`; its policy's placements on held-out orders passed the checker.

    Raises:
        KeyboardInterrupt: Ctrl-C; the executor is closed, and ``checkpoint`` (if given) holds the
            last complete iteration, from which ``resume=True`` continues exactly.
    """
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
    with nullcontext(executor) if executor is not None else executor_for(s) as ex:
        held_ref = ex.share(Scenario(instance, tuple(held), "held-out"), "held-out")  # before any map
        t0 = time.perf_counter()
        with Evaluator(instance, train, s, ex) as ev:
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
        specs: list[tuple[str, Any]] = [("swarm", {"weights": weight_spec(weights), "name": "swarm"})]
        specs += [(b, b) for b in baselines]
        reports = _held_out(ex, held_ref, specs, len(held), s.seed)
    return TrainResult(policy, res.history,
                       res.history[0].best_cost if res.history else float("nan"),
                       res.best_cost, seconds, tuple(reports))
