"""EADE-DDPG: DDPG with self-attention inputs and a dual (expert + live) replay, on the multi-cluster MDP.

The environment is :func:`packing.env.eade.make_env` (state ``N * M + M`` values, one continuous
action mapped to a cluster or WAIT, reward ``(Score - 1) * tau`` or ``-50``).

Networks (``E`` = ``embed``, 128 in the paper)
    :class:`TokenAttention` reshapes the state ``(B, N * M + M)`` into ``N + 1`` tokens of ``M``
    values (the clusters, then the task), embeds each with one linear layer to ``E`` plus a learned
    position embedding (so cluster ``n`` stays cluster ``n``: the action names clusters by position),
    applies one multi-head self-attention layer with a residual connection and layer norm, and
    flattens to ``(B, (N + 1) * E)``. The actor is ``TokenAttention -> 128 -> 64 -> 1`` (ReLU, tanh
    out); the critic is ``TokenAttention`` of the state, concatenated with the action, ``-> 128 ->
    64 -> 1`` (ReLU).

Training (:func:`train`)
    Adam, lr ``1e-4`` (actor) and ``1e-3`` (critic), batch 256, discount ``gamma``, soft target
    updates ``theta' <- rho theta + (1 - rho) theta'`` with ``rho = tau_soft``, Gaussian exploration
    noise ``sigma`` on the action (clipped to ``[-1, 1]``). Dual replay: a *history* buffer pre-filled
    with expert transitions (:class:`policies.cluster_heuristics.ClusterExpert`'s cluster, as the
    centre of its action bin) and a *live* buffer of the agent's own transitions; each batch takes a
    share ``beta`` (0.1) from history and the rest from live. One update per environment step once
    the live buffer holds a batch.

Baseline: ``Config(attention=False, beta=0)`` is plain DDPG (the flat state into the MLPs, no
history buffer), the paper's DDPG baseline (``vbp train rl --algo ddpg``).

The training (:func:`train`, the replay buffers) is in :mod:`policies.agents.eade_train`.

Why this agent does not learn on the default scenario, and the improvement that does: see
:mod:`policies.agents.eade_masked` (EADE-M).

Reproducibility: :func:`seeded` seeds torch (``torch.manual_seed``) and returns the
``torch.Generator`` and ``numpy.random.Generator`` every random draw of the run uses (network
initialisation happens right after, under that seed). Checkpoints are ``torch.save`` of plain
``state_dict`` tensors and a config of numbers (:meth:`EadeAgent.save`); :meth:`EadeAgent.load` reads
them with ``torch.load(weights_only=True)`` only.

As a vbp policy (:class:`EadeAgent`: ``reset`` / ``act(obs, mask)``) the agent maps its action to a
cluster and lets :class:`policies.cluster_heuristics.NodeBestFit` choose node and cards; a cluster
that cannot take the task, or the WAIT bin, gives WAIT (in a stream without departures the task is
then never placed, as in the env).
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

from packing.env.eade import ClusterFreeEncoder
from packing.env.layout import EnvLayout
from packing.errors import input_error
from packing.io import escape_control
from packing.model.instance import Instance, Placement
from policies.agents.checks import (
    MAX_LIST,
    FileFieldError,
    Flag,
    Ints,
    Num,
    Spec,
    Text,
    check_fields,
    check_tensors,
    meta_shapes,
    section,
)
from policies.base import WAIT, BasePolicy, Observation
from policies.cluster_heuristics import NodeBestFit

NETS = ("actor", "critic", "actor_target", "critic_target")
"""The networks a checkpoint holds (``state_dict`` each)."""


def seeded(seed: int) -> tuple[torch.Generator, np.random.Generator]:
    """Seed torch's global generator (network init) and return the run's own generators."""
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed), np.random.default_rng(seed)


@dataclasses.dataclass(frozen=True)
class Config:
    """Hyper-parameters (the paper's values by default)."""

    n_clusters: int
    n_features: int
    embed: int = 128
    heads: int = 4
    hidden: tuple[int, int] = (128, 64)
    lr_actor: float = 1e-4
    lr_critic: float = 1e-3
    batch: int = 256
    gamma: float = 0.99
    tau_soft: float = 0.005
    noise: float = 0.2
    beta: float = 0.1
    buffer: int = 100_000
    attention: bool = True


class Flat(nn.Module):
    """The plain-DDPG input layer: the state as it is, ``(B, S)`` -> ``(B, S)``."""

    def __init__(self, n_state: int) -> None:
        super().__init__()
        self.out_features = n_state

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        """Identity."""
        return state


def _inputs(cfg: Config) -> TokenAttention | Flat:
    if cfg.attention:
        return TokenAttention(cfg.n_clusters + 1, cfg.n_features, cfg.embed, cfg.heads)
    return Flat((cfg.n_clusters + 1) * cfg.n_features)


class TokenAttention(nn.Module):
    """State ``(B, (N + 1) * M)`` -> self-attended tokens, flattened to ``(B, (N + 1) * E)``."""

    def __init__(self, n_tokens: int, n_features: int, embed: int, heads: int) -> None:
        super().__init__()
        self.n_tokens, self.n_features = n_tokens, n_features
        self.embed = nn.Linear(n_features, embed)
        self.position = nn.Parameter(torch.zeros(n_tokens, embed))
        self.attention = nn.MultiheadAttention(embed, heads, batch_first=True)
        self.norm = nn.LayerNorm(embed)

    @property
    def out_features(self) -> int:
        """``(N + 1) * E``."""
        return self.n_tokens * self.embed.out_features

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        """``(B, (N + 1) * M)`` -> ``(B, (N + 1) * E)``."""
        x = self.embed(state.view(-1, self.n_tokens, self.n_features)) + self.position
        a, _ = self.attention(x, x, x, need_weights=False)
        return self.norm(x + a).flatten(1)


def _mlp(n_in: int, hidden: Sequence[int], n_out: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(n_in, h), nn.ReLU()]
        n_in = h
    return nn.Sequential(*layers, nn.Linear(n_in, n_out))


class Actor(nn.Module):
    """``mu(s)`` in ``[-1, 1]``, shape ``(B, 1)``."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.tokens = _inputs(cfg)
        self.head = _mlp(self.tokens.out_features, cfg.hidden, 1)

    def forward(self, state: torch.Tensor) -> torch.Tensor:
        """``(B, S)`` -> ``(B, 1)``."""
        return torch.tanh(self.head(self.tokens(state)))


class Critic(nn.Module):
    """``Q(s, a)``, shape ``(B, 1)``."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.tokens = _inputs(cfg)
        self.head = _mlp(self.tokens.out_features + 1, cfg.hidden, 1)

    def forward(self, state: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        """``(B, S), (B, 1)`` -> ``(B, 1)``."""
        return self.head(torch.cat([self.tokens(state), action], dim=1))


def scalar_decision(lay: EnvLayout, inner: NodeBestFit, obs: Observation, mask: np.ndarray, x: float) -> int:
    """The host for the paper's scalar action ``x`` (bin -> cluster, ``inner`` picks the node).

    WAIT for the WAIT bin or a cluster that cannot take the task (the env's invalid action).
    """
    b = lay.n_clusters + 1
    x = min(1.0, max(-1.0, x)) if np.isfinite(x) else 1.0
    k = min(int(np.floor((x + 1.0) / 2.0 * b)), b - 1)
    sub = mask & (lay.cluster_of == k)
    if k >= lay.n_clusters or not sub.any():
        return WAIT
    return inner.act(obs, sub)


class ClusterAgent(BasePolicy):
    """What every multi-cluster agent shares as a vbp policy: the layout, the node rule, the cards.

    A subclass sets ``n_clusters`` (what it was trained for) and ``action(state)`` (shape ``(1,)``
    in ``[-1, 1]``); :meth:`act` maps that value to a cluster (:func:`scalar_decision`) and lets
    :class:`NodeBestFit` choose node and cards. Agents that decide otherwise override :meth:`act`
    and use :meth:`layout_for`.
    """

    n_clusters: int

    def __init__(self) -> None:
        self.encoder = ClusterFreeEncoder()
        self.inner = NodeBestFit()
        self._layout: EnvLayout | None = None

    def action(self, state: np.ndarray) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def metric_features(self) -> int | None:
        """Metric resources per cluster the agent is trained for (``None``: not recorded)."""
        cfg = getattr(self, "cfg", None)
        return getattr(self, "n_features", None) if cfg is None else int(cfg.n_features)

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Compute the layout (clusters and resources must match the agent's).

        Raises:
            InputError: the instance has another number of clusters or metric resources (naming
                the agent's file, ``source``, when it was loaded from one).
        """
        lay = EnvLayout.of(instance)
        n_features = self.metric_features()
        have = int(lay.cluster_capacity.shape[1])
        if lay.n_clusters != self.n_clusters or (n_features is not None and have != n_features):
            raise input_error(str(getattr(self, "source", self.name)), "clusters",
                              f"the agent is trained for {self.n_clusters} clusters of {n_features} "
                              f"metric resources; instance {escape_control(instance.name)!r} has "
                              f"{lay.n_clusters} clusters of {have}")
        self._layout = lay
        self.inner.reset(instance, seed)

    def layout_for(self, obs: Observation) -> EnvLayout:
        """The layout of ``obs``'s instance (computed on first use)."""
        if self._layout is None or self._layout.instance is not obs.instance:
            self.reset(obs.instance)
        assert self._layout is not None
        return self._layout

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """The cluster of the action, the node by :class:`NodeBestFit`; WAIT for an invalid one."""
        lay = self.layout_for(obs)
        x = float(self.action(self.encoder.vector(lay, obs.state, obs.app))[0])
        return scalar_decision(lay, self.inner, obs, mask, x)

    def choose_cards(self, obs: Observation, host: int) -> tuple[int, ...]:
        """:class:`NodeBestFit`'s cards."""
        return self.inner.choose_cards(obs, host)

    def run_episode(self, instance: Instance) -> Placement:
        """Replay the instance's stream with this agent (:func:`packing.sim.simulator.simulate`)."""
        from packing.sim.simulator import simulate

        return simulate(instance, self, seed=0).placement


class EadeAgent(ClusterAgent):
    """Actor, critic and their targets; also a vbp policy (see the module docstring).

    The optimisers and the DDPG update live in :class:`policies.agents.eade_train.DdpgUpdate`.

    Args:
        cfg: the hyper-parameters.
    """

    name = "eade-ddpg"

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.name = "eade-ddpg" if cfg.attention else "ddpg"
        self.actor, self.critic = Actor(cfg), Critic(cfg)
        self.actor_target, self.critic_target = copy.deepcopy(self.actor), copy.deepcopy(self.critic)
        super().__init__()
        self.n_clusters = cfg.n_clusters

    # -- acting --------------------------------------------------------------------------------
    def action(self, state: np.ndarray) -> np.ndarray:
        """The deterministic action ``mu(s)``, shape ``(1,)`` float32."""
        with torch.no_grad():
            return self.actor(torch.as_tensor(state[None], dtype=torch.float32))[0].numpy()

    # -- checkpoints ---------------------------------------------------------------------------
    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> None:
        """An agent file (:func:`policies.agents.files.save_agent`, kind ``"eade"``); ``extra`` adds keys."""
        from policies.agents.files import save_agent

        nets = {k: getattr(self, k).state_dict() for k in NETS}
        save_agent("eade", {"config": dataclasses.asdict(self.cfg), **nets, **(extra or {})}, path)

    @classmethod
    def load(cls, path: str | Path) -> EadeAgent:
        """Read an agent file (``torch.load(weights_only=True)`` only)."""
        from policies.agents.files import read_agent_file

        return from_checkpoint(read_agent_file(path))


MAX_CLUSTERS = 1024
"""Most clusters an agent file may describe."""

MAX_FEATURES = 64
"""Most metric resources (token width ``M``) an agent file may describe."""

MAX_BUFFER = 1_000_000
"""Largest replay buffer (transitions) a config may ask for."""


def config_specs() -> dict[str, Spec]:
    """The allowed range of every :class:`Config` field (an agent file's ``config``, ``--set``)."""
    return {
        "n_clusters": Num(1, MAX_CLUSTERS, integer=True),
        "n_features": Num(1, MAX_FEATURES, integer=True),
        "embed": Num(1, 1024, integer=True),
        "heads": Num(1, 64, integer=True),
        "hidden": Ints(Num(1, 4096, integer=True), 1, 8),
        "lr_actor": Num(0.0, 1.0, lo_open=True),
        "lr_critic": Num(0.0, 1.0, lo_open=True),
        "batch": Num(1, 8192, integer=True),
        "gamma": Num(0.0, 1.0),
        "tau_soft": Num(0.0, 1.0),
        "noise": Num(0.0, 10.0),
        "beta": Num(0.0, 1.0),
        "buffer": Num(1, MAX_BUFFER, integer=True),
        "attention": Flag(),
    }


def check_config(values: dict[str, Any], where: str = "config", *, required: Sequence[str] = ()
                 ) -> dict[str, Any]:
    """``values`` (a :class:`Config`'s fields) checked against :func:`config_specs` and each other.

    Raises:
        FileFieldError: a field out of range, unknown, or ``embed`` not a multiple of ``heads``.
    """
    out = check_fields(where, values, config_specs(), required=required)
    embed, heads = out.get("embed", Config.embed), out.get("heads", Config.heads)
    if out.get("attention", True) and embed % heads:
        raise FileFieldError(f"{where}.heads", f"{heads} does not divide embed {embed} (attention "
                             "heads split the embedding)")
    return out


def check_extras(data: dict[str, Any]) -> None:
    """The training facts ``vbp train rl`` stores with the weights (``episodes``, ``curve``...)."""
    if "episodes" in data:
        Num(0, 10**9, integer=True).check("episodes", data["episodes"])
    if "seed" in data:
        Num(0, 2**32 - 1, integer=True).check("seed", data["seed"])
    for key in ("algo", "command"):
        if key in data:
            Text(10_000).check(key, data[key])
    if "curve" in data:
        curve = data["curve"]
        if not isinstance(curve, list) or len(curve) > MAX_LIST:
            raise FileFieldError("curve", f"expected a list of at most {MAX_LIST:,} rows")
        for i, row in enumerate(curve):
            if not isinstance(row, dict):
                raise FileFieldError(f"curve[{i}]", "expected a dict of numbers")
            for k, v in row.items():
                Num(-1e15, 1e15).check(f"curve[{i}].{escape_control(str(k))[:30]}", v)


def check_file(data: dict[str, Any]) -> None:
    """Check a loaded ``"eade"`` file before anything is built (:data:`policies.agents.files.CHECKS`).

    Every config field in range, every network's tensors of the shapes the config gives.
    """
    cfg = Config(**check_config(section(data, "config"), required=("n_clusters", "n_features")))
    check_extras(data)
    for k in NETS:
        build = Actor if k.startswith("actor") else Critic
        shapes, _ = meta_shapes(lambda build=build: build(cfg))  # type: ignore[misc]
        check_tensors(k, data.get(k), shapes)


def from_checkpoint(data: dict[str, Any]) -> EadeAgent:
    """The agent of a loaded ``"eade"`` agent file (:func:`policies.agents.files.load_agent`).

    ``data`` has passed :func:`check_file` (:func:`policies.agents.files.read_agent_file`).
    """
    cfg = dict(data["config"])
    cfg["hidden"] = tuple(cfg["hidden"])
    agent = EadeAgent(Config(**cfg))
    for k in NETS:
        getattr(agent, k).load_state_dict(data[k])
    return agent


__all__ = ["Actor", "Config", "Critic", "EadeAgent", "Flat", "TokenAttention", "scalar_decision", "seeded"]
