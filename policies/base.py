"""The one interface every decision maker implements, and the scoring-policy base class.

Every policy — the heuristics of :mod:`policies.heuristics`, swarm-tuned scoring policies, RL agents —
implements the small :class:`Policy` protocol::

    policy.reset(instance, seed)           # once per simulated run
    host = policy.act(obs, mask)           # once per container: a host index, or WAIT (-1)

``obs`` is an :class:`Observation`: read access to the cluster state (loads, capacities, per-host app
counts, all held by one :class:`packing.feasibility.ClusterState`), the request being placed and what is
still pending. ``mask`` is ``ClusterState.mask(app)``, shape ``(n_hosts,)`` bool: the hosts that may take
the container under capacity, GPU, anti-affinity and rule constraints. A policy must return a host where
``mask`` is True, or :data:`WAIT` to delay the request until the next departure. The simulator
(:mod:`packing.simulator`) owns feasibility; policies never re-check it.

Scoring policies
----------------
Most heuristics rank hosts: :class:`ScoringPolicy` asks :meth:`ScoringPolicy.scores` for one score per host
(shape ``(n_hosts,)``, higher is better) and takes the argmax over the mask, ties to the lowest host index.
With ``open_first=True`` only hosts already running containers compete while one of them fits; a new host is
opened (the lowest-index one with the best score) only when none does — the bin-packing reading of
Worst-Fit, dot-product and the other spreading rules.

Batch use (swarm tuning)
------------------------
A scoring policy whose score is a fixed formula of the host state may also declare a compiled kernel
(:attr:`ScoringPolicy.kernel`, a code of :mod:`policies.kernels`, with :meth:`ScoringPolicy.kernel_params`).
The simulator then runs the whole episode in one compiled loop that applies the same feasibility predicates
(:func:`packing.feasibility.fits`, ``over_cap``, ``rule_broken``, compiled with numba). The intended use for
tuning many parameter vectors on the same arrival orders (common random numbers) is::

    orders = sample_orders(instance, k=16, seed=0)                 # the same orders for every candidate
    costs = evaluate_batch(lambda w: SwarmPolicy(w), thetas, instance, orders)    # (n_params, n_orders)

:func:`packing.simulator.evaluate_batch` builds one policy per row of ``thetas`` (shape
``(n_params, n_weights)``) and returns hosts used per (parameter vector, order); a PSO objective is then
``costs.mean(axis=1)``, shape ``(n_particles,)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from packing.feasibility import ClusterState
    from packing.model import Instance

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


class BasePolicy:
    """Convenience base: stores nothing, resets nothing, keeps arrivals in their order.

    Subclasses override :meth:`act`; offline policies (FFD, BFD) override :meth:`arrange`.
    """

    name: str = "base"
    wait_when_full: bool = False
    """If True, a container that fits nowhere is delayed (retried after a departure), not rejected."""

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Prepare for a new run; the default does nothing."""

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """Choose a host; see :class:`Policy`."""
        raise NotImplementedError

    def arrange(self, instance: Instance, apps: np.ndarray) -> np.ndarray:
        """Reorder a batch of arrivals (offline policies); the default keeps the order.

        Args:
            instance: the instance.
            apps: app index per arrival, shape ``(n_arrivals,)``.

        Returns:
            A permutation of ``arange(n_arrivals)``: the order in which arrivals are placed.
        """
        return np.arange(len(apps))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class ScoringPolicy(BasePolicy):
    """A policy that scores every host and takes the best feasible one.

    Args:
        open_first: consider only hosts already in use while one of them fits (see the module
            docstring).
    """

    kernel: ClassVar[int | None] = None
    """Code of the compiled scoring kernel (:mod:`policies.kernels`), or None for the numpy path."""

    def __init__(self, *, open_first: bool = False) -> None:
        self.open_first = open_first

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """Score of each host for the container of ``obs``, shape ``(n_hosts,)``; higher is better.

        Scores of hosts outside ``mask`` are ignored (they may be anything, including NaN).
        """
        raise NotImplementedError

    def kernel_params(self, instance: Instance) -> np.ndarray:
        """Parameters of the compiled kernel, shape ``(n_params,)`` float64 (default: none)."""
        return np.zeros(0, dtype=np.float64)

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """The feasible host with the highest score, ties to the lowest index; WAIT if none fits."""
        return choose(self.scores(obs, mask), mask, obs.is_open if self.open_first else None)


def choose(scores: np.ndarray, mask: np.ndarray, is_open: np.ndarray | None = None) -> int:
    """Argmax of ``scores`` over ``mask`` (ties to the lowest index); WAIT when the mask is empty.

    Args:
        scores: score per host, shape ``(n_hosts,)``.
        mask: feasible hosts, shape ``(n_hosts,)`` bool.
        is_open: if given, hosts in use, shape ``(n_hosts,)`` bool; they win over unused hosts.
    """
    if is_open is not None:
        m = mask & is_open
        if m.any():
            mask = m
    if not mask.any():
        return WAIT
    s = np.where(mask, scores, -np.inf)
    s[np.isnan(s) & mask] = -np.inf
    best = np.flatnonzero(mask & (s == s.max()))
    return int(best[0]) if len(best) else int(np.flatnonzero(mask)[0])


__all__ = ["WAIT", "BasePolicy", "Observation", "Policy", "ScoringPolicy", "choose"]
