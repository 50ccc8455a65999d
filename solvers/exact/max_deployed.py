"""The maximum number of deployable tasks of a multi-cluster GPU instance, proven when possible.

The instances are those of ``vbp generate multicluster`` (the EADE-DDPG scenario: clusters of GPU
nodes, a stream of openb tasks), compared on tasks deployed rather than hosts used.

**The optimum** (:func:`optimum`). The number of tasks any placement can deploy is bounded by a card
relaxation (:func:`card_bound`): forget CPU, memory and which node a card sits on; each card (of each
card class: capacity and model) holds a multiset of GPU-sharing tasks that fits it, or one whole-card
task (a ``k``-card task takes ``k`` cards of a class); tasks without GPU count as deployable. Card
contents are enumerated as patterns and CP-SAT picks how many cards get each pattern (an exact integer
programme, so its optimum is a valid upper bound). The relaxation's solution is then *decoded* into a
real placement (cards dealt to the nodes' empty cards by first fit, CPU and memory checked); when the
decoded placement passes :func:`packing.feasibility.checker.check` and deploys as many tasks as the bound, it
is
a proven optimum. Otherwise ``solvers.solve(..., objective="deployed")`` runs (with the best decoded
or heuristic placement as its hint) and the result is the best of both, with the smaller bound.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from packing.feasibility.checker import check
from packing.feasibility.metrics import compute_metrics
from packing.feasibility.predicates import ClusterState
from packing.model.instance import UNPLACED, Instance, Placement

MAX_PATTERNS = 200_000
"""Give up the card relaxation beyond this many card patterns (the solver alone then answers)."""


@dataclasses.dataclass(frozen=True)
class Optimum:
    """The maximum number of deployable tasks of one instance.

    Attributes:
        deployed: tasks deployed by the best placement found.
        bound: proven upper bound on deployable tasks.
        proven: ``deployed == bound``.
        placement: the best placement (checked).
        method: ``"card-relaxation"`` (decoded relaxation met its bound) or ``"solver"``.
        seconds: wall time.
    """

    deployed: int
    bound: int
    proven: bool
    placement: Placement
    method: str
    seconds: float


def _card_classes(inst: Instance) -> list[tuple[tuple[float, ...], str | None, int]]:
    """``(card capacity, model, number of cards)`` per distinct card class."""
    out: dict[tuple[tuple[float, ...], str | None], int] = {}
    for t in inst.host_types:
        if t.gpus:
            key = (tuple(float(x) for x in t.gpu_capacity), t.gpu_model)
            out[key] = out.get(key, 0) + t.gpus * t.count
    return [(k[0], k[1], n) for k, n in out.items()]


def _patterns(sizes: np.ndarray, counts: np.ndarray, cap: np.ndarray, limit: int) -> list[np.ndarray] | None:
    """Every non-empty multiset of item types (at most ``counts``) that fits ``cap``; None past ``limit``."""
    out: list[np.ndarray] = []
    n = len(sizes)
    cur = np.zeros(n, dtype=np.int64)

    def dfs(i: int, room: np.ndarray) -> bool:
        if i == n:
            if cur.any():
                out.append(cur.copy())
            return len(out) <= limit
        j = 0
        while True:
            if not dfs(i + 1, room - j * sizes[i]):
                return False
            j += 1
            if j > counts[i] or (room - j * sizes[i] < -1e-9).any():
                break
            cur[i] = j
        cur[i] = 0
        return True

    return out if dfs(0, cap.astype(np.float64)) else None


def card_bound(inst: Instance, *, time_limit: float = 30.0
               ) -> tuple[int, list[tuple[int, list[int]]]] | None:
    """The card relaxation's optimum (an upper bound on deployable tasks) and its card contents.

    Returns:
        ``(bound, cards)``: ``cards`` lists the relaxation's solution as ``(card class, apps)``, one
        entry per used card (the apps of its tasks) and one per whole-card task (its app once; a
        ``k``-card task stands for ``k`` cards of the class). ``None`` when CP-SAT does not prove the
        relaxation optimal in ``time_limit``, there are too many patterns, or a task shares more
        than one card.
    """
    from ortools.sat.python import cp_model

    classes = _card_classes(inst)
    share_apps = [a for a, app in enumerate(inst.apps) if app.gpu_cards == 1 and not app.gpu_whole]
    whole_apps = [a for a, app in enumerate(inst.apps) if app.gpu_cards >= 1 and app.gpu_whole]
    multi_share = [a for a, app in enumerate(inst.apps) if app.gpu_cards > 1 and not app.gpu_whole]
    if multi_share:
        return None
    free_tasks = sum(app.count for app in inst.apps if app.gpu_cards == 0)
    shapes: dict[tuple[float, ...], list[int]] = {}
    for a in share_apps:
        shapes.setdefault(tuple(float(x) for x in inst.gpu_demand[a]), []).append(a)
    keys = list(shapes)
    sizes = np.array(keys, dtype=np.float64).reshape(len(keys), inst.gpu_demand.shape[1])
    counts = np.array([sum(inst.apps[a].count for a in shapes[k]) for k in keys], dtype=np.int64)

    def allowed(a: int, model: str | None) -> bool:
        m = inst.apps[a].gpu_models
        return not m or model in m

    m = cp_model.CpModel()
    obj: list[Any] = []
    used_item: list[list[Any]] = [[] for _ in keys]
    pat_vars: list[tuple[int, np.ndarray, Any]] = []
    whole_vars: list[tuple[int, int, Any]] = []
    for ci, (cap, model, n_cards) in enumerate(classes):
        ok = np.array([all(allowed(a, model) for a in shapes[k]) for k in keys], dtype=bool)
        pats = _patterns(sizes[ok], counts[ok], np.asarray(cap), MAX_PATTERNS) if ok.any() else []
        if pats is None:
            return None
        idx = np.flatnonzero(ok)
        cards_used: list[Any] = []
        for p in pats:
            full = np.zeros(len(keys), dtype=np.int64)
            full[idx] = p
            x = m.new_int_var(0, n_cards, "")
            pat_vars.append((ci, full, x))
            cards_used.append(x)
            for i in np.flatnonzero(full):
                used_item[i].append(int(full[i]) * x)
            obj.append(int(full.sum()) * x)
        for a in whole_apps:
            if allowed(a, model):
                n_k = int(inst.apps[a].gpu_cards)
                w = m.new_int_var(0, min(inst.apps[a].count, n_cards // n_k), "")
                whole_vars.append((ci, a, w))
                cards_used.append(n_k * w)
                obj.append(w)
        m.add(sum(cards_used) <= n_cards)
    for n_i, terms in zip(counts.tolist(), used_item, strict=True):
        if terms:
            m.add(sum(terms) <= n_i)
    for a in whole_apps:
        ws = [w for _, b, w in whole_vars if b == a]
        if ws:
            m.add(sum(ws) <= inst.apps[a].count)
    m.maximize(sum(obj))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = 2
    solver.parameters.random_seed = 0
    if solver.solve(m) != cp_model.OPTIMAL:
        return None
    pools = {k: [a for a in shapes[k] for _ in range(inst.apps[a].count)] for k in keys}
    cards: list[tuple[int, list[int]]] = []
    for ci, full, x in pat_vars:
        for _ in range(int(solver.value(x))):
            apps = []
            for i in np.flatnonzero(full):
                for _ in range(int(full[i])):
                    apps.append(pools[keys[i]].pop())
            cards.append((ci, apps))
    for ci, a, w in whole_vars:
        cards.extend((ci, [a]) for _ in range(int(solver.value(w))))
    return int(round(solver.objective_value)) + free_tasks, cards


def _decode(inst: Instance, cards: list[tuple[int, list[int]]]) -> Placement:
    """Deal relaxation cards to empty node cards (first fit, CPU and memory checked); the rest unplaced."""
    st = ClusterState(inst)
    classes = _card_classes(inst)
    host_class = []
    for h in range(inst.n_hosts):
        t = inst.host_types[int(inst.host_type_of[h])]
        key = (tuple(float(x) for x in t.gpu_capacity), t.gpu_model)
        host_class.append(next((i for i, c in enumerate(classes) if (c[0], c[1]) == key), -1))
    slots = {a: list(range(int(inst.offsets[a]), int(inst.offsets[a]) + inst.apps[a].count))
             for a in range(inst.n_apps)}
    host_of = np.full(inst.n_containers, UNPLACED, dtype=np.int64)
    cards_of: list[tuple[int, ...]] = [()] * inst.n_containers
    # big cards first (by total CPU), so first fit leaves small ones for the holes
    order = sorted(cards, key=lambda c: -sum(inst.demand[a][0] for a in c[1]))
    for ci, apps in order:
        need = np.sum([inst.demand[a] for a in apps], axis=0)
        k = max(int(inst.gpu_cards[apps[0]]), 1)
        for h in range(inst.n_hosts):
            if host_class[h] != ci or (st.used[h] + need > st.capacity[h] + 1e-9).any():
                continue
            empty = [g for g in range(int(inst.host_gpus[h])) if not st.card_used[h, g].any()]
            if len(empty) < k:
                continue
            chosen = tuple(empty[:k])
            for a in apps:
                st.place(a, h, chosen if inst.apps[a].gpu_whole else chosen[:1])
                j = slots[a].pop()
                host_of[j] = h
                cards_of[j] = chosen if inst.apps[a].gpu_whole else chosen[:1]
            break
    for a in range(inst.n_apps):  # tasks without GPU: first fit
        if inst.gpu_cards[a] == 0:
            while slots[a]:
                ok = np.flatnonzero(st.mask(a))
                if not len(ok):
                    break
                st.place(a, int(ok[0]))
                j = slots[a].pop()
                host_of[j] = int(ok[0])
    return Placement.from_arrays(inst, host_of, cards_of)


def _deployed(inst: Instance, p: Placement) -> int:
    return compute_metrics(inst, p).deployed


def optimum(inst: Instance, *, time_limit: float = 60.0, hint: Placement | None = None) -> Optimum:
    """The maximum number of deployable tasks, proven when possible (see the module docstring).

    Args:
        inst: the instance.
        time_limit: seconds for the relaxation and, if needed, the solver each.
        hint: a feasible placement (e.g. the best policy's) for the solver and as a fallback.

    Raises:
        ValueError: ``hint`` breaks a constraint (:func:`packing.feasibility.checker.check`).
    """
    t0 = time.perf_counter()
    if hint is not None:  # the only placement here that no check saw yet (the solver's are verified)
        bad = check(inst, hint)
        if bad:
            raise ValueError(f"hint: the placement breaks {len(bad)} constraint(s): {bad[0]}")
    best: Placement | None = hint
    bound: int | None = None
    relax = card_bound(inst, time_limit=time_limit)
    if relax is not None:
        bound = relax[0]
        p = _decode(inst, relax[1])
        if not check(inst, p) and (best is None or _deployed(inst, p) > _deployed(inst, best)):
            best = p
        if best is not None and _deployed(inst, best) >= bound:
            return Optimum(bound, bound, True, best, "card-relaxation", time.perf_counter() - t0)
    from solvers import solve

    res = solve(inst, objective="deployed", time_limit=time_limit, hint=best)
    if res.placement is not None and (best is None or _deployed(inst, res.placement) > _deployed(inst, best)):
        best = res.placement
    assert res.bound_kind == "upper"  # "deployed" is maximised: its proven bound is an upper one
    solver_bound = int(np.floor(res.bound + 1e-9)) if res.bound is not None else inst.n_containers
    bound = min(bound, solver_bound) if bound is not None else solver_bound
    assert best is not None
    n = _deployed(inst, best)
    return Optimum(n, max(bound, n), n >= bound, best, "solver", time.perf_counter() - t0)


__all__ = ["MAX_PATTERNS", "Optimum", "card_bound", "optimum"]
