"""Cluster-level heuristics of the EADE-DDPG paper, and its expert, as vbp policies.

Each policy first picks a *cluster* among those with a feasible host (clusters are the host types'
``cluster`` labels, :class:`packing.env_layout.EnvLayout`), then lets an inner node rule pick the host
and the GPU cards inside it (:class:`NodeBestFit` by default). They implement
``act(obs, mask) -> host`` and :class:`packing.policy.ChoosingCards`, so ``simulate``, ``vbp compare``
and the env's :class:`packing.env_actions.ContinuousCluster` (as its ``inner`` rule, given the
mask of one cluster) all run them.

Cluster rules, over the feasible clusters ``c`` (ties to the lowest cluster index). ``free_c`` and
``cap_c`` are the cluster's free and total capacity per metric resource (host resources, then GPU
resources summed over cards), ``d_c`` what the task adds (:func:`packing.multicluster.metric_demand`):

* ``mc-bf`` (:class:`ClusterBestFit`): least ``sum_r (free_c - d_c) / cap_c`` (least free resources
  left);
* ``mc-greedy`` (:class:`ClusterGreedy`): the first feasible cluster;
* ``mc-random`` (:class:`ClusterRandom`): uniformly among feasible clusters (owned, seeded generator);
* ``mc-util`` (:class:`ClusterUtilization`): free-resource ratios closest to the demand ratios: the
  highest cosine similarity between ``free_c / cap_c`` and ``d_c / cap_c``;
* ``mc-expert`` (:class:`ClusterExpert`): the highest Score after placement
  (:func:`packing.multicluster.scores_after`, the paper's eq. 15-17; the placement that makes the
  reward ``(Score - 1) * tau`` zero).

Node rule :class:`NodeBestFit` (``node-bf``): the host with the least normalised free capacity after
placing, over host resources and the host's GPU resources (card sums), and on it the fitting cards
with the least free share after placing (lowest index on ties).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from packing.env_layout import EnvLayout
from packing.metrics import state_loads
from packing.multicluster import cluster_loads, metric_demand, scores_after
from policies.base import WAIT, BasePolicy, Observation, choose

if TYPE_CHECKING:
    from packing.model import Instance


class NodeBestFit(BasePolicy):
    """Card-aware best fit over hosts (see the module docstring)."""

    name = "node-bf"

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """The feasible host with the least normalised free capacity after placing; WAIT if none."""
        if not mask.any():
            return WAIT
        st, inst, a = obs.state, obs.instance, obs.app
        cap = np.where(st.capacity > 0, st.capacity, 1.0)
        left = ((st.capacity - st.used - inst.demand[a]) / cap).sum(axis=1)
        if inst.gpu_resources and inst.max_gpus:
            m_load, m_cap = state_loads(st)  # GPU columns: card sums per host
            g_used, g_cap = m_load[:, inst.n_resources:], m_cap[:, inst.n_resources:]
            k = int(inst.gpu_cards[a])
            whole = inst.apps[a].gpu_whole
            load = st.card_capacity if whole else np.broadcast_to(inst.gpu_demand[a], g_cap.shape)
            g_left = np.divide(g_cap - g_used - k * load, g_cap, out=np.zeros_like(g_cap), where=g_cap > 0)
            left = left + g_left.sum(axis=1)
        return choose(-left, mask)

    def choose_cards(self, obs: Observation, host: int) -> tuple[int, ...]:
        """``gpu_cards`` fitting cards of ``host`` with the least free share after placing."""
        st, a = obs.state, obs.app
        k = int(obs.instance.gpu_cards[a])
        if k == 0:
            return ()
        cand = st.cards_fitting(a, host)
        cap = np.where(st.card_capacity[host] > 0, st.card_capacity[host], 1.0)
        free = ((st.card_capacity[host] - st.card_used[host, cand] - st.card_load(a, host)) / cap).sum(axis=1)
        order = np.lexsort((cand, free))
        return tuple(sorted(int(c) for c in cand[order[:k]]))


class ClusterPolicy(BasePolicy):
    """Base: choose a feasible cluster with :meth:`pick`, then the host and cards with ``inner``.

    Args:
        inner: the node rule inside the cluster (default :class:`NodeBestFit`).
    """

    name = "mc-base"

    def __init__(self, inner: NodeBestFit | None = None) -> None:
        self.inner = inner if inner is not None else NodeBestFit()
        self._layout: EnvLayout | None = None

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Compute the cluster layout; reset the inner rule."""
        self._layout = EnvLayout.of(instance)
        self.inner.reset(instance, seed)

    def layout(self, obs: Observation) -> EnvLayout:
        """The layout of ``obs.instance`` (computed on first use)."""
        if self._layout is None or self._layout.instance is not obs.instance:
            self._layout = EnvLayout.of(obs.instance)
        return self._layout

    def feasible_clusters(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """Clusters with a host in ``mask``, shape ``(n_clusters,)`` bool."""
        return self.layout(obs).clusters_with(mask)

    def pick(self, obs: Observation, feasible: np.ndarray) -> int:
        """The cluster index (``feasible`` has at least one True entry)."""
        raise NotImplementedError

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """The inner rule's host in the picked cluster; WAIT when no cluster is feasible."""
        feasible = self.feasible_clusters(obs, mask)
        if not feasible.any():
            return WAIT
        c = self.pick(obs, feasible)
        return self.inner.act(obs, mask & (self.layout(obs).cluster_of == c))

    def choose_cards(self, obs: Observation, host: int) -> tuple[int, ...]:
        """The inner rule's cards."""
        return self.inner.choose_cards(obs, host)


def _best(values: np.ndarray, feasible: np.ndarray) -> int:
    """Argmax of ``values`` over ``feasible`` clusters, ties to the lowest index."""
    v = np.where(feasible, values, -np.inf)
    return int(np.flatnonzero(v == v.max())[0])


class ClusterBestFit(ClusterPolicy):
    """The feasible cluster with the least free resources left (normalised, summed)."""

    name = "mc-bf"

    def pick(self, obs: Observation, feasible: np.ndarray) -> int:
        """Least ``sum_r (free - d) / cap``."""
        lay = self.layout(obs)
        load, cap = cluster_loads(lay, obs.state)
        d = metric_demand(lay, obs.app)
        left = np.divide(cap - load - d, cap, out=np.zeros_like(cap), where=cap > 0).sum(axis=1)
        return _best(-left, feasible)


class ClusterGreedy(ClusterPolicy):
    """The first feasible cluster."""

    name = "mc-greedy"

    def pick(self, obs: Observation, feasible: np.ndarray) -> int:
        """Lowest feasible index."""
        return int(np.flatnonzero(feasible)[0])


class ClusterRandom(ClusterPolicy):
    """A uniformly random feasible cluster (seeded by ``reset``)."""

    name = "mc-random"

    def __init__(self, inner: NodeBestFit | None = None) -> None:
        super().__init__(inner)
        self._rng = np.random.default_rng(0)

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Layout, inner rule, and a fresh generator from ``seed``."""
        super().reset(instance, seed)
        self._rng = np.random.default_rng(seed)

    def pick(self, obs: Observation, feasible: np.ndarray) -> int:
        """Uniform over the feasible clusters."""
        ok = np.flatnonzero(feasible)
        return int(ok[self._rng.integers(len(ok))])


class ClusterUtilization(ClusterPolicy):
    """The feasible cluster whose free-resource ratios are closest to the task's demand ratios."""

    name = "mc-util"

    def pick(self, obs: Observation, feasible: np.ndarray) -> int:
        """Highest cosine similarity of ``free / cap`` and ``d / cap``."""
        lay = self.layout(obs)
        load, cap = cluster_loads(lay, obs.state)
        d = metric_demand(lay, obs.app)
        f = np.divide(cap - load, cap, out=np.zeros_like(cap), where=cap > 0)
        r = np.divide(d, cap, out=np.zeros_like(cap), where=cap > 0)
        norm = np.linalg.norm(f, axis=1) * np.linalg.norm(r, axis=1)
        cos = np.divide((f * r).sum(axis=1), norm, out=np.zeros(len(norm)), where=norm > 0)
        return _best(cos, feasible)


class ClusterExpert(ClusterPolicy):
    """The paper's expert: the feasible cluster with the highest Score after placement."""

    name = "mc-expert"

    def pick(self, obs: Observation, feasible: np.ndarray) -> int:
        """Argmax of :func:`packing.multicluster.scores_after` over feasible clusters."""
        return _best(scores_after(self.layout(obs), obs.state, obs.app), feasible)


__all__ = ["ClusterBestFit", "ClusterExpert", "ClusterGreedy", "ClusterPolicy", "ClusterRandom",
           "ClusterUtilization", "NodeBestFit"]
