"""The swarm-tuned scoring policy: ``score(host) = theta . phi(host, request)``, saved as JSON.

``theta`` lives in the box ``[-1, 1]^F``. After every optimiser update the map :func:`project` (clip to
the box, then scale so the largest absolute weight is 1) is applied; scaling never changes a decision
(the argmax is scale-invariant), so the projection only removes a redundant degree of freedom.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from packing.errors import InputError, Problem
from packing.io import escape_control, read_document, write_document
from packing.io.fields import other_vbp_kind
from packing.model.instance import Instance
from policies import kernels
from policies.base import Observation, ScoringPolicy
from policies.swarm.features import (
    FEATURES,
    N_FEATURES,
    exclusion_partners,
    host_features,
    linear_score,
)

POLICY_FORMAT = "vbp-policy/1"
KIND = "swarm-linear"


def project(theta: np.ndarray) -> np.ndarray:
    """The feasibility-preserving map Phi: clip to ``[-1, 1]``, then scale to max-abs 1.

    Args:
        theta: weights, shape ``(F,)`` or ``(n, F)``.

    Returns:
        Projected weights of the same shape (an all-zero row stays zero).
    """
    t = np.clip(np.asarray(theta, dtype=np.float64), -1.0, 1.0)
    m = np.abs(t).max(axis=-1, keepdims=True)
    return np.where(m > 0, t / np.where(m > 0, m, 1.0), 0.0)


def named_weights(**weights: float) -> np.ndarray:
    """A weight vector from feature names, e.g. ``named_weights(best_fit=1.0)``; shape ``(F,)``."""
    unknown = sorted(set(weights) - set(FEATURES))
    if unknown:
        raise ValueError(f"unknown features {unknown}; known: {list(FEATURES)}")
    return np.array([float(weights.get(f, 0.0)) for f in FEATURES])


class SwarmPolicy(ScoringPolicy):
    """Linear scoring over :data:`policies.swarm.features.FEATURES`.

    Args:
        weights: one weight per feature, shape ``(F,)``; used as given (see :func:`project`).
        name: the name shown in tables.
        provenance: how the weights were obtained (saved with them).
    """

    name = "swarm"
    kernel = kernels.SWARM

    def __init__(self, weights: Sequence[float] | np.ndarray, *, name: str = "swarm",
                 provenance: Mapping[str, Any] | None = None) -> None:
        super().__init__(open_first=False)
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (N_FEATURES,):
            raise ValueError(f"expected {N_FEATURES} weights ({', '.join(FEATURES)}), got {w.shape}")
        self.weights = w
        self.name = name
        self.provenance = dict(provenance or {})

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Precompute the exclusion partners of the instance's apps."""
        self.partners_ = exclusion_partners(instance)

    def kernel_params(self, instance: Instance) -> np.ndarray:
        """The weights, shape ``(F,)`` (the compiled kernel computes the same features)."""
        return self.weights

    def scores(self, obs: Observation, mask: np.ndarray) -> np.ndarray:
        """``features . weights`` per host, shape ``(n_hosts,)``."""
        partners = getattr(self, "partners_", None)
        return linear_score(host_features(obs, partners), self.weights)

    # --------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON document :meth:`save` writes."""
        return {"format": POLICY_FORMAT, "kind": KIND, "name": self.name,
                "features": list(FEATURES), "weights": [float(x) for x in self.weights],
                "training": self.provenance}

    def save(self, path: str | Path) -> None:
        """Save as JSON (atomically)."""
        write_document(path, self.to_dict())

    @classmethod
    def from_dict(cls, doc: Any, source: str = "<policy>") -> SwarmPolicy:
        """Build from a document; raises :class:`InputError` naming the field on bad input."""
        probs: list[Problem] = []
        if not isinstance(doc, Mapping):
            raise InputError([Problem(source, "", "expected a JSON object")])
        if doc.get("format") != POLICY_FORMAT or doc.get("kind") != KIND:
            fmt = doc.get("format")
            what = other_vbp_kind(fmt, POLICY_FORMAT)
            probs.append(Problem(source, "format", f"expected format {POLICY_FORMAT!r} and kind "
                                 f"{KIND!r}, got {fmt!r} / {doc.get('kind')!r}{what or ''}"))
            if what:  # another kind of vbp file: its other fields are no use to report
                raise InputError(probs)
        feats = doc.get("features")
        w = doc.get("weights")
        if not isinstance(feats, list) or not isinstance(w, list) or len(feats) != len(w):
            probs.append(Problem(source, "weights", "expected lists 'features' and 'weights' of "
                                 "equal length"))
        elif unknown := [f for f in feats if f not in FEATURES]:
            probs.append(Problem(source, "features", f"unknown features {unknown}; this version "
                                 f"knows {list(FEATURES)}"))
        elif not all(isinstance(x, int | float) and not isinstance(x, bool) and np.isfinite(x)
                     for x in w):
            probs.append(Problem(source, "weights", "every weight must be a finite number"))
        if probs:
            raise InputError(probs)
        by_name = dict(zip(feats, w, strict=True))  # type: ignore[arg-type]
        weights = np.array([float(by_name.get(f, 0.0)) for f in FEATURES])
        name = escape_control(str(doc.get("name", Path(source).stem or "swarm")))[:200]  # printed in tables
        return cls(weights, name=name,
                   provenance=doc.get("training") or {})

    @classmethod
    def load(cls, path: str | Path) -> SwarmPolicy:
        """Load a policy saved by :meth:`save`."""
        return cls.from_dict(read_document(path), str(path))

    def __repr__(self) -> str:
        w = ", ".join(f"{f}={x:.3g}" for f, x in zip(FEATURES, self.weights, strict=True) if x)
        return f"SwarmPolicy({self.name!r}, {w or 'all zero'})"


def load_policy_file(path: Path) -> SwarmPolicy:
    """Loader for :func:`policies.registry.register_loader` (``.json`` policy files)."""
    return SwarmPolicy.load(path)


def dumps(policy: SwarmPolicy) -> str:
    """The policy as a JSON string."""
    return json.dumps(policy.to_dict(), indent=1)
