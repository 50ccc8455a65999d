"""Stable-Baselines3 baselines (TD3, SAC, PPO) on the paper's multi-cluster MDP, as vbp policies.

They train on :func:`packing.env.eade.make_env` exactly as the paper's agent sees it: the
``N * M + M`` state, the one continuous action in ``[-1, 1]`` mapped to a cluster bin or WAIT, the
reward ``(Score - 1) * tau`` or ``-50`` (:class:`StreamCycle` plays the training streams one episode
each, in turn). SB3's ``MlpPolicy`` with its default sizes for each algorithm.

As a vbp policy (:class:`SB3Policy`) the deterministic action of the SB3 policy network picks the
cluster (:func:`policies.agents.eade.scalar_decision`: bin -> cluster, WAIT for the WAIT bin or a
cluster that cannot take the task, :class:`policies.cluster_heuristics.NodeBestFit` inside).

Files: agent files of kind ``"sb3-td3"``, ``"sb3-sac"`` or ``"sb3-ppo"`` holding the policy's
``state_dict`` (plain tensors), the net architecture and the space sizes
(:mod:`policies.agents.files`, read with ``torch.load(weights_only=True)``). Loading rebuilds the
SB3 policy class from those numbers and loads the tensors; SB3's own zip/pickle loading is never
used. The training (:class:`StreamCycle`, :func:`train`) is in :mod:`policies.agents.sb3_train`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from packing.io import escape_control
from policies.agents.checks import MAX_PARAMS, Choice, FileFieldError, Ints, Num, check_tensors
from policies.agents.eade import ClusterAgent

ALGOS = ("td3", "sac", "ppo")
"""The SB3 algorithms wrapped here."""


def _classes(algo: str) -> tuple[Any, Any]:
    from stable_baselines3 import PPO, SAC, TD3
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.sac.policies import SACPolicy
    from stable_baselines3.td3.policies import TD3Policy

    return {"td3": (TD3, TD3Policy), "sac": (SAC, SACPolicy), "ppo": (PPO, ActorCriticPolicy)}[algo]


def model_class(algo: str) -> Any:
    """The SB3 algorithm class of ``algo``."""
    return _classes(algo)[0]


def _spaces(n_state: int) -> tuple[gym.spaces.Box, gym.spaces.Box]:
    obs = gym.spaces.Box(0.0, np.inf, (n_state,), dtype=np.float32)
    return obs, gym.spaces.Box(-1.0, 1.0, (1,), dtype=np.float32)


class SB3Policy(ClusterAgent):
    """A trained SB3 policy network as a vbp policy (see the module docstring).

    Args:
        algo: ``"td3"``, ``"sac"`` or ``"ppo"``.
        policy: the SB3 policy module (``model.policy``).
        n_clusters: clusters it was trained for.
        n_features: metric resources per cluster ``M``.
        net_arch: the policy's ``net_arch`` (kept for the file).
    """

    def __init__(self, algo: str, policy: Any, n_clusters: int, n_features: int, net_arch: Any) -> None:
        self.algo, self.policy = algo, policy
        self.name = f"sb3-{algo}"
        super().__init__()
        self.n_clusters, self.n_features, self.net_arch = n_clusters, n_features, net_arch

    def action(self, state: np.ndarray) -> np.ndarray:
        """The deterministic action for one state ``(S,)``, shape ``(1,)`` in ``[-1, 1]``."""
        with torch.no_grad():
            a, _ = self.policy.predict(state[None].astype(np.float32), deterministic=True)
        return np.clip(np.asarray(a, dtype=np.float32).reshape(-1)[:1], -1.0, 1.0)

    def save(self, path: str | Path) -> None:
        """An agent file of kind ``"sb3-<algo>"`` (weights and sizes only)."""
        from policies.agents.files import save_agent

        save_agent(self.name, {"algo": self.algo, "n_clusters": self.n_clusters,
                               "n_features": self.n_features, "net_arch": self.net_arch,
                               "policy": self.policy.state_dict()}, path)


DEFAULT_ARCH = {"td3": [400, 300], "sac": [256, 256], "ppo": [64, 64]}
"""SB3's default hidden sizes of ``MlpPolicy`` per algorithm (``net_arch`` ``None``)."""

LAYER = Num(1, 4096, integer=True)
"""Allowed width of one hidden layer."""


def _arch(value: Any) -> list[list[int]]:
    """The hidden-layer lists of a stored ``net_arch`` (checked): a list, or a dict of lists."""
    if value is None:
        return []
    if isinstance(value, dict):
        for k in value:
            if k not in ("pi", "vf", "qf"):
                raise FileFieldError("net_arch", f"unknown key {escape_control(repr(k))[:40]}; "
                                     "expected pi, vf, qf")
        return [list(Ints(LAYER, 0, 8).check(f"net_arch.{k}", v)) for k, v in value.items()]
    return [list(Ints(LAYER, 0, 8).check("net_arch", value))]


def _params(n_in: int, hidden: Sequence[int], n_out: int) -> int:
    sizes = [n_in, *hidden, n_out]
    return sum((a + 1) * b for a, b in zip(sizes, sizes[1:], strict=False))


def check_file(data: dict[str, Any]) -> None:
    """Check a loaded ``"sb3-*"`` file before its network is built (:data:`policies.agents.files.CHECKS`).

    The sizes in range, the networks they describe within :data:`~policies.agents.checks.MAX_PARAMS`
    (counted from the sizes, six networks at most: actor, critics and targets), then the stored
    tensors of the shapes of the policy those sizes build.
    """
    from policies.agents.eade import MAX_CLUSTERS, MAX_FEATURES

    algo = Choice(ALGOS).check("algo", data.get("algo"))
    if data["kind"] != f"sb3-{algo}":
        raise FileFieldError("algo", f"{algo!r} in a {data['kind']!r} file")
    n_c = Num(1, MAX_CLUSTERS, integer=True).check("n_clusters", data.get("n_clusters"))
    n_f = Num(1, MAX_FEATURES, integer=True).check("n_features", data.get("n_features"))
    archs = _arch(data.get("net_arch")) or [DEFAULT_ARCH[str(algo)]]
    n_obs = (int(n_c) + 1) * int(n_f)
    total = 6 * max(_params(n_obs + 1, a, 2) for a in archs)
    if total > MAX_PARAMS:
        raise FileFieldError("net_arch", f"with {n_obs} state values describes networks of about "
                             f"{total:,} parameters; at most {MAX_PARAMS:,} are allowed")
    policy = _build(str(algo), n_obs, data.get("net_arch"))
    check_tensors("policy", data.get("policy"), {k: tuple(v.shape) for k, v in policy.state_dict().items()})


def _build(algo: str, n_obs: int, net_arch: Any) -> Any:
    """A fresh SB3 policy of ``algo`` for ``n_obs`` state values (sizes checked by :func:`check_file`)."""
    obs, act = _spaces(n_obs)
    _, policy_cls = _classes(algo)
    kwargs = {} if net_arch is None else {"net_arch": net_arch}
    return policy_cls(obs, act, lambda _: 0.0, **kwargs)


def from_checkpoint(data: dict[str, Any]) -> SB3Policy:
    """Rebuild the SB3 policy class from the file's numbers and load its tensors.

    ``data`` has passed :func:`check_file` (:func:`policies.agents.files.read_agent_file`).
    """
    algo = str(data["algo"])
    if algo not in ALGOS:
        raise ValueError(f"unknown SB3 algorithm {algo!r}")
    n_c, n_f = int(data["n_clusters"]), int(data["n_features"])
    policy = _build(algo, (n_c + 1) * n_f, data.get("net_arch"))
    policy.load_state_dict(data["policy"])
    policy.set_training_mode(False)
    return SB3Policy(algo, policy, n_c, n_f, data.get("net_arch"))


__all__ = ["ALGOS", "SB3Policy", "check_file", "from_checkpoint", "model_class"]
