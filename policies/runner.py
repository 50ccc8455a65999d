"""The policy-aware half of the evaluation layer: resolve a policy spec, run one task.

:mod:`packing.sim.evaluation` holds the generic part (tasks, records, executors); it never imports
policies. Here a :data:`~packing.sim.evaluation.PolicySpec` becomes a policy:

* a registry name, ``"bf"`` (:func:`policies.registry.get_policy`), or a policy file path,
  ``"tuned.json"`` (through the registry's loaders);
* a name with parameters, ``{"name": "k8s-rtcr", "params": {"shape": [[0, 0], [100, 10]]}}``
  (:func:`policy_spec` builds it);
* a swarm weight vector: a sequence of floats or an array of shape ``(F,)``, or
  ``{"weights": [...], "name": "tuned"}`` (:class:`policies.swarm.policy.SwarmPolicy`);
* a policy object (only for the serial executor: objects are not shipped to workers by value).

:func:`run_task` runs one :class:`~packing.sim.evaluation.RunTask` in whatever process the executor
chose; resolved policies are cached per process (a policy is reset before every run, so reusing it
gives the same numbers). :func:`order_tasks` builds the usual grid (policies x orders with common
random numbers) and :func:`evaluate_policies` runs it on an executor.
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from packing.model.instance import Instance
from packing.sim.evaluation import (
    DEFAULT_OPTIONS,
    Executor,
    PolicySpec,
    Progress,
    RunOptions,
    RunRecord,
    RunTask,
    Scenario,
    SerialExecutor,
    run,
    shared,
)
from packing.sim.simulator import run_seed
from policies.base import Policy
from policies.registry import get_policy

_CACHE_MAX = 64
_CACHE: OrderedDict[Any, Policy] = OrderedDict()


def policy_spec(name: str, **params: Any) -> dict[str, Any]:
    """The spec of a registry policy with parameters: ``{"name": name, "params": params}``."""
    return {"name": name, "params": dict(params)}


def _key(spec: PolicySpec) -> Any:
    """A hashable key of a spec (``None`` for specs that are not cached: policy objects)."""
    if isinstance(spec, str):
        return ("str", spec)
    if isinstance(spec, Mapping):
        return ("map", json.dumps(spec, sort_keys=True, default=_json_default))
    if isinstance(spec, np.ndarray | Sequence):
        return ("vec", tuple(float(x) for x in np.asarray(spec, dtype=np.float64).ravel()))
    return None


def _json_default(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON-serialisable: {type(x).__name__}")


def _build(spec: PolicySpec) -> Policy:
    from packing.errors import input_error

    if isinstance(spec, str):
        return get_policy(spec)
    if isinstance(spec, Mapping):
        if "weights" in spec:
            from policies.swarm.policy import SwarmPolicy

            try:
                return SwarmPolicy(np.asarray(spec["weights"], dtype=np.float64),
                                   name=str(spec.get("name", "swarm")))
            except (TypeError, ValueError) as e:
                raise input_error("policy", "weights", f"not a weight vector: {e}") from None
        if "name" not in spec:
            raise input_error("policy", str(dict(spec)), "a policy spec needs 'name' or 'weights'")
        return get_policy(str(spec["name"]), **dict(spec.get("params") or {}))
    if isinstance(spec, np.ndarray | Sequence):
        from policies.swarm.policy import SwarmPolicy

        try:
            return SwarmPolicy(np.asarray(spec, dtype=np.float64))
        except (TypeError, ValueError) as e:
            raise input_error("policy", repr(spec), f"not a weight vector: {e}") from None
    if callable(getattr(spec, "act", None)) and callable(getattr(spec, "reset", None)):
        return spec
    raise input_error("policy", repr(spec), "not a policy spec (a name, a file, a name with params, "
                      "or a weight vector)")


def resolve_policy(spec: PolicySpec, *, cache: bool = True) -> Policy:
    """The policy a spec names (see the module docstring), cached per process.

    Raises:
        InputError: unknown name, missing or bad policy file, bad parameters, a malformed spec.
    """
    key = _key(spec) if cache else None
    if key is not None and key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    pol = _build(spec)
    if key is not None:
        _CACHE[key] = pol
        while len(_CACHE) > _CACHE_MAX:
            _CACHE.popitem(last=False)
    return pol


def check_policies(specs: Sequence[PolicySpec], instance: Instance, seed: int = 0) -> None:
    """Resolve every spec and reset it on ``instance``, before any solve or run starts.

    A learned agent checks the instance's shape in ``reset`` (resources, clusters), so an agent
    file of another shape fails here rather than after an optimum is solved.

    Raises:
        InputError: a bad spec, or an agent trained for another shape (naming the agent's file
            and the mismatch).
    """
    for spec in specs:
        resolve_policy(spec).reset(instance, seed)


def policy_name(spec: PolicySpec) -> str:
    """The name records of this spec carry (resolves the spec; raises InputError if it is bad)."""
    return str(getattr(resolve_policy(spec), "name", type(spec).__name__))


def run_task(task: RunTask) -> RunRecord:
    """Run one task in this process: resolve the policy, fetch the shared scenario, simulate, measure."""
    sc: Scenario = shared(task.scenario)
    order = None if task.order is None else sc.orders[task.order]
    return run(sc.instance, resolve_policy(task.policy), order, seed=task.seed, options=task.options,
               label=sc.label, order_index=task.order)


def order_tasks(scenario: str, policies: Sequence[PolicySpec], n_orders: int, seed: int,
                options: RunOptions = DEFAULT_OPTIONS) -> list[RunTask]:
    """Every policy on orders ``0..n_orders-1`` of a shared scenario (policy-major).

    Order ``i`` runs with the policy seed :func:`packing.sim.simulator.run_seed` ``(seed, i)`` for every
    policy (common random numbers), as :func:`packing.sim.simulator.evaluate` does.
    """
    return [RunTask(p, scenario, i, run_seed(seed, i), options)
            for p in policies for i in range(n_orders)]


def snapshot_tasks(scenario: str, policies: Sequence[PolicySpec], k: int, keep: float, seed: int,
                   options: RunOptions = DEFAULT_OPTIONS) -> list[RunTask]:
    """Every policy on ``k`` resampled snapshots, as :func:`packing.sim.simulator.evaluate_snapshots`."""
    opts = dataclasses.replace(options, keep=keep)
    return [RunTask(p, scenario, None, run_seed(seed, i), opts) for p in policies for i in range(k)]


def evaluate_policies(scenario: Scenario, policies: Sequence[PolicySpec], seed: int = 0, *,
                      executor: Executor | None = None, options: RunOptions = DEFAULT_OPTIONS,
                      progress: Progress | None = None) -> dict[int, list[RunRecord]]:
    """Run every policy on every order of ``scenario`` (common random numbers) on an executor.

    Args:
        scenario: the instance and its orders (e.g. from :func:`packing.sim.simulator.sample_orders`).
        policies: policy specs.
        seed: base seed of the policy seeds.
        executor: where to run (default: a serial executor).
        options: the run options.
        progress: called with the number of runs finished.

    Returns:
        Records per policy position in ``policies`` (in order of the orders).
    """
    for p in policies:
        resolve_policy(p)  # bad specs fail here, before any run
    own = executor is None
    ex = executor if executor is not None else SerialExecutor()
    try:
        ref = ex.share(scenario, "scenario")
        n = len(scenario.orders)
        recs = ex.map(run_task, order_tasks(ref, policies, n, seed, options), progress)
    finally:
        if own:
            ex.close()
    return {k: recs[k * n:(k + 1) * n] for k in range(len(policies))}


__all__ = ["check_policies", "evaluate_policies", "order_tasks", "policy_name", "policy_spec",
           "resolve_policy", "run_task", "snapshot_tasks"]
