"""EADE-M: EADE-DDPG's encoder and dual replay with a masked per-cluster value head (an improvement).

Why the paper's agent (:mod:`policies.agents.eade`) does not learn here (diagnosed on the default
scenario, 16 clusters, 220 tasks): its actor's single ``tanh`` output saturates at ``-1`` within the
first episode (all 220 actions in bin 0 = cluster ``c00``); once ``c00`` is full every step is an
invalid action (a lost task, ``-50``), the critic sees one scalar that *indexes* 17 unordered
choices, so ``dQ/da`` carries no information about which other cluster is better, and the actor
stays on the boundary (11-19 of 220 deployed). With ``-50`` failures dominating the ``[-10, 0]``
success rewards the critic's targets are mostly the failure cost.

What EADE-M changes (every deviation from the paper, all in this module; the env is the paper's):

1. **Action**: one value per cluster instead of one number for all: ``Q(s, c)`` for each cluster
   ``c``, computed from cluster ``c``'s attention token and the task token (the same network for
   every cluster). The decision is ``argmax_c Q(s, c)`` over the clusters that can take the task
   (the env's ``action_mask``), sent to the env as the centre of ``c``'s action bin, so the paper's
   action mapping is unchanged. WAIT is never chosen (in a stream without departures a WAIT loses
   the task). There is no separate actor: the greedy policy of the critic is the actor (a discrete
   head, as in DQN; double-Q targets, soft target updates as in DDPG).
2. **Reward**: the paper's reward plus ``-miss_penalty`` (default 50, the paper's failure cost) for
   every later task that the engine rejects because it fits in no cluster during the step (the
   delayed cost of fragmentation; with masking the paper's ``-50`` never fires otherwise). Rewards
   are divided by ``reward_scale`` (50) for the regression.
3. **Expert**: the history buffer is filled with the paper's expert (highest Score after placement)
   as in the paper, and also used for a DQfD-style large-margin loss
   ``max_c [Q(s, c) + margin * (c != c_E)] - Q(s, c_E)`` on the history share of each batch, and for
   ``pretrain`` updates on history only before the first episode (behaviour cloning of the expert).
4. **Exploration**: epsilon-greedy among feasible clusters (``eps`` decays linearly from
   ``eps_start`` to ``eps_end`` over the run) instead of Gaussian noise on a scalar.
5. **Size and speed**: embedding 64, hidden 128 and 64, batch 128, one update every ``update_every``
   steps (the paper's 128 / 256 / every step cost ~0.2 s per update on one shared core).
6. **Card-level features** (``card_features=True``; off by default, so older agent files load
   unchanged): the paper's state holds cluster totals only, but deploy failures come from *cards*
   (diagnosed on training streams 0-9: the proven optimum drops only whole-card and 810-milli tasks;
   mc-util and EADE-M also lose 300-650-milli tasks because every card left has a hole below their
   size). Each cluster token gets four more values (:func:`card_tokens`): the largest free share of a
   card the task fits on, one minus the smallest free share left after placing it (the best fit's
   tightness; both 0 when no card fits), the share of the cluster's cards that are entirely free,
   and the share of its cards the task fits on; the task token gets the instance's share of entirely
   free cards, the share of all cards the task fits on, 1 for a whole-card task, and 0. Token width
   ``M + 4`` (8 in the default scenario).
7. **Inner rule and expert** (``mix_inner``, ``card_expert``): ``mix_inner=True`` places the task on a card of
   the chosen cluster by :class:`policies.cluster_heuristics.NodeCardMix` (worst-fit card while more
   than ``mix_theta`` = 15% of all cards are free, then best fit) instead of ``node-bf``;
   ``card_expert=True`` fills
   the history buffer with :class:`policies.cluster_heuristics.ClusterCardMix` (the same card rule
   over all clusters) instead of the paper's highest-Score expert. A comparison with this inner rule
   must also report the heuristics with it (benchmarks/bench_multicluster.py does).
8. **Card mode as part of the action** (``mode_action=True``, needs ``mix_inner``): two values per
   cluster, ``Q(s, c, fresh)`` and ``Q(s, c, fit)``; the chosen mode overrides the threshold of
   :class:`NodeCardMix` (worst-fit or best-fit card inside ``c``), so the agent, not ``mix_theta``,
   decides when to stop opening fresh cards. Action index ``mode * N + c`` (``MODES``); the expert's
   transitions are labelled with the mode its threshold used.
9. **Residual on the expert** (``residual=True``, needs ``mix_inner`` and ``card_expert``, not
   ``mode_action``; off by default): the decision is ``argmax_c Q(s, c) + residual_margin * [c = c_E]``
   over feasible clusters, ``c_E`` the cluster :class:`ClusterCardMix` (``mc-cardmix``) picks in the
   same state. The value head's last layer starts at zero, so the untrained agent *is* mc-cardmix
   (same clusters, and through ``node-mix`` the same cards); it leaves the expert's cluster only where
   its learned advantage ``Q(s, c) - Q(s, c_E)`` exceeds the margin. Double-Q targets use the same
   biased argmax (the expert's cluster of ``s'`` is stored in the replay).
10. **Admission** (``admission=True``, needs ``residual``): one more action, index ``K * N``: WAIT
   (the task is dropped; the paper's reward gives ``-50``), valued by its own head on the task token
   (last layer zero at start; with the margin the untrained agent never drops). This lets the agent
   drop a whole-card or 810-milli task to keep room for later small ones, which is what the proven
   optimum does (item 6).
11. **Selection on the training streams** (``select_every=k > 0``; off by default): before the
   first update and after every ``k`` episodes the greedy agent is replayed on all training streams;
   the weights with the most tasks placed in total are kept (ties keep the earlier). With
   ``residual`` the first candidate is the zero-initialised agent, i.e. mc-cardmix, so the returned
   agent places at least as many tasks as mc-cardmix *on the training streams* (not a guarantee on
   other streams). Only training streams are used.

   Measured (default scenario, training seed 1, 40 episodes, ``lambda_expert=0.1`` and the card
   options; tasks deployed, mean over 10 streams): mc-cardmix places 159.1 on training streams
   0-9 and 159.0 on validation streams 50-59. Residual, margin 0.05, no selection: 158.6 / 158.7
   (the learned advantages of the 11-21 deviations per stream are mostly wrong). With admission
   (margin 0.05): 155.7 on validation, 66-68 tasks dropped per stream (the WAIT head overestimates).
   Margin 0.3 with selection every 5 episodes, with or without admission: no checkpoint beat
   mc-cardmix on the training streams (1589-1591 vs 1591 in total; with admission down to 1454),
   so the returned agent is mc-cardmix (159.0 on validation). Margin 0.1, 60 episodes, selection:
   best checkpoint 1592 on training streams (+1, noise), 158.7 on validation. **None of these
   beats mc-cardmix**. Margin 0.3 with selection, training seeds 0-4, scored once on held-out
   streams 100-109 (benchmarks/bench_multicluster.py): 160.7, the same count as mc-cardmix on every
   stream and seed (validation 159.1, 159.0, 159.1, 159.0, 159.0). Items 9-11 are kept as options
   for further work; the shipped model does not use them.
12. **Distilled rollout expert** (``distil=True``, needs ``card_features`` and ``mix_inner``; none of
   items 8-10): expert iteration. The expert is :class:`policies.card_rollout.RolloutLabeler`: for
   the current task it compares ``fresh`` (emptiest fitting card), ``fit`` (tightest fitting card)
   and, for 810-milli and whole-card tasks, ``drop`` (WAIT, the task is lost) by rolling out
   ``mc-cardmix`` on ``rollout_k`` futures drawn from the training streams' size distribution (only
   the stream's *length* is known, never its later tasks). The network keeps the attention encoder
   over the cluster tokens (with item 6's card features) and adds an option head:
   ``[task token, g] -> 128 -> 64 -> 3`` logits over ``(fresh, fit, drop)``, ``g`` the 17 values of
   :func:`global_features` (stream position, task share, free-card shares and a histogram of the
   cards' free shares). The decision is one network pass: the highest logit among the available
   options, then ``mc-cardmix``'s card in that mode (or WAIT); the per-cluster value head is unused.
   Training (:func:`train_distil`): DAgger, the expert acts in the first pass over the training
   streams and the agent afterwards, every decision with more than one option is labelled by the
   expert, a stake-weighted cross-entropy fits the option head, and the greedy agent is selected
   after every pass by tasks placed on the training streams.

   Measured (default scenario, 30 episodes = 3 passes over training streams 0-9, training seeds
   0-4, 137-153 s of CPU per seed, one decision 1.3 ms): validation streams 50-59 160.3, 160.3,
   160.1, 160.2, 160.3 (mc-cardmix 159.0, the expert mc-rollout 161.1); held-out streams 100-109
   161.0 over the five seeds (per seed 160.8-161.4; mc-cardmix 160.7, mc-rollout 162.0, optimum
   163.0). The gain over mc-cardmix comes from the look-ahead, which a heuristic can use too
   (``mc-rollout``, 7-30 ms a decision); the network keeps about a quarter of it on held-out streams and
   beats mc-cardmix on 5 of 10 held-out streams (loses on 5).

   Options of :func:`train_distil` (defaults keep the run above): ``distil_expert_episodes`` (the
   expert acts in the first ``k`` episodes, the agent afterwards; ``-1`` = one pass over the streams),
   ``distil_temp`` (``> 0``: soft targets ``softmax(rollout value / temp)``, options within the
   rollouts' noise share the probability; :func:`distil_targets`), ``distil_ties`` (a tie is labelled
   with the expert's choice, i.e. mc-cardmix's option, instead of ``fresh``). Measured with 90
   training streams (scenario seeds 0-49 and 60-99: the streams are i.i.d. draws from one pod list,
   so more training seeds give labels on more states; never the validation 50-59 or held-out 100-109
   ones), 120 episodes, ``distil_expert_episodes=40``, ``distil_updates=100``, ``distil_temp=0.3``,
   ``distil_ties=True``, training seeds 0-4, 353-391 s of CPU per seed, one decision 0.8-1.0 ms:
   validation 161.0, 161.4, 161.3, 161.2, 161.3 (mc-rollout 161.1); held-out 161.9 +- 0.3 over the
   five seeds (per seed 161.5-162.2; mc-cardmix 160.7, mc-rollout 162.0), above mc-cardmix on 9 of
   10 held-out streams (seed mean; below on 1) and level with mc-rollout (above on 5, below on 4).
   With 50 streams (0-49), 60 episodes (expert 50) the one seed tried reached 160.7 on validation.
   Acting with the expert only (no DAgger) is not enough: after the expert-only pass the greedy agent
   placed 144 per training stream, after 10 agent episodes 160.3.

Networks: :class:`ClusterQ` embeds the ``N + 1`` tokens of ``M`` values (no position embedding:
clusters are exchangeable, so the head is permutation-equivariant over clusters), one multi-head
self-attention layer with residual and layer norm, then ``[h_c, h_task] -> 128 -> 64 -> 1`` per
cluster. Shapes: state ``(B, (N + 1) * M)`` -> values ``(B, N)``.

Checkpoints are agent files of kind ``"eade-m"`` (:mod:`policies.agents.files`, weights-only).
This module holds what acting needs (features, network, the agent, file checks); the replay, the
training loops and the distillation are in :mod:`policies.agents.eade_masked_train`.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from packing.env.layout import EnvLayout
from packing.model.instance import Instance
from policies.agents.checks import (
    FileFieldError,
    Flag,
    Ints,
    Num,
    Spec,
    check_fields,
    check_tensors,
    meta_shapes,
    section,
)
from policies.agents.eade import ClusterAgent
from policies.base import WAIT, Observation
from policies.card_rollout import (
    BIG,
    FULL,
    OPTIONS,
    act_option,
    card_free,
    options,
    task_milli,
)
from policies.cluster_heuristics import (
    ClusterCardMix,
    ClusterExpert,
    ClusterPolicy,
    NodeBestFit,
    NodeCardMix,
    card_fit,
    free_card_share,
)

KIND = "eade-m"
"""Agent-file kind."""

MODES = ("fresh", "fit")
"""Card modes of ``mode_action`` (action index ``mode * N + cluster``)."""

CARD_FEATURES = 4
"""Values :func:`card_tokens` adds to every token."""

GLOBAL_FEATURES = 17
"""Values :func:`global_features` appends to the state with ``distil``."""


def global_features(obs: Observation, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """Stream position and card-model view of the decision (item 12), and the options available.

    Returns:
        ``(g, avail)``: ``g`` shape ``(17,)`` float32 = tasks still to come / stream length, the task's
        card share, share of entirely free cards, share of cards the task fits on, free share of the
        emptiest fitting card, free share left on the tightest fitting card after placing, 1 when
        ``mc-cardmix`` would take the tightest card, then the share of cards whose free share is in
        ``[1, 100), [100, 200), ..., [900, 1000)`` milli; ``avail`` shape ``(3,)`` bool over
        :data:`~policies.card_rollout.OPTIONS` (``fit`` when its card differs from ``fresh``'s, ``drop``
        for tasks of at least :data:`~policies.card_rollout.BIG` milli; all False when no card fits).
        Only the stream's length is read, never its later tasks.
    """
    inst, st = obs.instance, obs.state
    free = card_free(st)
    s = task_milli(inst, obs.app)
    n = max(1, len(free))
    total = len(inst.container_app)
    g = np.zeros(GLOBAL_FEATURES, dtype=np.float32)
    g[0] = (total - obs.step - 1) / max(1, total)
    g[1] = s / FULL
    g[2] = (free == FULL).sum() / n
    fit = free >= s
    g[3] = fit.sum() / n
    avail = np.zeros(len(OPTIONS), dtype=bool)
    opts, base = options(free, s, theta, BIG) if s > 0 else ([], "fit")
    if opts:
        names = dict(opts)
        g[4] = free[names["fresh"]] / FULL
        c_fit = names.get("fit", names["fresh"])
        g[5] = (free[c_fit] - s) / FULL
        g[6] = float(base == "fit")
        for name in names:
            avail[OPTIONS.index(name)] = True
    part = free[(free > 0) & (free < FULL)]
    g[7:] = np.bincount(np.minimum(part // 100, 9), minlength=10)[:10] / n
    return g, avail


def card_tokens(lay: EnvLayout, obs: Observation, mask: np.ndarray) -> np.ndarray:
    """Card-level token features (item 6 of the module docstring), shape ``(N + 1, 4)`` float32.

    Rows ``0 .. N - 1`` are the clusters: max free share of a fitting card, ``1 -`` min free share left
    after placing on a fitting card, share of entirely free cards, share of fitting cards. Row ``N``
    is the task: share of entirely free cards of the instance, share of all cards the task fits on,
    1 for a whole-card task, 0. A card fits when the task's share fits on it and its host is in
    ``mask``.
    """
    st, a = obs.state, obs.app
    n = lay.n_clusters
    out = np.zeros((n + 1, CARD_FEATURES), dtype=np.float32)
    fit, free, left = card_fit(st, a)
    fit &= np.asarray(mask, dtype=bool)[:, None]
    empty = (st.card_used <= 0).all(axis=2) & st.card_exists
    for c, hosts in enumerate(lay.cluster_hosts):
        n_cards = int(st.card_exists[hosts].sum())
        if not n_cards:
            continue
        f = fit[hosts]
        if f.any():
            out[c, 0] = free[hosts][f].max()
            out[c, 1] = 1.0 - left[hosts][f].min()
        out[c, 2] = empty[hosts].sum() / n_cards
        out[c, 3] = f.sum() / n_cards
    total = int(st.card_exists.sum())
    if total:
        out[n, 0] = free_card_share(st)
        out[n, 1] = fit.sum() / total
    out[n, 2] = float(obs.instance.apps[a].gpu_whole and int(obs.instance.gpu_cards[a]) > 0)
    return out


def make_inner(cfg: MConfig) -> NodeBestFit:
    """The node rule: :class:`NodeCardMix` with ``cfg.mix_inner``, else :class:`NodeBestFit` (fresh)."""
    return NodeCardMix(cfg.mix_theta) if cfg.mix_inner else NodeBestFit()


def make_expert(cfg: MConfig) -> ClusterPolicy:
    """The history-buffer expert: :class:`ClusterCardMix` with ``cfg.card_expert``, else the paper's."""
    return ClusterCardMix(cfg.mix_theta) if cfg.card_expert else ClusterExpert(make_inner(cfg))


@dataclasses.dataclass(frozen=True)
class MConfig:
    """Hyper-parameters of EADE-M (see the module docstring)."""

    n_clusters: int
    n_features: int
    embed: int = 64
    heads: int = 4
    hidden: tuple[int, int] = (128, 64)
    lr: float = 1e-3
    batch: int = 128
    gamma: float = 0.95
    tau_soft: float = 0.01
    beta: float = 0.1
    buffer: int = 100_000
    update_every: int = 2
    eps_start: float = 0.2
    eps_end: float = 0.0
    margin: float = 0.2
    lambda_expert: float = 1.0
    pretrain: int = 300
    miss_penalty: float = 50.0
    reward_scale: float = 50.0
    attention: bool = True
    card_features: bool = False
    mix_inner: bool = False
    card_expert: bool = False
    mix_theta: float = 0.15
    mode_action: bool = False
    residual: bool = False
    residual_margin: float = 0.05
    admission: bool = False
    select_every: int = 0
    distil: bool = False
    rollout_k: int = 32
    distil_updates: int = 200
    distil_temp: float = 0.0
    distil_expert_episodes: int = -1
    distil_ties: bool = False

    @property
    def n_modes(self) -> int:
        """Values per cluster: 2 with ``mode_action``, else 1."""
        return len(MODES) if self.mode_action else 1

    @property
    def n_actions(self) -> int:
        """Actions of the value head: ``n_modes * N``, plus WAIT with ``admission``."""
        return self.n_modes * self.n_clusters + int(self.admission)

    def validate(self) -> None:
        """Raise ``ValueError`` for option combinations items 8-10 of the module docstring exclude."""
        if self.residual and not (self.mix_inner and self.card_expert) or self.residual and self.mode_action:
            raise ValueError("residual needs mix_inner and card_expert, and not mode_action")
        if self.admission and not self.residual:
            raise ValueError("admission needs residual")
        if self.distil and not (self.card_features and self.mix_inner) or self.distil and (
                self.residual or self.mode_action or self.admission):
            raise ValueError("distil needs card_features and mix_inner, and none of residual, mode_action, "
                             "admission")

    @property
    def n_state(self) -> int:
        """Length of the network input: the tokens, then :data:`GLOBAL_FEATURES` with ``distil``."""
        return (self.n_clusters + 1) * self.n_features + (GLOBAL_FEATURES if self.distil else 0)


class ClusterQ(nn.Module):
    """State ``(B, (N + 1) * M)`` -> per-cluster values ``(B, K * N)`` (``K = cfg.n_modes``, mode-major).

    With ``cfg.admission`` one more column, the value of WAIT, ``(B, K * N + 1)``. With
    ``cfg.residual`` the last layers start at zero (every value 0: the agent equals its expert).
    """

    def __init__(self, cfg: MConfig) -> None:
        super().__init__()
        self.n, self.m, self.k = cfg.n_clusters, cfg.n_features, cfg.n_modes
        e = cfg.embed
        self.embed = nn.Linear(cfg.n_features, e)
        self.attention = nn.MultiheadAttention(e, cfg.heads, batch_first=True) if cfg.attention else None
        self.norm = nn.LayerNorm(e)
        h1, h2 = cfg.hidden
        self.head = nn.Sequential(nn.Linear(2 * e, h1), nn.ReLU(), nn.Linear(h1, h2), nn.ReLU(),
                                  nn.Linear(h2, cfg.n_modes))
        self.wait = (nn.Sequential(nn.Linear(e, h2), nn.ReLU(), nn.Linear(h2, 1)) if cfg.admission
                     else None)
        self.meta = (nn.Sequential(nn.Linear(e + GLOBAL_FEATURES, h1), nn.ReLU(), nn.Linear(h1, h2),
                                   nn.ReLU(), nn.Linear(h2, len(OPTIONS))) if cfg.distil else None)
        if cfg.residual:
            for seq in (self.head, self.wait):
                last = seq[-1] if seq is not None else None
                if isinstance(last, nn.Linear):
                    nn.init.zeros_(last.weight)
                    nn.init.zeros_(last.bias)

    def tokens(self, state: torch.Tensor) -> torch.Tensor:
        """The attention tokens ``(B, N + 1, E)`` of the first ``(N + 1) * M`` state values."""
        x = self.embed(state[:, : (self.n + 1) * self.m].reshape(-1, self.n + 1, self.m))
        if self.attention is not None:
            x = self.norm(x + self.attention(x, x, x, need_weights=False)[0])
        return x

    def option_logits(self, state: torch.Tensor) -> torch.Tensor:
        """``distil``: logits of :data:`OPTIONS` from the task token and the global features, ``(B, 3)``.

        ``state`` is ``(B, (N + 1) * M + G)``, ``G`` = :data:`GLOBAL_FEATURES`.
        """
        assert self.meta is not None
        x = self.tokens(state)
        return self.meta(torch.cat([x[:, -1, :], state[:, (self.n + 1) * self.m:]], dim=1))

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        """``(B, (N + 1) * M)`` -> ``(B, K * N)``."""
        x = self.tokens(state)
        task = x[:, -1:, :].expand(-1, self.n, -1)
        out = self.head(torch.cat([x[:, :-1, :], task], dim=2))  # (B, N, K)
        out = out.transpose(1, 2).reshape(out.shape[0], self.k * self.n)
        if self.wait is not None:
            out = torch.cat([out, self.wait(x[:, -1, :])], dim=1)
        return out


class EadeMAgent(ClusterAgent):
    """The value network and its target; also a vbp policy (masked argmax, then NodeBestFit).

    The optimiser and the double-Q update live in :class:`policies.agents.eade_masked_train.DoubleQUpdate`.
    """

    name = "eade-m"

    def __init__(self, cfg: MConfig) -> None:
        cfg.validate()
        self.cfg = cfg
        self.q = ClusterQ(cfg)
        self.q_target = copy.deepcopy(self.q)
        super().__init__()
        self.n_clusters = cfg.n_clusters
        self.inner = make_inner(cfg)
        self.expert = ClusterCardMix(cfg.mix_theta)
        """The residual's base policy (used with ``cfg.residual``)."""

    # -- acting --------------------------------------------------------------------------------
    def values(self, state: np.ndarray) -> np.ndarray:
        """``Q(s, a)`` for every action (cluster, or mode and cluster; WAIT last), shape ``(A,)``."""
        with torch.no_grad():
            return self.q(torch.as_tensor(state[None], dtype=torch.float32))[0].numpy()

    def allowed(self, feasible: np.ndarray) -> np.ndarray:
        """Feasible actions ``(A,)`` from feasible clusters ``(N,)`` (WAIT allowed when one is feasible)."""
        m = np.tile(feasible, self.cfg.n_modes)
        return np.append(m, bool(feasible.any())) if self.cfg.admission else m

    def choose(self, state: np.ndarray, feasible: np.ndarray, expert: int = -1) -> int:
        """The action (``mode * N + cluster``, or ``K * N`` = WAIT) with the highest value.

        Over feasible clusters ``(N,)``; with ``cfg.residual`` the expert's cluster ``expert`` gets
        ``residual_margin`` more. Lowest index on ties; ``-1`` if no cluster is feasible.
        """
        if not feasible.any():
            return -1
        v = np.where(self.allowed(feasible), self.values(state), -np.inf)
        if self.cfg.residual and expert >= 0:
            v[expert] += self.cfg.residual_margin
        return int(np.argmax(v))

    def is_wait(self, action: int) -> bool:
        """Whether ``action`` is the admission head's WAIT."""
        return self.cfg.admission and action == self.cfg.n_modes * self.n_clusters

    def expert_choice(self, lay: EnvLayout, obs: Observation, mask: np.ndarray) -> int:
        """The residual's base cluster (mc-cardmix's) for ``obs``; ``-1`` without ``cfg.residual``."""
        if not self.cfg.residual or not mask.any():
            return -1
        return expert_cluster(self.expert, obs, mask, lay)

    def set_mode(self, inner: NodeBestFit, action: int) -> int:
        """Set ``inner``'s card mode from ``action`` (with ``mode_action``); returns the cluster."""
        if self.cfg.mode_action and isinstance(inner, NodeCardMix):
            inner.mode = MODES[action // self.n_clusters]
        return action % self.n_clusters

    def observe(self, lay: EnvLayout, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """The network's input for ``obs``: the paper's state, plus :func:`card_tokens` when configured.

        Shape ``((N + 1) * n_features,)`` float32.
        """
        base = self.encoder.vector(lay, obs.state, obs.app)
        if not self.cfg.card_features:
            return base
        tokens = base.reshape(lay.n_clusters + 1, -1)
        return np.concatenate([tokens, card_tokens(lay, obs, mask)], axis=1).ravel()

    def metric_features(self) -> int:
        """Metric resources per cluster (the token width without the card features)."""
        return self.cfg.n_features - (CARD_FEATURES if self.cfg.card_features else 0)

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Layout and inner rule (:class:`ClusterAgent`), and the expert's layout."""
        super().reset(instance, seed)
        self.expert.reset(instance, seed)

    def distil_input(self, lay: EnvLayout, obs: Observation, mask: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        """``distil``: the network input and the available options.

        Returns:
            The input ``(n_state,)`` float32 (tokens, then :func:`global_features`) and ``(3,)`` bool.
        """
        g, avail = global_features(obs, self.cfg.mix_theta)
        return np.concatenate([self.observe(lay, obs, mask), g]), avail

    def option(self, x: np.ndarray, avail: np.ndarray) -> int:
        """``distil``: index in :data:`OPTIONS` of the highest logit among ``avail`` (lowest on ties)."""
        with torch.no_grad():
            logits = self.q.option_logits(torch.as_tensor(x[None], dtype=torch.float32))[0].numpy()
        return int(np.argmax(np.where(avail, logits, -np.inf)))

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """The best feasible cluster, the node in it by the inner rule; WAIT when none fits.

        With ``distil``: the chosen option (item 12) applied to ``mc-cardmix``.
        """
        lay = self.layout_for(obs)
        if self.cfg.distil:
            if not mask.any():
                return WAIT
            g, avail = global_features(obs, self.cfg.mix_theta)
            if avail.sum() <= 1:  # one option (or none in the card model): mc-cardmix itself
                return ClusterCardMix.act(self.expert, obs, mask)
            x = np.concatenate([self.observe(lay, obs, mask), g])
            return act_option(self.expert, obs, mask, OPTIONS[self.option(x, avail)])
        a = self.choose(self.observe(lay, obs, mask), lay.clusters_with(mask).astype(bool),
                        self.expert_choice(lay, obs, mask))
        if a < 0 or self.is_wait(a):
            return WAIT
        c = self.set_mode(self.inner, a)
        return self.inner.act(obs, mask & (lay.cluster_of == c))

    def choose_cards(self, obs: Observation, host: int) -> tuple[int, ...]:
        """The inner rule's cards (``mc-cardmix``'s with ``distil``)."""
        if self.cfg.distil:
            return self.expert.choose_cards(obs, host)
        return self.inner.choose_cards(obs, host)

    # -- checkpoints ---------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """The agent-file dict (config numbers and ``state_dict`` tensors)."""
        cfg = dataclasses.asdict(self.cfg)
        cfg["hidden"] = list(cfg["hidden"])
        return {"config": cfg, "q": self.q.state_dict(), "q_target": self.q_target.state_dict()}

    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> None:
        """An agent file of kind ``"eade-m"`` (:func:`policies.agents.files.save_agent`)."""
        from policies.agents.files import save_agent

        save_agent(KIND, {**self.state(), **(extra or {})}, path)


def config_specs() -> dict[str, Spec]:
    """The allowed range of every :class:`MConfig` field (an agent file's ``config``, ``--set``)."""
    from policies.agents.eade import MAX_BUFFER, MAX_CLUSTERS, MAX_FEATURES

    big = 1_000_000
    return {
        "n_clusters": Num(1, MAX_CLUSTERS, integer=True),
        "n_features": Num(1, MAX_FEATURES + CARD_FEATURES, integer=True),
        "embed": Num(1, 1024, integer=True),
        "heads": Num(1, 64, integer=True),
        "hidden": Ints(Num(1, 4096, integer=True), 2, 2),
        "lr": Num(0.0, 1.0, lo_open=True),
        "batch": Num(1, 8192, integer=True),
        "gamma": Num(0.0, 1.0),
        "tau_soft": Num(0.0, 1.0),
        "beta": Num(0.0, 1.0),
        "buffer": Num(1, MAX_BUFFER, integer=True),
        "update_every": Num(1, 10_000, integer=True),
        "eps_start": Num(0.0, 1.0),
        "eps_end": Num(0.0, 1.0),
        "margin": Num(0.0, 1e3),
        "lambda_expert": Num(0.0, 1e3),
        "pretrain": Num(0, big, integer=True),
        "miss_penalty": Num(0.0, 1e6),
        "reward_scale": Num(0.0, 1e6, lo_open=True),
        "attention": Flag(),
        "card_features": Flag(),
        "mix_inner": Flag(),
        "card_expert": Flag(),
        "mix_theta": Num(0.0, 1.0),
        "mode_action": Flag(),
        "residual": Flag(),
        "residual_margin": Num(0.0, 1e3),
        "admission": Flag(),
        "select_every": Num(0, big, integer=True),
        "distil": Flag(),
        "rollout_k": Num(1, 4096, integer=True),
        "distil_updates": Num(0, big, integer=True),
        "distil_temp": Num(0.0, 1e3),
        "distil_expert_episodes": Num(-1, big, integer=True),
        "distil_ties": Flag(),
    }


def check_config(values: dict[str, Any], where: str = "config", *, required: Sequence[str] = ()
                 ) -> dict[str, Any]:
    """``values`` (:class:`MConfig` fields) checked against :func:`config_specs` and each other.

    Raises:
        FileFieldError: a field out of range or unknown, ``embed`` not a multiple of ``heads``,
            or an option combination :meth:`MConfig.validate` excludes.
    """
    out = check_fields(where, values, config_specs(), required=required)
    embed, heads = out.get("embed", MConfig.embed), out.get("heads", MConfig.heads)
    if out.get("attention", True) and embed % heads:
        raise FileFieldError(f"{where}.heads", f"{heads} does not divide embed {embed} (attention "
                             "heads split the embedding)")
    if out.get("card_features") and "n_features" in out and out["n_features"] <= CARD_FEATURES:
        raise FileFieldError(f"{where}.n_features", f"{out['n_features']} with card_features; expected "
                             f"more than the {CARD_FEATURES} card features")
    return out


def check_file(data: dict[str, Any]) -> None:
    """Check a loaded ``"eade-m"`` file before anything is built (:data:`policies.agents.files.CHECKS`).

    Every config field in range, the option combination valid, both networks' tensors of the shapes
    the config gives.
    """
    from policies.agents.eade import check_extras

    cfg = MConfig(**check_config(section(data, "config"), required=("n_clusters", "n_features")))
    try:
        cfg.validate()
    except ValueError as e:
        raise FileFieldError("config", str(e)) from None
    check_extras(data)
    shapes, _ = meta_shapes(lambda: ClusterQ(cfg))
    for k in ("q", "q_target"):
        check_tensors(k, data.get(k), shapes)


def from_checkpoint(data: dict[str, Any]) -> EadeMAgent:
    """The agent of a loaded ``"eade-m"`` agent file (checked by :func:`check_file` first)."""
    cfg = dict(data["config"])
    cfg["hidden"] = tuple(cfg["hidden"])
    agent = EadeMAgent(MConfig(**cfg))
    agent.q.load_state_dict(data["q"])
    agent.q_target.load_state_dict(data["q_target"])
    return agent


def expert_cluster(expert: ClusterPolicy, obs: Observation, mask: np.ndarray, lay: EnvLayout) -> int:
    """The cluster ``expert`` sends the task to (the cluster of the card for :class:`ClusterCardMix`)."""
    if isinstance(expert, ClusterCardMix):
        assert isinstance(expert.inner, NodeCardMix)
        hc = expert.inner.pick_card(obs, mask)
        if hc is not None:
            return int(lay.cluster_of[hc[0]])
    return expert.pick(obs, expert.feasible_clusters(obs, mask))


__all__ = ["CARD_FEATURES", "GLOBAL_FEATURES", "KIND", "ClusterQ", "EadeMAgent", "MConfig", "card_tokens",
           "expert_cluster", "from_checkpoint", "global_features", "make_expert", "make_inner"]
