"""What the Gymnasium env's parts share: the instance's static layout and the feature blocks.

:class:`EnvLayout` is computed once per env from the instance alone (scales, clusters, GPU sizes); the
observation encoders (:mod:`packing.env.encoders`), action adapters (:mod:`packing.env.actions`) and
rewards (:mod:`packing.env.rewards`) read it together with the :class:`packing.sim.engine.Engine`.

Feature blocks (all ``float32``, all ``>= 0``)
    Host features, shape ``(n_hosts, F_h)`` (:func:`host_features`), per host in this order:

    * ``load``: used / capacity per host resource, ``n_resources`` columns, clipped to ``[0, 1]``
      (0 where the capacity is 0);
    * ``open``: 1 if the host runs at least one container, 1 column;
    * only when the instance has GPU cards (``max_gpus > 0``): ``gpu_load``, the mean over the host's
      cards of card used / card capacity per GPU resource (``n_gpu_resources`` columns, 0 on hosts
      without cards), and ``gpu_free``, the host's empty cards / ``max_gpus`` (1 column).

    So ``F_h = n_resources + 1 (+ n_gpu_resources + 1 with GPUs)``.

    Demand features of the container being placed, shape ``(F_d,)`` (:func:`demand_features`):

    * ``demand``: demand / the largest host capacity per resource, ``n_resources`` entries;
    * only with GPU cards: ``gpu_cards`` (cards asked / ``max_gpus``, 1 entry) and ``gpu_share``
      (the share of each card per GPU resource / the largest card capacity, ``n_gpu_resources``
      entries; 1 for whole cards).

    So ``F_d = n_resources (+ 1 + n_gpu_resources with GPUs)``; all zeros when no decision is open.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from packing.feasibility.metrics import cluster_labels, state_loads, utilisation_rate
from packing.feasibility.predicates import ClusterState
from packing.model.instance import Instance
from packing.sim.engine import Engine, arrivals


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class EnvLayout:
    """Static facts of one instance that the env's parts need (arrays are read-only).

    Attributes:
        instance: the instance.
        n_hosts: hosts.
        n_resources: host resources.
        n_apps: apps.
        n_arrivals: arrivals per episode (at least 1, used to normalise counts).
        scale: largest host capacity per resource (1 where it is 0), shape ``(n_resources,)``.
        cluster_names: cluster names in order of first appearance over the hosts, ``(n_clusters,)``.
        cluster_of: cluster index per host, shape ``(n_hosts,)`` int64.
        cluster_hosts: host indices of each cluster (ascending), one array per cluster.
        cluster_table: host index of the ``i``-th host of cluster ``c`` at ``[c, i]`` (-1 past the
            cluster's size), shape ``(n_clusters, max_cluster_size)`` int64.
        max_cluster_size: most hosts in one cluster (at least 1).
        cluster_matrix: one-hot cluster membership, shape ``(n_clusters, n_hosts)`` float64.
        cluster_capacity: total capacity per cluster and metric resource (host resources, then GPU
            resources, as :func:`packing.feasibility.metrics.state_loads`), shape ``(n_clusters, n_metric)``.
        gpu: whether the instance has GPU cards (the GPU feature columns exist).
        card_scale: largest card capacity per GPU resource (1 where 0), ``(n_gpu_resources,)``.
        demand_table: :func:`demand_features` of every app, shape ``(n_apps, F_d)`` float32.
        demand_high: upper bound per demand feature, ``max(1, max over apps)``, shape ``(F_d,)``.
        n_host_features: ``F_h``.
    """

    instance: Instance
    n_hosts: int
    n_resources: int
    n_apps: int
    n_arrivals: int
    scale: np.ndarray
    cluster_names: tuple[str, ...]
    cluster_of: np.ndarray
    cluster_hosts: tuple[np.ndarray, ...]
    cluster_table: np.ndarray
    max_cluster_size: int
    cluster_matrix: np.ndarray
    cluster_capacity: np.ndarray
    gpu: bool
    card_scale: np.ndarray
    demand_table: np.ndarray
    demand_high: np.ndarray
    n_host_features: int

    @property
    def n_clusters(self) -> int:
        """Number of clusters (at least 1 when there are hosts)."""
        return len(self.cluster_names)

    @property
    def n_demand_features(self) -> int:
        """``F_d``."""
        return int(self.demand_table.shape[1])

    def clusters_with(self, mask: np.ndarray) -> np.ndarray:
        """Clusters with a host in ``mask`` (``(n_hosts,)`` bool), shape ``(n_clusters,)`` bool."""
        return np.bincount(self.cluster_of[mask], minlength=self.n_clusters) > 0

    @classmethod
    def of(cls, instance: Instance) -> EnvLayout:
        """The layout of ``instance``."""
        inst = instance
        n_h, n_r = inst.n_hosts, inst.n_resources
        cmax = inst.host_capacity.max(axis=0) if n_h else np.ones(n_r)
        scale = np.where(cmax > 0, cmax, 1.0).astype(np.float64)
        labels = cluster_labels(inst) if n_h else np.zeros(0, dtype=object)
        names = tuple(str(x) for x in dict.fromkeys(labels.tolist())) or ("default",)
        index = {n: i for i, n in enumerate(names)}
        cluster_of = np.array([index[str(x)] for x in labels], dtype=np.int64)
        hosts = tuple(_ro(np.flatnonzero(cluster_of == c).astype(np.int64)) for c in range(len(names)))
        size = max(1, max((len(h) for h in hosts), default=1))
        table = np.full((len(names), size), -1, dtype=np.int64)
        for c, h in enumerate(hosts):
            table[c, : len(h)] = h
        onehot = np.zeros((len(names), n_h), dtype=np.float64)
        onehot[cluster_of, np.arange(n_h)] = 1.0
        _, cap = state_loads(ClusterState(inst))
        gpu = inst.max_gpus > 0
        n_g = len(inst.gpu_resources)
        if gpu and n_g:
            ccap = inst.card_capacity.max(axis=0)
            card_scale = np.where(ccap > 0, ccap, 1.0).astype(np.float64)
        else:
            card_scale = np.ones(n_g, dtype=np.float64)
        cols = [inst.demand / scale]
        if gpu:
            share = np.zeros((inst.n_apps, n_g))
            for a, app in enumerate(inst.apps):
                if inst.gpu_cards[a] > 0:
                    share[a] = 1.0 if app.gpu_whole else inst.gpu_demand[a] / card_scale
            cols += [(inst.gpu_cards / inst.max_gpus)[:, None], share]
        dem = np.concatenate(cols, axis=1).astype(np.float32).reshape(inst.n_apps, -1)
        high = np.maximum(1.0, dem.max(axis=0, initial=0.0)).astype(np.float32)
        return cls(inst, n_h, n_r, inst.n_apps, max(1, len(arrivals(inst).app)), _ro(scale), names,
                   _ro(cluster_of), hosts, _ro(table), size, _ro(onehot),
                   _ro(onehot @ cap), gpu, _ro(card_scale), _ro(dem), _ro(high),
                   n_r + 1 + (n_g + 1 if gpu else 0))


def host_features(layout: EnvLayout, engine: Engine) -> np.ndarray:
    """The host feature block (see the module docstring), shape ``(n_hosts, F_h)`` float32."""
    st = engine.state
    cap = np.where(st.capacity > 0, st.capacity, 1.0)
    cols = [np.clip(st.used / cap, 0.0, 1.0), (st.n_on > 0)[:, None].astype(np.float64)]
    if layout.gpu:
        inst = layout.instance
        exists = st.card_exists  # (n_hosts, max_gpus)
        ccap = np.where(st.card_capacity > 0, st.card_capacity, 1.0)[:, None, :]
        frac = np.clip(st.card_used / ccap, 0.0, 1.0) * exists[:, :, None]  # (h, g, r)
        n_cards = np.maximum(exists.sum(axis=1), 1)[:, None]
        cols.append(frac.sum(axis=1) / n_cards)
        empty = ((st.card_used <= 0).all(axis=2) & exists).sum(axis=1)
        cols.append((empty / inst.max_gpus)[:, None])
    return np.concatenate(cols, axis=1).astype(np.float32)


def demand_features(layout: EnvLayout, engine: Engine) -> np.ndarray:
    """The demand feature block of the open decision (zeros when none), shape ``(F_d,)`` float32."""
    d = engine.decision
    if d is None:
        return np.zeros(layout.n_demand_features, dtype=np.float32)
    return layout.demand_table[d.app].copy()


def cluster_loads(layout: EnvLayout, state: ClusterState) -> tuple[np.ndarray, np.ndarray]:
    """Allocated and total capacity per cluster and metric resource.

    Returns:
        ``(load, capacity)``, each of shape ``(n_clusters, n_metric)``.
    """
    load, _ = state_loads(state)
    return layout.cluster_matrix @ load, np.asarray(layout.cluster_capacity)


def cluster_utilisation(layout: EnvLayout, engine: Engine) -> np.ndarray:
    """EADE-DDPG ``U_n`` per cluster now, shape ``(n_clusters,)``.

    As :func:`packing.feasibility.metrics.compute_metrics` (both use
    :func:`packing.feasibility.metrics.utilisation_rate`):
    ``U_n`` is the mean over metric resources with capacity in cluster ``n`` of allocated / total
    capacity of the cluster (used or not); 0 for a cluster without capacity.
    """
    return utilisation_rate(*cluster_loads(layout, engine.state))


__all__ = ["EnvLayout", "cluster_loads", "cluster_utilisation", "demand_features", "host_features"]
