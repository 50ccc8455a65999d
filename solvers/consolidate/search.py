"""Finding good consolidations: a start from the running cluster, node drains, neighbourhood search.

* :func:`packing.cluster.fit.start` keeps every pod where it runs and places the Pending pods.
* :func:`drain_nodes` empties nodes one at a time, each pod best fit on the nodes still used,
  within the move budget, until no node can be emptied, in several orders (the emptiest at the
  start or now, the fewest pods, the fewest pods per price); the cheapest result wins.
* :func:`improve` is large neighbourhood search over hosts: a neighbourhood is a used host that
  is dear and little used, the used hosts with the most room and a price to save (and some
  others, the dearer the likelier), and (with new types) an unused slot of each type; one in five
  takes every new host in use with a free one of each type and the nodes with the most room; the
  CP-SAT model of :mod:`solvers.consolidate.model` re-places every pod on them, keeping the
  rest, within the move budget; a better solution (cost, then moves) replaces the incumbent.
  Each sub-model gets a deterministic time; the neighbourhoods come from a seeded generator;
  the search ends when its deterministic work reaches the budget (or the wall-time limit, which
  on a loaded machine may come first).

Solutions are compared by ``(cost, moves)``, costs in exact integers
(:attr:`packing.cluster.problem.ClusterProblem.scaled_price`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from packing.cluster.fit import ClusterFit
from packing.cluster.problem import ClusterProblem
from solvers.base import Clock, run_cpsat
from solvers.consolidate.model import Model, build_model, read_solution

FRONT_POINTS = 16
"""The most solutions a :class:`Front` keeps."""


def key(problem: ClusterProblem, x: np.ndarray) -> tuple[int, int]:
    """``(scaled cost, moves)`` of a solution: smaller is better."""
    return int(problem.scaled_price[problem.used(x)].sum()), problem.moves(x)


@dataclass
class Front:
    """The solutions found, as the least cost for each number of moves (non-dominated).

    Attributes:
        points: ``(key, x)`` in increasing moves, decreasing cost.
    """

    problem: ClusterProblem
    points: list[tuple[tuple[int, int], np.ndarray]] = field(default_factory=list)

    def add(self, x: np.ndarray) -> bool:
        """Keep ``x`` if no point has its moves or fewer at its cost or less; ``True`` if kept.

        At most :data:`FRONT_POINTS` points are kept: the fewest moves, the cheapest, and those
        between spread over the moves.
        """
        k = key(self.problem, x)
        if any(c <= k[0] and m <= k[1] for (c, m), _ in self.points):
            return False
        self.points = [(q, y) for q, y in self.points if not (k[0] <= q[0] and k[1] <= q[1])]
        self.points.append((k, x.copy()))
        self.points.sort(key=lambda t: (t[0][1], -t[0][0]))
        if len(self.points) > FRONT_POINTS:
            keep = np.unique(np.linspace(0, len(self.points) - 1, FRONT_POINTS).round().astype(int))
            self.points = [self.points[i] for i in keep.tolist()]
        return True

    def best(self, max_moves: int | None) -> np.ndarray | None:
        """The cheapest point with at most ``max_moves`` moves (fewest moves on ties)."""
        ok = [(k, x) for k, x in self.points if max_moves is None or k[1] <= max_moves]
        return min(ok, key=lambda t: t[0])[1] if ok else None


def improved(problem: ClusterProblem, mm: Model, solver: cp_model.CpSolver, best: tuple[int, int],
             max_moves: int | None) -> tuple[np.ndarray, tuple[int, int]] | None:
    """The solved model's solution and its key when it beats ``best`` within ``max_moves``, else ``None``."""
    cand = read_solution(mm, solver)
    k = key(problem, cand)
    if k < best and (max_moves is None or k[1] <= max_moves):
        return cand, k
    return None


# ------------------------------------------------------------------------------------------------
DRAIN_ORDERS = ("emptiest at the start", "emptiest now", "fewest pods", "fewest pods per price")
"""The orders :func:`drain_nodes` tries its candidates in (the best result is kept)."""


def drain_nodes(problem: ClusterProblem, x: np.ndarray, max_moves: int | None,
                front: Front | None = None, stop: Callable[[], bool] | None = None) -> np.ndarray:
    """Empty nodes one at a time while any can be, in each of :data:`DRAIN_ORDERS`; the best wins.

    A node's share is the sum over resources of its load over its free capacity. In each order the
    first candidate that can be emptied (its pods best fit on the nodes in use, within the budget)
    is, and the candidates are sorted again; a node that could not be emptied is tried again only
    in a second sweep.
    """
    P = problem
    start_share = (P.load(x) / np.maximum(P.capacity, 1)).sum(axis=1)
    best = x
    for order in DRAIN_ORDERS:
        if stop is not None and stop():  # each order builds the cluster's state anew: costly at scale
            break
        y = _drain(P, x, max_moves, order, start_share, front, stop)
        if key(P, y) < key(P, best):
            best = y
    return best


def _drain(P: ClusterProblem, x: np.ndarray, max_moves: int | None, order: str,
           start_share: np.ndarray, front: Front | None, stop: Callable[[], bool] | None) -> np.ndarray:
    fit = ClusterFit(P, x)
    for _sweep in range(2):  # a second sweep retries the nodes that failed in the first
        failed: set[int] = set()
        while not (stop is not None and stop()):
            used = fit.used()
            on = fit.x[~P.pinned].sum(axis=0) if P.n_apps else np.zeros(P.n_hosts, np.int64)
            share = start_share if order == "emptiest at the start" else (
                P.load(fit.x) / np.maximum(P.capacity, 1)).sum(axis=1)
            if order == "fewest pods":
                rank = np.lexsort((-P.price, on))  # fewest pods, the dearest first
            elif order == "fewest pods per price":
                rank = np.argsort(on / np.maximum(P.price, 1e-9), kind="stable")
            else:
                rank = np.argsort(share, kind="stable")
            cand = [h for h in rank.tolist() if used[h] and not P.keep[h] and h not in failed]
            progress = False
            for h in cand:
                if stop is not None and stop():
                    break
                if fit.drain(h, ~fit.used(), max_moves, prefer=fit.used()):
                    progress = True
                    if front is not None:
                        front.add(fit.x)
                    break
                failed.add(h)
            if not progress:
                break
    return fit.x

# ------------------------------------------------------------------------------------------------
SLOTS_AT_ONCE = 60
"""Up to this many new hosts in use, a neighbourhood may take all of them (repacking what is added)."""
SLOT_SHARE = 0.2
"""The share of neighbourhoods that take every new host in use (when there are few enough)."""


@dataclass
class SearchStats:
    """What the neighbourhood search did."""

    iterations: int = 0
    improvements: int = 0
    det_time: float = 0.0
    size: int = 0
    stalled: bool = False


def neighbourhood(problem: ClusterProblem, x: np.ndarray, size: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Hosts for one step of the search (see the module docstring), shape ``(k,)``."""
    P = problem
    used = P.used(x)
    load = P.load(x)
    fill = (load / np.maximum(P.capacity, 1)).max(axis=1)
    victims = np.flatnonzero(used & ~P.keep)
    if not len(victims):
        victims = np.flatnonzero(used)
    if not len(victims):
        return np.zeros(0, dtype=np.int64)
    added = np.flatnonzero(used & ~P.existing)
    if 0 < len(added) <= SLOTS_AT_ONCE and rng.random() < SLOT_SHARE:
        # every new host in use, one free of each type, and the nodes with the most room
        free_of: dict[str, int] = {}
        for h in np.flatnonzero(~used & ~P.existing).tolist():
            free_of.setdefault(P.host_type[h], h)
        nodes = np.flatnonzero(used & P.existing)
        roomy = nodes[np.argsort(fill[nodes], kind="stable")][: max(1, size // 2)]
        return np.array(sorted({*added.tolist(), *free_of.values(), *roomy.tolist()}), dtype=np.int64)
    w = P.price[victims] * (1.0 - np.minimum(fill[victims], 1.0)) ** 2 + 1e-3  # dear, empty first
    v = int(rng.choice(victims, p=w / w.sum()))
    others = np.flatnonzero(used)
    others = others[others != v]
    chosen = [v]
    if len(others):
        # partners: room to take pods, and a price to save (hosts already paid for come last)
        room = 1.0 - np.minimum(fill[others], 1.0)
        dear = P.price[others] / max(float(P.price.max()), 1e-9)
        score = (room + 0.1) * (dear + 0.05) * (0.5 + rng.random(len(others)))
        top = others[np.argsort(-score, kind="stable")]
        half = max(1, (size - 1) // 2)
        chosen += top[:half].tolist()
        rest = np.setdiff1d(others, top[:half])
        if len(rest):
            w = (P.price[rest] + 0.05 * max(float(P.price.max()), 1e-9))
            chosen += rng.choice(rest, size=min(len(rest), size - 1 - half), replace=False,
                                 p=w / w.sum()).tolist()
    free_slots: dict[str, int] = {}
    for h in np.flatnonzero(~used & ~P.existing).tolist():
        free_slots.setdefault(P.host_type[h], h)
    chosen += list(free_slots.values())
    if rng.random() < 0.1:
        closed_nodes = np.flatnonzero(~used & P.existing)
        if len(closed_nodes):
            chosen.append(int(rng.choice(closed_nodes)))
    return np.array(sorted(set(chosen)), dtype=np.int64)


def improve(problem: ClusterProblem, x: np.ndarray, max_moves: int | None, clock: Clock, *,
            work: float, seed: int = 0, front: Front | None = None, size: int = 8,
            step: float = 0.5, patience: int | None = None) -> tuple[np.ndarray, SearchStats]:
    """Large neighbourhood search from ``x`` (see the module docstring).

    Args:
        problem: the problem.
        x: a solution within the move budget.
        max_moves: the move budget.
        clock: the wall-time budget.
        work: the deterministic time budget of the whole search (CP-SAT's units).
        seed: seeds the neighbourhoods and the sub-models.
        front: receives every improvement.
        size: hosts per neighbourhood to start with (it grows while sub-models are proven
            optimal quickly and shrinks when they are not).
        step: deterministic time per sub-model.
        patience: stop after this many neighbourhoods in a row without an improvement
            (``None``: never; the count is deterministic, so is where the search stops).
    """
    P = problem
    rng = np.random.default_rng(seed)
    best = x.copy()
    best_key = key(P, best)
    st = SearchStats(size=size)
    since = 0
    while st.det_time < work and clock.left(0.0) > 0.05 and not clock.stopped:
        if patience is not None and since >= patience:
            st.stalled = True
            break
        since += 1
        S = neighbourhood(P, best, st.size, rng)
        if len(S) < 2:
            break
        mm = build_model(P, best, S, max_moves)
        st.iterations += 1
        if not mm.feasible:
            continue
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = int(rng.integers(0, 2**31 - 1))
        solver.parameters.max_deterministic_time = float(step)
        solver.parameters.max_time_in_seconds = max(0.01, min(clock.left(), 20 * step))
        status = run_cpsat(solver, mm.model, stop=clock.stop)
        st.det_time += float(solver.deterministic_time) + 0.01
        if status == cp_model.OPTIMAL and st.size < len(P.host_names):
            st.size = min(st.size + 1, 40)
        elif status != cp_model.OPTIMAL:
            st.size = max(4, st.size - 1)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            continue
        better = improved(P, mm, solver, best_key, max_moves)
        if better is not None:
            best, best_key = better
            st.improvements += 1
            since = 0
            if front is not None:
                front.add(best)
    return best, st


__all__ = ["DRAIN_ORDERS", "Front", "SearchStats", "drain_nodes", "improve", "improved", "key",
           "neighbourhood"]
