"""The CP-SAT model of a consolidation, on every host or on a neighbourhood of them.

Given a solution ``x0`` (shape ``(A, H)``, :mod:`packing.cluster.problem`) and a set of hosts
``S`` (all of them for the whole model), the pods ``x0`` puts on ``S`` and the pods it leaves
unplaced (Pending) are free to go anywhere in ``S``; everything else stays as ``x0`` has it.
Pinned pods never move.

Variables (``j`` over ``S``, ``a`` over the apps with a free pod):

* ``x[a, j]`` in ``0 .. ub``: pods of app ``a`` on host ``j``; none where the app may not go
  (node selection, taints, a cordoned host it does not already run on, an app it excludes
  pinned there, too big); on a cordoned host, or one that no longer admits the app, at most
  the pods it runs there now;
* ``y[j]``: host ``j`` is used; fixed to 1 where pinned pods run;
* ``z[a, j]``: ``x[a, j] > 0``, for apps in an exclusion; ``z[a, j] + z[b, j] <= 1``.

Constraints: every free pod placed (``sum_j x[a, j]`` = the app's free pods); capacity per
resource ``sum_a d[a, r] x[a, j] <= (C[j, r] - pinned[j, r]) y[j]``, exactly in integers (each
resource divided by the greatest common divisor of its demands, the capacity rounded down to it,
which loses no packing); at most ``cap[a]`` pods of an app per host; moves: ``mv[a, j] >= orig[a,
j] - x[a, j]`` where app ``a`` runs on ``j`` now, and ``sum mv <= M - (moves outside S)``.

Objective: ``W * cost + moves`` with the prices scaled to integers exactly and ``W`` above the
most moves the model can make: the cheapest solution, and among those the fewest moves. On the
whole model CP-SAT's bound ``B`` proves ``cost >= floor(B / W)`` (scaled back): a proven lower
bound on the best cost reachable with the move budget.

Slots of one offered type are alike: ``y`` is non-increasing among the model's slots of a type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from packing.cluster.problem import ClusterProblem


@dataclass
class Model:
    """A built model and its handles.

    Attributes:
        model: the CP-SAT model.
        hosts: the hosts of the model (global indices), shape ``(m,)``.
        x0: the solution it starts from, shape ``(A, H)``.
        x: ``(app, j) -> IntVar`` (``j`` a position in ``hosts``).
        y: used-host variables per model host.
        w: the weight of the cost in the objective.
        scale: the price scale.
        outside_cost: scaled cost of the used hosts outside the model.
        outside_moves: moves outside the model.
        feasible: ``False`` when pinned pods alone break a host's capacity.
        cost: the scaled price of the model's hosts in use (a linear expression).
        moved: the moves on the model's hosts (a linear expression).
    """

    model: cp_model.CpModel
    hosts: np.ndarray
    x0: np.ndarray
    x: dict[tuple[int, int], Any] = field(default_factory=dict)
    y: list[Any] = field(default_factory=list)
    w: int = 1
    scale: int = 1
    outside_cost: int = 0
    outside_moves: int = 0
    feasible: bool = True
    cost: Any = 0
    moved: Any = 0


def build_model(problem: ClusterProblem, x0: np.ndarray, hosts: np.ndarray | None = None,
                max_moves: int | None = None, *, hint: bool = True,
                avoid: np.ndarray | None = None) -> Model:
    """Build the model of ``problem`` on ``hosts`` (all when ``None``) around ``x0``.

    Args:
        problem: the problem.
        x0: the solution the model starts from; its pods on ``hosts`` are free.
        hosts: the neighbourhood (global host indices).
        max_moves: the move budget of the whole solution (``None``: none).
        hint: give ``x0`` as the solver's hint.
        avoid: hosts of ``hosts`` the model must leave empty, shape ``(H,)`` bool (a restriction
            for the search, :mod:`solvers.consolidate.guided`: its bound proves nothing).
    """
    P = problem
    H = P.n_hosts
    S = np.arange(H) if hosts is None else np.asarray(sorted(set(np.asarray(hosts).tolist())), np.int64)
    inside = np.zeros(H, dtype=bool)
    inside[S] = True
    pinned = P.pinned
    free = np.where(pinned, 0, P.counts - x0[:, ~inside].sum(axis=1))  # (A,): on S or unplaced
    fixed_load = (x0[pinned].T @ P.demand[pinned]) if pinned.any() else np.zeros(
        (H, len(P.resources)), np.int64)
    m = cp_model.CpModel()
    scale = P.price_scale
    pc = P.scaled_price
    used0 = x0.sum(axis=0) > 0
    mm = Model(m, S, x0, scale=scale, outside_cost=int(pc[used0 & ~inside].sum()),
               outside_moves=int(np.maximum(P.orig - x0, 0)[:, ~inside].sum()))
    apps = np.flatnonzero(free > 0)
    room = P.capacity[S] - fixed_load[S]  # (m, R)
    if (room < 0).any():
        mm.feasible = False
        return mm
    g = np.array([reduce(math.gcd, P.demand[apps, r].tolist(), 0) or 1
                  for r in range(len(P.resources))], dtype=np.int64)
    dem = P.demand // g
    cap_r = room // g
    excl_of: dict[int, list[int]] = {}
    for a, b in P.exclusions:
        excl_of.setdefault(a, []).append(b)
        excl_of.setdefault(b, []).append(a)
    pinned_on = {(int(a), int(h)) for a, h in zip(*np.nonzero(x0[pinned] > 0), strict=True)}
    pinned_idx = np.flatnonzero(pinned)
    pinned_apps_on: dict[int, set[int]] = {}
    for k, h in pinned_on:
        pinned_apps_on.setdefault(h, set()).add(int(pinned_idx[k]))
    by_host: list[list[int]] = [[] for _ in S]
    for a in apps.tolist():
        d = dem[a]
        for j, h in enumerate(S.tolist()):
            if not P.allowed[a, h] or (avoid is not None and avoid[h]):
                continue
            if P.limited[a, h] and P.orig[a, h] == 0:
                continue
            if any(b in pinned_apps_on.get(h, ()) for b in excl_of.get(a, ())):
                continue
            with np.errstate(divide="ignore"):
                fit = np.where(d > 0, cap_r[j] // np.where(d > 0, d, 1), np.iinfo(np.int64).max)
            ub = int(min(free[a], P.cap[a], fit.min()))
            if P.limited[a, h]:
                ub = min(ub, int(P.orig[a, h]))
            if ub > 0:
                mm.x[a, j] = m.new_int_var(0, ub, f"x{a}_{h}")
                by_host[j].append(a)
    for a in apps.tolist():
        vs = [mm.x[a, j] for j in range(len(S)) if (a, j) in mm.x]
        if not vs:
            mm.feasible = False
            return mm
        m.add(sum(vs) == int(free[a]))
    for j, h in enumerate(S.tolist()):
        y = m.new_bool_var(f"y{h}")
        mm.y.append(y)
        if P.keep[h] or fixed_load[h].any():
            if avoid is not None and avoid[h]:
                mm.feasible = False
                return mm
            m.add(y == 1)
        elif avoid is not None and avoid[h]:
            m.add(y == 0)
        for r in range(len(P.resources)):
            terms = [(int(dem[a, r]), mm.x[a, j]) for a in by_host[j] if dem[a, r] > 0]
            if terms:
                m.add(sum(c * v for c, v in terms) <= int(cap_r[j, r]) * y)
        for a in by_host[j]:
            if not dem[a].any():
                m.add(mm.x[a, j] <= int(free[a]) * y)
    for a, b in P.exclusions:
        for j in range(len(S)):
            if (a, j) in mm.x and (b, j) in mm.x:
                za, zb = m.new_bool_var(""), m.new_bool_var("")
                m.add(mm.x[a, j] <= int(free[a]) * za)
                m.add(mm.x[b, j] <= int(free[b]) * zb)
                m.add(za + zb <= 1)
    moved: list[Any] = []
    for a in np.flatnonzero(~pinned).tolist():
        for j, h in enumerate(S.tolist()):
            o = int(P.orig[a, h])
            if o == 0:
                continue
            if (a, j) in mm.x:
                v = m.new_int_var(0, o, f"mv{a}_{h}")
                m.add(v >= o - mm.x[a, j])
                moved.append(v)
            else:
                moved.append(o)
    if max_moves is not None:
        m.add(sum(moved) <= int(max_moves) - mm.outside_moves)
    # slots of one type are alike
    for j in range(len(S) - 1):
        h, k = int(S[j]), int(S[j + 1])
        if not P.existing[h] and not P.existing[k] and P.host_type[h] == P.host_type[k]:
            m.add(mm.y[j] >= mm.y[j + 1])
    mm.cost = sum(int(pc[h]) * y for h, y in zip(S.tolist(), mm.y, strict=True))
    mm.moved = sum(moved)
    mm.w = int(P.orig[:, S].sum()) + 1
    m.minimize(mm.w * mm.cost + mm.moved)
    if hint:
        for (a, j), v in mm.x.items():
            m.add_hint(v, int(x0[a, S[j]]))
        for j, y in enumerate(mm.y):
            m.add_hint(y, int(x0[:, S[j]].sum() > 0 and not (avoid is not None and avoid[S[j]])))
    return mm


def read_solution(mm: Model, solver: cp_model.CpSolver) -> np.ndarray:
    """The whole solution of a solved model, shape ``(A, H)``."""
    x = mm.x0.copy()
    P_free = np.zeros(x.shape[0], dtype=bool)
    for a, _ in mm.x:
        P_free[a] = True
    x[np.ix_(np.flatnonzero(P_free), mm.hosts)] = 0
    for (a, j), v in mm.x.items():
        x[a, mm.hosts[j]] = int(solver.value(v))
    return x


def cost_bound(mm: Model, solver: cp_model.CpSolver) -> float:
    """The proven lower bound on the cost the whole model gives (see the module docstring)."""
    b = math.floor(float(solver.best_objective_bound) / mm.w + 1e-9) + mm.outside_cost
    return b / mm.scale


__all__ = ["Model", "build_model", "cost_bound", "read_solution"]
