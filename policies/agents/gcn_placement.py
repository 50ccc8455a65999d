"""The GCN agent as a placement policy: a graph of apps and hosts, a host by masked softmax, REINFORCE.

Graph of one decision (built by :class:`Featurizer` from the :class:`~packing.sim.policy.Observation`)
    Nodes ``0 .. A-1`` are the apps, ``A .. A+H-1`` the hosts. Every node has the same ``F`` columns:
    a one-hot kind (app, host), the app block (zeros on hosts) and the host block (zeros on apps).

    * app block (``R + 6``): demand / the largest host capacity per resource (``R``); pending
      containers / the app's count; containers alive (by this policy's record) / count; ``1 / cap``
      (anti-affinity cap, 0 without one); 1 for the app being placed; pending volume (``pending *
      mean_r(d_r / c_r)``) / the instance's total volume; rule degree / A.
    * host block (``2R + 3 + 10``): load per resource (``R``); open flag; residual after placing the
      request per resource, clipped to ``[-1, 1]`` (``R``); containers of the request's app here / its
      cap; the engine's mask; and the ten features of :mod:`policies.swarm.features` (Best-Fit,
      bottleneck, balance, dot, L2, anti-affinity slots, exclusion pressure, empty host, index,
      open need), so that the head can express the classic rules and the swarm policy exactly.

    Edges, three relations: app -> host and host -> app for every (app, host) pair with containers
    alive (weight: their share of the host, ``count * mean_r(d_r / c_r)``); app -> app for every rule
    or exclusion, both ways (weight 1 for ``k = 0``, 0.5 otherwise).

Network (:class:`PlacementNet`)
    :class:`policies.agents.gcn.GraphEncoder` (eq. 4 layers, mean pooling so the scale does not grow
    with the cluster), then per host ``logit_h = MLP([e_h, e_req, e_graph]) + w . hostblock_h``: an
    MLP of the host's embedding, the request app's embedding and the graph embedding, plus a linear
    term over the host's raw features (the MLP's last layer starts at zero; the linear term starts
    at ``init_scale`` times Best-Fit, so the untrained policy is a soft Best-Fit). The host is drawn
    from the softmax over the hosts where the engine's mask is True (training), or is the argmax
    (acting as a policy; ties to the lowest index).

Training (:func:`train`): REINFORCE with a time-based baseline
    Each iteration takes one training order (from ``orders`` training orders drawn from a seed stream
    disjoint from the evaluation orders) and plays ``batch`` episodes of it in lock step (one batched
    forward per step). The reward of a decision is minus the hosts it opens (minus ``penalty`` per
    container rejected), so the return-to-go from step ``t`` is ``-(cost_T - cost_t)`` and the
    episode return is ``-hosts used``. The baseline at step ``t`` is the mean return-to-go over the
    batch's episodes at step ``t`` (same order, same step); advantages are divided by their standard
    deviation. Loss: ``-mean(A * log pi) - entropy_coef * mean(entropy)``; Adam. Every random draw
    comes from generators seeded by ``(seed, iteration)``, and the run uses one torch thread, so a
    run is reproducible and a resumed run equals an uninterrupted one.

Warm starts (optional): :func:`imitate` (DAgger against a teacher policy), or
:func:`transfer_linear` (the linear term set to a swarm policy's weights: the untrained net then makes
exactly the swarm policy's decisions), then REINFORCE. On ``sigma``, REINFORCE from the Best-Fit start
did not change a greedy decision within 400 episodes, nor did DAgger (3 rounds) match the teacher on
held-out orders; REINFORCE from the swarm start improved it a little (15.12 -> 15.05 hosts on 40
held-out orders; ``benchmarks/bench_gcn_placement.py``).

Files: :meth:`GcnPlacementPolicy.save` writes an agent file of kind ``"gcn-placement"``
(:mod:`policies.agents.files`: weights-only, atomic); ``vbp simulate --policy model.pt`` and ``vbp
compare --policies bf,model.pt`` load it. A checkpoint is the same file with the optimiser state and
the iteration added.

App -> host edges use the policy's own record of where it put each app's containers (started from
the snapshot); if containers leave (departures), the record is rebuilt from the engine's per-host
counts of tracked apps only (apps with a cap or in a rule).

This module holds what acting needs (features, network, policy, file checks); :func:`train`,
:func:`imitate` and the rest of the training are in :mod:`policies.agents.gcn_placement_train`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from packing.errors import input_error
from packing.io import escape_control
from packing.model.instance import UNPLACED, Instance
from policies.agents.checks import (
    Num,
    check_adam,
    check_fields,
    check_name,
    check_numbers,
    check_tensors,
    meta_shapes,
    printable,
    section,
)
from policies.agents.gcn import Graph, GraphEncoder, mlp
from policies.agents.limits import GCN_CONFIG
from policies.base import WAIT, BasePolicy, Observation
from policies.swarm.features import N_FEATURES as N_PHI
from policies.swarm.features import exclusion_partners
from policies.swarm.features import host_features as phi_features

KIND = "gcn-placement"
N_RELATIONS = 3
APP_TO_HOST, HOST_TO_APP, RULE = 0, 1, 2


def app_width(n_resources: int) -> int:
    """Width of the app block: ``R + 6``."""
    return n_resources + 6


def host_width(n_resources: int) -> int:
    """Width of the host block: ``2R + 3 + 10``."""
    return 2 * n_resources + 3 + N_PHI


def feature_width(n_resources: int) -> int:
    """``F = 2 + app block + host block``."""
    return 2 + app_width(n_resources) + host_width(n_resources)


@dataclasses.dataclass(frozen=True)
class Config:
    """Network and training hyper-parameters."""

    n_resources: int = 2
    dim: int = 32
    layers: int = 2
    init_scale: float = 5.0
    lr: float = 3e-3
    batch: int = 8
    entropy: float = 0.01
    penalty: float = 10.0
    imitate_lr: float = 1e-2


class Featurizer:
    """The static part of an instance's graphs, and the graph of each decision.

    Args:
        instance: the instance (no GPU cards needed; GPU demand is ignored by the features).
    """

    def __init__(self, instance: Instance) -> None:
        inst = instance
        self.instance = inst
        self.n_apps, self.n_hosts, self.n_res = inst.n_apps, inst.n_hosts, inst.n_resources
        cmax = inst.host_capacity.max(axis=0)
        self.cmax = np.where(cmax > 0, cmax, 1.0)
        self.dn = inst.demand / self.cmax  # (A, R)
        self.size = self.dn.mean(axis=1)  # (A,) hosts-worth of one container
        counts = inst.counts.astype(np.float64)
        self.counts = np.maximum(counts, 1.0)
        cap = inst.cap.astype(np.float64)
        self.inv_cap = np.where(cap < counts, 1.0 / np.maximum(cap, 1.0), 0.0)
        self.cap = np.maximum(cap, 1.0)
        self.volume = max(float((self.size * counts).sum()), 1e-9)
        ra, rb, rk = inst.rule_arrays
        keep = ra != rb
        ra, rb, rk = ra[keep], rb[keep], rk[keep]
        src = np.concatenate([ra, rb]).astype(np.int64)
        dst = np.concatenate([rb, ra]).astype(np.int64)
        w = np.where(np.concatenate([rk, rk]) == 0, 1.0, 0.5)
        self.rule_edges = (src, dst, w.astype(np.float32))
        deg = np.bincount(src, minlength=self.n_apps).astype(np.float64)
        self.app_static = np.concatenate(
            [self.dn, np.zeros((self.n_apps, 5)), (deg / max(self.n_apps, 1))[:, None]], axis=1)
        self.partners = exclusion_partners(inst)
        cap_h = inst.host_capacity
        self.host_size = np.where(cap_h > 0, 1.0 / np.where(cap_h > 0, cap_h, 1.0), 0.0)  # (H, R)
        self.fw = feature_width(self.n_res)

    def initial_counts(self) -> np.ndarray:
        """Containers per host and app in the snapshot, shape ``(n_hosts, n_apps)`` int64."""
        inst = self.instance
        c = np.zeros((self.n_hosts, self.n_apps), dtype=np.int64)
        if inst.initial is not None:
            host_of = inst.initial.host_array(inst)
            ok = host_of != UNPLACED
            np.add.at(c, (host_of[ok], inst.container_app[ok]), 1)
        return c

    def graph(self, obs: Observation, mask: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, ...]:
        """The graph of a decision as numpy arrays.

        Args:
            obs: the decision.
            mask: the engine's mask, shape ``(H,)`` bool.
            counts: containers per host and app, shape ``(H, A)``.

        Returns:
            ``(x, edge_index, edge_type, edge_weight)``: shapes ``(A + H, F)`` float32, ``(2, E)``
            int64, ``(E,)`` int64, ``(E,)`` float32.
        """
        n_a, n_h, n_r = self.n_apps, self.n_hosts, self.n_res
        a = obs.app
        x = np.zeros((n_a + n_h, self.fw), dtype=np.float32)
        x[:n_a, 0] = 1.0
        x[n_a:, 1] = 1.0
        pending = np.maximum(np.asarray(obs.pending, dtype=np.float64), 0.0)
        blk = self.app_static.copy()
        blk[:, n_r] = pending / self.counts
        blk[:, n_r + 1] = counts.sum(axis=0) / self.counts
        blk[:, n_r + 2] = self.inv_cap
        blk[a, n_r + 3] = 1.0
        blk[:, n_r + 4] = pending * self.size / self.volume
        o = 2
        x[:n_a, o:o + blk.shape[1]] = blk
        o += blk.shape[1]
        x[n_a:, o:o + host_width(n_r)] = self.host_block(obs, mask, counts)
        # edges
        hs, aps = np.nonzero(counts)
        share = (self.instance.demand[aps] * self.host_size[hs]).mean(axis=1)
        w_ah = (counts[hs, aps] * share).astype(np.float32)
        rs, rd, rw = self.rule_edges
        src = np.concatenate([aps, hs + n_a, rs])
        dst = np.concatenate([hs + n_a, aps, rd])
        etype = np.concatenate([np.full(len(hs), APP_TO_HOST), np.full(len(hs), HOST_TO_APP),
                                np.full(len(rs), RULE)]).astype(np.int64)
        ew = np.concatenate([w_ah, w_ah, rw]).astype(np.float32)
        return x, np.stack([src, dst]).astype(np.int64), etype, ew

    def host_block(self, obs: Observation, mask: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The host block, shape ``(H, 2R + 3 + 10)`` float64 (see the module docstring)."""
        st = obs.state
        a = obs.app
        n_r = self.n_res
        cap = st.capacity
        safe = np.where(cap > 0, cap, 1.0)
        load = np.where(cap > 0, st.used / safe, 0.0)
        resid = np.where(cap > 0, (cap - st.used - self.instance.demand[a]) / safe, 0.0)
        out = np.empty((self.n_hosts, host_width(n_r)))
        out[:, :n_r] = load
        out[:, n_r] = st.n_on > 0
        out[:, n_r + 1:2 * n_r + 1] = np.clip(resid, -1.0, 1.0)
        out[:, 2 * n_r + 1] = counts[:, a] / self.cap[a]
        out[:, 2 * n_r + 2] = mask
        out[:, 2 * n_r + 3:] = phi_features(obs, self.partners)
        return out


def to_graph(arrays: tuple[np.ndarray, ...]) -> Graph:
    """A :class:`Graph` of one decision's numpy arrays (:meth:`Featurizer.graph`)."""
    x, ei, et, ew = arrays
    return Graph(torch.from_numpy(x), torch.from_numpy(ei), torch.from_numpy(et), torch.from_numpy(ew),
                 torch.zeros(x.shape[0], dtype=torch.int64))


class PlacementNet(nn.Module):
    """Encoder and host head (see the module docstring)."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        r = cfg.n_resources
        self.cfg = cfg
        self.encoder = GraphEncoder(feature_width(r), cfg.dim, N_RELATIONS, cfg.layers, pool="mean")
        self.head = mlp(3 * cfg.dim, cfg.dim, 1, zero_last=True)
        self.linear = nn.Linear(host_width(r), 1, bias=False)
        nn.init.zeros_(self.linear.weight)
        with torch.no_grad():  # Best-Fit: the first phi feature (times init_scale in forward)
            self.linear.weight[0, 2 * r + 3] = 1.0
        self.host_lo = 2 + app_width(r)

    def forward(self, g: Graph, n_apps: int, n_hosts: int) -> torch.Tensor:
        """Logits of the hosts of every graph in ``g``, shape ``(n_graphs, n_hosts)``.

        Every graph has ``n_apps + n_hosts`` nodes, apps first, the request app marked in its block.
        """
        nodes, graphs, _ = self.encoder(g)
        n = n_apps + n_hosts
        nodes = nodes.view(g.n_graphs, n, -1)
        x = g.x.view(g.n_graphs, n, -1)
        req = x[:, :n_apps, 2 + self.cfg.n_resources + 3]  # (G, A) one-hot of the request app
        e_req = torch.einsum("ga,gah->gh", req, nodes[:, :n_apps])
        e_h = nodes[:, n_apps:]
        z = torch.cat([e_h, e_req[:, None, :].expand_as(e_h), graphs[:, None, :].expand_as(e_h)], dim=2)
        raw = x[:, n_apps:, self.host_lo:]
        return (self.head(z) + self.cfg.init_scale * self.linear(raw)).squeeze(-1)


def transfer_linear(net: PlacementNet, weights: Sequence[float] | np.ndarray) -> None:
    """Set the linear host term to ``weights`` over the ten swarm features (zeros elsewhere).

    With the MLP's last layer still at zero, the network then makes exactly the decisions of
    :class:`policies.swarm.policy.SwarmPolicy` with these weights (ties to the lowest index), so a
    swarm-tuned policy can be the starting point of REINFORCE.
    """
    w = torch.as_tensor(np.asarray(weights, dtype=np.float32))
    if w.shape != (N_PHI,):
        raise ValueError(f"expected {N_PHI} swarm weights, got shape {tuple(w.shape)}")
    r = net.cfg.n_resources
    with torch.no_grad():
        net.linear.weight.zero_()
        net.linear.weight[0, 2 * r + 3:] = w


def masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``log softmax`` over the True entries of ``mask`` (``-inf`` elsewhere), same shape."""
    return torch.log_softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)


class GcnPlacementPolicy(BasePolicy):
    """The trained network as a vbp policy: the argmax host over the mask.

    Args:
        net: the network.
        name: the name shown in tables.
        info: training facts saved with the weights (command, curve, seconds...).
    """

    name = "gcn"

    def __init__(self, net: PlacementNet, *, name: str = "gcn", info: dict[str, Any] | None = None) -> None:
        self.net = net.eval()
        self.name = name
        self.info = dict(info or {})
        self._feat: Featurizer | None = None
        self._counts: np.ndarray | None = None

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Build the instance's featurizer and start the placement record from the snapshot."""
        if instance.n_resources != self.net.cfg.n_resources:
            raise input_error(str(getattr(self, "source", self.name)), "n_resources",
                              f"the model is trained for {self.net.cfg.n_resources} resources; instance "
                              f"{escape_control(instance.name)!r} has {instance.n_resources}")
        if self._feat is None or self._feat.instance is not instance:
            self._feat = Featurizer(instance)
        self._counts = self._feat.initial_counts()

    def counts_for(self, obs: Observation) -> np.ndarray:
        """The placement record, rebuilt from tracked apps when it disagrees with the state."""
        assert self._counts is not None
        if not np.array_equal(self._counts.sum(axis=1), obs.state.n_on):
            st = obs.state
            c = np.zeros_like(self._counts)
            tracked = np.flatnonzero(st.col >= 0)
            c[:, tracked] = st.count[:, st.col[tracked]]
            self._counts = c
        return self._counts

    def logits(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """Host logits of the decision, shape ``(n_hosts,)`` float32."""
        if self._feat is None or self._feat.instance is not obs.instance or self._counts is None:
            self.reset(obs.instance)
        feat = self._feat
        assert feat is not None
        g = to_graph(feat.graph(obs, mask, self.counts_for(obs)))
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # one small graph: more threads only add contention
        try:
            with torch.no_grad():
                return self.net(g, feat.n_apps, feat.n_hosts)[0].numpy()
        finally:
            torch.set_num_threads(threads)

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """The feasible host with the highest logit (ties to the lowest index); WAIT if none fits."""
        if not mask.any():
            return WAIT
        s = np.where(mask, self.logits(obs, mask), -np.inf)
        h = int(np.argmax(s))
        assert self._counts is not None
        self._counts[h, obs.app] += 1
        return h

    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> None:
        """An agent file of kind ``"gcn-placement"`` (weights, config, ``info``, and ``extra``)."""
        from policies.agents.files import save_agent

        save_agent(KIND, {"config": dataclasses.asdict(self.net.cfg), "name": self.name,
                          "state_dict": self.net.state_dict(), "info": self.info, **(extra or {})}, path)


MAX_RESOURCES = 64
"""Most resources an agent file's network may read."""

CONFIG_SPECS = GCN_CONFIG
"""The allowed range of every :class:`Config` field in an agent file (:mod:`policies.agents.limits`)."""


def check_file(data: dict[str, Any]) -> Config:
    """Check a loaded ``"gcn-placement"`` file before anything is built (see ``files.CHECKS``).

    The config in range, ``state_dict`` (and a checkpoint's ``optimizer``) of the shapes it gives,
    ``name`` a short text, ``info`` a dict, ``iteration``/``curve``/``seconds`` in range.

    Returns:
        The checked config.
    """
    cfg = Config(**check_fields("config", section(data, "config"), CONFIG_SPECS))
    check_name(data)
    if "info" in data:
        section(data, "info")
    shapes, params = meta_shapes(lambda: PlacementNet(cfg))
    check_tensors("state_dict", data.get("state_dict"), shapes)
    if "optimizer" in data:
        check_adam("optimizer", data["optimizer"], params)
    if "iteration" in data:
        Num(0, 10**9, integer=True).check("iteration", data["iteration"])
    if "curve" in data:
        check_numbers("curve", data["curve"], Num(-1e15, 1e15))
    if "seconds" in data:
        Num(0.0, 1e12).check("seconds", data["seconds"])
    return cfg


def from_checkpoint(data: dict[str, Any]) -> GcnPlacementPolicy:
    """The policy of a loaded ``"gcn-placement"`` file (:func:`policies.agents.files.load_agent`).

    ``data`` has passed :func:`check_file`; the name is kept with control characters escaped.
    """
    net = PlacementNet(Config(**dict(data["config"])))
    net.load_state_dict(data["state_dict"])
    return GcnPlacementPolicy(net, name=printable(str(data.get("name", "gcn"))),
                              info=dict(data.get("info", {})))


__all__ = ["KIND", "Config", "Featurizer", "GcnPlacementPolicy", "PlacementNet", "check_file",
           "feature_width", "from_checkpoint", "masked_log_softmax", "transfer_linear"]
