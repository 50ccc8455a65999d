"""Evaluation as small serialisable tasks, and executors that run them serially, in processes or on Ray.

A :class:`RunTask` names everything one simulated run needs, by value or by reference: a policy spec
(resolved by :mod:`policies.runner`: a registry name with parameters, a policy file, a weight vector),
a reference to a shared :class:`Scenario` (an instance and its arrival orders), an order index, the
policy seed and :class:`RunOptions`. Running it gives a :class:`RunRecord`: plain numbers from
:func:`packing.feasibility.metrics.compute_metrics` (hosts used, cost, deployed containers, the Sigma
allocation
rate of the bottleneck resource) and from the run (peak hosts, rejected, delayed, waiting and departed
arrivals, wall time), with the trajectory and the placement only on request.

Executors run a function over items and return the results in the items' order:

* :class:`SerialExecutor` — in this process;
* :class:`ProcessExecutor` — a pool of local processes (``concurrent.futures``, ``spawn`` start
  method by default, so it is safe after threads were started, e.g. by a solver);
* :class:`RayExecutor` — Ray tasks on a local Ray (started on first use) or on a cluster (``address``
  or the ``RAY_ADDRESS`` environment variable).

Large objects (instances with their orders) are shipped once per worker, not once per task:
:meth:`Executor.share` returns a reference (a short string) that tasks carry, and :func:`shared`
returns the object inside the worker (installed by the process pool's initializer, or fetched once
from Ray's object store and cached per process). Items are grouped in chunks (``chunksize``) so that
small tasks do not pay a round trip each; ``progress`` is called with the number of items finished.
A run is deterministic given its task, so every executor gives the same numbers (tested).

This module is generic: it never imports :mod:`policies`. The policy-aware part (resolving a spec,
running one task) is :mod:`policies.runner`.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import math
import multiprocessing
import os
import sys
import time
import traceback
import uuid
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import numpy as np

from packing.errors import input_error
from packing.feasibility.metrics import compute_metrics
from packing.model.instance import Instance, Placement
from packing.sim.autoscale import Autoscale
from packing.sim.engine import Trajectory
from packing.sim.policy import Policy
from packing.sim.simulator import resample_snapshot, simulate

T = TypeVar("T")
R = TypeVar("R")
E = TypeVar("E", bound="Executor")

PolicySpec = Any
"""A policy by value: a registry name, ``{"name": ..., "params": {...}}``, a policy file path, or a
weight vector (see :func:`policies.runner.resolve_policy`)."""

ExecutorKind = Literal["serial", "process", "ray"]
EXECUTORS: tuple[str, ...] = ("serial", "process", "ray")
"""Executor names accepted by :func:`make_executor` (and the CLI's ``--executor``)."""

Progress = Callable[[int], None]
"""Called with the number of items just finished (e.g. a tqdm bar's ``update``)."""


# ------------------------------------------------------------------------------------------------
# tasks and records
@dataclass(frozen=True)
class Scenario:
    """An instance and the arrival orders its tasks refer to by index (shipped once per worker).

    Attributes:
        instance: the instance.
        orders: arrival orders, each a permutation of shape ``(n_arrivals,)``.
        name: the label of records (default: the instance's name).
    """

    instance: Instance
    orders: tuple[np.ndarray, ...] = ()
    name: str | None = None

    @property
    def label(self) -> str:
        """The name records carry."""
        return self.name if self.name is not None else self.instance.name


@dataclass(frozen=True)
class RunOptions:
    """How to run one task.

    Attributes:
        check: pass the final placement through :func:`packing.feasibility.checker.check` (a violation is a
        bug
            and raises ``RuntimeError``).
        trajectory: record the per-decision trajectory and return it in the record.
        placement: return the final host of every container (``RunRecord.host_of``).
        keep: resample the snapshot first (:func:`packing.sim.simulator.resample_snapshot` with this
            ``keep`` and the task's seed); ``None``: replay the instance as it is.
        autoscale: run on an autoscaled pool (:mod:`packing.sim.autoscale`); ``None``: the fixed pool.
    """

    check: bool = True
    trajectory: bool = False
    placement: bool = False
    keep: float | None = None
    autoscale: Autoscale | None = None


DEFAULT_OPTIONS = RunOptions()
"""The default :class:`RunOptions` (check the placement; no trajectory, no placement kept)."""


@dataclass(frozen=True)
class RunTask:
    """One simulated run, small enough to send to any worker.

    Attributes:
        policy: the policy spec (see :data:`PolicySpec`).
        scenario: a reference returned by :meth:`Executor.share` for a :class:`Scenario`.
        order: index into the scenario's orders; ``None``: the instance's own arrival order.
        seed: the policy seed (``policy.reset(instance, seed)``), e.g.
            :func:`packing.sim.simulator.run_seed` ``(base, i)``.
        options: the :class:`RunOptions`.
    """

    policy: PolicySpec
    scenario: str
    order: int | None = None
    seed: int = 0
    options: RunOptions = DEFAULT_OPTIONS


NUMBERS: tuple[str, ...] = ("hosts", "hosts_peak", "cost", "rejected", "delayed", "deployed",
                            "allocation", "waiting", "departed", "nodes", "nodes_peak", "node_hours",
                            "node_cost")
"""The numbers of a :class:`RunRecord` (every executor gives the same ones for the same task)."""


@dataclass(frozen=True)
class RunRecord:
    """What one run gives: plain numbers (equality ignores the wall time and the optional arrays).

    Attributes:
        instance: the scenario's label.
        policy: the policy's name.
        order: the order index of the task (``None``: the instance's own order).
        seed: the policy seed of the run.
        hosts: hosts in use at the end (:attr:`packing.feasibility.metrics.Metrics.hosts`).
        hosts_peak: most hosts in use at any time.
        cost: total cost of the hosts in use at the end (:attr:`packing.feasibility.metrics.Metrics.cost`).
        rejected: arrivals no host could take.
        delayed: arrivals that waited at least once.
        deployed: containers on a host at the end (:attr:`packing.feasibility.metrics.Metrics.deployed`).
        allocation: Sigma allocation rate of the bottleneck resource at the end
            (:attr:`packing.feasibility.metrics.Metrics.allocation`).
        seconds: wall time of the run (simulation, check and metrics).
        waiting: arrivals still waiting at the end, never placed (a policy's WAIT, or ``wait_when_full``,
            with no departure left to retry them).
        departed: arrivals whose container left before the end.
        allocation_by_resource: per resource (host resources, then GPU resources): allocated /
            capacity of the hosts in use at the end
            (:attr:`packing.feasibility.metrics.Metrics.allocation_by_resource`); ``allocation``
            is its largest entry.
        trajectory: the per-decision trajectory (with ``RunOptions(trajectory=True)``).
        host_of: final host per container, shape ``(n_containers,)``, -1 for none (with
            ``RunOptions(placement=True)``).
        cards_of: GPU cards per container (GPU instances, with ``placement=True``).
        nodes, nodes_peak, node_hours, node_cost: the autoscaled pool's measures
            (:class:`packing.sim.autoscale.PoolStats`; ``None`` on a fixed pool).
    """

    instance: str
    policy: str
    order: int | None
    seed: int
    hosts: int
    hosts_peak: int
    cost: float
    rejected: int
    delayed: int
    deployed: int
    allocation: float
    seconds: float = field(compare=False)
    waiting: int = 0
    departed: int = 0
    allocation_by_resource: dict[str, float] = field(default_factory=dict)
    trajectory: Trajectory | None = field(default=None, compare=False, repr=False)
    host_of: np.ndarray | None = field(default=None, compare=False, repr=False)
    cards_of: list[tuple[int, ...]] | None = field(default=None, compare=False, repr=False)
    nodes: int | None = None
    nodes_peak: int | None = None
    node_hours: float | None = None
    node_cost: float | None = None

    def numbers(self) -> tuple[Any, ...]:
        """The identifying fields and :data:`NUMBERS` (no wall time): equal on every executor."""
        return (self.instance, self.policy, self.order, self.seed,
                *(getattr(self, n) for n in NUMBERS))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready fields (no trajectory, no placement)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in ("trajectory", "host_of", "cards_of")}

    def placement(self, instance: Instance) -> Placement:
        """The final placement (needs ``RunOptions(placement=True)``)."""
        if self.host_of is None:
            raise ValueError("the run did not keep its placement (RunOptions(placement=True))")
        return Placement.from_arrays(instance, self.host_of, self.cards_of)


def run(instance: Instance, policy: Policy, order: Sequence[int] | np.ndarray | None = None, *,
        seed: int = 0, options: RunOptions = DEFAULT_OPTIONS, label: str | None = None,
        order_index: int | None = None) -> RunRecord:
    """Simulate ``policy`` once and return its :class:`RunRecord` (:mod:`packing.feasibility.metrics`).

    Args:
        instance: the instance.
        policy: any policy.
        order: an arrival order, shape ``(n_arrivals,)`` (``None``: the instance's own order).
        seed: the policy seed (and the resampling seed with ``options.keep``).
        options: the :class:`RunOptions`.
        label: the record's instance label (default: the instance's name).
        order_index: the record's order field.
    """
    t0 = time.perf_counter()
    inst = instance if options.keep is None else resample_snapshot(instance, options.keep, seed)
    res = simulate(inst, policy, order, seed=seed, check_result=options.check, record=options.trajectory,
                   autoscale=options.autoscale)
    placement = res.placement
    m = compute_metrics(inst, placement)
    seconds = time.perf_counter() - t0
    return RunRecord(
        instance=label if label is not None else instance.name, policy=res.policy, order=order_index,
        seed=int(seed), hosts=m.hosts, hosts_peak=int(res.hosts_peak), cost=m.cost,
        rejected=res.n_rejected, delayed=res.n_delayed, deployed=m.deployed,
        allocation=m.allocation, seconds=seconds, waiting=len(res.waiting), departed=len(res.departed),
        allocation_by_resource=dict(m.allocation_by_resource),
        trajectory=res.trajectory if options.trajectory else None,
        host_of=np.array(res.host_of) if options.placement else None,
        cards_of=list(res.cards_of) if options.placement and res.cards_of is not None else None,
        **(res.pool.to_dict() if res.pool is not None else {}))


# ------------------------------------------------------------------------------------------------
# objects shared with workers
_SHARED_MAX = 16
_SHARED: OrderedDict[str, Any] = OrderedDict()
"""This process's shared objects by reference. Objects a Ray worker fetched are dropped, oldest first,
beyond ``_SHARED_MAX`` (they can be fetched again); the others stay until their executor closes."""
_RAY_REFS: dict[str, Any] = {}
"""Ray object refs this worker may fetch on first use."""


def shared(ref: str) -> Any:
    """The object shared under ``ref`` (see :meth:`Executor.share`), in whatever process runs the task.

    Raises:
        KeyError: nothing was shared under ``ref`` with the executor running the task.
    """
    if ref in _SHARED:
        return _SHARED[ref]
    if ref in _RAY_REFS:
        import ray

        value = ray.get(_RAY_REFS[ref])
        _remember(ref, value)
        return value
    raise KeyError(f"no shared object {ref!r} in this process: share it with the executor that runs "
                   "the task (Executor.share) before mapping")


def _remember(ref: str, value: Any) -> None:
    """Cache an object fetched from Ray; drop the oldest fetched ones beyond ``_SHARED_MAX``."""
    _SHARED[ref] = value
    fetched = [k for k in _SHARED if k in _RAY_REFS]
    for k in fetched[:max(0, len(fetched) - _SHARED_MAX)]:
        del _SHARED[k]


def _install(objects: dict[str, Any]) -> None:
    """Process-pool initializer: receive every shared object once (kept while the worker lives)."""
    _SHARED.update(objects)


# ------------------------------------------------------------------------------------------------
# running chunks in workers; errors travel back as values
@dataclass(frozen=True)
class _Failure:
    error: BaseException | None
    text: str

    def raise_(self) -> None:
        if self.error is not None:
            raise self.error from RuntimeError(f"in a worker:\n{self.text}")
        raise RuntimeError(f"a task failed in a worker:\n{self.text}")


def _failure(e: BaseException) -> _Failure:
    text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    try:  # keep the exception itself if it survives pickling
        import pickle

        pickle.loads(pickle.dumps(e))
        err: BaseException | None = e
    except Exception:  # noqa: BLE001 - any pickling problem: send the text only
        err = None
    return _Failure(err, text)


def _run_chunk(fn: Callable[[Any], Any], chunk: list[Any]) -> list[Any] | _Failure:
    try:
        return [fn(x) for x in chunk]
    except Exception as e:  # noqa: BLE001 - sent back to the caller and raised there
        return _failure(e)


def _run_chunk_ray(fn: Callable[[Any], Any], chunk: list[Any], refs: dict[str, Any]
                   ) -> list[Any] | _Failure:
    for k, v in refs.items():
        if k not in _SHARED:
            _RAY_REFS[k] = v
    return _run_chunk(fn, chunk)


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _auto_chunksize(n: int, workers: int) -> int:
    """About four chunks per worker: balance against a round trip per chunk."""
    return max(1, math.ceil(n / (4 * max(1, workers))))


# ------------------------------------------------------------------------------------------------
class Executor(ABC):
    """Runs a function over items (results in the items' order) and ships shared objects once.

    Use as a context manager (or call :meth:`close`) so pools, shared objects and a Ray it started
    are released.
    """

    name: str = "executor"

    def __init__(self) -> None:
        self._shares: dict[str, Any] = {}

    @property
    def workers(self) -> int:
        """How many tasks run at once."""
        return 1

    def share(self, value: Any, name: str = "obj") -> str:
        """Make ``value`` available to tasks under the returned reference (see :func:`shared`).

        Share before the first :meth:`map`: a process pool ships its objects when it starts (sharing
        later restarts it).
        """
        ref = f"{name}@{uuid.uuid4().hex[:12]}"
        self._shares[ref] = value
        self._shared(ref, value)
        return ref

    def _shared(self, ref: str, value: Any) -> None:  # noqa: B027 - optional hook
        """Hook: a new object was shared."""

    @abstractmethod
    def map(self, fn: Callable[[T], R], items: Iterable[T], progress: Progress | None = None) -> list[R]:
        """``[fn(x) for x in items]``, possibly in other processes; ``progress(k)`` after ``k`` items.

        ``fn`` must be importable by name in the workers (a module-level function) for the process
        and Ray executors. An exception in a task is raised here (an :class:`InputError` keeps its
        problems).
        """

    def close(self) -> None:
        """Release workers and shared objects."""
        self._shares.clear()

    def __enter__(self: E) -> E:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(workers={self.workers})"


class SerialExecutor(Executor):
    """Runs every item in this process, one after the other."""

    name = "serial"

    def _shared(self, ref: str, value: Any) -> None:
        _SHARED[ref] = value  # never evicted while this executor is open

    def map(self, fn: Callable[[T], R], items: Iterable[T], progress: Progress | None = None) -> list[R]:
        """See :meth:`Executor.map`."""
        out = []
        for x in items:
            out.append(fn(x))
            if progress is not None:
                progress(1)
        return out

    def close(self) -> None:
        """Forget the shared objects."""
        for ref in self._shares:
            _SHARED.pop(ref, None)
        super().close()


class ProcessExecutor(Executor):
    """A pool of local worker processes (``concurrent.futures.ProcessPoolExecutor``).

    The pool starts on the first :meth:`map`; every shared object is sent to each worker once, when
    it starts.

    Args:
        workers: processes (default: the CPU count).
        chunksize: items per round trip (default: about four chunks per worker).
        start_method: ``"spawn"`` (default: safe after threads were started, and on every platform),
            ``"forkserver"`` or ``"fork"``.
    """

    name = "process"

    def __init__(self, workers: int | None = None, *, chunksize: int | None = None,
                 start_method: str = "spawn") -> None:
        super().__init__()
        if workers is not None and workers < 1:
            raise input_error("--workers", str(workers), "must be at least 1")
        self._workers = workers or os.cpu_count() or 1
        self.chunksize = chunksize
        self.start_method = start_method
        self._pool: ProcessPoolExecutor | None = None
        self._pool_refs: frozenset[str] = frozenset()

    @property
    def workers(self) -> int:
        """Worker processes."""
        return self._workers

    def _ensure_pool(self) -> ProcessPoolExecutor:
        if self._pool is not None and self._pool_refs != frozenset(self._shares):
            self._pool.shutdown()
            self._pool = None
        if self._pool is None:
            ctx = multiprocessing.get_context(self.start_method)
            self._pool = ProcessPoolExecutor(max_workers=self._workers, mp_context=ctx,
                                             initializer=_install, initargs=(dict(self._shares),))
            self._pool_refs = frozenset(self._shares)
        return self._pool

    def map(self, fn: Callable[[T], R], items: Iterable[T], progress: Progress | None = None) -> list[R]:
        """See :meth:`Executor.map`."""
        items = list(items)
        if not items:
            return []
        pool = self._ensure_pool()
        size = self.chunksize or _auto_chunksize(len(items), self._workers)
        chunks = _chunks(items, size)
        futures: dict[Future[Any], int] = {pool.submit(_run_chunk, fn, c): i for i, c in enumerate(chunks)}
        results: list[list[Any] | None] = [None] * len(chunks)
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    out = f.result()
                    if isinstance(out, _Failure):
                        out.raise_()
                    assert isinstance(out, list)
                    results[futures[f]] = out
                    if progress is not None:
                        progress(len(out))
        except BaseException:
            for f in pending:
                f.cancel()
            raise
        return [r for chunk in results for r in (chunk or [])]

    def close(self) -> None:
        """Shut the pool down."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
        super().close()


class RayExecutor(Executor):
    """Ray tasks: a local Ray (started on first use, shut down on :meth:`close`) or a cluster.

    If Ray is already initialised in this process it is used and left running. Otherwise, when
    ``address`` (or the ``RAY_ADDRESS`` environment variable) is set, the cluster is checked when the
    executor is made (:func:`packing.sim.ray_cluster.check`: reachable, and a new process connects
    with this machine's token settings) and connected to on first use
    (:func:`packing.sim.ray_cluster.connect`); a cluster that cannot be reached or does not let this
    machine connect is an :class:`InputError` within about ``connect_timeout`` seconds. Without an
    address a local Ray starts with ``workers`` CPUs (default: all) and no dashboard. On a cluster,
    the workers must be able to import vbp (install it there, or pass a ``runtime_env`` in
    ``init_options``); see ``docs/scale-out.md``.

    Args:
        address: a Ray cluster address (``"host:6379"``, ``"ray://host:10001"`` or ``"auto"``).
        workers: CPUs of a local Ray; the number of chunks in flight on a cluster (default: the
            cluster's CPUs).
        chunksize: items per Ray task (default: about four tasks per worker).
        init_options: extra keyword arguments of ``ray.init``.
        connect_timeout: seconds for each connection check (the TCP one, and the connection from a
            new process).

    Raises:
        InputError: Ray is not installed, or the cluster at ``address`` cannot be reached or does not
            let this machine connect.
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None, *,
                 chunksize: int | None = None, init_options: dict[str, Any] | None = None,
                 connect_timeout: float = 10.0) -> None:
        super().__init__()
        if importlib.util.find_spec("ray") is None:
            raise input_error("--executor", "ray", "Ray is not installed: pip install 'vbp-toolkit[ray]' "
                              "(or use --executor process)")
        if workers is not None and workers < 1:
            raise input_error("--workers", str(workers), "must be at least 1")
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self._workers = workers
        self.chunksize = chunksize
        self.init_options = dict(init_options or {})
        self.connect_timeout = connect_timeout
        self._ray: Any = None
        self._env: Any = None
        self._started = False
        self._remote: Any = None
        self._refs: dict[str, Any] = {}
        if self.address and not _ray_initialized():
            from packing.sim.ray_cluster import check

            self._env = check(self.address, connect_timeout)  # a bad cluster fails before any work

    @property
    def started_ray(self) -> bool:
        """Whether this executor started the Ray it uses (and will shut it down)."""
        return self._started

    @property
    def workers(self) -> int:
        """CPUs used (the cluster's CPUs unless ``workers`` was given)."""
        if self._workers is not None:
            return self._workers
        if self._ray is None:
            return os.cpu_count() or 1
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def start(self) -> None:
        """Initialise Ray (if needed) and the remote function; called by :meth:`share` and :meth:`map`."""
        if self._ray is not None:
            return
        import ray

        if not ray.is_initialized():
            opts: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
            if self.address:
                from packing.sim.ray_cluster import connect

                opts.update(self.init_options)
                self._env = connect(self.address, self.connect_timeout, self._env, **opts)
            else:
                opts.update(num_cpus=self._workers, include_dashboard=False)
                opts.update(self.init_options)
                try:
                    ray.init(**opts)
                except ValueError as e:  # Ray found a cluster of `ray start` and joined it instead
                    if "existing cluster" not in str(e):
                        raise
                    raise input_error("--workers", str(self._workers), "Ray connects to the cluster "
                                      "`ray start` runs on this machine, whose CPUs are fixed: leave "
                                      "out --workers (or stop that cluster for a local Ray)") from None
            self._started = True
        self._ray = ray
        self._remote = ray.remote(_run_chunk_ray)

    def _shared(self, ref: str, value: Any) -> None:
        self.start()
        self._refs[ref] = self._ray.put(value)

    def map(self, fn: Callable[[T], R], items: Iterable[T], progress: Progress | None = None) -> list[R]:
        """See :meth:`Executor.map`."""
        items = list(items)
        if not items:
            return []
        self.start()
        ray = self._ray
        size = self.chunksize or _auto_chunksize(len(items), self.workers)
        chunks = _chunks(items, size)
        refs = dict(self._refs)
        futures = {self._remote.remote(fn, c, refs): i for i, c in enumerate(chunks)}
        results: list[list[Any] | None] = [None] * len(chunks)
        pending = list(futures)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for f in done:
                    out = ray.get(f)
                    if isinstance(out, _Failure):
                        out.raise_()
                    results[futures[f]] = out
                    if progress is not None:
                        progress(len(out))
        except BaseException:
            for f in pending:
                ray.cancel(f)
            raise
        return [r for chunk in results for r in (chunk or [])]

    def close(self) -> None:
        """Drop the shared objects; shut Ray down only if this executor started it."""
        self._refs.clear()
        if self._ray is not None and self._started:
            self._ray.shutdown()
        if self._env is not None:
            self._env.restore()
            self._env = None
        self._ray = None
        self._started = False
        self._remote = None
        super().close()


def _ray_initialized() -> bool:
    """Whether this process already uses a Ray (then the executor neither checks nor connects)."""
    ray = sys.modules.get("ray")
    return ray is not None and bool(ray.is_initialized())


def make_executor(kind: str = "serial", workers: int | None = None, address: str | None = None
                  ) -> Executor:
    """An executor by name: ``"serial"``, ``"process"`` or ``"ray"``.

    Args:
        kind: one of :data:`EXECUTORS`.
        workers: processes (process) or CPUs (ray); ignored by serial.
        address: Ray cluster address (ray only; default ``RAY_ADDRESS`` or a local Ray).

    Raises:
        InputError: unknown kind, fewer than one worker, an address without Ray, Ray missing, or a
            cluster address that cannot be reached or refuses this machine.
    """
    if kind not in EXECUTORS:
        raise input_error("--executor", kind, f"unknown executor; use {', '.join(EXECUTORS)}")
    if workers is not None and workers < 1:
        raise input_error("--workers", str(workers), "must be at least 1")
    if address and kind != "ray":
        raise input_error("--ray-address", address, "only with --executor ray")
    if kind == "process":
        return ProcessExecutor(workers)
    if kind == "ray":
        return RayExecutor(address, workers)
    return SerialExecutor()


__all__ = ["DEFAULT_OPTIONS", "EXECUTORS", "NUMBERS", "Executor", "ExecutorKind", "PolicySpec",
           "ProcessExecutor", "Progress", "RayExecutor", "RunOptions", "RunRecord", "RunTask", "Scenario",
           "SerialExecutor", "make_executor", "run", "shared"]
