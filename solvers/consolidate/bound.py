"""A proven lower bound on the cost of a consolidation: capacity per resource and per class, moves.

Every solution keeps a set of the existing hosts (``y[h] = 1``) and adds ``n[t]`` new hosts of
each offered type; the relaxation forgets which pod goes where and keeps, exactly in integers:

* hosts that run pinned pods are kept;
* for every resource ``r`` and every *class* ``S`` (the hosts one movable app may use, for each
  distinct such set, and all hosts): the free capacity of the kept hosts in ``S`` (capacity less
  the pinned pods' load; a cordoned host offers at most the load of the movable pods it runs now,
  the only ones it may keep) and of the new hosts of the types in ``S`` holds the demand of every
  movable app whose hosts all lie in ``S``. Each resource is divided by the greatest common
  divisor of its demands and the capacities rounded down to it, which loses no packing;
* with a move budget ``M``: a removed host's movable pods all move,
  ``sum_h m[h] (1 - y[h]) <= M``.

Every solution satisfies these, so the least cost of the relaxation (or CP-SAT's proven bound on
it, when the time runs out) is a lower bound on the least cost of a consolidation with ``M``
moves. CP-SAT solves it on the exact integers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from packing.cluster.problem import ClusterProblem
from solvers.base import Stop, run_cpsat

MAX_CLASSES = 64
"""Most class constraints per resource (the largest classes by demand are kept; each is valid)."""


@dataclass
class Relaxation:
    """The relaxation's CP-SAT model and its decision variables.

    Attributes:
        model: the model (minimises the price of the hosts kept and added).
        kept: ``host -> 0/1`` variable (or constant) for every existing host.
        added: ``type -> (count variable, the type's slots)`` for the offered types.
        infeasible: the pinned pods alone overfill a host (then the model is empty).
    """

    model: cp_model.CpModel
    kept: dict[int, Any] = field(default_factory=dict)
    added: dict[str, tuple[Any, list[int]]] = field(default_factory=dict)
    infeasible: bool = False


def relaxation_model(problem: ClusterProblem, max_moves: int | None, slack: float = 1.0) -> Relaxation:
    """The relaxation of the module docstring, its demand multiplied by ``slack`` (>= 1).

    With ``slack`` 1 its least cost is a lower bound; above 1 it chooses hosts with room to
    spare, a guide for the search (:mod:`solvers.consolidate.guided`), never a bound.
    """
    P = problem
    H, R = P.n_hosts, len(P.resources)
    m = cp_model.CpModel()
    mov = ~P.pinned
    pin_load = P.orig[P.pinned].T @ P.demand[P.pinned] if P.pinned.any() else np.zeros((H, R), np.int64)
    room = P.capacity - pin_load
    if (room < 0).any():
        return Relaxation(m, infeasible=True)
    closed_load = P.orig[mov].T @ P.demand[mov] if mov.any() else np.zeros((H, R), np.int64)
    room = np.where(P.closed[:, None], np.minimum(room, closed_load), room)
    g = np.array([reduce(math.gcd, P.demand[mov, r].tolist(), 0) or 1 for r in range(R)], np.int64)
    room = room // g
    need_app = (P.demand // g) * P.counts[:, None]  # (A, R)
    # the hosts each movable app may use
    may = P.allowed & (~P.limited | (P.orig > 0))
    classes: dict[bytes, int] = {}
    sets: list[np.ndarray] = []
    cls_of = np.full(P.n_apps, -1, dtype=np.int64)
    for a in np.flatnonzero(mov).tolist():
        key = np.packbits(may[a]).tobytes()
        if key not in classes:
            classes[key] = len(sets)
            sets.append(may[a])
        cls_of[a] = classes[key]
    per_class = np.zeros((len(sets), R), dtype=np.int64)
    for c in range(len(sets)):
        per_class[c] = need_app[cls_of == c].sum(axis=0)
    demand_of = [per_class[[c for c in range(len(sets)) if (~sets[c] | s).all()]].sum(axis=0)
                 for s in sets]
    sets.append(np.ones(H, dtype=bool))
    demand_of.append(per_class.sum(axis=0))
    keep = np.argsort([-float((d / np.maximum(room.sum(axis=0), 1)).max()) for d in demand_of],
                      kind="stable")[:MAX_CLASSES]
    pc = P.scaled_price
    rx = Relaxation(m)
    # existing hosts one by one, new hosts by type (their slots are alike)
    y = rx.kept
    for h in np.flatnonzero(P.existing).tolist():
        y[h] = m.new_constant(1) if P.keep[h] else m.new_bool_var(f"y{h}")
    slot_types: dict[str, list[int]] = {}
    for h in np.flatnonzero(~P.existing).tolist():
        slot_types.setdefault(P.host_type[h], []).append(h)
    n = {t: m.new_int_var(0, len(hs), f"n{t}") for t, hs in slot_types.items()}
    rx.added = {t: (n[t], hs) for t, hs in slot_types.items()}
    for k in keep.tolist():
        s, need = sets[k], demand_of[k]
        for r in range(R):
            if need[r] <= 0:
                continue
            terms = [(int(room[h, r]), y[h]) for h in y if s[h] and room[h, r] > 0]
            terms += [(int(room[hs[0], r]), n[t]) for t, hs in slot_types.items()
                      if s[hs[0]] and room[hs[0], r] > 0]
            m.add(sum(c * v for c, v in terms) >= math.ceil(int(need[r]) * slack))
    if max_moves is not None:
        on = P.movable_on
        terms = [(int(on[h]), y[h]) for h in y if on[h] > 0]
        m.add(sum(c * (1 - v) for c, v in terms) <= int(max_moves))
    m.minimize(sum(int(pc[h]) * v for h, v in y.items())
               + sum(int(pc[hs[0]]) * n[t] for t, hs in slot_types.items()))
    return rx


def _solve(m: cp_model.CpModel, time_limit: float, seed: int, stop: Stop | None
           ) -> tuple[cp_model.CpSolver, Any]:
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.01, float(time_limit))
    solver.parameters.max_deterministic_time = max(0.01, float(time_limit))
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = int(seed)
    return solver, run_cpsat(solver, m, stop=stop)


def relaxation_bound(problem: ClusterProblem, max_moves: int | None, *, time_limit: float = 10.0,
                     seed: int = 0, stop: Stop | None = None) -> tuple[float, bool]:
    """The bound of the relaxation (see the module docstring).

    Returns:
        ``(bound, infeasible)``: the proven lower bound on the cost (``inf`` when the relaxation
        is infeasible, and then ``infeasible`` is ``True``: no consolidation exists).
    """
    rx = relaxation_model(problem, max_moves)
    if rx.infeasible:
        return math.inf, True
    solver, status = _solve(rx.model, time_limit, seed, stop)
    if status == cp_model.INFEASIBLE:
        return math.inf, True
    b = float(solver.best_objective_bound)
    if not math.isfinite(b):
        return 0.0, False
    b = math.ceil(b - 1e-6)
    return b / problem.price_scale, False


def relaxation_hosts(problem: ClusterProblem, max_moves: int | None, slack: float, *,
                     time_limit: float = 5.0, seed: int = 0, stop: Stop | None = None
                     ) -> np.ndarray | None:
    """The hosts the relaxation with ``slack`` keeps or adds, shape ``(H,)`` bool (``None``: none found).

    Of an offered type with ``n`` hosts added, its first ``n`` slots. The best solution found
    within ``time_limit`` (deterministic time, one worker: the same every run).
    """
    rx = relaxation_model(problem, max_moves, slack)
    if rx.infeasible:
        return None
    solver, status = _solve(rx.model, time_limit, seed, stop)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    out = np.zeros(problem.n_hosts, dtype=bool)
    for h, v in rx.kept.items():
        out[h] = solver.value(v) == 1
    for n, slots in rx.added.values():
        out[slots[: int(solver.value(n))]] = True
    return out


__all__ = ["MAX_CLASSES", "Relaxation", "relaxation_bound", "relaxation_hosts", "relaxation_model"]
