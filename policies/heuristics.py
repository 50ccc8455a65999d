"""Heuristic online policies. All honour capacity, anti-affinity and rules through the simulator's mask.

Ratios are per resource and host, ``c`` = capacity, ``u`` = load before placing, ``d`` = demand; a resource
with zero capacity contributes nothing. Every score is higher-is-better and ties go to the lowest host index.

* First-Fit (``ff``): the lowest-index feasible host.
* Best-Fit (``bf``): least total normalised residual after placing, ``sum((c - u - d) / c)``.
* Best-Fit bottleneck (``bf-bottleneck``): least largest normalised residual, ``max((c - u - d) / c)``.
* Worst-Fit (``wf``): most total normalised residual, among hosts in use (a new host only when none fits).
* First-Fit-Decreasing / Best-Fit-Decreasing (``ffd``, ``bfd``): offline; the arrivals are sorted by
  normalised size ``sum(d / c_max)`` (largest first, stable), then placed with FF / BF.
* Dot product (``dot``) and L2 norm (``l2``), Panigrahy, Talwar, Uyeda and Wieder, "Heuristics for vector bin
  packing" (Microsoft Research, 2011): maximise ``sum(d/c * (c-u)/c)``; minimise ``sum(((c-u)/c - d/c)**2)``;
  both among hosts in use first (as bins are opened in the paper).
* Kubernetes NodeResourcesFit scoring (kube-scheduler, integer arithmetic as there, 0..100):
  ``k8s-least`` (LeastAllocated), ``k8s-most`` (MostAllocated), ``k8s-balanced`` (BalancedAllocation:
  ``(1 - std of the requested fractions) * 100``) and ``k8s-rtcr`` (RequestedToCapacityRatio: a piecewise
  linear shape over utilisation 0..100 with scores 0..10, weighted per resource). As in kube-scheduler they
  score every feasible node (``open_first=False``); pass ``open_first=True`` for the bin-packing reading.
* Greedy (``greedy``): first fit over a host order drawn once per run from the seed — a scheduler that walks
  its node list in a fixed but arbitrary order. On identical hosts it uses as many hosts as FF.
* Random (``random``): a uniformly random feasible host among hosts in use, or a random unused one when
  none in use fits (Random-Fit); seeded, owns its Generator.
* Alignment (``alignment``): the host whose remaining-capacity ratios ``(c-u)/c`` point in the direction
  closest (cosine) to the demand ratios ``d/c``; hosts in use first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from packing.model.instance import Instance
from packing.sim.policy import WAIT, Observation
from policies import kernels
from policies.base import ScoringPolicy, choose
from policies.scoring import colsum as _colsum
from policies.scoring import ratios as _ratios


class FirstFit(ScoringPolicy):
    """The lowest-index feasible host."""

    name = "ff"
    kernel = kernels.FF

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """All zeros: the tie-break to the lowest index decides."""
        return np.zeros(obs.instance.n_hosts)


class BestFit(ScoringPolicy):
    """Least total normalised residual after placing."""

    name = "bf"
    kernel = kernels.BF

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """``-sum((c - u - d) / c)`` per host."""
        return -_colsum(_ratios(obs)[0])


class BestFitBottleneck(ScoringPolicy):
    """Least largest normalised residual after placing."""

    name = "bf-bottleneck"
    kernel = kernels.BF_BOTTLE

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """``-max((c - u - d) / c)`` per host."""
        return -_ratios(obs)[0].max(axis=1)


class WorstFit(ScoringPolicy):
    """Most total normalised residual after placing, among hosts in use first."""

    name = "wf"
    kernel = kernels.WF

    def __init__(self, *, open_first: bool = True) -> None:
        super().__init__(open_first=open_first)

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """``+sum((c - u - d) / c)`` per host."""
        return _colsum(_ratios(obs)[0])


def _size_order(instance: Instance, apps: np.ndarray) -> np.ndarray:
    """Arrivals sorted by normalised size ``sum(d / c_max)``, largest first, stable."""
    cmax = instance.type_capacity.max(axis=0) if len(instance.host_types) else np.ones(
        instance.n_resources)
    size = np.where(cmax > 0, instance.demand / np.where(cmax > 0, cmax, 1.0), 0.0).sum(axis=1)
    return np.argsort(-size[apps], kind="stable")


class FirstFitDecreasing(FirstFit):
    """First-Fit over the arrivals sorted by normalised size (offline)."""

    name = "ffd"

    def arrange(self, instance: Instance, apps: np.ndarray) -> np.ndarray:
        """Largest normalised size first (stable)."""
        return _size_order(instance, apps)


class BestFitDecreasing(BestFit):
    """Best-Fit over the arrivals sorted by normalised size (offline)."""

    name = "bfd"

    def arrange(self, instance: Instance, apps: np.ndarray) -> np.ndarray:
        """Largest normalised size first (stable)."""
        return _size_order(instance, apps)


class DotProduct(ScoringPolicy):
    """Panigrahy et al.'s dot product: demand ratios times free ratios, largest wins."""

    name = "dot"
    kernel = kernels.DOT

    def __init__(self, *, open_first: bool = True) -> None:
        super().__init__(open_first=open_first)

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """``sum(d/c * (c-u)/c)`` per host."""
        _, dn, fb = _ratios(obs)
        return _colsum(dn * fb)


class L2Norm(ScoringPolicy):
    """Panigrahy et al.'s L2 norm: free ratios closest to the demand ratios."""

    name = "l2"
    kernel = kernels.L2

    def __init__(self, *, open_first: bool = True) -> None:
        super().__init__(open_first=open_first)

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """``-sum(((c-u)/c - d/c) ** 2)`` per host."""
        _, dn, fb = _ratios(obs)
        return -_colsum((fb - dn) ** 2)


# ---------------------------------------------------------------------------------------------
# Kubernetes NodeResourcesFit
MAX_NODE_SCORE = 100
MAX_CUSTOM_SCORE = 10


def _k8s_weights(instance: Instance, weights: Mapping[str, float] | None) -> np.ndarray:
    """Weight per resource, shape ``(n_resources,)``; default 1 each (kube: cpu=1, memory=1)."""
    if weights is None:
        return np.ones(instance.n_resources)
    unknown = [k for k in weights if k not in instance.resources]
    if unknown:
        raise ValueError(f"unknown resources {unknown}; resources are {list(instance.resources)}")
    return np.array([float(weights.get(r, 0.0)) for r in instance.resources])


class _K8sScore(ScoringPolicy):
    """Shared parts of the NodeResourcesFit strategies: requested-after and resource weights."""

    def __init__(self, *, weights: Mapping[str, float] | None = None, open_first: bool = False) -> None:
        super().__init__(open_first=open_first)
        self.weights = dict(weights) if weights is not None else None

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Resolve the resource weights for this instance."""
        self.w_ = _k8s_weights(instance, self.weights)

    def _requested(self, obs: Observation) -> tuple[np.ndarray, np.ndarray]:
        return obs.used + obs.demand[None, :], obs.capacity

    def _combine(self, per_res: np.ndarray) -> np.ndarray:
        """Weighted integer mean over resources, as kube-scheduler (``sum(s*w) // sum(w)``)."""
        w = self.w_
        used = w > 0
        total = w[used].sum()
        if total == 0:
            return np.zeros(per_res.shape[0])
        return np.floor((per_res[:, used] * w[used]).sum(axis=1) / total)


class K8sLeastAllocated(_K8sScore):
    """LeastAllocated: ``(capacity - requested) * 100 // capacity``, weighted mean; spreads."""

    name = "k8s-least"

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """Score 0..100 per host."""
        req, cap = self._requested(obs)
        safe = np.where(cap > 0, cap, 1.0)
        s = np.where((cap > 0) & (req <= cap), np.floor((cap - req) * MAX_NODE_SCORE / safe), 0.0)
        return self._combine(s)


class K8sMostAllocated(_K8sScore):
    """MostAllocated: ``requested * 100 // capacity``, weighted mean; packs."""

    name = "k8s-most"

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """Score 0..100 per host."""
        req, cap = self._requested(obs)
        safe = np.where(cap > 0, cap, 1.0)
        s = np.where((cap > 0) & (req <= cap), np.floor(req * MAX_NODE_SCORE / safe), 0.0)
        return self._combine(s)


class K8sBalancedAllocation(_K8sScore):
    """BalancedAllocation: ``(1 - std(requested / capacity)) * 100`` over weighted resources."""

    name = "k8s-balanced"

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """Score 0..100 per host."""
        req, cap = self._requested(obs)
        use = (self.w_ > 0) & (cap > 0).all(axis=0)
        if not use.any():
            return np.zeros(obs.instance.n_hosts)
        frac = np.minimum(req[:, use] / cap[:, use], 1.0)
        return np.floor((1.0 - frac.std(axis=1)) * MAX_NODE_SCORE)


class K8sRequestedToCapacityRatio(_K8sScore):
    """RequestedToCapacityRatio: a piecewise-linear function of utilisation, weighted per resource.

    Args:
        shape: ``(utilisation, score)`` points, utilisation 0..100 increasing, score 0..10; the
            default ``((0, 0), (100, 10))`` favours full hosts (bin packing).
        weights: weight per resource name (default 1 each).
        open_first: prefer hosts in use.
    """

    name = "k8s-rtcr"

    def __init__(self, *, shape: Sequence[tuple[float, float]] = ((0, 0), (100, 10)),
                 weights: Mapping[str, float] | None = None, open_first: bool = False) -> None:
        super().__init__(weights=weights, open_first=open_first)
        self.shape = tuple((float(u), float(s)) for u, s in shape)

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Validate the shape and resolve weights."""
        super().reset(instance, seed)
        xs = np.array([p[0] for p in self.shape])
        ys = np.array([p[1] for p in self.shape])
        if len(xs) == 0 or np.any(np.diff(xs) <= 0) or xs.min() < 0 or xs.max() > 100:
            raise ValueError("shape utilisations must be increasing within 0..100")
        if ys.min() < 0 or ys.max() > MAX_CUSTOM_SCORE:
            raise ValueError(f"shape scores must lie within 0..{MAX_CUSTOM_SCORE}")
        self.xs_, self.ys_ = xs, ys * (MAX_NODE_SCORE / MAX_CUSTOM_SCORE)

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """Score 0..100 per host."""
        req, cap = self._requested(obs)
        safe = np.where(cap > 0, cap, 1.0)
        util = np.where(cap > 0, np.floor(req * MAX_NODE_SCORE / safe), 0.0)
        s = np.floor(np.interp(util, self.xs_, self.ys_))
        s = np.where((cap > 0) & (req <= cap), s, 0.0)
        return self._combine(s)


# ---------------------------------------------------------------------------------------------
class Greedy(ScoringPolicy):
    """First fit over a host order drawn once per run (from the seed of :meth:`reset`)."""

    name = "greedy"

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Draw this run's host order."""
        rng = np.random.default_rng(seed)
        self.rank_ = np.empty(instance.n_hosts)
        self.rank_[rng.permutation(instance.n_hosts)] = np.arange(instance.n_hosts)

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """Minus the host's rank in this run's order."""
        return -self.rank_


class RandomFit(ScoringPolicy):
    """A uniformly random feasible host, among hosts in use first (seeded Random-Fit)."""

    name = "random"

    def __init__(self, *, open_first: bool = True) -> None:
        super().__init__(open_first=open_first)

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Seed this run's Generator."""
        self.rng_ = np.random.default_rng(seed)

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """Uniform random scores."""
        return self.rng_.random(obs.instance.n_hosts)

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """A random host among the candidates (one draw per decision)."""
        cand = mask & obs.is_open if self.open_first else mask
        if self.open_first and not cand.any():
            cand = mask
        idx = np.flatnonzero(cand)
        if len(idx) == 0:
            return WAIT
        return int(idx[self.rng_.integers(len(idx))])


class Alignment(ScoringPolicy):
    """The host whose free-capacity ratios are most aligned (cosine) with the demand ratios."""

    name = "alignment"

    def __init__(self, *, open_first: bool = True) -> None:
        super().__init__(open_first=open_first)

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """``cos(angle((c-u)/c, d/c))`` per host."""
        _, dn, fb = _ratios(obs)
        num = _colsum(dn * fb)
        den = np.sqrt(_colsum(dn * dn)) * np.sqrt(_colsum(fb * fb))
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


__all__ = [
    "Alignment", "BestFit", "BestFitBottleneck", "BestFitDecreasing", "DotProduct", "FirstFit",
    "FirstFitDecreasing", "Greedy", "K8sBalancedAllocation", "K8sLeastAllocated", "K8sMostAllocated",
    "K8sRequestedToCapacityRatio", "L2Norm", "RandomFit", "WorstFit", "choose",
]
