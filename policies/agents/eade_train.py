"""Training of EADE-DDPG (:mod:`policies.agents.eade`): the dual replay, expert history, the loop.

The optimisers and update step (:class:`DdpgUpdate`), the replay ring buffer (:class:`Replay`), the dual
batch of history and live transitions (:func:`dual_batch`), the expert's history transitions
(:func:`expert_transitions`) and the DDPG training loop (:func:`train`). Deploying an agent
(:func:`policies.agents.eade.from_checkpoint`) never imports this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from packing.env.eade import make_env
from packing.env.layout import EnvLayout
from packing.model.instance import Instance
from policies.agents.eade import (
    Config,
    EadeAgent,
    seeded,
)
from policies.cluster_heuristics import ClusterExpert, NodeBestFit


class DdpgUpdate:
    """The DDPG learner of an :class:`EadeAgent`: its two Adam optimisers and the update step.

    Args:
        agent: the agent whose actor, critic and targets are trained.
    """

    def __init__(self, agent: EadeAgent) -> None:
        self.agent = agent
        self.actor_opt = torch.optim.Adam(agent.actor.parameters(), lr=agent.cfg.lr_actor)
        self.critic_opt = torch.optim.Adam(agent.critic.parameters(), lr=agent.cfg.lr_critic)

    def __call__(self, batch: tuple[torch.Tensor, ...]) -> tuple[float, float]:
        """One DDPG update on ``(s, a, r, s', done)`` (each of shape ``(batch, ...)``).

        Returns:
            ``(critic loss, actor loss)``.
        """
        ag, cfg = self.agent, self.agent.cfg
        s, a, r, s2, done = batch
        # 1. critic: regress Q(s, a) on r + gamma * Q'(s', mu'(s'))
        with torch.no_grad():
            target = r + cfg.gamma * (1.0 - done) * ag.critic_target(s2, ag.actor_target(s2))
        critic_loss = nn.functional.mse_loss(ag.critic(s, a), target)
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        # 2. actor: maximise Q(s, mu(s))
        actor_loss = -ag.critic(s, ag.actor(s)).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        # 3. soft target updates
        with torch.no_grad():
            for net, tgt in ((ag.actor, ag.actor_target), (ag.critic, ag.critic_target)):
                for p, q in zip(net.parameters(), tgt.parameters(), strict=True):
                    q.mul_(1.0 - cfg.tau_soft).add_(cfg.tau_soft * p)
        return critic_loss.item(), actor_loss.item()


class Replay:
    """A ring buffer of transitions ``(s, a, r, s', done)`` (numpy, float32)."""

    def __init__(self, capacity: int, n_state: int) -> None:
        self.s = np.zeros((capacity, n_state), dtype=np.float32)
        self.a = np.zeros((capacity, 1), dtype=np.float32)
        self.r = np.zeros((capacity, 1), dtype=np.float32)
        self.s2 = np.zeros((capacity, n_state), dtype=np.float32)
        self.done = np.zeros((capacity, 1), dtype=np.float32)
        self.n = 0
        self.i = 0

    def __len__(self) -> int:
        return self.n

    def add(self, s: np.ndarray, a: np.ndarray, r: float, s2: np.ndarray, done: bool) -> None:
        """Store one transition (overwriting the oldest when full)."""
        i = self.i
        self.s[i], self.a[i], self.r[i], self.s2[i], self.done[i] = s, a, r, s2, float(done)
        self.i = (i + 1) % len(self.s)
        self.n = min(self.n + 1, len(self.s))

    def index(self, rng: np.random.Generator, k: int) -> np.ndarray:
        """``k`` random stored indices (with replacement)."""
        return rng.integers(self.n, size=k)


def dual_batch(history: Replay, live: Replay, batch: int, beta: float, rng: np.random.Generator
               ) -> tuple[torch.Tensor, ...]:
    """``round(beta * batch)`` transitions from ``history``, the rest from ``live``.

    Returns:
        ``(s, a, r, s2, done)`` tensors, shapes ``(batch, S)``, ``(batch, 1)`` x 3, ``(batch, S)``.
    """
    k_hist = int(round(beta * batch)) if len(history) else 0
    if not len(live):
        k_hist = batch
    parts = [(history, history.index(rng, k_hist)), (live, live.index(rng, batch - k_hist))]
    cols = []
    for name in ("s", "a", "r", "s2", "done"):
        cols.append(torch.from_numpy(np.concatenate([getattr(b, name)[i] for b, i in parts if len(i)])))
    return tuple(cols)


def expert_transitions(instance: Instance, history: Replay, *, seed: int = 0) -> float:
    """Fill ``history`` with one expert episode on ``instance``; returns the expert's episode return."""
    env = make_env(instance, NodeBestFit())
    expert = ClusterExpert()
    expert.reset(instance, seed)
    s, _ = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        obs = env.observation()
        feasible = expert.feasible_clusters(obs, env.host_mask())
        a = env.actions.action_of_bin(env.layout, expert.pick(obs, feasible))  # type: ignore[attr-defined]
        s2, r, done, _, _ = env.step(a)
        history.add(s, a, r, s2, done)
        s, total = s2, total + r
    return total


def evaluate(agent: EadeAgent, instance: Instance) -> tuple[float, int]:
    """Deterministic episode in the env: ``(return, tasks placed)``."""
    env = make_env(instance, NodeBestFit())
    s, _ = env.reset(seed=0)
    total, done, info = 0.0, False, {"deployed": 0}
    while not done:
        s, r, done, _, info = env.step(agent.action(s))
        total += r
    return total, int(info["deployed"])


def train(streams: Sequence[Instance], *, episodes: int, seed: int = 0, cfg: Config | None = None,
          log: Callable[[dict[str, Any]], None] | None = None, agent: EadeAgent | None = None,
          start_episode: int = 0, checkpoint: Callable[[Any, int], None] | None = None,
          **overrides: Any) -> tuple[EadeAgent, list[dict[str, Any]]]:
    """Train EADE-DDPG on ``streams`` (one episode per stream, cycling).

    With ``beta == 0`` no expert history is built (plain DDPG's replay); with ``attention=False``
    the networks read the flat state (the DDPG baseline of the paper).

    Args:
        streams: instances with the same clusters (their own FIFO order is the episode).
        episodes: training episodes (the total, counting ``start_episode``).
        seed: seeds every draw (:func:`seeded`).
        cfg: hyper-parameters (default: the paper's, sized from ``streams[0]``).
        log: receives a dict per episode (``episode``, ``return``, ``deployed``, ``seconds``).
        agent: continue training this agent (resume; the replay buffers start again).
        start_episode: the first episode index (resume).
        checkpoint: called as ``checkpoint(agent, episodes done)`` after every episode.
        **overrides: fields of :class:`Config` to change (e.g. ``embed=32, batch=64``).

    Returns:
        The agent and one dict per episode run.
    """
    gen, rng = seeded(seed)
    lay = EnvLayout.of(streams[0])
    if cfg is None:
        cfg = Config(n_clusters=lay.n_clusters, n_features=int(lay.cluster_capacity.shape[1]), **overrides)
    if agent is None:
        agent = EadeAgent(cfg)
    cfg = agent.cfg
    update = DdpgUpdate(agent)
    n_state = (cfg.n_clusters + 1) * cfg.n_features
    history, live = Replay(cfg.buffer, n_state), Replay(cfg.buffer, n_state)
    if cfg.beta > 0:
        for i, inst in enumerate(streams):
            expert_transitions(inst, history, seed=seed + i)
    curve: list[dict[str, Any]] = []
    for ep in range(start_episode, episodes):
        t0 = time.perf_counter()
        env = make_env(streams[ep % len(streams)], NodeBestFit())
        s, _ = env.reset(seed=seed + ep)
        total, done, info = 0.0, False, {"deployed": 0}
        while not done:
            noise = cfg.noise * torch.randn(1, generator=gen).numpy()
            a = np.clip(agent.action(s) + noise, -1.0, 1.0).astype(np.float32)
            s2, r, done, _, info = env.step(a)
            live.add(s, a, r, s2, done)
            s, total = s2, total + r
            if len(live) + len(history) >= cfg.batch:
                update(dual_batch(history, live, cfg.batch, cfg.beta, rng))
        row = {"episode": ep, "return": total, "deployed": int(info["deployed"]),
               "seconds": time.perf_counter() - t0}
        curve.append(row)
        if log:
            log(row)
        if checkpoint:
            checkpoint(agent, ep + 1)
    return agent, curve


__all__ = ["DdpgUpdate", "Replay", "dual_batch", "evaluate", "expert_transitions", "train"]
