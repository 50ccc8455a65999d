"""Seeded hard one-dimensional bin-packing instances (capacity 1000, 160-200 items, sizes 20-800).

Two constructions, both with a known optimum in ``meta["planted_optimum"]``:

``"perfect"``
    ``k`` bins are each split exactly into 2, 3 or 4 items (probabilities 0.3, 0.5, 0.2) with
    sizes in ``size_range``, until at least ``n_items`` items exist. The total size is ``k``
    times the capacity, so the volume bound is ``k`` and the planted packing meets it: the
    optimum is ``k``. Every bin must be filled *exactly*, which is what makes these hard for
    local search (the classic hard sets are of this kind: the optimum equals the LP bound, and
    a heuristic has to find one of very few perfect packings).
``"near"``
    The same, but bin ``j`` is split into ``capacity - r_j`` with ``r_j`` drawn in
    ``[0, max_waste]`` and ``sum r_j < capacity`` (enforced), so the volume bound is still
    ``k`` and the planted packing meets it: the optimum is ``k``. With waste to spare the
    exact cover by tight patterns has far more patterns to consider and local search more
    near-misses, as on the classic hard sets whose volume is not a whole number of bins.

Instances with the optimum one above the LP bound (non-IRUP) are not generated: a computer
search over small instances (up to 5 sizes, capacity up to 120, LP by enumerating every
pattern, optimum by the arc-flow MIP) found none in the time available, and a construction
whose gap survives mixing with other items needs a proof this module does not have.

Apps are the distinct sizes (count = how many items have that size), named ``item<j>``; there
are as many hosts as items (like :func:`packing.loaders.vpsolver.load_vbp`). Every random draw
comes from ``np.random.default_rng(seed)``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from packing.model import App, HostType, Instance

CAPACITY = 1000
"""Bin capacity of the generated instances."""

MAX_WASTE = 20
"""Default largest waste per bin of ``"near"`` instances."""

Kind = Literal["perfect", "near"]


def _split_bin(rng: np.random.Generator, capacity: int, parts: int, lo: int, hi: int
               ) -> list[int] | None:
    """``parts`` sizes in ``[lo, hi]`` summing to ``capacity`` (``None`` after 200 misses)."""
    for _ in range(200):
        cuts = np.sort(rng.integers(1, capacity, size=parts - 1))
        sizes = np.diff(np.concatenate([[0], cuts, [capacity]]))
        if sizes.min() >= lo and sizes.max() <= hi:
            return [int(s) for s in sizes]
    return None


def perfect_items(rng: np.random.Generator, n_items: int, capacity: int = CAPACITY,
                  size_range: tuple[int, int] = (20, 800), max_waste: int = 0
                  ) -> list[list[int]]:
    """Bins of item sizes, until at least ``n_items`` items exist.

    Bin ``j`` is filled to ``capacity - r_j`` with ``r_j <= max_waste`` and the total waste below
    ``capacity``.
    """
    lo, hi = size_range
    bins: list[list[int]] = []
    n = 0
    wasted = 0
    while n < n_items:
        parts = int(rng.choice([2, 3, 4], p=[0.3, 0.5, 0.2]))
        r = int(rng.integers(0, max_waste + 1)) if max_waste > 0 else 0
        if wasted + r >= capacity:
            r = 0
        got = _split_bin(rng, capacity - r, parts, lo, hi)
        if got is None:
            continue
        bins.append(got)
        wasted += r
        n += len(got)
    return bins


def generate_hard1d(seed: int, *, n_items: int | None = None, kind: Kind = "perfect",
                    capacity: int = CAPACITY,
                    size_range: tuple[int, int] = (20, 800), max_waste: int = MAX_WASTE
                    ) -> Instance:
    """One hard 1-D instance (see the module docstring).

    Args:
        seed: the seed of the instance's own generator.
        n_items: items wanted (at least; default drawn in ``[160, 200]``).
        kind: ``"perfect"`` or ``"near"``.
        capacity: bin capacity.
        size_range: smallest and largest item size.
        max_waste: largest waste per bin of ``"near"`` instances.

    Returns:
        The instance; ``meta`` holds ``planted_optimum``, ``kind``, ``seed`` and
        ``planted`` (the planted packing: item sizes per bin).
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(160, 201)) if n_items is None else int(n_items)
    lo, hi = size_range
    if not 1 <= lo <= hi <= capacity or 2 * lo > capacity:
        raise ValueError(f"size_range {size_range} does not fit a capacity of {capacity}")
    meta: dict[str, object] = {"kind": kind, "seed": seed}
    if kind not in ("perfect", "near"):
        raise ValueError(f"unknown kind {kind!r}; use 'perfect' or 'near'")
    bins = perfect_items(rng, n, capacity, size_range, max_waste if kind == "near" else 0)
    meta["planted_optimum"] = len(bins)
    meta["planted"] = [list(b) for b in bins]
    sizes = np.array([s for b in bins for s in b], dtype=np.int64)
    values, counts = np.unique(sizes, return_counts=True)
    order = np.argsort(-values, kind="stable")
    apps = tuple(App(f"item{j}", (float(values[i]),), int(counts[i]))
                 for j, i in enumerate(order.tolist()))
    name = f"hard1d_{kind}_{seed}"
    return Instance(name, ("size",), (HostType("bin", (float(capacity),), len(sizes)),), apps,
                    meta=meta)


__all__ = ["CAPACITY", "MAX_WASTE", "generate_hard1d", "perfect_items"]
