"""Rollout admission and card mode on top of ``mc-cardmix``: a look-ahead expert for EADE-M.

Diagnosis (default scenario, training streams 0-9): every task the proven optimum places and
``mc-cardmix`` does not is a whole-card or 810-milli task, and *vice versa*; the difference is how many
cards the small (shared-card) tasks end up occupying: at the end of the stream ``mc-cardmix`` leaves
8-13 cards' worth of free share in half-used cards, the optimum 1.5-3. Which card a small task
opens, and whether a whole-card task is admitted, decides that; the best choice depends on how many
tasks are still to come (the stream has a known length ``T``) and on their size distribution.

**Card model.** CPU and memory never bind in this scenario, so a state is the free share of each GPU
card (integer milli of the card, the largest share over the card's GPU resources), a task is its
card share in milli (1000 for a whole card), and ``mc-cardmix``'s decision is: among the cards the
task fits on, the emptiest while more than ``theta`` of all cards are entirely free, else the tightest
fit (:func:`cardmix_batch`, vectorised over many streams at once; on streams 0-9 it reproduces the
real ``mc-cardmix`` count on every stream, 159.1).

**Rollout labels** (:class:`RolloutLabeler`, one-step policy improvement on ``mc-cardmix``): for the
task at position ``t`` of ``T`` the options are ``fresh`` (the emptiest fitting card), ``fit`` (the
tightest fitting card) and, for a task of at least ``big`` milli (810-milli and whole-card tasks),
``drop`` (WAIT: in a stream without departures the task is lost). Each option is applied to the card
state, then ``mc-cardmix`` is rolled out on ``K`` futures of ``T - t - 1`` tasks drawn i.i.d. from
the **training** size distribution (:data:`TRAIN_SIZES`; the same futures for every option), and the
option with the most tasks placed (this one included) wins; ties keep ``mc-cardmix``'s own option.
Nothing of the stream after the current task is read (only its length).

``mc-rollout`` (:class:`ClusterRollout`) is the labeler as a policy (7-30 ms a decision, too slow for
the 2 ms target; EADE-M distils it, see :mod:`policies.agents.eade_masked` item 12). It is not in the
policy registry (its ``drop`` is a WAIT, and it does not declare ``wait_when_full``: ``simulate``
runs it, the env contract of registered policies does not); benchmarks/bench_multicluster.py has it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from policies.base import WAIT, Observation
from policies.cluster_heuristics import MIX_THETA, ClusterCardMix, NodeCardMix

if TYPE_CHECKING:
    from packing.feasibility.predicates import ClusterState
    from packing.model.instance import Instance

TRAIN_SIZES: tuple[tuple[int, int], ...] = (
    (50, 7), (110, 6), (160, 23), (220, 21), (230, 41), (320, 116), (330, 1), (350, 1), (370, 18),
    (440, 1), (460, 46), (470, 225), (480, 4), (550, 25), (590, 22), (650, 62), (810, 345), (1000, 1236))
"""``(card share in milli, count)`` of the 2,200 tasks of training streams 0-9 of the default scenario
(``vbp generate multicluster --seed 0..9``; 1000 = a whole card). Validation and held-out streams are
never read."""

OPTIONS = ("fresh", "fit", "drop")
"""Rollout options, in label order."""

BIG = 750
"""Tasks of at least this card share (milli) may be dropped (810-milli and whole-card tasks)."""

FULL = 1000
"""Milli of a card."""


def task_milli(instance: Instance, app: int) -> int:
    """Card share of one card of ``app`` in milli (1000 for whole cards, 0 without GPU)."""
    if int(instance.gpu_cards[app]) == 0:
        return 0
    if instance.apps[app].gpu_whole:
        return FULL
    cap = np.asarray(instance.card_capacity, dtype=np.float64)
    cap = cap[cap.max(axis=1) > 0]
    share = np.asarray(instance.gpu_demand[app], dtype=np.float64) / cap.max(axis=0)
    return int(round(float(share.max()) * FULL))


def card_free(st: ClusterState) -> np.ndarray:
    """Free share of every existing card in milli (the smallest over GPU resources), shape ``(n_cards,)``.

    Cards in ``(host, card)`` order; empty without GPU cards.
    """
    if not st.instance.gpu_resources or not st.card_exists.any():
        return np.zeros(0, dtype=np.int64)
    cap = np.where(st.card_capacity[:, None, :] > 0, st.card_capacity[:, None, :], 1.0)
    free = ((st.card_capacity[:, None, :] - st.card_used) / cap).min(axis=2)
    return np.rint(free[st.card_exists] * FULL).astype(np.int64)


def cardmix_batch(free: np.ndarray, seqs: np.ndarray, theta: float = MIX_THETA) -> np.ndarray:
    """``mc-cardmix`` in the card model on ``B`` streams at once; tasks placed per stream.

    Args:
        free: free milli per card, shape ``(B, n_cards)`` (not modified).
        seqs: task shares in milli, shape ``(B, L)`` (0 = no task).
        theta: share of entirely free cards above which the emptiest fitting card is taken.

    Returns:
        Tasks placed, shape ``(B,)`` int.
    """
    free = np.array(free, dtype=np.int64)
    b, n_cards = free.shape
    placed = np.zeros(b, dtype=np.int64)
    rows = np.arange(b)
    for t in range(seqs.shape[1]):
        s = seqs[:, t]
        fit = free >= s[:, None]
        ok = fit.any(axis=1) & (s > 0)
        fresh = (free == FULL).sum(axis=1) > theta * n_cards
        key = np.where(fresh[:, None], -free, free - s[:, None])
        c = np.where(fit, key, np.iinfo(np.int64).max).argmin(axis=1)
        free[rows[ok], c[ok]] -= s[ok]
        placed += ok
    return placed


def options(free: np.ndarray, s: int, theta: float = MIX_THETA, big: int = BIG
            ) -> tuple[list[tuple[str, int]], str]:
    """The distinct options for a task of ``s`` milli on cards ``free`` (shape ``(n_cards,)``).

    Returns:
        ``[(option, card)]`` (card ``-1`` for ``drop``; ``fit`` only when its card's free share differs
        from ``fresh``'s) and ``mc-cardmix``'s own option (``"fresh"`` or ``"fit"``). Empty when the task
        fits no card.
    """
    fit = free >= s
    if not fit.any():
        return [], "fit"
    top = np.iinfo(np.int64).max
    c_fresh = int(np.argmin(np.where(fit, -free, top)))
    c_fit = int(np.argmin(np.where(fit, free - s, top)))
    out = [("fresh", c_fresh)]
    if free[c_fit] != free[c_fresh]:
        out.append(("fit", c_fit))
    if s >= big:
        out.append(("drop", -1))
    fresh = (free == FULL).sum() > theta * len(free)
    return out, "fit" if not fresh and out[1:2] and out[1][0] == "fit" else "fresh"


def option_values(free: np.ndarray, s: int, opts: Sequence[tuple[str, int]], futures: np.ndarray,
                  base: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Mean tasks placed (this task included) for each option, the rest rolled out by ``base``.

    Args:
        free: free milli per card, shape ``(n_cards,)`` (not modified).
        s: the task's share in milli.
        opts: ``(option, card)`` pairs, card ``-1`` = drop (see :func:`options`).
        futures: the sampled rest of the stream, shares in milli, shape ``(K, L)``.
        base: the rollout policy on a batch: ``(free (B, n_cards), seqs (B, L)) -> placed (B,)``.

    Returns:
        shape ``(len(opts),)``.
    """
    starts = []
    for _, c in opts:
        f = free.copy()
        if c >= 0:
            f[c] -= s
        starts.append(f)
    n, k = len(opts), len(futures)
    placed = base(np.repeat(np.stack(starts), k, axis=0), np.tile(futures, (n, 1)))
    return placed.reshape(n, k).mean(axis=1) + np.array([float(c >= 0) for _, c in opts])


class RolloutLabeler:
    """One-step rollout improvement of ``mc-cardmix`` (see the module docstring).

    Args:
        sizes: the training size distribution, ``(milli, count)`` pairs (default :data:`TRAIN_SIZES`).
        k: sampled futures per decision.
        theta: ``mc-cardmix``'s threshold (base policy of the rollouts).
        big: smallest share (milli) that may be dropped.
        seed: seed of the owned generator drawing the futures.
    """

    def __init__(self, sizes: Sequence[tuple[int, int]] = TRAIN_SIZES, k: int = 32, theta: float = MIX_THETA,
                 big: int = BIG, seed: int = 0) -> None:
        table = np.asarray(sizes, dtype=np.float64)
        self.values_milli = table[:, 0].astype(np.int64)
        self.p = table[:, 1] / table[:, 1].sum()
        self.k, self.theta, self.big = int(k), float(theta), int(big)
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None) -> None:
        """A fresh generator from ``seed``."""
        self.rng = np.random.default_rng(seed)

    def evaluate(self, free: np.ndarray, s: int, remaining: int) -> tuple[dict[str, float], str]:
        """Mean tasks placed (this one included) per option, and the chosen option.

        Args:
            free: free milli per card, shape ``(n_cards,)``.
            s: the task's share in milli.
            remaining: tasks still to come after this one.

        Returns:
            ``({option: value}, chosen option)``; ``({}, "fit")`` when the task fits no card. With a
            single option (or nothing left to come) no rollout runs and the value is 1.
        """
        opts, base = options(free, s, self.theta, self.big)
        if not opts:
            return {}, "fit"
        if len(opts) == 1 or remaining <= 0:
            return {name: float(c >= 0) for name, c in opts}, base
        fut = self.values_milli[self.rng.choice(len(self.p), size=(self.k, remaining), p=self.p)]
        val = option_values(free, s, opts, fut, lambda f, q: cardmix_batch(f, q, self.theta))
        out = {name: float(v) for (name, _), v in zip(opts, val, strict=True)}
        best = max(out, key=lambda o: out[o])
        return out, base if out[best] <= out[base] + 1e-9 else best

    def label(self, obs: Observation) -> str | None:
        """The chosen option for ``obs`` (its state, task and position ``obs.step`` in the stream).

        ``None`` when the card model has no option (a task without GPU, or no card fits).
        """
        inst = obs.instance
        s = task_milli(inst, obs.app)
        if s <= 0:
            return None
        remaining = len(inst.container_app) - obs.step - 1
        values, best = self.evaluate(card_free(obs.state), s, remaining)
        return best if values else None


class ClusterRollout(ClusterCardMix):
    """``mc-rollout``: :class:`RolloutLabeler`'s option, then ``mc-cardmix`` with that card mode.

    Args:
        k: sampled futures per decision.
        theta: ``mc-cardmix``'s threshold.
    """

    name = "mc-rollout"

    def __init__(self, k: int = 32, theta: float = MIX_THETA) -> None:
        super().__init__(theta)
        self.labeler = RolloutLabeler(k=k, theta=theta)

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Layout, inner rule, and the labeler's generator from ``seed``."""
        super().reset(instance, seed)
        self.labeler.reset(seed)

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """WAIT for ``drop``; otherwise ``mc-cardmix`` with the chosen card mode."""
        if not mask.any():
            return WAIT
        option = self.labeler.label(obs)
        return ClusterCardMix.act(self, obs, mask) if option is None else act_option(self, obs, mask, option)


def act_option(policy: ClusterCardMix, obs: Observation, mask: np.ndarray, option: str) -> int:
    """``mc-cardmix`` (``policy``) forced to ``option``: WAIT for ``drop``, else its card mode."""
    if option == "drop":
        return WAIT
    inner = policy.inner
    assert isinstance(inner, NodeCardMix)
    inner.mode = option
    try:
        return ClusterCardMix.act(policy, obs, mask)
    finally:
        inner.mode = None


__all__ = ["BIG", "FULL", "OPTIONS", "TRAIN_SIZES", "ClusterRollout", "RolloutLabeler", "act_option",
           "card_free", "cardmix_batch", "options", "task_milli"]
