"""Training of the Stable-Baselines3 baselines (:mod:`policies.agents.sb3`) on the multi-cluster MDP.

:class:`StreamCycle` plays the training streams one episode each, in turn; :func:`train` runs the
SB3 algorithm on it. Deploying an agent (:func:`policies.agents.sb3.from_checkpoint`) never imports
this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from packing.env.eade import make_env
from packing.env.layout import EnvLayout
from packing.model.instance import Instance
from policies.agents.sb3 import (
    ALGOS,
    SB3Policy,
    model_class,
)
from policies.cluster_heuristics import NodeBestFit


class StreamCycle(gym.Env[np.ndarray, np.ndarray]):
    """The paper's env over several streams: each ``reset`` starts the next stream's episode.

    Args:
        streams: instances with the same clusters.
        log: receives a dict per finished episode (``episode``, ``return``, ``deployed``, ``seconds``).
    """

    def __init__(self, streams: Sequence[Instance],
                 log: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.envs = [make_env(s, NodeBestFit()) for s in streams]
        self.observation_space = self.envs[0].observation_space
        self.action_space = self.envs[0].action_space
        self.log = log
        self.episode = -1
        self._total = 0.0
        self._t0 = 0.0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """The next stream, from its start."""
        super().reset(seed=seed)
        self.episode += 1
        self._total, self._t0 = 0.0, time.perf_counter()
        env = self.envs[self.episode % len(self.envs)]
        return env.reset(seed=int(self.np_random.integers(2**31)))

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The current stream's step."""
        s, r, done, trunc, info = self.envs[self.episode % len(self.envs)].step(action)
        self._total += r
        if done and self.log:
            self.log({"episode": self.episode, "return": self._total, "deployed": int(info["deployed"]),
                      "seconds": time.perf_counter() - self._t0})
        return s, r, done, trunc, info


def train(algo: str, streams: Sequence[Instance], *, episodes: int, seed: int = 0,
          log: Callable[[dict[str, Any]], None] | None = None, **kwargs: Any
          ) -> tuple[SB3Policy, list[dict[str, Any]]]:
    """Train SB3 ``algo`` for ``episodes`` episodes on ``streams`` (cycling); ``kwargs`` go to SB3.

    Returns:
        The trained policy and one dict per finished episode.
    """
    if algo not in ALGOS:
        raise ValueError(f"unknown SB3 algorithm {algo!r}; known: {ALGOS}")
    curve: list[dict[str, Any]] = []

    def keep(row: dict[str, Any]) -> None:
        curve.append(row)
        if log:
            log(row)

    env = StreamCycle(streams, keep)
    model_cls = model_class(algo)
    steps = len(env.envs[0].arrivals_.app)  # decisions per episode, at most
    if algo == "ppo":
        kwargs.setdefault("n_steps", max(64, steps))
        kwargs.setdefault("batch_size", 64)
    else:
        kwargs.setdefault("learning_starts", min(1000, steps * max(1, episodes) // 4))
    model = model_cls("MlpPolicy", env, seed=seed, device="cpu", verbose=0, **kwargs)
    model.learn(total_timesteps=episodes * steps)
    n_c = EnvLayout.of(streams[0]).n_clusters
    n_f = int(EnvLayout.of(streams[0]).cluster_capacity.shape[1])
    net_arch = model.policy_kwargs.get("net_arch")
    return SB3Policy(algo, model.policy, n_c, n_f, net_arch), curve


__all__ = ["StreamCycle", "train"]
