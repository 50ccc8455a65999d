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

:func:`drive_dag` is the one decision loop (observe, mask, act, apply, with a per-decision hook);
:func:`run_dag` runs a policy's episode on it, and the trainers (``policies.agents.jobfusion``)
drive their episodes with it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple, Protocol, runtime_checkable

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


class DagStep(NamedTuple):
    """One applied decision, as the hook of :func:`drive_dag` sees it.

    Attributes:
        observation: what the decision saw.
        mask: the allowed (stage, type) pairs then, shape ``(K, Q)``.
        action: the action applied.
        engine: the engine, after the action (its next decision already drawn).
    """

    observation: DagObservation
    mask: np.ndarray
    action: DagAction
    engine: DagEngine


def drive_dag(engine: DagEngine, decide: Callable[[DagObservation, np.ndarray], DagAction],
              on_step: Callable[[DagStep], None] | None = None, *, limit: int | None = None) -> int:
    """The one DAG decision loop: observe, mask, ``decide``, apply, until the episode ends.

    Args:
        engine: the engine, already reset (and the policies that decide on it too).
        decide: the action for an observation and its mask (shape ``(K, Q)``); e.g. a policy's
            ``act``, or a trainer's mix of teacher and student that records what it learns from.
        on_step: called after each applied action with its :class:`DagStep`.
        limit: stop after this many decisions (``None``: at the end of the episode; a look-ahead
            truncates its rollouts so).

    Returns:
        The decisions applied (``engine.result()`` holds the episode's result once it has ended).
    """
    n = 0
    while engine.decision is not None and (limit is None or n < limit):
        obs, mask = engine.observation(), engine.mask()
        a = decide(obs, mask)
        engine.step(a)
        n += 1
        if on_step is not None:
            on_step(DagStep(obs, mask, a, engine))
    return n


def run_dag(engine: DagEngine, policy: DagPolicy) -> tuple[DagResult, np.ndarray]:
    """Run one episode: reset, ask the policy at every decision (:func:`drive_dag`), return the result.

    Returns:
        ``(result, seconds per decision (n_decisions,))``: wall time of each ``act`` call.
    """
    engine.reset()
    policy.reset(engine)
    secs: list[float] = []

    def timed(obs: DagObservation, mask: np.ndarray) -> DagAction:
        t = time.perf_counter()
        a = policy.act(obs, mask)
        secs.append(time.perf_counter() - t)
        return a

    drive_dag(engine, timed)
    return engine.result(), np.array(secs)


__all__ = ["DagPolicy", "DagStep", "drive_dag", "run_dag"]
