"""Base classes for policies: :class:`BasePolicy` and the scoring-policy base :class:`ScoringPolicy`.

The contract itself — :class:`~packing.sim.policy.Observation`, :data:`~packing.sim.policy.WAIT`, the
:class:`~packing.sim.policy.Policy` protocol and its optional protocols — lives in :mod:`packing.sim.policy`
(the bottom layer calls it; this package implements it). It is re-exported here for convenience.

Scoring policies
----------------
Most heuristics rank hosts: :class:`ScoringPolicy` asks :meth:`ScoringPolicy.scores` for one score per host
(shape ``(n_hosts,)``, higher is better) and takes the argmax over the mask, ties to the lowest host index.
With ``open_first=True`` only hosts already running containers compete while one of them fits; a new host is
opened (the lowest-index one with the best score) only when none does — the bin-packing reading of
Worst-Fit, dot-product and the other spreading rules.

Compiled fast path
------------------
A scoring policy whose score is a fixed formula of the host state may also declare a compiled kernel
(:attr:`ScoringPolicy.kernel`, a code of :mod:`policies.kernels`, with :meth:`ScoringPolicy.kernel_params`).
It then implements :class:`packing.sim.policy.CompiledEpisode`: the engine runs the whole episode in one
compiled loop that applies the same feasibility predicates (:mod:`packing.feasibility.kernels`). The intended
use for
tuning many parameter vectors on the same arrival orders (common random numbers) is::

    orders = sample_orders(instance, k=16, seed=0)                 # the same orders for every candidate
    costs = evaluate_batch(lambda w: SwarmPolicy(w), thetas, instance, orders)    # (n_params, n_orders)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from packing.sim.policy import WAIT, Observation, Policy
from policies import kernels

if TYPE_CHECKING:
    from packing.feasibility.predicates import ClusterState
    from packing.model.instance import Instance


class BasePolicy:
    """Convenience base: stores nothing, resets nothing, keeps arrivals in their order.

    Subclasses override :meth:`act`; offline policies (FFD, BFD) add ``arrange``
    (:class:`packing.sim.policy.Arranging`).
    """

    name: str = "base"
    wait_when_full: bool = False
    """If True, a container that fits nowhere is delayed (retried after a departure), not rejected."""

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Prepare for a new run; the default does nothing."""

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """Choose a host; see :class:`Policy`."""
        raise NotImplementedError

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

    # -- packing.sim.policy.CompiledEpisode ---------------------------------------------------
    def compiled_supports(self, state: ClusterState) -> bool:
        """True when this policy has a kernel, keeps the default :meth:`act`, and the state is covered."""
        return (self.kernel is not None and type(self).act is ScoringPolicy.act
                and not getattr(self, "wait_when_full", False) and kernels.supports(state))

    def compiled_episode(self, state: ClusterState, seq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The whole episode in the compiled kernel (see :class:`packing.sim.policy.CompiledEpisode`)."""
        assert self.kernel is not None
        return kernels.episode(state, seq, int(self.kernel), self.kernel_params(state.instance),
                               bool(self.open_first))


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
