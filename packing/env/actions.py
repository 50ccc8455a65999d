"""Action adapters of :class:`~packing.env.placement_env.PlacementEnv`: an agent's action to the engine's.

An adapter (the :class:`ActionAdapter` protocol) gives the Gymnasium action space, the action mask of
the current decision (``info["action_mask"]``, ``int8``, 1 = a valid action), and maps an action to an
:class:`EngineAction`: a host (with optional GPU cards; ``None`` lets the engine choose them with
:meth:`packing.feasibility.predicates.ClusterState.choose_cards`), :data:`packing.sim.policy.WAIT`, or
:data:`packing.sim.engine.REJECT`. An action that names no feasible host is never applied: the container is
rejected and the step reports ``info["invalid_action"] = True`` (so random agents and ``check_env``
never crash).

* :class:`DiscreteHost` — ``Discrete(n_hosts)`` (``+ 1`` for WAIT): the host index.
* :class:`ClusterHost` — ``MultiDiscrete([n_clusters, max_cluster_size])``: a cluster and a host in it.
* :class:`ContinuousCluster` — ``Box(-1, 1, (1,))``: a cluster (or WAIT) from one number, the host in
  the cluster chosen by a caller-supplied policy.

Clusters are those of :class:`packing.env.layout.EnvLayout` (the host types' ``cluster`` labels, in
order of first appearance over the hosts; unlabelled hosts form the cluster ``"default"``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
from gymnasium import spaces

from packing.env.layout import EnvLayout
from packing.errors import PolicyError
from packing.sim.engine import REJECT, Engine
from packing.sim.policy import WAIT, ChoosingCards, Policy, implements


class EngineAction(NamedTuple):
    """What the env applies to the engine.

    Attributes:
        host: a host index, :data:`~packing.sim.policy.WAIT` or :data:`~packing.sim.engine.REJECT`.
        cards: GPU cards for a host action (``None``: the engine's default choice).
        invalid: the agent's action named no feasible host (it is applied as a rejection).
    """

    host: int
    cards: tuple[int, ...] | None = None
    invalid: bool = False


_INVALID = EngineAction(REJECT, None, True)


@runtime_checkable
class ActionAdapter(Protocol):
    """Maps an agent's action space onto the engine's actions."""

    def space(self, layout: EnvLayout) -> spaces.Space[Any]:
        """The action space (called once, when the env is built)."""
        ...

    def reset(self, layout: EnvLayout, seed: int | None) -> None:
        """Prepare for a new episode (e.g. reset an inner policy with ``seed``)."""
        ...

    def action_mask(self, layout: EnvLayout, engine: Engine) -> np.ndarray:
        """Valid actions of the current decision, ``int8`` (all 0 once the episode has ended)."""
        ...

    def decode(self, layout: EnvLayout, engine: Engine, action: Any) -> EngineAction:
        """The engine action for ``action`` (the episode has a current decision)."""
        ...

    def sample(self, layout: EnvLayout, engine: Engine, rng: np.random.Generator) -> Any:
        """A uniformly random valid action of the current decision (for tests and random agents)."""
        ...


def _cards(chooser: ChoosingCards | None, engine: Engine, host: int) -> tuple[int, ...] | None:
    d = engine.decision
    if chooser is None or d is None or not engine.instance.gpu_cards[d.app]:
        return None
    return tuple(chooser.choose_cards(engine.observation(), host))


def _host_action(engine: Engine, h: int, chooser: ChoosingCards | None) -> EngineAction:
    """``h`` if it is a feasible host now, else an invalid action."""
    mask = engine.mask()
    if 0 <= h < len(mask) and mask[h]:
        return EngineAction(h, _cards(chooser, engine, h))
    return _INVALID


class DiscreteHost:
    """The action is a host index: ``Discrete(n_hosts)``, or ``Discrete(n_hosts + 1)`` with ``wait``.

    ``info["action_mask"]`` has shape ``(n_hosts,)`` (``(n_hosts + 1,)`` with ``wait``) ``int8``: the
    host mask, then 1 for WAIT while a decision is open, so ``env.action_space.sample(mask=...)`` draws
    a valid action. Action ``n_hosts`` (with ``wait``) is :data:`~packing.sim.policy.WAIT`: the request
    waits for the next departure (it is retried then; a request still waiting when the episode ends is
    never placed). A host outside the mask is invalid (a rejection).

    Args:
        wait: add the WAIT action.
        cards: chooses the GPU cards on the chosen host (a :class:`packing.sim.policy.ChoosingCards`);
            ``None``: the engine's default.
    """

    def __init__(self, wait: bool = False, *, cards: ChoosingCards | None = None) -> None:
        self.wait = wait
        self.cards = cards

    def space(self, layout: EnvLayout) -> spaces.Space[Any]:
        """``Discrete(max(1, n_hosts) + wait)``."""
        return spaces.Discrete(max(1, layout.n_hosts) + int(self.wait))

    def reset(self, layout: EnvLayout, seed: int | None) -> None:
        """Nothing to reset."""

    def action_mask(self, layout: EnvLayout, engine: Engine) -> np.ndarray:
        """Host mask (and WAIT), ``int8``, shape ``(max(1, n_hosts) + wait,)``."""
        out = np.zeros(max(1, layout.n_hosts) + int(self.wait), dtype=np.int8)
        out[: layout.n_hosts] = engine.mask()
        if self.wait and not engine.done:
            out[-1] = 1
        return out

    def decode(self, layout: EnvLayout, engine: Engine, action: Any) -> EngineAction:
        """Host ``action``, or WAIT for the last action with ``wait``; else invalid."""
        try:
            a = int(action)
        except (TypeError, ValueError):
            return _INVALID
        if self.wait and a == max(1, layout.n_hosts):
            return EngineAction(WAIT)
        return _host_action(engine, a, self.cards)

    def sample(self, layout: EnvLayout, engine: Engine, rng: np.random.Generator) -> int:
        """A random action where the mask is 1 (0 when none is)."""
        ok = np.flatnonzero(self.action_mask(layout, engine))
        return int(rng.choice(ok)) if len(ok) else 0

    def action_of(self, layout: EnvLayout, host: int) -> int:
        """The action for an engine choice: a host index, or WAIT (needs ``wait``)."""
        if host == WAIT:
            if not self.wait:
                raise ValueError("WAIT needs DiscreteHost(wait=True)")
            return max(1, layout.n_hosts)
        return int(host)


class ClusterHost:
    """The action is ``(cluster, i)``: the ``i``-th host (by index) of a cluster.

    Space ``MultiDiscrete([n_clusters, max_cluster_size])``. The pair maps to host
    ``layout.cluster_table[cluster, i]``; a pair past the cluster's size or on a host outside the mask
    is invalid (a rejection). ``info["action_mask"]`` is the joint mask, shape
    ``(n_clusters, max_cluster_size)`` ``int8`` (1 where the pair names a feasible host); Gymnasium's
    ``MultiDiscrete.sample`` only takes per-dimension masks, so sample with :meth:`sample` (or
    ``env.sample_action()``) instead.

    Args:
        cards: chooses the GPU cards on the chosen host; ``None``: the engine's default.
    """

    def __init__(self, *, cards: ChoosingCards | None = None) -> None:
        self.cards = cards

    def space(self, layout: EnvLayout) -> spaces.Space[Any]:
        """``MultiDiscrete([n_clusters, max_cluster_size])``."""
        return spaces.MultiDiscrete([layout.n_clusters, layout.max_cluster_size])

    def reset(self, layout: EnvLayout, seed: int | None) -> None:
        """Nothing to reset."""

    def action_mask(self, layout: EnvLayout, engine: Engine) -> np.ndarray:
        """The joint mask, shape ``(n_clusters, max_cluster_size)`` ``int8``."""
        table = layout.cluster_table
        mask = engine.mask()
        if len(mask) == 0:
            return np.zeros(table.shape, dtype=np.int8)
        return ((table >= 0) & mask[np.maximum(table, 0)]).astype(np.int8)

    def decode(self, layout: EnvLayout, engine: Engine, action: Any) -> EngineAction:
        """The host of the pair, or invalid."""
        try:
            c, i = (int(x) for x in np.asarray(action).reshape(-1))
        except (TypeError, ValueError):
            return _INVALID
        table = layout.cluster_table
        if not (0 <= c < table.shape[0] and 0 <= i < table.shape[1]):
            return _INVALID
        return _host_action(engine, int(table[c, i]), self.cards)

    def sample(self, layout: EnvLayout, engine: Engine, rng: np.random.Generator) -> np.ndarray:
        """A random valid pair (``[0, 0]`` when none is), shape ``(2,)`` int64."""
        ok = np.argwhere(self.action_mask(layout, engine))
        pick = ok[int(rng.integers(len(ok)))] if len(ok) else np.zeros(2)
        return np.asarray(pick, dtype=np.int64)

    def action_of(self, layout: EnvLayout, host: int) -> np.ndarray:
        """The pair that names ``host``, shape ``(2,)`` int64.

        Raises:
            ValueError: ``host`` is not a host index (e.g. WAIT: this adapter has none).
        """
        if not 0 <= host < layout.n_hosts:
            raise ValueError(f"ClusterHost actions name hosts only, got {host}")
        c = int(layout.cluster_of[host])
        i = int(np.searchsorted(layout.cluster_hosts[c], host))
        return np.array([c, i], dtype=np.int64)


class ContinuousCluster:
    """One number in ``[-1, 1]`` picks a cluster (or WAIT); a caller-supplied rule picks the host in it.

    Space ``Box(-1, 1, (1,), float32)``. With ``B = n_clusters + wait`` bins, the action ``x`` (clipped
    to ``[-1, 1]``) falls in bin ``k = min(floor((x + 1) / 2 * B), B - 1)``: bin ``k`` covers
    ``[-1 + 2k/B, -1 + 2(k+1)/B)`` (the last bin also takes ``x = 1``). Bins ``0 .. n_clusters - 1``
    are the clusters in layout order; bin ``n_clusters`` (with ``wait``) is
    :data:`~packing.sim.policy.WAIT`. A non-finite ``x`` is invalid.

    For a cluster bin, ``inner.act(obs, mask & in_cluster)`` chooses the host, where ``obs`` is the
    engine's :class:`~packing.sim.policy.Observation` and the mask is the host mask restricted to the
    cluster's hosts; if that restricted mask is empty the action is invalid (a rejection). The inner
    rule may answer WAIT (passed on); a host outside the restricted mask raises
    :class:`packing.errors.PolicyError`. GPU cards come from ``inner.choose_cards`` when it implements
    :class:`~packing.sim.policy.ChoosingCards`, else from the engine. ``inner.reset(instance, seed)`` is
    called at every env reset with a seed drawn from the env's generator.

    ``info["action_mask"]`` has one entry per bin, shape ``(B,)`` ``int8``: 1 for a cluster with a
    feasible host, and 1 for WAIT while a decision is open. :meth:`action_of_bin` gives a bin's
    centre.

    Args:
        inner: any :class:`packing.sim.policy.Policy` (e.g. ``policies.heuristics.BestFit()``); the env
            never imports policies, the caller supplies it.
        wait: add the WAIT bin.
    """

    def __init__(self, inner: Policy, wait: bool = True) -> None:
        self.inner = inner
        self.wait = wait

    def n_bins(self, layout: EnvLayout) -> int:
        """``n_clusters + wait``."""
        return layout.n_clusters + int(self.wait)

    def space(self, layout: EnvLayout) -> spaces.Space[Any]:
        """``Box(-1, 1, (1,), float32)``."""
        return spaces.Box(-1.0, 1.0, (1,), dtype=np.float32)

    def reset(self, layout: EnvLayout, seed: int | None) -> None:
        """``inner.reset(instance, seed)``."""
        self.inner.reset(layout.instance, seed)

    def bin_of(self, layout: EnvLayout, x: float) -> int:
        """The bin of action value ``x`` (see the class docstring)."""
        b = self.n_bins(layout)
        x = min(1.0, max(-1.0, x))
        return min(int(math.floor((x + 1.0) / 2.0 * b)), b - 1)

    def action_of_bin(self, layout: EnvLayout, k: int) -> np.ndarray:
        """The centre of bin ``k``, shape ``(1,)`` float32."""
        b = self.n_bins(layout)
        return np.array([-1.0 + (2 * k + 1) / b], dtype=np.float32)

    def action_mask(self, layout: EnvLayout, engine: Engine) -> np.ndarray:
        """One entry per bin, ``int8``, shape ``(n_clusters + wait,)``."""
        out = np.zeros(self.n_bins(layout), dtype=np.int8)
        mask = engine.mask()
        if len(mask):
            out[: layout.n_clusters] = layout.clusters_with(mask)
        if self.wait and not engine.done:
            out[-1] = 1
        return out

    def decode(self, layout: EnvLayout, engine: Engine, action: Any) -> EngineAction:
        """Cluster (then host by ``inner``) or WAIT; invalid for an empty cluster or a bad number."""
        try:
            x = float(np.asarray(action, dtype=np.float64).reshape(-1)[0])
        except (TypeError, ValueError, IndexError):
            return _INVALID
        if not math.isfinite(x):
            return _INVALID
        k = self.bin_of(layout, x)
        if k >= layout.n_clusters:
            return EngineAction(WAIT)
        sub = engine.mask() & (layout.cluster_of == k)
        if not sub.any():
            return _INVALID
        obs = engine.observation()
        h = int(self.inner.act(obs, sub))
        if h == WAIT:
            return EngineAction(WAIT)
        if not (0 <= h < len(sub) and sub[h]):
            raise PolicyError(f"inner policy {getattr(self.inner, 'name', type(self.inner).__name__)!r} "
                              f"chose host {h} outside cluster {layout.cluster_names[k]!r}'s mask")
        cards = None
        if implements(self.inner, ChoosingCards) and engine.instance.gpu_cards[obs.app]:
            cards = tuple(self.inner.choose_cards(obs, h))  # type: ignore[attr-defined]
        return EngineAction(h, cards)

    def sample(self, layout: EnvLayout, engine: Engine, rng: np.random.Generator) -> np.ndarray:
        """The centre of a random valid bin (of bin 0 when none is), shape ``(1,)`` float32."""
        ok = np.flatnonzero(self.action_mask(layout, engine))
        return self.action_of_bin(layout, int(rng.choice(ok)) if len(ok) else 0)


__all__ = ["ActionAdapter", "ClusterHost", "ContinuousCluster", "DiscreteHost", "EngineAction"]
