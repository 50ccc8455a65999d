"""The DAG policy contract and the one loop that runs a policy on a :class:`~packing.dag.engine.DagEngine`.

A DAG policy (heuristic or learned) has:

* ``name``: a label;
* ``partition``: the container partition it wants (``"constrained"``: JobFusion's clustering,
  ``"single"``: one container type, Decima-like; ``"plain"``: unconstrained clustering);
* ``reset(engine)``: called once per episode, before the first decision (read the static tables:
  ``engine.workload``, ``engine.stage_job``, ``engine.stage_demand``, ``engine.stage_tasks``,
  ``engine.stage_duration``, ``engine.parents``, ``engine.children``, ``engine.cluster.types``);
* ``act(obs, mask) -> DagAction``: the action for the current decision (``obs`` a
  :class:`~packing.dag.engine.DagObservation`, ``mask`` ``(K, Q)`` bool over ``obs.runnable`` x types).
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

import numpy as np

from packing.dag.engine import DagAction, DagEngine, DagObservation, DagResult


@runtime_checkable
class DagPolicy(Protocol):
    """What :func:`run_dag` needs from a policy (see the module docstring)."""

    name: str
    partition: str

    def reset(self, engine: DagEngine) -> None:
        """Prepare for an episode on ``engine``."""

    def act(self, obs: DagObservation, mask: np.ndarray) -> DagAction:
        """The action for the current decision."""


def run_dag(engine: DagEngine, policy: DagPolicy) -> tuple[DagResult, np.ndarray]:
    """Run one episode: reset, ask the policy at every decision, return the result.

    Returns:
        ``(result, seconds per decision (n_decisions,))``: wall time of each ``act`` call.
    """
    d = engine.reset()
    policy.reset(engine)
    secs: list[float] = []
    while d is not None:
        obs, mask = engine.observation(), engine.mask()
        t = time.perf_counter()
        a = policy.act(obs, mask)
        secs.append(time.perf_counter() - t)
        d = engine.step(a)
    return engine.result(), np.array(secs)


__all__ = ["DagPolicy", "run_dag"]
