"""The evictions of a consolidation in waves that every PodDisruptionBudget allows.

A drain plan runs wave by wave: the nodes to remove are cordoned and the new nodes added first;
then each wave evicts its pods at once, and every evicted pod is running again (on its target)
before the next wave starts. A wave is valid when

* no budget loses more of its pods in it than it allows at once (:func:`packing.cluster.budgets.budget_state`:
  ``healthy - desired``; the pods of earlier waves run again, so each wave has the whole
  allowance), and
* after it, every host holds what it runs within its free capacity: the pods that have moved
  there, the pods not yet moved away, and the Pending pods placed so far (they are placed as
  soon as their host has room; they are not evictions).

:func:`plan_waves` builds the waves greedily: moves in a fixed order (into the hosts being
emptied last, then by pod), each wave taking every move that keeps it valid, repeated until no
move is left. A wave may hold a whole cycle of pods swapping hosts (they leave at once), so a
solution whose every pod fits its target in the end has waves unless a budget forbids the pods
of such a cycle to go together; then :func:`plan_waves` names the moves it could not order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from packing.cluster.problem import ClusterProblem
from packing.model.instance import UNPLACED


@dataclass(frozen=True)
class Move:
    """One pod that changes host (an eviction) or is placed (a Pending pod).

    Attributes:
        container: the container (instance order).
        pod: index into ``snapshot.pods``.
        app: its app.
        src: the host it runs on now (-1: Pending).
        dst: the host it runs on after.
    """

    container: int
    pod: int
    app: int
    src: int
    dst: int


@dataclass(frozen=True)
class Waves:
    """Moves in order.

    Attributes:
        moves: every eviction and every placement of a Pending pod.
        waves: per wave, indices into ``moves``.
        stuck: moves no wave could take (empty when the plan is complete).
    """

    moves: tuple[Move, ...]
    waves: tuple[tuple[int, ...], ...]
    stuck: tuple[int, ...] = ()


def moves_of(problem: ClusterProblem, x: np.ndarray) -> tuple[Move, ...]:
    """The moves from where the pods run now to the solution ``x`` (:meth:`ClusterProblem.assign`)."""
    P = problem
    before = P.assign(P.orig)
    after = P.assign(x)
    out = []
    apps = np.repeat(np.arange(P.n_apps), P.counts)
    for c in np.flatnonzero(before != after).tolist():
        if after[c] == UNPLACED:
            continue
        out.append(Move(c, int(P.container_pod[c]), int(apps[c]), int(before[c]), int(after[c])))
    return tuple(out)


def plan_waves(problem: ClusterProblem, x: np.ndarray) -> Waves:
    """The waves of the moves to ``x`` (see the module docstring)."""
    P = problem
    moves = moves_of(P, x)
    load = P.load(P.orig).astype(np.int64)  # (H, R): what each host holds now
    cap = P.capacity
    allowed = [s.allowed for s in P.budgets]
    of_pod: dict[int, list[int]] = {}
    for b, s in enumerate(P.budgets):
        for i in s.pods:
            of_pod.setdefault(i, []).append(b)
    removed = ~P.used(x) & P.existing
    order = sorted(range(len(moves)), key=lambda k: (bool(removed[moves[k].dst]), moves[k].src < 0,
                                                      moves[k].container))
    left = list(order)
    waves: list[tuple[int, ...]] = []
    dem = P.demand
    while left:
        taken, trial = _safe_wave(left, moves, load, cap, dem, allowed, of_pod)
        if not taken:  # a cycle: its pods must leave together
            taken, trial = _cycle_wave(left, moves, load, cap, dem, allowed, of_pod)
        if not taken:
            break
        load = trial
        waves.append(tuple(taken))
        chosen = set(taken)
        left = [k for k in left if k not in chosen]
    return Waves(moves, tuple(waves), tuple(left))


def _budgets(k: int, moves: Sequence[Move], of_pod: dict[int, list[int]]) -> list[int]:
    mv = moves[k]
    return of_pod.get(mv.pod, []) if mv.src >= 0 else []


def _safe_wave(left: Sequence[int], moves: Sequence[Move], load: np.ndarray, cap: np.ndarray,
               dem: np.ndarray, allowed: Sequence[int], of_pod: dict[int, list[int]]
               ) -> tuple[list[int], np.ndarray]:
    """Moves each of which fits when it comes (earlier departures of the wave count), to a fixpoint."""
    taken: list[int] = []
    spent = [0] * len(allowed)
    trial = load.copy()
    changed = True
    while changed:
        changed = False
        for k in left:
            if k in taken:
                continue
            mv = moves[k]
            bs = _budgets(k, moves, of_pod)
            if any(spent[b] >= allowed[b] for b in bs):
                continue
            if ((trial[mv.dst] + dem[mv.app] > cap[mv.dst]) & (dem[mv.app] > 0)).any():
                continue
            if mv.src >= 0:
                trial[mv.src] -= dem[mv.app]
            trial[mv.dst] += dem[mv.app]
            taken.append(k)
            for b in bs:
                spent[b] += 1
            changed = True
    return taken, trial


def _cycle_wave(left: Sequence[int], moves: Sequence[Move], load: np.ndarray, cap: np.ndarray,
                dem: np.ndarray, allowed: Sequence[int], of_pod: dict[int, list[int]]
                ) -> tuple[list[int], np.ndarray]:
    """Every move the budgets allow at once, less the arrivals that leave a host over, to a fixpoint."""
    taken: list[int] = []
    spent = [0] * len(allowed)
    for k in left:
        bs = _budgets(k, moves, of_pod)
        if all(spent[b] < allowed[b] for b in bs):
            taken.append(k)
            for b in bs:
                spent[b] += 1
    while taken:
        trial = load.copy()
        for k in taken:
            mv = moves[k]
            if mv.src >= 0:
                trial[mv.src] -= dem[mv.app]
            trial[mv.dst] += dem[mv.app]
        bad = ((trial > cap) & (trial > load)).any(axis=1)
        if not bad.any():
            return taken, trial
        drop = next(k for k in reversed(taken) if bad[moves[k].dst])
        taken.remove(drop)
    return [], load


def evictions_per_budget(problem: ClusterProblem, moves: Sequence[Move],
                         wave: Sequence[int]) -> list[int]:
    """How many pods of each budget one wave evicts (for tests and reports)."""
    out = [0] * len(problem.budgets)
    for b, s in enumerate(problem.budgets):
        covered = set(s.pods)
        out[b] = sum(1 for k in wave if moves[k].src >= 0 and moves[k].pod in covered)
    return out


__all__ = ["Move", "Waves", "evictions_per_budget", "moves_of", "plan_waves"]
