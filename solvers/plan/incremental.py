"""Plan on top of a running cluster: which hosts to add, with at most M containers moved.

The model (CP-SAT, the aggregated model of :mod:`solvers.exact.cpsat` plus move constraints):

* **hosts**: per host type ``t`` the ``e_t`` existing hosts ``t#0 .. t#(e_t-1)`` and up to ``n_t``
  new hosts after them (``n_t``: the plan's count bound for ``t``, which also bounds what an
  optimal incremental plan adds: the containers on new type-``t`` hosts could be repacked alone on
  at most that many empty type-``t`` hosts). Existing hosts get the same planned capacity
  (reserve, then headroom) as new ones.
* **objective**: only added hosts count: existing hosts are already paid. Each existing host is
  a host type of its own with cost 0 (so no symmetry breaking treats it as interchangeable), the
  new hosts keep the type's cost (its price, or 1 when planning hosts).
* **moves**: ``cur[a, h]`` containers of app ``a`` run on existing host ``h``; the plan puts
  ``x[a, h]`` there. A container moves when it leaves its host: moves
  ``= sum max(0, cur - x) - removed``, where ``removed = sum_a max(0, running_a - count_a)``
  are containers the demand no longer has (scaled down: not moves). ``moves <= M``; with
  ``M = 0`` running containers stay where they are. Containers not running yet go anywhere.
* **objective, then moves**: CP-SAT minimises ``w * added + moves`` with ``w`` above the most
  moves possible, so among the cheapest plans it returns one with the fewest moves; its bound
  ``B`` gives ``added >= floor(B / w)``.
* **bound**: the best of CP-SAT's proven bound when the data scale to integers exactly; the
  "must-add" bound (``M = 0``, nothing removed): the containers that fit on no existing host next
  to the running containers must go on new hosts, so the bound :func:`solvers.solve` proves for
  them alone holds; and the
  volume bound: per resource, the demand the existing hosts cannot hold (total demand minus their
  capacity; with ``M = 0`` and nothing removed: new containers' demand minus the free capacity of
  the existing hosts) needs added capacity, at best the largest capacity per host (hosts) or the
  lowest price per unit of the resource (cost).

**Budgets** (:func:`plan_incremental`): CP-SAT climbs the ladder of move budgets up to ``M``, in
its deterministic mode, and the answer for ``M`` is the best plan of the rungs at most ``M``:
more moves never cost more, and the same seed repeats the plan, given the same start plan.

A start plan is the hint, and the fallback when CP-SAT finds nothing better in time: running
containers stay, new ones go to the first existing host that takes them, and the containers left
over are planned on the new (empty) hosts by :func:`solvers.solve` (a plan of their own, with 40%
of the time limit); plain first fit over all hosts if that fails. Every returned placement
passes :func:`packing.feasibility.checker.check` on the merged instance. GPU cards of the model's placement
are assigned by :func:`solvers.base.assign_cards`, which may give a running container other card
indices on the same host (not counted as a move).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from packing.errors import input_error
from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.loaders.current import Current
from packing.model.instance import UNPLACED, HostType, Instance, Placement


@dataclass(frozen=True)
class Cluster:
    """The running cluster on a planning instance.

    Attributes:
        instance: the planning instance with ``e_t + n_t`` hosts of each type (``"<t>#<i>"``).
        existing: hosts running now, shape ``(n_hosts,)`` bool.
        cur: running containers per app and host, shape ``(n_apps, n_hosts)``.
        removed: running containers beyond the demand's counts.
        new: containers of the demand not running yet.
        cards: GPU cards of running containers by ``(app, host)``: a list per container.
    """

    instance: Instance
    existing: np.ndarray
    cur: np.ndarray
    removed: int
    new: int
    cards: dict[tuple[int, int], list[tuple[int, ...]]] = field(default_factory=dict)


def with_current(instance: Instance, current: Current) -> Cluster:
    """Put the running cluster in front of the planning instance's hosts (see the module docstring).

    Args:
        instance: the planning instance (``n_t`` hosts per type, none running).
        current: the running cluster.

    Raises:
        InputError: the current cluster names a host type or app the instance does not have.
    """
    types = []
    for t in instance.host_types:
        e = current.existing.get(t.name, 0)
        types.append(dataclasses.replace(t, count=t.count + e, host_names=None))
    unknown = set(current.existing) - {t.name for t in instance.host_types}
    if unknown:
        raise input_error(current.source, "hosts", f"unknown host type {sorted(unknown)[0]!r}")
    inst = instance.replace(host_types=tuple(types))
    first = np.concatenate([[0], np.cumsum(inst.type_count)]).astype(np.int64)
    tix = inst.type_index
    existing = np.zeros(inst.n_hosts, dtype=bool)
    for name, e in current.existing.items():
        lo = int(first[tix[name]])
        existing[lo: lo + e] = True
    cur = np.zeros((inst.n_apps, inst.n_hosts), dtype=np.int64)
    cards: dict[tuple[int, int], list[tuple[int, ...]]] = {}
    removed = new = 0
    for a, app in enumerate(inst.apps):
        refs = current.hosts.get(app.name, ())
        gs = current.gpus.get(app.name, ())
        running = 0
        for j, ref in enumerate(refs):
            if ref is None:
                continue
            g = int(first[tix[ref[0]]]) + ref[1]
            cur[a, g] += 1
            running += 1
            cards.setdefault((a, g), []).append(tuple(gs[j]) if j < len(gs) else ())
        removed += max(0, running - app.count)
        new += max(0, app.count - running)
    return Cluster(inst, existing, cur, removed, new, cards)


@dataclass(frozen=True)
class IncrementalResult:
    """A plan on top of the running cluster.

    Attributes:
        status: ``"optimal"``, ``"feasible"``, ``"infeasible"`` or ``"unknown"``.
        placement: the plan on ``cluster.instance`` (checked), or ``None``.
        added: hosts (or cost) added, ``None`` without a plan.
        bound: proven lower bound on ``added``.
        moves: running containers moved by the plan.
        proofs: which part found the plan and which proved the bound.
        reason: why, when infeasible or unknown.
    """

    status: str
    placement: Placement | None
    added: float | None
    bound: float
    moves: int
    proofs: dict[str, str]
    reason: str | None = None


def added_value(cluster: Cluster, placement: Placement, kind: str) -> float:
    """Hosts (or cost) of the new hosts the placement uses."""
    inst = cluster.instance
    h = placement.host_array(inst)
    used = np.zeros(inst.n_hosts, dtype=bool)
    used[h[h != UNPLACED]] = True
    used &= ~cluster.existing
    return float(inst.host_cost[used].sum() if kind == "cost" else used.sum())


def moves_of(cluster: Cluster, placement: Placement) -> int:
    """Running containers a placement moves (containers removed by scaling down do not count)."""
    inst = cluster.instance
    h = placement.host_array(inst)
    x = np.zeros_like(cluster.cur)
    ok = h != UNPLACED
    np.add.at(x, (inst.container_app[ok], h[ok]), 1)
    return int(np.maximum(cluster.cur - x, 0).sum()) - cluster.removed


def volume_bound(cluster: Cluster, kind: str, max_moves: int | None) -> float:
    """The volume bound on what must be added (see the module docstring)."""
    inst = cluster.instance
    total = (inst.demand * inst.counts[:, None]).sum(axis=0)  # (R,)
    cap = inst.host_capacity  # (H, R)
    need = total - cap[cluster.existing].sum(axis=0)
    if max_moves == 0 and cluster.removed == 0:
        load = cluster.cur.T @ inst.demand  # (H, R)
        free = np.maximum(cap - load, 0.0)[cluster.existing].sum(axis=0)
        new = total - (cluster.cur.sum(axis=1) @ inst.demand)
        need = np.maximum(need, new - free)
    best = 0.0
    tc = inst.type_capacity
    for r in range(inst.n_resources):
        if need[r] <= 1e-9 * max(1.0, total[r]):
            continue
        if kind == "cost":
            with np.errstate(divide="ignore"):
                per = np.where(tc[:, r] > 0, inst.type_cost / tc[:, r], np.inf)
            best = max(best, float(need[r] * per.min()) * (1 - 1e-9))
        else:
            best = max(best, float(math.ceil(need[r] / tc[:, r].max() - 1e-9)))
    return best


def first_fit(cluster: Cluster, max_moves: int | None = 0, *, rest: str = "first-fit",
              kind: str = "hosts", time_limit: float = 10.0, threads: int = 1,
              seed: int = 0) -> tuple[Placement | None, float | None]:
    """A start plan: running containers stay, new ones first on existing hosts, the rest on new ones.

    New containers go to the first existing host that takes them; the rest go on new hosts by
    first fit (``rest="first-fit"``) or by :func:`solvers.solve` (``"solve"``: the containers
    left over are a plan of their own on empty new hosts, objective ``kind``).

    Scaled-down apps keep their first running containers.

    Returns:
        ``(placement, bound)``: the placement is ``None`` when a container fits nowhere or the
        running cluster itself breaks a rule of the planning instance. ``bound`` is a proven
        lower bound on the added hosts (cost) of any plan that moves and removes nothing, or
        ``None``: when the containers left for new hosts are exactly those that fit on no
        existing host next to the running containers alone, every such plan puts them on new
        hosts (a host's feasible sets are closed under removal), so the bound
        :func:`solvers.solve` proves for them alone holds (solved once more, for the bound
        only, when the start plan leaves other containers for new hosts too).
    """
    inst = cluster.instance
    st = ClusterState(inst)
    host_of = np.full(inst.n_containers, UNPLACED, dtype=np.int64)
    cards: list[tuple[int, ...]] = [()] * inst.n_containers
    todo: list[int] = []
    for a in range(inst.n_apps):
        lo, n = int(inst.offsets[a]), int(inst.counts[a])
        k = 0
        for g in np.flatnonzero(cluster.cur[a]).tolist():
            for c in range(int(cluster.cur[a, g])):
                if k >= n:
                    break
                cs = cluster.cards[a, g][c] if inst.gpu_cards[a] else ()
                if inst.gpu_cards[a] and len(cs) != inst.gpu_cards[a]:
                    cs = ()
                st.place(a, g, cs)
                host_of[lo + k] = g
                cards[lo + k] = cs
                k += 1
        todo.extend(range(lo + k, lo + n))
    if inst.max_gpus and any(inst.gpu_cards[a] and not cards[j] for j, a in enumerate(
            inst.container_app.tolist()) if host_of[j] != UNPLACED):
        return None, None
    apps = inst.container_app
    ex = cluster.existing
    masks = {int(a): st.mask(int(a)) & ex for a in np.unique(apps[todo])} if todo else {}
    must_new = sorted(j for j in todo if not masks[int(apps[j])].any())
    order_hosts = np.concatenate([np.flatnonzero(cluster.existing),
                                  np.flatnonzero(~cluster.existing) if rest == "first-fit"
                                  else np.zeros(0, dtype=np.int64)])
    size = (inst.demand / np.maximum(inst.type_capacity.max(axis=0), 1e-12)).max(axis=1) \
        if inst.n_resources else np.zeros(inst.n_apps)
    left: list[int] = []
    for j in sorted(todo, key=lambda j: (-size[apps[j]], j)):
        a = int(apps[j])
        ok = st.mask(a)[order_hosts]
        pos = np.flatnonzero(ok)
        if not len(pos):
            if rest == "first-fit":
                return None, None
            left.append(j)
            continue
        g = int(order_hosts[pos[0]])
        cs = st.choose_cards(a, g)
        st.place(a, g, cs)
        host_of[j] = g
        cards[j] = cs
    rest_bound: float | None = 0.0
    if left:
        rest_bound = _solve_rest(cluster, np.array(sorted(left)), host_of, cards, kind,
                                 time_limit, threads, seed)
        if rest_bound is None:
            return None, None
    p = Placement.from_arrays(inst, host_of, cards if inst.max_gpus else None)
    if check(inst, p, require_all=True):
        return None, None
    if max_moves != 0 or cluster.removed or rest != "solve":
        return p, None
    if sorted(left) != must_new:  # the bound of the must-add containers alone
        rest_bound = 0.0 if not must_new else _solve_rest(
            cluster, np.array(must_new), host_of.copy(), list(cards), kind,
            max(1.0, time_limit / 2), threads, seed)
    return p, rest_bound


def _solve_rest(cluster: Cluster, left: np.ndarray, host_of: np.ndarray,
                cards: list[tuple[int, ...]], kind: str, time_limit: float, threads: int,
                seed: int) -> float | None:
    """Place containers ``left`` on the new (empty) hosts with :func:`solvers.solve`, in place.

    Returns:
        The proven lower bound of that plan of its own, or ``None`` when no plan was found.
    """
    from solvers import solve

    inst = cluster.instance
    apps = inst.container_app
    need = np.bincount(apps[left], minlength=inst.n_apps)
    types, new_first = [], []
    start = 0
    for t in inst.host_types:
        hs = np.arange(start, start + t.count)
        fresh = hs[~cluster.existing[hs]]
        types.append(dataclasses.replace(t, count=len(fresh), host_names=None))
        new_first.append(int(fresh[0]) if len(fresh) else 0)
        start += t.count
    sub = inst.replace(apps=tuple(dataclasses.replace(a, count=int(n))
                                  for a, n in zip(inst.apps, need.tolist(), strict=True)),
                       host_types=tuple(types), initial=None)
    res = solve(sub, "auto", time_limit=time_limit, workers=threads, seed=seed, objective=kind)
    if res.placement is None:
        return None
    sub_host = res.placement.host_array(sub)
    sub_cards = res.placement.card_lists(sub)
    by_app: list[list[int]] = [[] for _ in range(inst.n_apps)]
    for j in left.tolist():
        by_app[int(apps[j])].append(j)
    for a in range(sub.n_apps):
        lo = int(sub.offsets[a])
        for k, j in enumerate(by_app[a]):
            h = int(sub_host[lo + k])
            ti = int(sub.host_type_of[h])
            host_of[j] = new_first[ti] + h - int(sub.type_count[:ti].sum())
            if sub_cards is not None:
                cards[j] = sub_cards[lo + k]
    return float(res.bound)


def running_placement(cluster: Cluster) -> Placement:
    """The running containers as a placement of the demand (first running ones per app kept).

    Containers of the demand that do not run are unplaced; the checker reports them.
    """
    inst = cluster.instance
    host_of = np.full(inst.n_containers, UNPLACED, dtype=np.int64)
    cards: list[tuple[int, ...]] = [()] * inst.n_containers
    for a in range(inst.n_apps):
        lo, n = int(inst.offsets[a]), int(inst.counts[a])
        k = 0
        for g in np.flatnonzero(cluster.cur[a]).tolist():
            for c in range(int(cluster.cur[a, g])):
                if k < n:
                    host_of[lo + k] = g
                    cards[lo + k] = cluster.cards[a, g][c]
                    k += 1
    return Placement.from_arrays(inst, host_of, cards if inst.max_gpus else None)


def split_instance(cluster: Cluster) -> Instance:
    """The cluster's instance with every existing host a cost-0 type of its own (same host order)."""
    inst = cluster.instance
    types: list[HostType] = []
    start = 0
    for t in inst.host_types:
        hs = range(start, start + t.count)
        ex = [h for h in hs if cluster.existing[h]]
        for i, _h in enumerate(ex):
            types.append(dataclasses.replace(t, name=f"{t.name}#{i}", count=1, cost=0.0,
                                             host_names=(f"{t.name}#{i}",)))
        n = t.count - len(ex)
        if n:
            types.append(dataclasses.replace(
                t, count=n, host_names=tuple(f"{t.name}#{len(ex) + k}" for k in range(n))))
        start += t.count
    return inst.replace(host_types=tuple(types))


START_SHARE = 0.4
"""Share of the time limit (and of the work) for the start plan's solve of what must be added."""
BOUND_SHARE = 0.15
"""Share of the climb's time and work for the bound of a budget that is no rung of the ladder."""


def plan_incremental(cluster: Cluster, kind: str, max_moves: int | None = 0, *,
                     time_limit: float = 60.0, threads: int = 2, seed: int = 0,
                     work: float | None = None) -> IncrementalResult:
    """The cheapest hosts to add to the running cluster with at most ``max_moves`` moves.

    The start plan (:func:`first_fit`, :data:`START_SHARE` of the time) keeps every running
    container; without rules, topology or per-card GPUs the consolidation search improves it
    (:func:`with_consolidation`). Otherwise CP-SAT on the whole model climbs the ladder of move
    budgets of :func:`solvers.consolidate.solve.budget_ladder` up to ``max_moves``, each rung
    hinted with the best plan so far (which keeps within the rung's budget) and given its share of
    the deterministic work (:func:`solvers.consolidate.solve.shares`, whatever budget was asked;
    CP-SAT in its deterministic, interleaved mode); the answer for ``max_moves`` is the best plan
    of the rungs at most ``max_moves``. So more moves never cost more, in one run and across runs
    from the same start plan, and the same seed repeats the same plan unless the wall clock stops a
    rung first. A budget that is no rung is solved once more, for its proven bound only.

    Args:
        cluster: the running cluster on the planning instance (:func:`with_current`).
        kind: ``"hosts"`` or ``"cost"`` (what the added hosts are measured in).
        max_moves: most running containers moved (``None``: any number).
        time_limit: wall-time budget of a climb to no limit, seconds (a lower budget stops earlier).
        threads: CP-SAT workers.
        seed: CP-SAT seed.
        work: CP-SAT's deterministic time for the same (``None``: ``time_limit``).
    """
    from solvers.consolidate.solve import LATE, budget_ladder, shares, within

    inst = cluster.instance
    vol = volume_bound(cluster, kind, max_moves)
    t0 = time.perf_counter()
    W = float(time_limit if work is None else work)
    greedy, rest_bound = first_fit(cluster, max_moves, rest="solve", kind=kind,
                                   time_limit=max(1.0, START_SHARE * time_limit), threads=threads,
                                   seed=seed)
    if greedy is None:
        greedy, _ = first_fit(cluster, max_moves)
    t_left = time.perf_counter()
    left = max(1.0, time_limit - (t_left - t0))
    if not cluster.removed:
        done = with_consolidation(cluster, kind, max_moves, greedy, vol, rest_bound,
                                  time_limit=left, threads=threads, seed=seed,
                                  work=(1.0 - START_SHARE) * W)
        if done is not None:
            return done
    mm = _MovesModel(cluster, greedy, kind, vol, threads, seed)
    rungs = budget_ladder(int(cluster.cur.sum()))
    split = shares(rungs, first=1.0, last=0.5)
    top_i = max(i for i, r in enumerate(rungs) if within(r, max_moves))
    exact_rung = rungs[top_i] == max_moves
    climb = left if exact_rung else (1.0 - BOUND_SHARE) * left
    climb_work = (1.0 - START_SHARE) * W * (1.0 if exact_rung else 1.0 - BOUND_SHARE)
    best = greedy if greedy is not None and within(moves_of(cluster, greedy), max_moves) else None
    found = "first-fit" if best is not None else ""
    carry = carry_work = 0.0
    top: _Solved | None = None
    for i, r in enumerate(rungs[: top_i + 1]):
        elapsed = time.perf_counter() - t_left
        if 0 < i < top_i and elapsed > climb * (1.0 - LATE * split[top_i]):
            continue  # the highest rung keeps most of its share (as the consolidation climb)
        seconds = climb * split[i] + carry
        if i and i == top_i:
            seconds = min(seconds, max(0.5, climb - elapsed))
        rung_work = climb_work * split[i] + carry_work
        got = mm.solve(r, best, seconds, rung_work)
        carry_work = max(0.0, rung_work - got.det_time) if got.optimal else 0.0
        carry = carry_work * climb / max(climb_work, 1e-9)
        if got.placement is not None and (best is None or mm.key(got.placement) < mm.key(best)):
            best, found = got.placement, "cpsat"
        if i == top_i:
            top = got
    if not exact_rung:  # the bound for the budget asked; its plan is not used (monotone budgets)
        top = mm.solve(max_moves, best, max(0.5, left - (time.perf_counter() - t_left)),
                       BOUND_SHARE * (1.0 - START_SHARE) * W)
    assert top is not None
    if top.infeasible and mm.exact:
        why = ("no plan keeps every running container in place" if max_moves == 0 else
               f"no plan moves at most {max_moves} running containers" if max_moves is not None
               else "the demand fits on no combination of existing and new hosts")
        against = inst.meta.get("planned_against", "full capacity")
        return IncrementalResult("infeasible", None, None, math.inf, 0, {"bound": "cpsat"},
                                 f"{why} (planned against {against})")
    bound, bproof = vol, "volume"
    if rest_bound is not None and rest_bound > bound:
        bound, bproof = rest_bound, "must-add"
    if top.bound is not None and top.bound > bound:
        bound, bproof = top.bound, "cpsat"
    if best is None:
        return IncrementalResult("unknown", None, None, bound, 0, {"bound": bproof},
                                 "no plan found within the time limit")
    value = added_value(cluster, best, kind)
    bound = min(bound, value)
    tol = 1e-6 * max(1.0, value)
    st = "optimal" if value - bound <= tol else "feasible"
    if st == "optimal":
        bound = value
    return IncrementalResult(st, best, value, bound, moves_of(cluster, best),
                             {"solution": found, "bound": bproof})


@dataclass
class _Solved:
    """One CP-SAT solve of :class:`_MovesModel` at a move budget."""

    placement: Placement | None
    bound: float | None  # proven lower bound on the added value with the budget (exact data only)
    optimal: bool
    infeasible: bool
    det_time: float


class _MovesModel:
    """The whole model with move counts (module docstring), solved at one budget after another.

    Built once; each :meth:`solve` sets the budget's constraint, hints the best plan so far and
    runs CP-SAT in its deterministic (interleaved) mode for the given deterministic time.
    """

    def __init__(self, cluster: Cluster, greedy: Placement | None, kind: str, vol: float,
                 threads: int, seed: int) -> None:
        from solvers.exact.cpsat import build_model

        self.cluster, self.kind, self.threads, self.seed = cluster, kind, threads, seed
        split = split_instance(cluster)
        # a plan at most as good as the start plan uses at most start / cost_t new type-t hosts
        upper = added_value(cluster, greedy, kind) if greedy is not None else None
        cm = build_model(split, objective="cost", upper=upper, lower_bound=vol, gpu_exact=False)
        m = cm.model
        pos = {int(g): j for j, g in enumerate(cm.hosts.tolist())}
        moved: list[Any] = []
        for a, g in zip(*np.nonzero(cluster.cur), strict=True):
            c = int(cluster.cur[a, g])
            j = pos.get(int(g))
            if j is not None and (int(a), j) in cm.x:
                v = m.new_int_var(0, c, f"mv{a}_{g}")
                m.add(v >= c - cm.x[int(a), j])
                moved.append(v)
            else:
                moved.append(c)
        self.most = int(cluster.cur.sum()) + cluster.removed
        self.total = m.new_int_var(0, self.most, "moves")  # its domain is the budget
        m.add(self.total == sum(moved))
        # fewest moves among the cheapest plans: objective * w + moves, w > most moves possible
        self.w = int(cluster.cur.sum()) + 1
        t_of = split.host_type_of[cm.hosts]
        coef = [round(float(split.type_cost[t]) * cm.cost_scale) for t in t_of.tolist()]
        m.minimize(self.w * sum(c * y for c, y in zip(coef, cm.y, strict=True)) + sum(moved))
        self.cm, self.exact = cm, bool(cm.exact_scaling)

    def key(self, placement: Placement) -> tuple[float, int]:
        """``(added value, moves)``: smaller is better."""
        return added_value(self.cluster, placement, self.kind), moves_of(self.cluster, placement)

    def solve(self, budget: int | None, hint: Placement | None, seconds: float,
              work: float) -> _Solved:
        """Solve with at most ``budget`` moves, from ``hint``, within ``seconds`` and ``work``."""
        from ortools.sat.python import cp_model

        from solvers.base import assign_cards

        cl, cm = self.cluster, self.cm
        inst = cl.instance
        rhs = self.most if budget is None else min(self.most, int(budget) + cl.removed)
        self.total.proto.domain[1] = rhs  # [0, most] -> [0, rhs]
        cm.model.clear_hints()
        if hint is not None:
            h = hint.host_array(inst)
            x = np.zeros((inst.n_apps, inst.n_hosts), dtype=np.int64)
            np.add.at(x, (inst.container_app, h), 1)
            for (a, j), var in cm.x.items():
                cm.model.add_hint(var, int(x[a, int(cm.hosts[j])]))
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = max(0.05, float(seconds))
        solver.parameters.max_deterministic_time = max(0.05, float(work))
        solver.parameters.num_workers = max(1, int(self.threads))
        solver.parameters.interleave_search = True
        solver.parameters.random_seed = int(self.seed)
        status = solver.solve(cm.model)
        placement = None
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            placement = _read(cl, cm, solver, assign_cards)
            if placement is not None and budget is not None and moves_of(cl, placement) > budget:
                placement = None
        bound = None
        if self.exact and status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            bound = math.floor(float(solver.best_objective_bound) / self.w + 1e-9) / cm.cost_scale
        return _Solved(placement, bound, status == cp_model.OPTIMAL,
                       status == cp_model.INFEASIBLE, float(solver.deterministic_time))


def with_consolidation(cluster: Cluster, kind: str, max_moves: int | None, greedy: Placement | None,
                       vol: float, rest_bound: float | None, *, time_limit: float, threads: int,
                       seed: int, work: float | None = None) -> IncrementalResult | None:
    """The plan by :func:`solvers.consolidate.solve.consolidate` (``None``: it does not apply).

    The running cluster is a consolidation problem whose running hosts cost nothing
    (:func:`packing.cluster.problem.from_instance`; not for instances with ``<A, B, k>`` rules,
    topology rules or per-card GPUs, nor when the demand drops running containers). Its search
    climbs the ladder of move budgets (rung 0, where the new containers are placed, weighs most;
    more moves never cost more, across runs too, given the same start), starts from ``greedy``
    (the first plan: the same for every budget; it is a solve of its own, repeatable when it ends
    by a proof) and proves the relaxation bound (volume per resource and class of hosts, the move
    budget); the bound reported is the best of that,
    ``vol`` and ``rest_bound``. A proven infeasible budget names the hosts and resources over.
    """
    from packing.cluster.problem import from_instance
    from solvers.consolidate.solve import consolidate_budgets

    inst = cluster.instance
    problem = from_instance(inst, cluster.existing, cluster.cur)
    if problem is None:
        return None
    start = None
    if greedy is not None and (max_moves is None or moves_of(cluster, greedy) <= max_moves):
        start = problem.x_of(greedy.host_array(inst))
    (r,) = consolidate_budgets(problem, [max_moves], time_limit=time_limit, threads=threads,
                               seed=seed, start_from=start, first=1.0, last=0.5, work=work)
    against = inst.meta.get("planned_against", "full capacity")
    if r.status == "infeasible":
        why = ("no plan keeps every running container in place" if max_moves == 0 else
               f"no plan moves at most {max_moves} running containers" if max_moves is not None
               else "the demand fits on no combination of existing and new hosts")
        return IncrementalResult("infeasible", None, None, math.inf, 0, dict(r.proofs),
                                 f"{why}: {r.reason} (planned against {against})")
    if r.outcome is None:
        return None
    placement = problem.placement(r.outcome.x)
    if check(inst, placement, require_all=True):
        return None
    value = added_value(cluster, placement, kind)
    bound, proof = max((r.bound, r.proofs.get("bound", "relaxation")), (vol, "volume"),
                       (rest_bound or 0.0, "must-add"))
    bound = min(bound, value)
    tol = 1e-6 * max(1.0, value)
    status = "optimal" if value - bound <= tol else "feasible"
    return IncrementalResult(status, placement, value, value if status == "optimal" else bound,
                             moves_of(cluster, placement),
                             {"solution": f"consolidate ({r.proofs.get('solution')})", "bound": proof})


def _read(cluster: Cluster, cm: object, solver: object, assign_cards: object) -> Placement | None:
    """The placement of a CP-SAT solution: running containers stay where ``x`` keeps them."""
    inst = cluster.instance
    x = np.zeros((inst.n_apps, inst.n_hosts), dtype=np.int64)
    for (a, j), var in cm.x.items():  # type: ignore[attr-defined]
        x[a, int(cm.hosts[j])] = int(solver.value(var))  # type: ignore[attr-defined]
    host_of = np.full(inst.n_containers, UNPLACED, dtype=np.int64)
    for a in range(inst.n_apps):
        lo, n = int(inst.offsets[a]), int(inst.counts[a])
        keep = np.minimum(cluster.cur[a], x[a])
        slots = np.repeat(np.arange(inst.n_hosts), keep).tolist() + np.repeat(
            np.arange(inst.n_hosts), x[a] - keep).tolist()
        if len(slots) != n:
            return None
        host_of[lo: lo + n] = slots
    cards = assign_cards(inst, host_of) if inst.max_gpus else None  # type: ignore[operator]
    if inst.max_gpus and cards is None:
        return None
    p = Placement.from_arrays(inst, host_of, cards)
    return None if check(inst, p, require_all=True) else p


__all__ = ["Cluster", "IncrementalResult", "added_value", "first_fit", "moves_of",
           "plan_incremental", "running_placement", "split_instance", "volume_bound", "with_consolidation",
           "with_current"]
