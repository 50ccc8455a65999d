"""The one metrics module: hosts, cost, allocation rates, fragmentation and load variance.

Every solver, policy, agent, CLI command and plot computes its numbers here, from an instance and a
placement. Loads come from :meth:`packing.feasibility.predicates.ClusterState.from_placement`, the same logic
the checker uses; this module only aggregates them.

Resources
    The host resources (``Instance.resources``) and, when the instance has GPU cards, the per-card
    GPU resources (``Instance.gpu_resources``): a GPU resource's capacity is the sum over the
    host's cards, its load the sum of the card loads (a whole-card container loads its cards fully).

Sigma allocation rate (Alibaba Sigma)
    allocated / capacity of the *used* hosts. The Sigma article's example: 1,360 cores on 15 hosts
    of 96 cores is 94.44%; on 20 hosts it is 70.83%.

EADE-DDPG cluster metrics, over clusters ``n = 1..N`` and resources ``r``
    ``U_n = mean_r(allocated_r / total_r)`` (total over all hosts of the cluster, used or not);
    fragmentation ``F = (1/N) sum_n sum_r (total_r - allocated_r) / total_r``;
    load variance ``(1/N) sum_n (U_n - mean U)^2``. A resource with zero total capacity in a
    cluster (e.g. GPU memory in a CPU-only cluster) is left out of that cluster's sums.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from packing.feasibility.predicates import ClusterState
from packing.model.instance import Instance, Placement

DEFAULT_CLUSTER = "default"
"""Cluster name of hosts whose type has no cluster label."""


@dataclass(frozen=True)
class Metrics:
    """Numbers that describe one placement, named as in ``docs/outputs.md``.

    Attributes:
        hosts: hosts running at least one container.
        cost: sum of the costs of the used hosts.
        deployed: containers on a (valid) host.
        unplaced: containers on no host (or on a host index the instance does not have).
        allocation: the Sigma allocation rate of the bottleneck resource: the largest entry of
            :attr:`allocation_by_resource` (0 when no host is used).
        allocation_by_resource: per resource (host resources, then GPU resources): allocated /
            capacity of the used hosts (0 when no host is used).
        allocation_resource_mean: mean of :attr:`allocation_by_resource` over resources.
        fleet_allocation_by_resource: per resource: allocated / capacity of all hosts, used or
            not.
        cluster_utilisation: ``U_n`` per cluster name.
        fragmentation: EADE-DDPG fragmentation ``F``.
        load_variance: EADE-DDPG load variance over clusters.

    The names ``hosts_used``, ``total_cost``, ``sigma_allocation``,
    ``sigma_allocation_bottleneck`` and ``sigma_allocation_mean`` are deprecated read-only
    aliases of :attr:`hosts`, :attr:`cost`, :attr:`allocation_by_resource`, :attr:`allocation`
    and :attr:`allocation_resource_mean`.
    """

    hosts: int
    cost: float
    deployed: int
    unplaced: int
    allocation: float
    allocation_by_resource: dict[str, float]
    allocation_resource_mean: float
    fleet_allocation_by_resource: dict[str, float]
    cluster_utilisation: dict[str, float]
    fragmentation: float
    load_variance: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every number, keyed by the attribute names."""
        return {"hosts": self.hosts, "cost": self.cost, "deployed": self.deployed,
                "unplaced": self.unplaced, "allocation": self.allocation,
                "allocation_by_resource": dict(self.allocation_by_resource),
                "allocation_resource_mean": self.allocation_resource_mean,
                "fleet_allocation_by_resource": dict(self.fleet_allocation_by_resource),
                "cluster_utilisation": dict(self.cluster_utilisation),
                "fragmentation": self.fragmentation, "load_variance": self.load_variance}

    def _deprecated(self, old: str, new: str) -> Any:
        warnings.warn(f"Metrics.{old} is deprecated; read Metrics.{new}", DeprecationWarning,
                      stacklevel=3)
        return getattr(self, new)

    @property
    def hosts_used(self) -> int:
        """Deprecated name of :attr:`hosts`."""
        return int(self._deprecated("hosts_used", "hosts"))

    @property
    def total_cost(self) -> float:
        """Deprecated name of :attr:`cost`."""
        return float(self._deprecated("total_cost", "cost"))

    @property
    def sigma_allocation(self) -> dict[str, float]:
        """Deprecated name of :attr:`allocation_by_resource`."""
        return dict(self._deprecated("sigma_allocation", "allocation_by_resource"))

    @property
    def sigma_allocation_bottleneck(self) -> float:
        """Deprecated name of :attr:`allocation`."""
        return float(self._deprecated("sigma_allocation_bottleneck", "allocation"))

    @property
    def sigma_allocation_mean(self) -> float:
        """Deprecated name of :attr:`allocation_resource_mean`."""
        return float(self._deprecated("sigma_allocation_mean", "allocation_resource_mean"))


def metric_resources(instance: Instance) -> tuple[str, ...]:
    """Names of the metric resources: the host resources, then the GPU resources (if any)."""
    return tuple(instance.resources) + tuple(instance.gpu_resources)


def state_loads(state: ClusterState, hosts: np.ndarray | slice | int = slice(None)
                ) -> tuple[np.ndarray, np.ndarray]:
    """Load and capacity of ``hosts`` over the metric resources (see :func:`metric_resources`).

    Args:
        state: the cluster state.
        hosts: which hosts (an index, an index array, a boolean mask or a slice; default all).

    Returns:
        ``(load, capacity)``, each of shape ``(n_selected, n_metric_resources)`` (or
        ``(n_metric_resources,)`` for a single host index).
    """
    inst = state.instance
    load, cap = state.used[hosts], state.capacity[hosts]
    if inst.gpu_resources:
        g_load = state.card_used[hosts].sum(axis=-2)  # (..., n_gpu_res)
        g_cap = state.card_capacity[hosts] * np.asarray(inst.host_gpus[hosts])[..., None]
        load = np.concatenate([load, g_load], axis=-1)
        cap = np.concatenate([cap, g_cap], axis=-1)
    return load, cap


def sigma_rate(load_sum: np.ndarray, capacity_sum: np.ndarray) -> np.ndarray:
    """The Sigma allocation rate per resource: allocated / capacity of the used hosts (0 where none).

    Args:
        load_sum: allocated per metric resource over the used hosts, shape ``(..., n_res)``.
        capacity_sum: capacity per metric resource of the used hosts, same shape.
    """
    return _ratio(np.asarray(load_sum, dtype=np.float64), np.asarray(capacity_sum, dtype=np.float64))


def _loads(instance: Instance, placement: Placement) -> tuple[ClusterState, np.ndarray,
                                                             np.ndarray, tuple[str, ...]]:
    """State, per-host load and per-host capacity over all metric resources.

    Returns:
        ``(state, load, capacity, names)`` with ``load`` and ``capacity`` of shape
        ``(n_hosts, n_resources + n_gpu_resources)`` and ``names`` the resource names.
    """
    host_of = placement.host_array(instance)
    st = ClusterState.from_placement(instance, host_of, placement.card_lists(instance))
    load, cap = state_loads(st)
    return st, load, cap, metric_resources(instance)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Elementwise ``num / den``, 0 where ``den`` is 0."""
    out = np.zeros_like(num, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def utilisation_rate(load: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """EADE-DDPG ``U_n`` per row: the mean over resources with capacity of load / capacity.

    Args:
        load: allocated per cluster and metric resource, shape ``(n_clusters, n_res)``.
        capacity: total capacity per cluster and metric resource (used hosts or not), same shape.

    Returns:
        ``U_n``, shape ``(n_clusters,)``; 0 for a row without capacity.
    """
    has = capacity > 0
    share = _ratio(np.asarray(load, dtype=np.float64), np.asarray(capacity, dtype=np.float64))
    n = has.sum(axis=1)
    return np.divide(share.sum(axis=1), n, out=np.zeros(len(n)), where=n > 0)


def cluster_labels(instance: Instance, clusters: Sequence[Any] | np.ndarray | None = None
                   ) -> np.ndarray:
    """Cluster name of each host, shape ``(n_hosts,)`` (strings).

    Args:
        instance: the instance.
        clusters: explicit cluster id per host, shape ``(n_hosts,)``; ``None`` uses the host
            types' ``cluster`` labels (unlabelled types form the cluster ``"default"``).
    """
    if clusters is None:
        per_type = [t.cluster if t.cluster is not None else DEFAULT_CLUSTER
                    for t in instance.host_types]
        return np.array([per_type[t] for t in instance.host_type_of], dtype=object)
    arr = np.asarray(clusters, dtype=object)
    if arr.shape != (instance.n_hosts,):
        raise ValueError(f"clusters has shape {arr.shape}, expected ({instance.n_hosts},)")
    return np.array([str(c) for c in arr], dtype=object)


def compute_metrics(instance: Instance, placement: Placement,
                    clusters: Sequence[Any] | np.ndarray | None = None) -> Metrics:
    """Compute every metric of ``placement`` on ``instance``.

    The placement is not checked (use :func:`packing.feasibility.checker.check`); containers on host
    indices outside the instance count as unplaced.

    Args:
        instance: the instance.
        placement: where each container is.
        clusters: cluster id per host, shape ``(n_hosts,)``, or ``None`` for the host types'
            cluster labels.

    Returns:
        The :class:`Metrics`.
    """
    st, load, cap, names = _loads(instance, placement)
    host_of = placement.host_array(instance)
    deployed = int(((host_of >= 0) & (host_of < instance.n_hosts)).sum())
    used = st.used_hosts()
    alloc = _ratio(load.sum(axis=0), cap.sum(axis=0))
    sigma = sigma_rate(load[used].sum(axis=0), cap[used].sum(axis=0))
    labels = cluster_labels(instance, clusters)
    groups = list(dict.fromkeys(labels.tolist()))
    c_load = np.zeros((len(groups), len(names)))
    c_cap = np.zeros((len(groups), len(names)))
    for i, name in enumerate(groups):
        sel = labels == name
        c_load[i], c_cap[i] = load[sel].sum(axis=0), cap[sel].sum(axis=0)
    u = utilisation_rate(c_load, c_cap)
    util = {str(name): float(x) for name, x in zip(groups, u, strict=True)}
    free = 1.0 - _ratio(c_load, c_cap)
    frag = [float(f[has].sum()) for f, has in zip(free, c_cap > 0, strict=True)]
    return Metrics(
        hosts=int(used.sum()),
        cost=float(instance.host_cost[used].sum()),
        deployed=deployed,
        unplaced=instance.n_containers - deployed,
        allocation=float(sigma.max()) if len(sigma) else 0.0,
        allocation_by_resource={n: float(x) for n, x in zip(names, sigma, strict=True)},
        allocation_resource_mean=float(sigma.mean()) if len(sigma) else 0.0,
        fleet_allocation_by_resource={n: float(x) for n, x in zip(names, alloc, strict=True)},
        cluster_utilisation=util,
        fragmentation=float(np.mean(frag)) if frag else 0.0,
        load_variance=float(((u - u.mean()) ** 2).mean()) if len(u) else 0.0,
    )


def host_utilisation(instance: Instance, placement: Placement) -> np.ndarray:
    """Load / capacity per host and host resource, shape ``(n_hosts, n_resources)``.

    Entries with zero capacity are 0. GPU resources are not included (see
    :func:`compute_metrics`).
    """
    host_of = placement.host_array(instance)
    st = ClusterState.from_placement(instance, host_of, placement.card_lists(instance))
    return _ratio(st.used, st.capacity)


__all__ = [
    "DEFAULT_CLUSTER", "Metrics", "cluster_labels", "compute_metrics", "host_utilisation",
    "metric_resources", "sigma_rate", "state_loads", "utilisation_rate",
]
