"""Observation encoders of :class:`~packing.env.placement_env.PlacementEnv`: the engine as an observation.

An encoder has two methods (the :class:`ObservationEncoder` protocol): ``space(layout)`` gives the
Gymnasium space once per env, ``encode(layout, engine)`` the observation of the current decision (and of
the final state after the last step: then the request parts are zeros). ``layout`` is the env's
:class:`packing.env.layout.EnvLayout`; the feature blocks (``F_h`` host features, ``F_d`` demand
features) are documented in :mod:`packing.env.layout`.

* :class:`DictEncoder` — a ``Dict`` of raw blocks (the env's historical observation).
* :class:`FlatEncoder` — one ``float32`` vector for MLP agents.
* :class:`GraphEncoder` — a :class:`gymnasium.spaces.Graph` for GNN agents.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
from gymnasium import spaces

from packing.env.layout import EnvLayout, demand_features, host_features
from packing.sim.engine import Engine


@runtime_checkable
class ObservationEncoder(Protocol):
    """Turns the engine's current decision into an observation."""

    def space(self, layout: EnvLayout) -> spaces.Space[Any]:
        """The observation space (called once, when the env is built)."""
        ...

    def encode(self, layout: EnvLayout, engine: Engine) -> Any:
        """The observation now (an element of :meth:`space`)."""
        ...


def _pending(layout: EnvLayout, engine: Engine) -> np.ndarray:
    """Containers per app still to arrive, shape ``(max(1, n_apps),)`` float32 (padded with 0)."""
    out = np.zeros(max(1, layout.n_apps), dtype=np.float32)
    out[: layout.n_apps] = np.maximum(engine.pending, 0)
    return out


class DictEncoder:
    """The ``Dict`` observation (the env's default, unchanged from its first version).

    Keys:
        load: used / capacity per host and resource, shape ``(n_hosts, n_resources)`` float32 in
            ``[0, 1]``.
        open: hosts in use, shape ``(n_hosts,)`` int8 (``MultiBinary``).
        demand: the container's demand / the largest host capacity per resource, shape
            ``(n_resources,)`` float32 (zeros after the last step).
        app: the container's app index (``Discrete(max(1, n_apps))``; 0 after the last step).
        pending: containers per app still to arrive (raw counts), shape ``(max(1, n_apps),)`` float32.
    """

    def space(self, layout: EnvLayout) -> spaces.Space[Any]:
        """The ``Dict`` space."""
        n_h, n_r, n_a = layout.n_hosts, layout.n_resources, layout.n_apps
        d_hi = float(layout.demand_high[:n_r].max(initial=1.0))
        return spaces.Dict({
            "load": spaces.Box(0.0, 1.0 + 1e-6, (n_h, n_r), dtype=np.float32),
            "open": spaces.MultiBinary(n_h),
            "demand": spaces.Box(0.0, d_hi, (n_r,), dtype=np.float32),
            "app": spaces.Discrete(max(1, n_a)),
            "pending": spaces.Box(0.0, float(layout.n_arrivals), (max(1, n_a),), dtype=np.float32),
        })

    def encode(self, layout: EnvLayout, engine: Engine) -> dict[str, Any]:
        """The observation now."""
        st = engine.state
        cap = np.where(st.capacity > 0, st.capacity, 1.0)
        d = engine.decision
        return {
            "load": np.clip(st.used / cap, 0.0, 1.0).astype(np.float32),
            "open": (st.n_on > 0).astype(np.int8),
            "demand": demand_features(layout, engine)[: layout.n_resources],
            "app": 0 if d is None else int(d.app),
            "pending": _pending(layout, engine),
        }


class FlatEncoder:
    """One ``float32`` vector, every entry in ``[0, high]`` (a ``Box``).

    Layout (length ``n_hosts * F_h + F_d + max(1, n_apps)``), in this order:

    * ``[0, n_hosts * F_h)``: the host features (:func:`packing.env.layout.host_features`) row by row,
      host 0 first: for host ``h`` and feature ``f`` the entry ``h * F_h + f``. Without GPU cards
      ``F_h = n_resources + 1``: the loads, then the open flag.
    * next ``F_d``: the container's demand features (:func:`packing.env.layout.demand_features`).
    * last ``max(1, n_apps)``: pending containers per app / arrivals per episode (in ``[0, 1]``).

    :meth:`slices` names these blocks.
    """

    def slices(self, layout: EnvLayout) -> dict[str, slice]:
        """Where each block lies in the vector: ``"hosts"``, ``"demand"``, ``"pending"``."""
        a = layout.n_hosts * layout.n_host_features
        b = a + layout.n_demand_features
        return {"hosts": slice(0, a), "demand": slice(a, b), "pending": slice(b, b + max(1, layout.n_apps))}

    def space(self, layout: EnvLayout) -> spaces.Space[Any]:
        """The ``Box`` space (per-entry upper bounds: 1, or the largest demand feature)."""
        hi = np.concatenate([np.ones(layout.n_hosts * layout.n_host_features, dtype=np.float32),
                             layout.demand_high, np.ones(max(1, layout.n_apps), dtype=np.float32)])
        return spaces.Box(np.zeros_like(hi), hi, dtype=np.float32)

    def encode(self, layout: EnvLayout, engine: Engine) -> np.ndarray:
        """The vector now, shape ``(n_hosts * F_h + F_d + max(1, n_apps),)`` float32."""
        return np.concatenate([host_features(layout, engine).ravel(), demand_features(layout, engine),
                               _pending(layout, engine) / np.float32(layout.n_arrivals)])


class GraphEncoder:
    """A :class:`gymnasium.spaces.Graph` observation for GNN agents.

    Nodes (``GraphInstance.nodes``, shape ``(n_hosts + 1, 1 + F_h + F_d)`` float32): node ``h < n_hosts``
    is host ``h``, the last node (index ``n_hosts``) is the request. Every node has the same columns:

    * column 0: 1 for the request node, 0 for hosts;
    * columns ``1 .. F_h``: the host features (zeros on the request node);
    * the last ``F_d`` columns: the demand features (zeros on host nodes, and on the request node
      after the last step).

    Edges (``edge_links`` shape ``(n_edges, 2)`` int64, ``[source, target]``; ``edges`` shape
    ``(n_edges, 2)`` float32, a one-hot kind):

    * request -> host for every host that can take the container now (the host mask): kind
      ``[1, 0]``; listed first, in host order. None after the last step.
    * host -> host for every ordered pair of distinct hosts of the same cluster (both directions),
      kind ``[0, 1]``; only with ``cluster_edges=True`` (their number grows with the square of the
      cluster sizes).

    Args:
        cluster_edges: add the host -> host edges within each cluster.
    """

    def __init__(self, *, cluster_edges: bool = True) -> None:
        self.cluster_edges = cluster_edges
        self._static: tuple[EnvLayout, np.ndarray] | None = None

    def space(self, layout: EnvLayout) -> spaces.Space[Any]:
        """The ``Graph`` space: ``Box`` node features and ``Box(0, 1, (2,))`` edge kinds."""
        hi = np.concatenate([np.ones(1 + layout.n_host_features, dtype=np.float32), layout.demand_high])
        return spaces.Graph(node_space=spaces.Box(np.zeros_like(hi), hi, dtype=np.float32),
                            edge_space=spaces.Box(0.0, 1.0, (2,), dtype=np.float32))

    def _cluster_links(self, layout: EnvLayout) -> np.ndarray:
        if self._static is not None and self._static[0] is layout:
            return self._static[1]
        links = []
        if self.cluster_edges:
            for hosts in layout.cluster_hosts:
                if len(hosts) > 1:
                    src, dst = np.meshgrid(hosts, hosts, indexing="ij")
                    keep = src != dst
                    links.append(np.stack([src[keep], dst[keep]], axis=1))
        arr = np.concatenate(links).astype(np.int64) if links else np.zeros((0, 2), dtype=np.int64)
        self._static = (layout, arr)
        return arr

    def encode(self, layout: EnvLayout, engine: Engine) -> spaces.GraphInstance:
        """The graph now."""
        n_h, f_h = layout.n_hosts, layout.n_host_features
        nodes = np.zeros((n_h + 1, 1 + f_h + layout.n_demand_features), dtype=np.float32)
        nodes[:n_h, 1:1 + f_h] = host_features(layout, engine)
        nodes[n_h, 0] = 1.0
        nodes[n_h, 1 + f_h:] = demand_features(layout, engine)
        feasible = np.flatnonzero(engine.mask())
        req = np.stack([np.full(len(feasible), n_h, dtype=np.int64), feasible.astype(np.int64)], axis=1)
        static = self._cluster_links(layout)
        links = np.concatenate([req, static])
        kinds = np.zeros((len(links), 2), dtype=np.float32)
        kinds[: len(req), 0] = 1.0
        kinds[len(req):, 1] = 1.0
        return spaces.GraphInstance(nodes, kinds, links)


__all__ = ["DictEncoder", "FlatEncoder", "GraphEncoder", "ObservationEncoder"]
