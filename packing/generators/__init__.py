"""Seeded instance generators: ``random`` (optionally with a planted optimum), ``hard1d`` and ``sigma``.

And seeded cluster snapshots shaped like ``kubectl get -o json`` (:mod:`packing.generators.cluster`).

``generate_sigma`` lives in :mod:`packing.generators.sigma` and is imported on first use.

May import: packing.errors, packing.model, packing.io, packing.feasibility.
"""

from __future__ import annotations

from typing import Any

from packing.generators.hard1d import generate_hard1d
from packing.generators.random import generate_random, generate_random_packed


def __getattr__(name: str) -> Any:
    if name == "generate_sigma":
        from packing.generators.sigma import generate_sigma

        return generate_sigma
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["generate_hard1d", "generate_random", "generate_random_packed", "generate_sigma"]
