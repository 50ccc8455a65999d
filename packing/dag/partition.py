"""JobFusion's resource partition: a few container types that cover the tasks' demand vectors.

* ``"constrained"`` (the paper's eq. 1-2): bottom-up clustering of the distinct demand vectors. The
  centroid of a cluster is the component-wise **maximum** of its members (so a container of that shape
  runs every member). Two clusters may merge only if their centroids are comparable component-wise
  (one dominates the other), so a merge never creates a shape larger than an existing centroid. The
  pair merged next is the comparable pair with the least Ward-like distance
  ``|c1||c2| / (|c1| + |c2|) * ||g1 - g2||`` (``|c|``: tasks in the cluster; ``g``: centroid, each
  resource divided by its largest demand so cores and GB weigh alike). Merging stops at ``q`` clusters,
  or earlier when no comparable pair is left (``Partition.reached`` is then False and there are more
  than ``q`` types).
* ``"single"``: one type, the component-wise maximum of all demands (Decima-like, no clustering).
* ``"plain"``: Ward hierarchical clustering of the distinct vectors without the constraint
  (:func:`scipy.cluster.hierarchy.linkage`), centroids again the component-wise maxima.

Every task then runs in a container of any type that dominates its demand (:func:`fits`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from packing.dag.model import Workload
from packing.errors import InputError, Problem
from packing.feasibility.predicates import fits as within
from packing.model.validation import escape_control

Method = Literal["constrained", "single", "plain"]
METHODS: tuple[str, ...] = ("constrained", "single", "plain")
_TOL = 1e-9


@dataclass(frozen=True)
class Partition:
    """Container types and the tasks they were built for.

    Attributes:
        method: ``"constrained"``, ``"single"`` or ``"plain"``.
        types: container shapes, shape ``(Q, n_resources)``, sorted by total normalised size.
        weight: tasks assigned to each type by the clustering, shape ``(Q,)``.
        points: the distinct demand vectors clustered, shape ``(P, n_resources)``.
        assign: type of each point, shape ``(P,)``.
        point_weight: tasks per point, shape ``(P,)``.
        q: the number of types asked for.
        reached: whether exactly ``q`` types came out.
    """

    method: str
    types: np.ndarray
    weight: np.ndarray
    points: np.ndarray
    assign: np.ndarray
    point_weight: np.ndarray
    q: int
    reached: bool

    @property
    def n_types(self) -> int:
        """Number of container types ``Q``."""
        return int(self.types.shape[0])

    def internal_idle(self) -> float:
        """Share of the containers' resources the assigned tasks leave unused (mean over resources).

        ``1 - sum_tasks demand / sum_tasks centroid``, each resource normalised by the largest type.
        """
        scale = self.types.max(axis=0)
        cont = (self.types[self.assign] / scale) * self.point_weight[:, None]
        used = (self.points / scale) * self.point_weight[:, None]
        return float(1.0 - used.sum() / cont.sum()) if cont.sum() > 0 else 0.0


def demand_points(workload: Workload, weighting: Literal["tasks", "stages"] = "tasks",
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Distinct task demand vectors and their weights.

    Returns:
        ``(points (P, 2), weight (P,))``: weight = tasks (or stages) with that demand.
    """
    _, dem, nt, _ = workload.stage_table()
    if len(dem) == 0:
        return np.zeros((0, 2)), np.zeros(0)
    pts, inv = np.unique(np.round(dem, 9), axis=0, return_inverse=True)
    w = np.bincount(inv.ravel(), weights=nt if weighting == "tasks" else None, minlength=len(pts))
    return pts, w.astype(np.float64)


def dominates(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a >= b`` in every component (shapes ``(n_resources,)``)."""
    return bool(np.all(a >= b - _TOL))


def comparable(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether one of two centroids dominates the other."""
    return dominates(a, b) or dominates(b, a)


def merge_distance(n1: float, n2: float, g1: np.ndarray, g2: np.ndarray) -> float:
    """The paper's eq. 2: ``n1 n2 / (n1 + n2) * ||g1 - g2||``."""
    return float(n1 * n2 / (n1 + n2) * np.linalg.norm(g1 - g2))


def _finish(method: str, points: np.ndarray, weight: np.ndarray, labels: np.ndarray, q: int) -> Partition:
    uniq = np.unique(labels)
    types = np.array([points[labels == u].max(axis=0) for u in uniq]).reshape(len(uniq), points.shape[1])
    scale = np.maximum(types.max(axis=0), _TOL)
    order = np.lexsort(((types / scale).sum(axis=1),))
    types = types[order]
    remap = {int(uniq[o]): k for k, o in enumerate(order)}
    assign = np.array([remap[int(x)] for x in labels], dtype=np.int64)
    w = np.bincount(assign, weights=weight, minlength=len(types))
    return Partition(method, types, w, points, assign, weight, q, len(types) == q)


def constrained_clustering(points: np.ndarray, weight: np.ndarray, q: int) -> Partition:
    """The paper's connectivity-constrained clustering (see the module docstring).

    Args:
        points: distinct demand vectors, shape ``(P, n_resources)``.
        weight: tasks per point, shape ``(P,)``, > 0.
        q: number of types wanted, ``>= 1``.
    """
    n = len(points)
    scale = np.maximum(points.max(axis=0), _TOL) if n else np.ones(points.shape[1])
    g = [points[i] / scale for i in range(n)]
    c = [float(weight[i]) for i in range(n)]
    members = [[i] for i in range(n)]
    alive = list(range(n))
    while len(alive) > q:
        best: tuple[float, int, int] | None = None
        for x in range(len(alive)):
            i = alive[x]
            for y in range(x + 1, len(alive)):
                j = alive[y]
                if not comparable(g[i], g[j]):
                    continue
                d = merge_distance(c[i], c[j], g[i], g[j])
                if best is None or d < best[0]:
                    best = (d, i, j)
        if best is None:
            break
        _, i, j = best
        g[i] = np.maximum(g[i], g[j])
        c[i] += c[j]
        members[i] += members[j]
        alive.remove(j)
    labels = np.zeros(n, dtype=np.int64)
    for k, i in enumerate(alive):
        labels[members[i]] = k
    return _finish("constrained", points, weight, labels, q)


def plain_clustering(points: np.ndarray, weight: np.ndarray, q: int) -> Partition:
    """Ward clustering of the distinct vectors (scipy), no constraint; centroids are maxima."""
    from scipy.cluster.hierarchy import fcluster, linkage

    n = len(points)
    if n <= q or n < 2:
        return _finish("plain", points, weight, np.arange(n), q)
    scale = np.maximum(points.max(axis=0), _TOL)
    z = linkage(points / scale, method="ward")
    labels = fcluster(z, t=q, criterion="maxclust")
    return _finish("plain", points, weight, labels.astype(np.int64), q)


def partition(workload: Workload, q: int, method: str = "constrained") -> Partition:
    """Container types for ``workload``'s tasks.

    Args:
        workload: the jobs.
        q: number of types wanted (``"single"`` always gives 1).
        method: ``"constrained"``, ``"single"`` or ``"plain"``.

    Raises:
        ValueError: unknown method, ``q < 1`` or an empty workload.
    """
    if method not in METHODS:
        raise ValueError(f"unknown partition method {method!r}; known: {', '.join(METHODS)}")
    if q < 1:
        raise ValueError("q must be >= 1")
    pts, w = demand_points(workload)
    if len(pts) == 0:
        raise ValueError("the workload has no task")
    if method == "single":
        return _finish("single", pts, w, np.zeros(len(pts), dtype=np.int64), 1)
    if method == "plain":
        return plain_clustering(pts, w, q)
    return constrained_clustering(pts, w, q)


def fits(types: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """Which types run a task of ``demand``: shape ``(Q,)`` bool (types ``(Q, R)``, demand ``(R,)``)."""
    ok: np.ndarray = np.asarray(within(np.asarray(demand)[None, :], types))
    return np.asarray(ok.all(axis=1))


def parse_q_list(text: str, option: str = "--q") -> list[int]:
    """Numbers of container types to try: ``"1-8"`` or ``"1,2,4"`` -> sorted distinct ints in 1..64.

    Raises:
        InputError: not numbers and ranges, or a number outside 1..64 (naming ``option``).
    """
    pairs: list[tuple[int, int]] = []
    try:
        for part in text.split(","):
            a, _, b = part.strip().partition("-")
            pairs.append((int(a), int(b) if b else int(a)))
    except ValueError:
        raise InputError([Problem(option, escape_control(text)[:100],
                                  "expected numbers and ranges, e.g. 1-8 or 1,2,4")]) from None
    if not pairs or any(not 1 <= lo <= hi <= 64 for lo, hi in pairs):
        raise InputError([Problem(option, escape_control(text)[:100], "every q must be in 1..64 (a range "
                                  "is low-high)")])
    return sorted({q for lo, hi in pairs for q in range(lo, hi + 1)})


__all__ = ["METHODS", "Partition", "comparable", "constrained_clustering", "demand_points", "dominates",
           "fits", "merge_distance", "parse_q_list", "partition", "plain_clustering"]
