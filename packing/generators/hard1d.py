"""Seeded hard one-dimensional bin-packing instances (capacity 1000, 160-200 items, sizes 20-800).

Two constructions with a known optimum in ``meta["planted_optimum"]``:

``"perfect"``
    ``k`` bins are each split exactly into 2, 3 or 4 items (probabilities 0.3, 0.5, 0.2) with
    sizes in ``size_range``, until at least ``n_items`` items exist. The total size is ``k``
    times the capacity, so the volume bound is ``k`` and the planted packing meets it: the
    optimum is ``k``. Every bin must be filled *exactly*, which is what makes these hard for
    local search (the classic hard sets are of this kind: the optimum equals the LP bound, and
    a heuristic has to find one of very few perfect packings).
``"near"``
    The same, but about :data:`WASTE_SHARE` of the bins are split into ``capacity - r_j`` with
    ``r_j`` drawn in ``[1, max_waste]`` and ``sum r_j < capacity`` (enforced), so the volume bound is still
    ``k`` and the planted packing meets it: the optimum is ``k``. With waste to spare the
    exact cover by tight patterns has far more patterns to consider and local search more
    near-misses, as on the classic hard sets whose volume is not a whole number of bins.

``"uniform"``
    Sizes drawn uniformly from ``size_range``, redrawn (same generator) until first-fit
    decreasing needs more bins than the volume bound, like the classic hard sets that were
    selected from random draws. No optimum is planted (``meta["planted_optimum"]`` is
    ``None``); these are the ones where tabu search and the bounds of ``auto`` stall one bin
    apart.

``"triplets"``
    Falkenauer's triplets: every bin holds exactly three items of sizes in ``[250, 500)``
    (the first in ``[380, 490]``, the second in ``[250, 750 - first]``, the third the rest), so
    the optimum is the number of triplets and every bin of an optimal packing is full; the
    number of items is rounded up to a multiple of 3.
``"schwerin"``
    Schwerin and Wäscher's kind: sizes uniform in ``[150, 200]`` (5 or 6 items per bin at
    capacity 1000), redrawn until first-fit decreasing misses the volume bound. No planted
    optimum.
``"large"``
    Large capacity, few items per bin (Wäscher-Gau-like): capacity :data:`LARGE_CAPACITY`, sizes
    uniform in ``[2000, 5000]`` (2-4 items per bin), redrawn until first-fit decreasing misses
    the volume bound. No planted optimum.

A non-IRUP instance (optimum one above the LP bound) is given by :func:`petersen_instance`:
15 items, one per edge of the Petersen graph, item ``(u, v)`` of size ``f(u) + f(v)`` with the
vertex values :data:`PETERSEN_F` summing to the capacity 10000 (the idea of Caprara, Dell'Amico,
Díaz-Díaz, Iori and Rizzi, "Friendly bin packing instances without Integer Round-up Property",
Math. Program. 2015: the Petersen graph is fractionally but not integrally 3-edge-colourable;
the vertex values here are our own, found by a seeded random search). Proof of the gap:

* the total size is ``3 * 10000`` (every vertex is in 3 edges), so the LP bound is at least 3;
  each of the 6 perfect matchings fills a bin exactly and every edge lies in 2 of them, so the
  6 matchings at 1/2 each are an LP solution of value 3: the LP bound is 3;
* 3 bins would all be filled exactly; the vertex values are chosen so that the only item sets
  that fill a bin exactly are the perfect matchings (checked over all ``2**15`` subsets by the
  tests), so 3 bins would be a 3-edge-colouring of the Petersen graph, which does not exist;
* any 4-edge-colouring gives 4 matchings, each within the capacity: the optimum is 4.

Larger non-IRUP instances (160-200 items at capacity 1000) are not generated: adding filler
items to the gadget lets bins mix gadget and filler items, and no known construction keeps the
gap provable.

Apps are the distinct sizes (count = how many items have that size), named ``item<j>``; there
are as many hosts as items (like :func:`packing.loaders.vpsolver.load_vbp`). Every random draw
comes from ``np.random.default_rng(seed)``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from packing.model.instance import App, HostType, Instance

CAPACITY = 1000
"""Bin capacity of the generated instances."""

PETERSEN_F = (1041, 1116, 1159, 919, 1020, 885, 873, 1055, 855, 1077)
"""Vertex values of the Petersen gadget (sum 10000; see :func:`petersen_instance`)."""

PETERSEN_EDGES = tuple([(i, (i + 1) % 5) for i in range(5)] + [(i, i + 5) for i in range(5)]
                       + [(i + 5, (i + 2) % 5 + 5) for i in range(5)])
"""The Petersen graph: outer 5-cycle, spokes, inner pentagram (vertices 0-9)."""

MAX_WASTE = 20
"""Default largest waste per bin of ``"near"`` instances."""

LARGE_CAPACITY = 10_000
"""Bin capacity of the ``"large"`` kind."""

WASTE_SHARE = 0.1
"""Share of the bins of ``"near"`` instances that get some waste."""

Kind = Literal["perfect", "near", "uniform", "triplets", "schwerin", "large"]

KINDS: tuple[Kind, ...] = ("perfect", "near", "uniform", "triplets", "schwerin", "large")
"""Every kind :func:`generate_hard1d` makes."""


def _split_bin(rng: np.random.Generator, capacity: int, parts: int, lo: int, hi: int
               ) -> list[int] | None:
    """``parts`` sizes in ``[lo, hi]`` summing to ``capacity`` (``None`` after 200 misses)."""
    for _ in range(200):
        cuts = np.sort(rng.integers(1, capacity, size=parts - 1))
        sizes = np.diff(np.concatenate([[0], cuts, [capacity]]))
        if sizes.min() >= lo and sizes.max() <= hi:
            return [int(s) for s in sizes]
    return None


def _ffd_bins(sizes: list[int], capacity: int) -> int:
    """Bins first-fit decreasing uses (a plain loop: a few hundred items)."""
    loads: list[int] = []
    for s in sorted(sizes, reverse=True):
        for j, load in enumerate(loads):
            if load + s <= capacity:
                loads[j] += s
                break
        else:
            loads.append(s)
    return len(loads)


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
        r = int(rng.integers(1, max_waste + 1)) if max_waste > 0 and rng.random() < WASTE_SHARE \
            else 0
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
        kind: one of :data:`KINDS`.
        capacity: bin capacity (``"triplets"``, ``"schwerin"`` and ``"large"`` set their own).
        size_range: smallest and largest item size (likewise).
        max_waste: largest waste per bin of ``"near"`` instances.

    Returns:
        The instance; ``meta`` holds ``planted_optimum``, ``kind``, ``seed`` and
        ``planted`` (the planted packing: item sizes per bin; for ``"uniform"`` one list of
        all sizes, not a packing).
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(160, 201)) if n_items is None else int(n_items)
    if kind == "triplets":
        capacity, size_range = 1000, (250, 499)
    elif kind == "schwerin":
        capacity, size_range = 1000, (150, 200)
    elif kind == "large":
        capacity, size_range = LARGE_CAPACITY, (2000, 5000)
    lo, hi = size_range
    if not 1 <= lo <= hi <= capacity or 2 * lo > capacity:
        raise ValueError(f"size_range {size_range} does not fit a capacity of {capacity}")
    meta: dict[str, object] = {"kind": kind, "seed": seed}
    if kind in ("uniform", "schwerin", "large"):
        for _ in range(1000):
            items = [int(x) for x in rng.integers(lo, hi + 1, size=n)]
            if _ffd_bins(items, capacity) > -(-sum(items) // capacity):
                break
        bins = [items]
        meta["planted_optimum"] = None
    elif kind == "triplets":
        bins = []
        for _ in range(-(-n // 3)):
            a = int(rng.integers(380, 491))
            b = int(rng.integers(250, 750 - a + 1))
            bins.append([a, b, capacity - a - b])
        meta["planted_optimum"] = len(bins)
    elif kind in ("perfect", "near"):
        bins = perfect_items(rng, n, capacity, size_range, max_waste if kind == "near" else 0)
        meta["planted_optimum"] = len(bins)
    else:
        raise ValueError(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    meta["planted"] = [list(b) for b in bins]
    sizes = np.array([s for b in bins for s in b], dtype=np.int64)
    values, counts = np.unique(sizes, return_counts=True)
    order = np.argsort(-values, kind="stable")
    apps = tuple(App(f"item{j}", (float(values[i]),), int(counts[i]))
                 for j, i in enumerate(order.tolist()))
    name = f"hard1d_{kind}_{seed}"
    return Instance(name, ("size",), (HostType("bin", (float(capacity),), len(sizes)),), apps,
                    meta=meta)


def petersen_instance() -> Instance:
    """The 15-item non-IRUP instance (capacity 10000, LP bound 3, optimum 4; module docstring).

    ``meta`` holds ``planted_optimum`` (4), ``lp_bound`` (3.0) and ``edges`` (the vertex pair of
    every item, in app order).
    """
    f = PETERSEN_F
    sizes = [f[u] + f[v] for u, v in PETERSEN_EDGES]
    apps = tuple(App(f"e{u}_{v}", (float(s),), 1)
                 for (u, v), s in zip(PETERSEN_EDGES, sizes, strict=True))
    meta = {"planted_optimum": 4, "lp_bound": 3.0, "edges": list(PETERSEN_EDGES)}
    return Instance("petersen", ("size",), (HostType("bin", (float(sum(f)),), 15),), apps,
                    meta=meta)


__all__ = ["CAPACITY", "KINDS", "LARGE_CAPACITY", "MAX_WASTE", "PETERSEN_EDGES", "PETERSEN_F",
           "generate_hard1d", "perfect_items", "petersen_instance"]
