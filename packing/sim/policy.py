"""The policy contract: what every decision maker sees, what it returns, and its optional protocols.

Every policy — the heuristics, swarm-tuned scoring policies, learned agents — implements the small
:class:`Policy` protocol::

    policy.reset(instance, seed)           # once per simulated run
    host = policy.act(obs, mask)           # once per decision: a host index, or WAIT (-1)

``obs`` is an :class:`Observation`: read access to the cluster state (loads, capacities, per-host app
counts, all held by one :class:`packing.feasibility.predicates.ClusterState`), the request being placed and
what is
still pending. ``mask`` is ``ClusterState.mask(app)``, shape ``(n_hosts,)`` bool: the hosts that may take
the container under capacity, GPU, anti-affinity and rule constraints. A policy must return a host where
``mask`` is True, or :data:`WAIT` to delay the request until the next departure. The engine
(:mod:`packing.sim.engine`) owns feasibility; policies never re-check it.

Optional protocols, each checked with ``isinstance`` (no attribute probing):

* :class:`Arranging` — an offline policy that reorders the whole batch of arrivals before placing
  (First-Fit-Decreasing, Best-Fit-Decreasing);
* :class:`Waiting` — ``wait_when_full``: a container that fits nowhere waits for a departure instead of
  being rejected;
* :class:`ChoosingCards` — the policy chooses the GPU cards on the host it picked (else the engine's
  default, :meth:`packing.feasibility.predicates.ClusterState.choose_cards`);
* :class:`CompiledEpisode` — a compiled whole-episode fast path: given the start state and the app
  sequence, place everything in one compiled loop that makes exactly the decisions :meth:`Policy.act`
  would (tested decision by decision against the engine).

This module is the bottom layer's side of the contract: :mod:`policies` implements it, :mod:`packing`
only calls it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from packing.feasibility.predicates import ClusterState
    from packing.model.instance import Instance

WAIT = -1
"""Action meaning "do not place now": the request waits for the next departure."""


@dataclass(frozen=True)
class Observation:
    """What a policy sees for one decision. Treat every array as read-only.

    Attributes:
        state: the cluster state (``used`` ``(n_hosts, n_resources)``, ``capacity`` same shape,
            ``count`` ``(n_hosts, n_tracked)`` with ``col`` mapping apps to columns, ``n_on``
            ``(n_hosts,)``). Policies must not modify it.
        app: index of the app whose container is being placed.
        time: time of the decision.
        step: decision number within the run (0-based).
        pending: containers per app that are still to arrive after this one, shape ``(n_apps,)``.
    """

    state: ClusterState
    app: int
    time: float
    step: int
    pending: np.ndarray

    @property
    def instance(self) -> Instance:
        """The instance being simulated."""
        return self.state.instance

    @property
    def demand(self) -> np.ndarray:
        """Demand of the container, shape ``(n_resources,)``."""
        return self.state.instance.demand[self.app]

    @property
    def used(self) -> np.ndarray:
        """Load per host and resource, shape ``(n_hosts, n_resources)``."""
        return self.state.used

    @property
    def capacity(self) -> np.ndarray:
        """Capacity per host and resource, shape ``(n_hosts, n_resources)``."""
        return self.state.capacity

    @property
    def is_open(self) -> np.ndarray:
        """Hosts running at least one container, shape ``(n_hosts,)`` bool."""
        return self.state.n_on > 0

    def app_count(self, app: int) -> np.ndarray:
        """Containers of ``app`` on each host, shape ``(n_hosts,)`` (zeros for untracked apps)."""
        c = int(self.state.col[app])
        if c < 0:
            return np.zeros(self.state.instance.n_hosts, dtype=np.int64)
        return self.state.count[:, c].astype(np.int64)


@runtime_checkable
class Policy(Protocol):
    """Any decision maker: heuristics, tuned scoring policies, learned agents."""

    name: str

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Prepare for a new run on ``instance`` (draw random state from ``seed``)."""
        ...

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """Host index for the container of ``obs`` (``mask[host]`` must be True), or :data:`WAIT`."""
        ...


@runtime_checkable
class Arranging(Protocol):
    """An offline policy: it sees the whole batch of arrivals and decides their order."""

    def arrange(self, instance: Instance, apps: np.ndarray) -> np.ndarray:
        """A permutation of ``arange(len(apps))``: the order in which the arrivals are placed.

        Args:
            instance: the instance.
            apps: app index per arrival, in arrival order, shape ``(n_arrivals,)``.
        """
        ...


@runtime_checkable
class Waiting(Protocol):
    """A policy that may keep a container waiting for a departure when it fits nowhere."""

    wait_when_full: bool
    """If True, a container that fits nowhere is delayed (retried after a departure), not rejected."""


@runtime_checkable
class ChoosingCards(Protocol):
    """A policy that chooses the GPU cards of a container on the host it picked."""

    def choose_cards(self, obs: Observation, host: int) -> tuple[int, ...]:
        """``gpu_cards[app]`` distinct card indices of ``host`` that can take the container."""
        ...


@runtime_checkable
class CompiledEpisode(Protocol):
    """A policy with a compiled whole-episode fast path.

    The engine uses it only when the episode has no departures and no waiting, and
    :meth:`compiled_supports` holds (GPU episodes return the cards chosen per arrival as a third
    array, shape ``(n, G)``, ``-1`` padded); the result must equal placing the containers one by one with
    :meth:`Policy.act` (tested).
    """

    def compiled_supports(self, state: ClusterState) -> bool:
        """Whether the fast path covers this state (instance) at all."""
        ...

    def compiled_episode(self, state: ClusterState, seq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Place every arrival of ``seq`` in order, updating ``state`` in place.

        Args:
            state: the start state (modified).
            seq: app index per arrival, shape ``(n,)`` int64.

        Returns:
            ``(host, hosts_used)``: the host per arrival (-1: rejected) and the hosts in use after
            each arrival, both shape ``(n,)`` int64.
        """
        ...


_IMPLEMENTS: dict[tuple[type, type], bool] = {}


def implements(policy: object, protocol: type) -> bool:
    """``isinstance(policy, protocol)`` for the method protocols above, cached per class.

    The optional protocols are declared by methods of the policy's class, so the answer depends on
    the class only; caching it keeps the per-run cost of the check negligible.
    """
    key = (type(policy), protocol)
    hit = _IMPLEMENTS.get(key)
    if hit is None:
        hit = _IMPLEMENTS[key] = isinstance(policy, protocol)
    return hit


def waits_when_full(policy: object) -> bool:
    """Whether ``policy`` keeps containers that fit nowhere waiting (see :class:`Waiting`).

    The attribute is declared on the policy's class (the check is cached per class); its value is
    read from the policy itself.
    """
    return implements(policy, Waiting) and bool(policy.wait_when_full)  # type: ignore[attr-defined]


__all__ = ["WAIT", "Arranging", "ChoosingCards", "CompiledEpisode", "Observation", "Policy", "Waiting",
           "implements", "waits_when_full"]
