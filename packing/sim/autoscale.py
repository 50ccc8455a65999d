"""An autoscaled pool: a node is added when a container fits no node in the pool, removed when it stays empty.

A cluster runs its scheduler with an autoscaler, so the pool is not fixed. With
:class:`Autoscale` the engine (:class:`packing.sim.engine.Engine`) keeps a :class:`Pool`:

Nodes
    The instance's hosts are the nodes that *may* exist: a host type's ``count`` caps the nodes of
    that type (:func:`unbounded_count` gives the count of a type offered without a cap). The pool
    starts with the hosts the snapshot (``instance.initial``) uses, or none.

Scale-up
    A policy sees the hosts that can take the container (:meth:`ClusterState.mask
    <packing.feasibility.predicates.ClusterState.mask>`, the one feasibility logic, which
    :func:`packing.feasibility.checker.check` shares) and are in the pool. When none is, the pool
    opens one node (:func:`new_node`), whose empty host that logic admits, and the policy is asked
    with that node as the only candidate. The type is the cheapest one (cluster-autoscaler's ``price``
    expander; Karpenter launches the cheapest instance type that fits the pending pods,
    https://karpenter.sh/docs/concepts/scheduling/), ties broken by the least idle share of the first
    resource, then of the next (cluster-autoscaler's ``least-waste`` expander: "the least idle CPU (if
    tied, unused memory) after scale-up"; both in kubernetes/autoscaler ``cluster-autoscaler/FAQ.md``,
    "What are Expanders?"), then by the type's order; the node is the lowest-numbered host of that type
    not in the pool. A node opens when it is needed, with no provisioning delay.

Scale-down
    A node that has run no container for ``scale_down_delay`` (time units of the request stream) is
    removed: cluster-autoscaler removes a node unneeded for ``--scale-down-unneeded-time``, Karpenter
    an empty node after ``consolidateAfter`` with ``consolidationPolicy: WhenEmpty``
    (https://karpenter.sh/docs/concepts/disruption/). A node that is in use but under-used is not
    drained (cluster-autoscaler's ``--scale-down-utilization-threshold`` with its pods re-placed is
    :func:`policies.autoscalers.cluster_autoscaler`, offline); a removal happens at the time its delay
    ends, before any later arrival or departure.

Measures (:class:`PoolStats`)
    Nodes in the pool at the end and at the peak, node-hours (the integral of the pool's size over
    time, in the stream's time units: hours when times are hours) and their cost (each node's time
    in the pool times its type's ``cost``; equal to node-hours when no type is priced). Time runs
    from the first arrival to the last decision or departure the engine processes (the end of the
    run), so every policy is measured over the same horizon.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from packing.errors import input_error
from packing.feasibility.predicates import ClusterState
from packing.model.instance import Instance


@dataclass(frozen=True)
class Autoscale:
    """How the pool scales.

    Attributes:
        scale_down_delay: how long a node stays empty before it is removed, in the request stream's
            time units (0: at once; ``inf``: never).
    """

    scale_down_delay: float = 0.0

    def __post_init__(self) -> None:
        d = self.scale_down_delay
        if isinstance(d, bool) or not isinstance(d, (int, float)) or math.isnan(d) or d < 0:
            raise input_error("--scale-down-delay", str(d), "expected a number >= 0 (inf: never)")

    def to_dict(self) -> dict[str, Any]:
        """The ``autoscale`` object of ``--json``: ``scale_down_delay`` (``null``: never)."""
        d = float(self.scale_down_delay)
        return {"scale_down_delay": d if math.isfinite(d) else None}


@dataclass(frozen=True)
class PoolStats:
    """What an autoscaled pool measured over a run (names as in ``docs/outputs.md``).

    Attributes:
        nodes: nodes in the pool at the end (empty ones not yet removed included).
        nodes_peak: most nodes in the pool at any time.
        node_hours: the integral of the pool's size over the run, in the stream's time units.
        node_cost: each node's time in the pool times its type's cost, summed.
        opened: nodes added during the run.
        removed: nodes removed during the run.
    """

    nodes: int
    nodes_peak: int
    node_hours: float
    node_cost: float
    opened: int
    removed: int

    def to_dict(self) -> dict[str, Any]:
        """The run's keys ``nodes``, ``nodes_peak``, ``node_hours``, ``node_cost``."""
        return {"nodes": self.nodes, "nodes_peak": self.nodes_peak,
                "node_hours": round(self.node_hours, 6), "node_cost": round(self.node_cost, 6)}


def unbounded_count(instance: Instance) -> int:
    """Hosts to give a type offered without a count: never a cap under :class:`Autoscale`.

    A node opens only for a container no node in the pool takes; an empty node of a type takes any
    container an empty node of that type takes, so a type never has more nodes than containers alive.
    """
    return max(1, instance.n_containers)


def new_node(instance: Instance, fits: np.ndarray, app: int) -> int | None:
    """The host a scale-up opens for a container of ``app`` (the rule of the module docstring).

    Args:
        instance: the instance.
        fits: hosts not in the pool whose empty node takes the container, shape ``(n_hosts,)`` bool.
        app: the container's app.

    Returns:
        The host, or ``None`` when ``fits`` has none.
    """
    idx = np.flatnonzero(fits)
    if len(idx) == 0:
        return None
    inst = instance
    types = inst.host_type_of[idx]
    first: dict[int, int] = {}  # lowest host of each type that fits
    for h, t in zip(idx.tolist(), types.tolist(), strict=True):
        first.setdefault(t, h)
    cap = inst.type_capacity
    idle = (cap - inst.demand[app]) / np.where(cap > 0, cap, 1.0)

    def key(t: int) -> tuple[float, ...]:
        return (float(inst.type_cost[t]), *idle[t].tolist(), float(t))

    return first[min(first, key=key)]


class Pool:
    """The nodes of one episode's autoscaled pool (see the module docstring); the engine drives it.

    Args:
        instance: the instance.
        settings: the :class:`Autoscale` settings.
        state: the episode's starting state (its used hosts start the pool).
        start: the time the run starts (the first arrival's).
    """

    def __init__(self, instance: Instance, settings: Autoscale, state: ClusterState, start: float) -> None:
        self.instance = instance
        self.delay = float(settings.scale_down_delay)
        self.up = state.used_hosts().copy()
        """Hosts in the pool now, shape ``(n_hosts,)`` bool."""
        self.since = np.where(self.up, start, np.nan)
        self.empty_since = np.full(instance.n_hosts, np.nan)
        self.hours = np.zeros(instance.n_hosts)
        self.now = float(start)
        self.size = int(self.up.sum())
        """Nodes in the pool now."""
        self.peak = self.size
        self.sizes: list[int] = []
        """Nodes in the pool after each recorded decision (the engine appends, one per trajectory row)."""
        self.opened = 0
        self.removed = 0
        self._heap: list[tuple[float, int, int, float]] = []
        self._counter = 0

    def mask(self, fits: np.ndarray) -> np.ndarray:
        """The hosts of ``fits`` (shape ``(n_hosts,)`` bool) that are in the pool."""
        return fits & self.up

    def scale_up(self, fits: np.ndarray, app: int, now: float) -> int | None:
        """Open the node :func:`new_node` picks among ``fits`` not in the pool (``None``: none left)."""
        self.advance(now)
        h = new_node(self.instance, fits & ~self.up, app)
        if h is not None:
            self.up[h] = True
            self.since[h] = self.now
            self.opened += 1
            self.size += 1
            self.peak = max(self.peak, self.size)
            self.emptied(h, self.now)  # empty until a container lands on it
        return h

    def emptied(self, host: int, now: float) -> None:
        """``host`` runs no container since ``now``: it is removed after the delay unless filled."""
        self.empty_since[host] = now
        if math.isfinite(self.delay):
            heapq.heappush(self._heap, (now + self.delay, self._counter, host, now))
            self._counter += 1

    def filled(self, host: int) -> None:
        """A container landed on ``host``."""
        self.empty_since[host] = np.nan

    def advance(self, now: float) -> None:
        """Move the clock to ``now``, removing the nodes whose delay ended at or before it."""
        heap = self._heap
        while heap and heap[0][0] <= now:
            at, _, h, since = heapq.heappop(heap)
            if self.up[h] and self.empty_since[h] == since:
                self.hours[h] += at - self.since[h]
                self.up[h] = False
                self.since[h] = np.nan
                self.empty_since[h] = np.nan
                self.removed += 1
                self.size -= 1
        self.now = max(self.now, float(now))

    def stats(self) -> PoolStats:
        """The measures of the run so far, up to the pool's clock."""
        hours = self.hours + np.where(self.up, self.now - np.nan_to_num(self.since), 0.0)
        return PoolStats(self.size, self.peak, float(hours.sum()),
                         float(hours @ self.instance.host_cost), self.opened, self.removed)


__all__ = ["Autoscale", "Pool", "PoolStats", "new_node", "unbounded_count"]
