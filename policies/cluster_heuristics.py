"""Cluster-level heuristics of the EADE-DDPG paper, and its expert, as vbp policies.

Each policy first picks a *cluster* among those with a feasible host (clusters are the host types'
``cluster`` labels, :class:`packing.env.layout.EnvLayout`), then lets an inner node rule pick the host
and the GPU cards inside it (:class:`NodeBestFit` by default). They implement
``act(obs, mask) -> host`` and :class:`packing.sim.policy.ChoosingCards`, so ``simulate``, ``vbp compare``
and the env's :class:`packing.env.actions.ContinuousCluster` (as its ``inner`` rule, given the
mask of one cluster) all run them.

Cluster rules, over the feasible clusters ``c`` (ties to the lowest cluster index). ``free_c`` and
``cap_c`` are the cluster's free and total capacity per metric resource (host resources, then GPU
resources summed over cards), ``d_c`` what the task adds (:func:`packing.env.eade.metric_demand`):

* ``mc-bf`` (:class:`ClusterBestFit`): least ``sum_r (free_c - d_c) / cap_c`` (least free resources
  left);
* ``mc-greedy`` (:class:`ClusterGreedy`): the first feasible cluster;
* ``mc-random`` (:class:`ClusterRandom`): uniformly among feasible clusters (owned, seeded generator);
* ``mc-util`` (:class:`ClusterUtilization`): free-resource ratios closest to the demand ratios: the
  highest cosine similarity between ``free_c / cap_c`` and ``d_c / cap_c``;
* ``mc-expert`` (:class:`ClusterExpert`): the highest Score after placement
  (:func:`packing.env.eade.scores_after`, the paper's eq. 15-17; the placement that makes the
  reward ``(Score - 1) * tau`` zero).

Node rule :class:`NodeBestFit` (``node-bf``): the host with the least normalised free capacity after
placing, over host resources and the host's GPU resources (card sums), and on it the fitting cards
with the least free share after placing (lowest index on ties).

Card rule :class:`NodeCardMix` (``node-mix``, not in the paper; added for EADE-M, see
:mod:`policies.agents.eade_masked`): for a one-card task, among the fitting cards of the hosts in the
mask, the card with the **most** free share (worst fit: a fractional task opens a fresh card) while
more than ``theta`` (0.15) of all cards of the instance are entirely free, then the card with the
**least** free share after placing (best fit). Opening cards early makes whole-card tasks fail
earlier and leaves holes that the many small tasks later fill; when deployed *count* is the goal this
is the trade the proven optimum makes (it drops whole-card and 810-milli tasks, never small ones).
``theta = 0.15`` was chosen on the training streams (scenario seeds 0-9: 0.08 -> 157.9, 0.12 -> 158.8,
0.15 -> 159.1, 0.18 -> 159.2, 0.22 -> 158.5 tasks; mc-util 156.8). Tasks without cards or with
several cards use :class:`NodeBestFit`. :class:`ClusterCardMix` (``mc-cardmix``) applies the same
rule over all clusters at once (its cluster is the one of the chosen card).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from packing.env.eade import cluster_loads, metric_demand, scores_after
from packing.env.layout import EnvLayout
from packing.feasibility.metrics import state_loads
from packing.feasibility.predicates import ClusterState, fits
from policies.base import WAIT, BasePolicy, Observation, choose

if TYPE_CHECKING:
    from packing.model.instance import Instance


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


MIX_THETA = 0.15
"""Share of entirely free cards above which :class:`NodeCardMix` opens fresh cards (worst fit)."""


def card_fit(st: ClusterState, app: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which cards can take one card-share of ``app`` and their free share before and after.

    Returns:
        ``fit`` (bool), ``free`` and ``left`` (float: mean over GPU resources of free / capacity,
        before and after placing the share), each of shape ``(n_hosts, max_gpus)``; cards that do not
        exist never fit and have ``free = left = 0``. Host resources are not checked (use the mask).
    """
    inst = st.instance
    cap = st.card_capacity[:, None, :]  # (H, 1, R)
    load = cap if inst.apps[app].gpu_whole else np.asarray(inst.gpu_demand[app])[None, None, :]
    fit = fits(st.card_used + load, cap).all(axis=2) & st.card_exists
    safe = np.where(cap > 0, cap, 1.0)
    free = ((cap - st.card_used) / safe).mean(axis=2)
    left = ((cap - st.card_used - load) / safe).mean(axis=2)
    gone = ~st.card_exists
    return fit, np.where(gone, 0.0, free), np.where(gone, 0.0, left)


def free_card_share(st: ClusterState) -> float:
    """Share of the instance's cards with nothing on them (0 without cards)."""
    n = int(st.card_exists.sum())
    if not n:
        return 0.0
    return float(((st.card_used <= 0).all(axis=2) & st.card_exists).sum() / n)


class NodeCardMix(NodeBestFit):
    """Worst-fit card while many cards are free, then best-fit card (see the module docstring).

    Args:
        theta: share of entirely free cards above which the emptiest fitting card is chosen.
    """

    name = "node-mix"

    def __init__(self, theta: float = MIX_THETA) -> None:
        self.theta = float(theta)
        self.mode: str | None = None
        """``"fresh"`` (worst fit) or ``"fit"`` (best fit) overrides the threshold (set by an agent)."""
        self._pick: tuple[int, int, int] | None = None  # (id of the state, host, card)

    def pick_card(self, obs: Observation, mask: np.ndarray) -> tuple[int, int] | None:
        """``(host, card)`` of the rule among hosts in ``mask`` (``None``: none fits, or not one card)."""
        st, a = obs.state, obs.app
        if int(obs.instance.gpu_cards[a]) != 1 or not mask.any():
            return None
        fit, free, left = card_fit(st, a)
        fit &= mask[:, None]
        if not fit.any():
            return None
        fresh = self.mode == "fresh" if self.mode is not None else free_card_share(st) > self.theta
        key = -free if fresh else left
        flat = np.where(fit, key, np.inf).ravel()
        i = int(np.argmin(flat))  # lowest (host, card) on ties
        return i // fit.shape[1], i % fit.shape[1]

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """The host of :meth:`pick_card`; :class:`NodeBestFit` for tasks without exactly one card."""
        hc = self.pick_card(obs, mask)
        if hc is None:
            self._pick = None
            return super().act(obs, mask)
        self._pick = (id(obs.state), hc[0], hc[1])
        return hc[0]

    def choose_cards(self, obs: Observation, host: int) -> tuple[int, ...]:
        """The card :meth:`act` chose on ``host``; otherwise :class:`NodeBestFit`'s cards."""
        p = self._pick
        if p is not None and p[1] == host and int(obs.instance.gpu_cards[obs.app]) == 1:
            return (p[2],)
        return super().choose_cards(obs, host)


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
        """Argmax of :func:`packing.env.eade.scores_after` over feasible clusters."""
        return _best(scores_after(self.layout(obs), obs.state, obs.app), feasible)


class ClusterCardMix(ClusterPolicy):
    """:class:`NodeCardMix` over all clusters at once: the cluster of the card it picks.

    Args:
        theta: :class:`NodeCardMix`'s free-card threshold.
    """

    name = "mc-cardmix"

    def __init__(self, theta: float = MIX_THETA) -> None:
        super().__init__(NodeCardMix(theta))

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """The card rule over every feasible host (:meth:`pick` for tasks without exactly one card)."""
        if not mask.any():
            return WAIT
        assert isinstance(self.inner, NodeCardMix)
        if self.inner.pick_card(obs, mask) is None:
            return super().act(obs, mask)
        return self.inner.act(obs, mask)

    def pick(self, obs: Observation, feasible: np.ndarray) -> int:
        """Tasks the card rule does not cover: the cluster with the most free resources left."""
        lay = self.layout(obs)
        load, cap = cluster_loads(lay, obs.state)
        return _best(np.divide(cap - load, cap, out=np.zeros_like(cap), where=cap > 0).sum(axis=1), feasible)


__all__ = ["MIX_THETA", "ClusterBestFit", "ClusterCardMix", "ClusterExpert", "ClusterGreedy", "ClusterPolicy",
           "ClusterRandom", "ClusterUtilization", "NodeBestFit", "NodeCardMix", "card_fit", "free_card_share"]
