"""The EADE-DDPG MDP as a configuration of :class:`packing.env.placement_env.PlacementEnv` (pure model logic).

The paper schedules a FIFO stream of tasks onto ``N`` clusters: the agent picks a cluster (or WAIT)
with one continuous number; a fixed inner rule picks the node and the cards in that cluster.

* **State** (:class:`ClusterFreeEncoder`), one ``float32`` vector of length ``N * M + M`` where ``M``
  is the number of metric resources (:func:`packing.feasibility.metrics.metric_resources`: host resources,
  then
  GPU resources; 4 in the paper's scenario: CPU, memory, GPU memory, GPU core, so ``16 * 4 + 4 =
  68``): for each cluster in layout order, its free share per resource (``1 - allocated / total`` of
  the cluster; 0 for a resource the cluster does not have), then the task's demands: host demand /
  the largest host capacity, and the per-card GPU share / the largest card capacity (1 for whole
  cards; the number of cards is not part of the paper's state). All zeros for the task after the
  last step.
* **Action**: :class:`packing.env.actions.ContinuousCluster` with WAIT: ``x in [-1, 1]`` falls in bin
  ``k = min(floor((x + 1) / 2 * (N + 1)), N)``; bins ``0 .. N - 1`` are the clusters in layout order
  (``c00, c01, ...``), bin ``N`` is WAIT. The node and cards inside the cluster come from an inner
  policy the caller passes (e.g. ``policies.cluster_heuristics.NodeBestFit``; this layer never
  imports policies).
* **Reward** (:class:`EadeReward`): on success ``(Score - 1) * tau`` (``tau = 10``) with
  ``Score = (U_c - min_n U_n) / (max_n U_n - min_n U_n)``, ``U_n`` the cluster utilisation after the
  placement (:func:`packing.env.layout.cluster_utilisation`: mean over resources of allocated /
  total), ``c`` the chosen cluster; ``Score = 1`` when all clusters are equal. ``-penalty``
  (``50``) on failure: the chosen cluster cannot take the task (an invalid action, applied as a
  rejection), or WAIT. The engine only asks the agent when some cluster can take the task (a task
  that fits nowhere is rejected by the engine, with no reward term), so every WAIT is a WAIT while
  some cluster could. One episode is the whole stream.

:func:`make_env` builds the env; :func:`cluster_loads`, :func:`metric_demand` and
:func:`scores_after` are the arithmetic the cluster heuristics and the expert share.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from packing.env.actions import ContinuousCluster
from packing.env.layout import EnvLayout, cluster_loads, cluster_utilisation
from packing.env.placement_env import PlacementEnv
from packing.env.rewards import Outcome, StepStats, measure
from packing.feasibility.metrics import utilisation_rate
from packing.feasibility.predicates import ClusterState
from packing.model.instance import Instance
from packing.sim.engine import PLACED, Engine
from packing.sim.policy import Policy

TAU = 10.0
"""The paper's reward scale ``tau``."""

FAIL_PENALTY = 50.0
"""The paper's failure penalty."""


def metric_demand(layout: EnvLayout, app: int) -> np.ndarray:
    """What one container of ``app`` adds to each cluster's metric loads, shape ``(n_clusters, n_metric)``.

    Host demand, then ``cards * per-card demand`` per GPU resource; a whole-card container loads its
    cards fully, counted with the largest card capacity of the cluster.
    """
    inst = layout.instance
    n_c = layout.n_clusters
    host = np.broadcast_to(inst.demand[app], (n_c, inst.n_resources))
    if not inst.gpu_resources:
        return np.array(host, dtype=np.float64)
    k = int(inst.gpu_cards[app])
    if k and inst.apps[app].gpu_whole:
        card = np.zeros((n_c, len(inst.gpu_resources)))
        for c, hosts in enumerate(layout.cluster_hosts):
            if len(hosts):
                card[c] = inst.card_capacity[inst.host_type_of[hosts]].max(axis=0)
        gpu = k * card
    else:
        gpu = np.broadcast_to(k * inst.gpu_demand[app], (n_c, len(inst.gpu_resources)))
    return np.concatenate([host, gpu], axis=1).astype(np.float64)


def utilisation(load: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """``U_n``: mean over resources with capacity of load / capacity, shape ``(n_clusters,)``.

    :func:`packing.feasibility.metrics.utilisation_rate`, the formula
    :func:`packing.feasibility.metrics.compute_metrics` uses.
    """
    return utilisation_rate(load, capacity)


def score(u: np.ndarray, c: int) -> float:
    """Min-max normalised utilisation of cluster ``c`` among ``u`` (1 when all are equal)."""
    lo, hi = float(u.min()), float(u.max())
    if hi - lo <= 1e-12:
        return 1.0
    return (float(u[c]) - lo) / (hi - lo)


def scores_after(layout: EnvLayout, state: ClusterState, app: int) -> np.ndarray:
    """The Score of each cluster if the task went there (eq. 15-17 of the paper), shape ``(n_clusters,)``.

    For cluster ``c``: add :func:`metric_demand` to ``c``'s load only, compute ``U`` of every cluster
    and return :func:`score` of ``c``. Feasibility is not checked (mask the result).
    """
    load, cap = cluster_loads(layout, state)
    u = utilisation(load, cap)
    u_new = utilisation(load + metric_demand(layout, app), cap)
    out = np.empty(layout.n_clusters)
    for c in range(layout.n_clusters):
        v = u.copy()
        v[c] = u_new[c]
        out[c] = score(v, c)
    return out


def eade_reward(u_after: np.ndarray, cluster: int | None, *, tau: float = TAU,
                penalty: float = FAIL_PENALTY) -> float:
    """The paper's reward: ``(Score - 1) * tau`` for a placement in ``cluster``, ``-penalty`` for ``None``.

    Args:
        u_after: ``U_n`` after the step, shape ``(n_clusters,)``.
        cluster: the cluster the task was placed in, or ``None`` for a failure.
        tau: reward scale.
        penalty: failure penalty.
    """
    if cluster is None:
        return -float(penalty)
    return (score(u_after, cluster) - 1.0) * float(tau)


class EadeReward:
    """The EADE-DDPG reward as a :class:`packing.env.rewards.Reward` (see the module docstring).

    :meth:`measure` keeps ``U_n`` of the last measure; the env measures the state after the step just
    before calling the reward, so :meth:`__call__` scores the chosen cluster against it.

    Args:
        tau: scale of the success reward.
        penalty: cost of a failure (invalid cluster or WAIT); also the ``reject_penalty``.
    """

    def __init__(self, tau: float = TAU, penalty: float = FAIL_PENALTY) -> None:
        self.tau = float(tau)
        self.reject_penalty = float(penalty)
        self._u = np.zeros(0)
        self._cluster_of = np.zeros(0, dtype=np.int64)

    def measure(self, layout: EnvLayout, engine: Engine) -> StepStats:
        """Counters, and ``U_n`` kept for the next call."""
        self._u = cluster_utilisation(layout, engine)
        self._cluster_of = np.asarray(layout.cluster_of)
        return measure(engine, float(self._u.mean()) if len(self._u) else 0.0)

    def __call__(self, before: StepStats, after: StepStats, outcome: Outcome) -> float:
        """``(Score - 1) * tau`` when placed, ``-penalty`` for an invalid action or WAIT."""
        if outcome.invalid or outcome.result != PLACED:  # invalid cluster, or WAIT (DELAYED)
            return eade_reward(self._u, None, tau=self.tau, penalty=self.reject_penalty)
        return eade_reward(self._u, int(self._cluster_of[outcome.action]), tau=self.tau,
                           penalty=self.reject_penalty)

    def __repr__(self) -> str:
        return f"EadeReward(tau={self.tau!r}, penalty={self.reject_penalty!r})"


class ClusterFreeEncoder:
    """The paper's state: free share per cluster and resource, then the task's demands (see above)."""

    def space(self, layout: EnvLayout) -> spaces.Space[Any]:
        """``Box(0, high, (N * M + M,), float32)``."""
        m = int(layout.cluster_capacity.shape[1])
        hi = np.concatenate([np.ones(layout.n_clusters * m, dtype=np.float32), self._demand_high(layout)])
        return spaces.Box(np.zeros_like(hi), hi, dtype=np.float32)

    @staticmethod
    def _demand_cols(layout: EnvLayout) -> np.ndarray:
        n_r = layout.n_resources
        if not layout.gpu:
            return np.arange(n_r)
        # demand_table: host demand (n_r), cards / max_gpus (1), per-card share (n_gpu)
        return np.concatenate([np.arange(n_r), np.arange(n_r + 1, layout.n_demand_features)])

    def _demand_high(self, layout: EnvLayout) -> np.ndarray:
        high = np.asarray(layout.demand_high)[self._demand_cols(layout)].astype(np.float32)
        m = int(layout.cluster_capacity.shape[1])
        out = np.ones(m, dtype=np.float32)
        out[: len(high)] = high
        return out

    def encode(self, layout: EnvLayout, engine: Engine) -> np.ndarray:
        """The vector now, shape ``(N * M + M,)`` float32."""
        d = engine.decision
        return self.vector(layout, engine.state, None if d is None else d.app)

    def vector(self, layout: EnvLayout, state: ClusterState, app: int | None) -> np.ndarray:
        """The vector of ``state`` for a task of ``app`` (zeros for ``None``), shape ``(N * M + M,)``.

        The same numbers as :meth:`encode`, from a :class:`ClusterState` (for policies acting on an
        :class:`packing.sim.policy.Observation` outside the env).
        """
        load, cap = cluster_loads(layout, state)
        free = np.divide(cap - load, cap, out=np.zeros_like(load), where=cap > 0)
        m = cap.shape[1]
        task = np.zeros(m, dtype=np.float32)
        if app is not None:
            row = np.asarray(layout.demand_table[app])[self._demand_cols(layout)]
            task[: len(row)] = row
        return np.concatenate([np.clip(free, 0.0, 1.0).ravel().astype(np.float32), task])


def make_env(instance: Instance, inner: Policy, *, tau: float = TAU, penalty: float = FAIL_PENALTY,
             wait: bool = True, shuffle: bool = False) -> PlacementEnv:
    """The EADE-DDPG env on ``instance`` (state, action and reward of the module docstring).

    Args:
        instance: a multi-cluster instance (host types labelled with clusters).
        inner: chooses the node (and cards) inside the chosen cluster.
        tau: success reward scale.
        penalty: failure penalty.
        wait: add the WAIT bin (the paper's action space has it).
        shuffle: a new seeded arrival order at every reset (default: the stream's FIFO order).
    """
    return PlacementEnv(instance, encoder=ClusterFreeEncoder(), actions=ContinuousCluster(inner, wait=wait),
                        reward=EadeReward(tau, penalty), shuffle=shuffle)


__all__ = ["FAIL_PENALTY", "TAU", "ClusterFreeEncoder", "EadeReward", "cluster_loads", "eade_reward",
           "make_env", "metric_demand", "score", "scores_after", "utilisation"]
