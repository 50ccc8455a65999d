"""The aggregated CP-SAT model (OR-Tools): one integer per (app, host), booleans only for rules.

Containers of one app are identical, so the model counts them per host instead of placing each.

Variables (``j`` runs over the hosts in the model, ``a`` over apps):

* ``x[a, j]`` in ``0 .. ub[a, j]``: containers of app ``a`` on host ``j``. ``ub`` is the effective
  cap (:attr:`Instance.cap`) tightened by what one host can hold; no variable exists where the app
  cannot go at all (GPU model, too big, cap 0).
* ``y[j]``: host ``j`` is used (not for ``"deployed"``, where every given host is available).
* ``z[a, j]``: ``x[a, j] > 0``, created only for apps ``a`` that are the first app of a rule.

Constraints:

* every container placed (``sum_j x[a, j] = count[a]``; ``<=`` for ``"deployed"``);
* capacity per resource: ``sum_a d[a, r] x[a, j] <= C[r] y[j]``;
* rules ``<A, B, k>``: ``x[B, j] <= k`` enforced by ``z[A, j]``; for ``k = 0``: ``z[A] + z[B] <= 1``;
* GPU cards, in one of two modes (``gpu_exact``):

  - exact (per card): ``n[a, j, g]`` containers of shared-GPU app ``a`` on card ``g`` with
    ``sum_g n = cards[a] x[a, j]`` and ``n <= x`` (so each container gets distinct cards), a
    boolean ``w[j, g]`` per card taken whole with ``sum_g w = sum_whole cards[a] x[a, j]``, and
    ``sum_a share[a] n[a, j, g] <= card_capacity (1 - w[j, g])`` per card and GPU resource.
    This is exactly the checker's GPU rule; cards are then read from ``n`` and ``w``.
  - aggregate (when per-card variables would be too many): whole cards at most the card count,
    and the total share plus whole cards within the host's total card capacity per GPU
    resource. Cards are assigned after solving by a deterministic fit
    (:func:`solvers.base.assign_cards`); if that fit fails the result falls back to the
    first-fit placement, with the model's (still valid) bound.

Symmetry breaking among the identical hosts of one type: ``y`` non-increasing and the load of the
most loaded resource non-increasing. When every app has a single container (classic vector bin
packing, e.g. Caprara-Toth), the stronger item ordering replaces load ordering: with items ranked
by decreasing size, the item of rank ``i`` may only use the first ``i + 1`` hosts of each type
(hosts relabelled by their highest-ranked item). The cheap lower bound is a constraint on ``sum y`` (or the
cost). Only hosts up to an upper bound exist: per type ``min(count, floor(UB / cost))`` where ``UB``
is first fit's objective (any better solution fits in them). First fit's placement is given as a
complete hint.

Integer data (:mod:`solvers.exact.scaling`): demands, capacities, GPU shares and host costs are read as
the decimals they were written as and scaled to integers exactly; a capacity row allows the
checker's tolerance (``TOL * max(1, |cap|)``) plus an allowance for the checker's float rounding,
so the model is never stricter than :func:`packing.feasibility.checker.check`. When no exact scaling fits in
:data:`solvers.exact.scaling.CPSAT_LIMIT`, or the exact integers exceed
:data:`solvers.exact.scaling.CPSAT_COEF_LIMIT` (beyond which CP-SAT's presolve can overflow and cut
feasible solutions), the rows are *relaxed*: demands rounded down, capacities up
(:func:`solvers.exact.scaling.shrink`). Either way the model is a relaxation of the checker's problem:
its bound and its infeasibility proofs hold, and a solution of it that passes the checker is
optimal when the model proves it optimal. Its solutions are always checked; when one fails (a
load within the rounding of a relaxed row, or within the float allowance of an exact one), the
model's bound stands and CP-SAT runs again, for solutions only, on *strict* rows (demands up,
capacities down, the float allowance subtracted: every solution passes the checker) with that
bound as a constraint, in the time left (at least :data:`STRICT_RETRY_SECONDS`); first fit is
kept otherwise. The status is "optimal" only if the kept placement meets the bound. Only host
costs that cannot be scaled exactly (``Scaled.sound`` False) leave a model that proves nothing:
the result's bound, status and infeasibility then come from the cheap bounds alone. A CP-SAT
"infeasible" on an instance a checked placement solves is never reported (it would be a solver
fault): the result keeps that placement and the cheap bound.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from packing.feasibility.checker import check
from packing.model.instance import UNPLACED, Instance, Placement
from packing.model.topology import domains, eligible_domains, spread_types
from solvers.base import (
    DEFAULT_OPTIONS,
    EPS,
    Clock,
    SolveOptions,
    assign_cards,
    bound_infeasible,
    ceil_bound,
    cheap_lower_bound,
    containers_by_host,
    infeasibility_reason,
    infeasible_result,
    notify,
    objective_value,
    resolve_objective,
    run_cpsat,
)
from solvers.exact.model_size import limit_by_type, model_hosts, model_size
from solvers.exact.scaling import (
    CPSAT_COEF_LIMIT,
    CPSAT_LIMIT,
    Fallback,
    IntRows,
    decimal_scale,
    scale_columns,
    shrink,
)
from solvers.result import Objective, Progress, ProgressCallback, SolveResult, Status
from solvers.search.greedy import Greedy, ffd

STRICT_RETRY_SECONDS = 0.2
"""Least time left for a retry on strictly rounded rows when a relaxed model's placement fails
the checker (see :func:`_solve_cpsat`)."""

GPU_EXACT_LIMIT = 20_000
"""Most per-card variables the exact GPU mode may create before falling back to the aggregate."""

BUILD_SECONDS_PER_VAR = 6e-5
"""Model building time per count variable (measured about 3e-5 s on 2 busy cores, doubled).
A model that would take longer to build than the time left is not built: first fit is returned
with the cheap bound."""


@dataclass(frozen=True)
class Scaled:
    """The integer data of a model (:mod:`solvers.exact.scaling`).

    Attributes:
        rows: demands per app and capacities per host type, per resource.
        cards: GPU shares per app and per-card capacities per host type, per GPU resource
            (``full`` is the load of a card taken whole).
        cost_scale: the power of ten making every host cost an integer (a power of two when
            the costs do not scale exactly).
        exact: every column (and the costs) scaled exactly: the model is the checker's problem
            (never stricter, looser only by the float allowance).
        sound: the costs scaled exactly; the rows are exact or relaxed, so the model is a
            relaxation of the checker's problem and its bounds and proofs hold (its solutions
            are checked). Otherwise it proves nothing.
    """

    rows: IntRows
    cards: IntRows
    cost_scale: int
    exact: bool
    sound: bool = True


def scale_instance(instance: Instance, *, strict: bool = False) -> Scaled:
    """Scale demands, capacities, GPU shares and costs to integers (see the module docstring).

    Rows are exact where the data allow, never above :data:`solvers.exact.scaling.CPSAT_COEF_LIMIT`
    per integer, and otherwise relaxed (demands down, capacities up: a relaxation, so the
    model's proofs hold). With ``strict`` every row is rounded the other way and exact rows
    leave out the float allowance (``inside``), so every solution passes the checker and the
    model proves nothing.
    """
    inst = instance
    mode: Fallback = "strict" if strict else "relaxed"
    rows = shrink(scale_columns(inst.demand, inst.type_capacity, inst.counts, limit=CPSAT_LIMIT,
                                fallback=mode, inside=strict), fallback=mode)
    share = np.where(np.isinf(inst.gpu_demand), 0.0, inst.gpu_demand)
    per_card = inst.counts * inst.gpu_cards
    cards = shrink(scale_columns(share, inst.card_capacity, per_card, limit=CPSAT_LIMIT,
                                 fallback=mode, n_add=int(per_card.sum()), inside=strict),
                   fallback=mode)
    cs = decimal_scale(inst.type_cost)
    top = float(np.abs(inst.type_cost).max(initial=0.0))
    cost_ok = cs is not None and top * cs <= CPSAT_COEF_LIMIT and top * cs * max(
        1, inst.n_hosts) < CPSAT_LIMIT
    if not cost_ok:  # approximate costs (solutions only), coefficients within the limit
        cs = 2 ** max(0, min(20, math.floor(math.log2(CPSAT_COEF_LIMIT / top)))) if top > 0 \
            else 1
    assert cs is not None
    exact = rows.exact and cards.exact and cost_ok and not strict
    return Scaled(rows, cards, int(cs), exact, cost_ok and not strict)


def _upper_counts_int(instance: Instance, hosts: np.ndarray, sc: Scaled) -> np.ndarray:
    """Most containers of each app one model host can hold alone, on the integer data, ``(A, m)``."""
    inst = instance
    t_of = inst.host_type_of[hosts]
    n_t = len(inst.host_types)
    dem, cap = sc.rows.demand, sc.rows.capacity
    big = np.iinfo(np.int64).max
    per_type = np.full((inst.n_apps, n_t), big, dtype=np.int64)
    for r in range(inst.n_resources):
        d = dem[:, r][:, None]
        fit = np.where(d > 0, cap[None, :, r] // np.maximum(d, 1), big)
        per_type = np.minimum(per_type, fit)
    per_type = np.minimum(per_type, inst.cap[:, None].astype(np.int64))
    share, card = sc.cards.demand, sc.cards.capacity

    def per_card(a: int, ti: int) -> int | None:
        s = share[a]
        most = min([int(card[ti, q]) // int(s[q]) for q in range(len(s)) if s[q] > 0], default=big)
        return most if most < big else None

    limit_by_type(inst, per_type, per_card)
    per_type = np.minimum(per_type, inst.counts[:, None])
    return per_type[:, t_of].astype(np.int64)


@dataclass
class CpsatModel:
    """A built model and its variable handles.

    Attributes:
        model: the CP-SAT model.
        kind: the objective.
        hosts: global host index of each model host, shape ``(m,)``.
        x: ``(app, j) -> IntVar``, containers of the app on model host ``j``.
        y: used-host booleans per model host (empty for ``deployed``).
        z: ``(app, j) -> BoolVar`` for apps that are the first app of a rule.
        n: ``(app, j, card) -> IntVar`` (exact GPU mode).
        w: ``(j, card) -> BoolVar`` cards taken whole (exact GPU mode).
        gpu_exact: whether cards are modelled one by one.
        exact_scaling: whether the model is a relaxation of the checker's problem, so that its
            bound and proofs hold (:attr:`Scaled.sound`; rows may be relaxed, costs are exact).
        cost_scale: the integer scale of host costs in the objective.
        lower_bound: the cheap bound added as a constraint (objective units).
        item_rank: rank of each app by size when every app is one item (symmetry breaking).
        exact_rows: whether the model is exactly the checker's problem (:attr:`Scaled.exact`).
    """

    model: cp_model.CpModel
    kind: Objective
    hosts: np.ndarray
    x: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    y: list[cp_model.IntVar] = field(default_factory=list)
    z: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    n: dict[tuple[int, int, int], cp_model.IntVar] = field(default_factory=dict)
    w: dict[tuple[int, int], cp_model.IntVar] = field(default_factory=dict)
    gpu_exact: bool = True
    exact_scaling: bool = True
    cost_scale: int = 1
    lower_bound: float = 0.0
    item_rank: np.ndarray | None = None
    exact_rows: bool = True


def _item_rank(inst: Instance) -> np.ndarray | None:
    """Rank of each app by decreasing size when every app has one container, else ``None``."""
    if not inst.n_apps or np.any(inst.counts != 1):
        return None
    top = inst.type_capacity.max(axis=0)
    rel = inst.demand / np.where(top > 0, top, 1.0)
    order = np.lexsort((np.arange(inst.n_apps), -rel.sum(axis=1), -rel.max(axis=1)))
    rank = np.empty(inst.n_apps, dtype=np.int64)
    rank[order] = np.arange(inst.n_apps)
    return rank


def _local_index(hosts: np.ndarray, t_of: np.ndarray) -> np.ndarray:
    """Index of each model host among the model hosts of its type, shape ``(m,)``."""
    local = np.zeros(len(hosts), dtype=np.int64)
    for t in np.unique(t_of):
        js = np.flatnonzero(t_of == t)
        local[js] = np.arange(len(js))
    return local




def build_model(
    instance: Instance,
    *,
    objective: str | None = None,
    upper: float | None = None,
    lower_bound: float = 0.0,
    hint: Greedy | None = None,
    gpu_exact: bool | None = None,
    below: float | None = None,
    strict: bool = False,
) -> CpsatModel:
    """Build the aggregated model (see the module docstring).

    Args:
        instance: the instance.
        objective: ``"hosts"``, ``"cost"``, ``"deployed"`` or ``None`` (auto).
        upper: a known objective value (e.g. first fit's) limiting the hosts created.
        lower_bound: a proven lower bound, added as a constraint (ignored for ``deployed``).
        hint: a first-fit result given to the solver as a complete hint.
        gpu_exact: model GPU cards one by one (``None``: when it stays small).
        below: allow only objectives strictly below this value (ignored for ``deployed``).
        strict: round inexact rows the strict way (:func:`scale_instance`): solutions only.

    Returns:
        The model and its variables.
    """
    inst = instance
    kind = resolve_objective(inst, objective)
    hosts = model_hosts(inst, kind, upper)
    m = len(hosts)
    model = cp_model.CpModel()
    cm = CpsatModel(model, kind, hosts, lower_bound=lower_bound)
    sc = scale_instance(inst, strict=strict)
    cm.exact_scaling = sc.sound
    cm.exact_rows = sc.exact
    dem, cap = sc.rows.demand, sc.rows.capacity
    n_r = inst.n_resources
    ub = _upper_counts_int(inst, hosts, sc)  # (A, m)
    t_of = inst.host_type_of[hosts]
    rank = _item_rank(inst)
    if rank is not None:
        # every app is one item: item of rank i only on the first i + 1 hosts of each type
        local = _local_index(hosts, t_of)
        ub[local[None, :] > rank[:, None]] = 0
        cm.item_rank = rank

    for a in range(inst.n_apps):
        for j in range(m):
            if ub[a, j] > 0:
                cm.x[a, j] = model.new_int_var(0, int(ub[a, j]), f"x{a}_{j}")
    by_app: list[list[int]] = [[] for _ in range(inst.n_apps)]
    by_host: list[list[int]] = [[] for _ in range(m)]
    for a, j in cm.x:
        by_app[a].append(j)
        by_host[j].append(a)

    # demand
    for a, app in enumerate(inst.apps):
        placed = cp_model.LinearExpr.sum([cm.x[a, j] for j in by_app[a]])
        if kind == "deployed":
            model.add(placed <= app.count)
        else:
            model.add(placed == app.count)

    # used hosts and capacity (with the fill floor, see _fill_slack)
    if kind != "deployed":
        cm.y = [model.new_bool_var(f"y{j}") for j in range(m)]
    slack = _fill_slack(inst, kind, dem, cap, t_of, below)
    for j in range(m):
        t = int(t_of[j])
        for r in range(n_r):
            terms = [(int(dem[a, r]), cm.x[a, j]) for a in by_host[j] if dem[a, r] > 0]
            if not terms:
                continue
            load = cp_model.LinearExpr.weighted_sum([v for _, v in terms], [c for c, _ in terms])
            model.add(load <= int(cap[t, r]) * (cm.y[j] if cm.y else 1))
            free = slack[r]
            if free is not None:
                model.add(load >= int(cap[t, r]) * cm.y[j] - free)
        if cm.y:
            for a in by_host[j]:
                if not dem[a].any():
                    model.add(cm.x[a, j] <= int(ub[a, j]) * cm.y[j])

    # rules
    ra, rb, rk = inst.rule_arrays

    def zvar(a: int, j: int) -> cp_model.IntVar:
        if (a, j) not in cm.z:
            v = model.new_bool_var(f"z{a}_{j}")
            model.add(cm.x[a, j] <= int(ub[a, j]) * v)
            cm.z[a, j] = v
        return cm.z[a, j]

    for a, b, k in zip(ra.tolist(), rb.tolist(), rk.tolist(), strict=True):
        for j in by_app[a]:
            if (b, j) not in cm.x or ub[b, j] <= k:
                continue
            if k == 0:
                model.add(zvar(a, j) + zvar(b, j) <= 1)
            else:
                model.add(cm.x[b, j] <= k).only_enforce_if(zvar(a, j))

    _gpu_constraints(inst, cm, ub, gpu_exact, sc)
    if inst.has_topology:
        topology_constraints(inst, cm, ub)

    # symmetry breaking among identical hosts of a type
    load_r = _sym_resource(inst, dem, cap) if rank is None else None
    for j in range(m - 1):
        if t_of[j] != t_of[j + 1]:
            continue
        if cm.y:
            model.add(cm.y[j] >= cm.y[j + 1])
        if load_r is not None:
            lj = sum(int(dem[a, load_r]) * cm.x[a, j] for a in by_host[j])
            lk = sum(int(dem[a, load_r]) * cm.x[a, j + 1] for a in by_host[j + 1])
            model.add(lj >= lk)

    # objective and the cheap bound
    if kind == "deployed":
        model.maximize(sum(cm.x.values()))
    else:
        if kind == "cost":
            cs = sc.cost_scale
            cm.cost_scale = cs
            coef = [round(float(inst.type_cost[t]) * cs) for t in t_of]
        else:
            coef = [1] * m
        obj = sum(c * y for c, y in zip(coef, cm.y, strict=True))
        model.minimize(obj)
        if lower_bound > 0:
            model.add(obj >= int(math.ceil(lower_bound * cm.cost_scale - 1e-6)))
        if below is not None:
            model.add(obj <= int(math.ceil(below * cm.cost_scale - 1e-6)) - 1)

    if hint is not None:
        _add_hint(inst, cm, hint, dem, load_r)
    return cm


def topology_constraints(inst: Instance, cm: CpsatModel, ub: np.ndarray) -> None:
    """Domain caps and spread (:mod:`packing.model.topology`), exactly, on the model's ``x``.

    * cap ``(key, k)``: ``sum_{j in d} x[a, j] <= k`` per domain ``d``;
    * spread ``(key, s)``: counts ``lo <= S_d <= hi`` for every eligible domain ``d`` (of the whole
      instance: a domain without a model host counts 0) and ``hi - lo <= s``; for the host name
      key ``S_j = x[a, j]`` and ``lo <= S_j`` only where host ``j`` is used (a host that runs
      nothing is no node). ``y[j]`` may be 1 on an empty host; that only tightens the model, and
      the placement with ``y`` equal to the used hosts satisfies it, so the optimum is exact.

    Args:
        inst: the instance.
        cm: the model being built (``x`` and ``y`` exist).
        ub: most containers per app and model host, shape ``(n_apps, m)``.
    """
    model = cm.model
    m = len(cm.hosts)
    used: dict[int, cp_model.IntVar] = {}

    def used_var(j: int) -> cp_model.IntVar:
        if cm.y:
            return cm.y[j]
        if j not in used:  # "deployed": a host is used when it runs any container
            u = model.new_bool_var(f"u{j}")
            for (b, jj), v in cm.x.items():
                if jj == j:
                    model.add(v <= int(ub[b, j]) * u)
            used[j] = u
        return used[j]

    for a, app in enumerate(inst.apps):
        xs = {j: cm.x[a, j] for j in range(m) if (a, j) in cm.x}
        for key, k in app.domain_caps:
            d = domains(inst, key)
            groups: dict[int, list[cp_model.IntVar]] = {}
            for j, v in xs.items():
                dom = int(d.of_host[cm.hosts[j]])
                if dom >= 0:
                    groups.setdefault(dom, []).append(v)
            for dom, vs in groups.items():
                if sum(int(ub[a, j]) for j in xs if d.of_host[cm.hosts[j]] == dom) > k:
                    model.add(cp_model.LinearExpr.sum(vs) <= k)
        for key, s in app.spreads:
            d = domains(inst, key)
            lo = model.new_int_var(0, int(app.count), f"lo{a}_{key}")
            hi = model.new_int_var(0, int(app.count), f"hi{a}_{key}")
            model.add(hi - lo <= s)
            if d.per_host:
                ok_type = spread_types(inst, a, key)
                for j in range(m):
                    if not ok_type[inst.host_type_of[cm.hosts[j]]]:
                        continue
                    xv = xs.get(j)
                    if xv is not None:
                        model.add(xv <= hi)
                        model.add(xv >= lo).only_enforce_if(used_var(j))
                    else:
                        model.add(lo == 0).only_enforce_if(used_var(j))
                continue
            sums: dict[int, list[cp_model.IntVar]] = {}
            for j, v in xs.items():
                dom = int(d.of_host[cm.hosts[j]])
                if dom >= 0:
                    sums.setdefault(dom, []).append(v)
            for dom in eligible_domains(inst, a, key).tolist():
                total = cp_model.LinearExpr.sum(sums.get(dom, []))
                model.add(total >= lo)
                model.add(total <= hi)


def _fill_slack(inst: Instance, kind: Objective, dem: np.ndarray, cap: np.ndarray,
                t_of: np.ndarray, below: float | None) -> list[int | None]:
    """Most free capacity any used host can have, per resource (``None``: no useful limit).

    With all model hosts alike on resource ``r`` (capacity ``C``) and at most ``U`` of them used,
    the free capacity of the used hosts sums to ``U * C - total[r]``, so no used host has more
    free than that: ``load >= C * y - slack``. ``U`` is the number of model hosts, or for
    ``hosts`` with ``below`` the largest count strictly below it. When the volume bound is tight
    (perfect packings, Caprara-Toth class 10) this forces every used host to be full.
    """
    n_r = dem.shape[1]
    out: list[int | None] = [None] * n_r
    if kind == "deployed" or not len(t_of):
        return out
    u = len(t_of)
    if below is not None and kind == "hosts":
        u = min(u, int(math.ceil(below - 1e-9)) - 1)
    total = (dem * inst.counts[:, None]).sum(axis=0)
    for r in range(n_r):
        caps = cap[np.unique(t_of), r]
        if caps.min() != caps.max():
            continue
        free = u * int(caps[0]) - int(total[r])
        if 0 <= free < int(caps[0]):
            out[r] = free
    return out


def _sym_resource(inst: Instance, dem: np.ndarray, cap: np.ndarray) -> int | None:
    """The resource whose load orders identical hosts: the most used relative to capacity."""
    if not inst.n_resources or not inst.n_apps or not len(cap):
        return None
    total = (dem.astype(np.float64) * inst.counts[:, None]).sum(axis=0)
    rel = total / np.maximum(cap.max(axis=0), 1)
    return int(np.argmax(rel))


def _gpu_constraints(inst: Instance, cm: CpsatModel, ub: np.ndarray, exact: bool | None,
                     sc: Scaled) -> None:
    """GPU cards per card (exact mode) or in aggregate (see the module docstring).

    A card taken whole carries its capacity (``full``); the card's row allows the capacity with
    tolerance (``card``), as the checker does.
    """
    model = cm.model
    gpu_apps = [a for a in range(inst.n_apps) if inst.apps[a].gpu_cards]
    if not gpu_apps:
        return
    m = len(cm.hosts)
    t_of = inst.host_type_of[cm.hosts]
    n_g = len(inst.gpu_resources)
    share, card, full = sc.cards.demand, sc.cards.capacity, sc.cards.full
    shared = [a for a in gpu_apps if not inst.apps[a].gpu_whole]
    whole = [a for a in gpu_apps if inst.apps[a].gpu_whole]
    size = sum(int(inst.host_gpus[h]) * sum(1 for a in shared if (a, j) in cm.x)
               for j, h in enumerate(cm.hosts))
    cm.gpu_exact = size <= GPU_EXACT_LIMIT if exact is None else exact
    kc = inst.gpu_cards
    for j in range(m):
        t = int(t_of[j])
        n_cards = int(inst.host_types[t].gpus)
        sh = [a for a in shared if (a, j) in cm.x]
        wh = [a for a in whole if (a, j) in cm.x]
        if not sh and not wh:
            continue
        n_whole = sum(int(kc[a]) * cm.x[a, j] for a in wh)
        if not cm.gpu_exact:
            model.add(n_whole <= n_cards)
            for q in range(n_g):
                used = sum(int(kc[a] * share[a, q]) * cm.x[a, j] for a in sh)
                model.add(used + int(full[t, q]) * n_whole <= n_cards * int(card[t, q]))
            continue
        for g in range(n_cards):
            cm.w[j, g] = model.new_bool_var(f"w{j}_{g}")
            for a in sh:
                cm.n[a, j, g] = model.new_int_var(0, int(ub[a, j]), f"n{a}_{j}_{g}")
                model.add(cm.n[a, j, g] <= cm.x[a, j])
            for q in range(n_g):
                load = sum(int(share[a, q]) * cm.n[a, j, g] for a in sh)
                model.add(load + int(full[t, q]) * cm.w[j, g] <= int(card[t, q]))
        model.add(sum(cm.w[j, g] for g in range(n_cards)) == n_whole)
        for a in sh:
            model.add(sum(cm.n[a, j, g] for g in range(n_cards)) == int(kc[a]) * cm.x[a, j])
        # cards of a host are identical: whole cards first
        for g in range(n_cards - 1):
            model.add(cm.w[j, g] >= cm.w[j, g + 1])


def _add_hint(inst: Instance, cm: CpsatModel, hint: Greedy, dem: np.ndarray,
              load_r: int | None) -> None:
    """Hint the first-fit placement, with hosts of a type reordered to respect symmetry breaking."""
    model = cm.model
    hosts = cm.hosts
    host_of = hint.host_of
    if hint.kind != "deployed" and not hint.complete:
        return
    # reorder hosts within each type by (load on the symmetry resource desc, used desc)
    apps = inst.container_app
    load = np.zeros(inst.n_hosts)
    on = np.zeros(inst.n_hosts, dtype=np.int64)
    placed = host_of != UNPLACED
    if load_r is not None:
        np.add.at(load, host_of[placed], dem[apps[placed], load_r])
    np.add.at(on, host_of[placed], 1)
    if np.any(placed & ~np.isin(host_of, hosts)):
        return  # the hint uses hosts the model does not have
    remap: dict[int, int] = {}
    t_of = inst.host_type_of[hosts]
    for t in np.unique(t_of):
        js = np.flatnonzero(t_of == t)
        hs = hosts[js]
        if cm.item_rank is not None:
            first = np.full(inst.n_hosts, inst.n_apps, dtype=np.int64)
            np.minimum.at(first, host_of[placed], cm.item_rank[apps[placed]])
            order = np.lexsort((hs, first[hs]))
        else:
            order = np.lexsort((hs, -on[hs], -load[hs]))
        for j_new, h_old in zip(js, hs[order], strict=True):
            remap[int(h_old)] = int(j_new)
    counts: dict[tuple[int, int], int] = {}
    for c in np.flatnonzero(placed):
        key = (int(apps[c]), remap[int(host_of[c])])
        counts[key] = counts.get(key, 0) + 1
    for (a, j), v in cm.x.items():
        model.add_hint(v, counts.get((a, j), 0))
    used = {remap[int(h)] for h in np.unique(host_of[placed])}
    for j, y in enumerate(cm.y):
        model.add_hint(y, j in used)
    for (a, j), v in cm.z.items():
        model.add_hint(v, counts.get((a, j), 0) > 0)
    if cm.gpu_exact and cm.w:
        # per-card counts from the hint's cards, cards of a host reordered: whole first
        n_cnt: dict[tuple[int, int, int], int] = {}
        whole: dict[tuple[int, int], bool] = {}
        for c in np.flatnonzero(placed):
            a = int(apps[c])
            if not inst.gpu_cards[a]:
                continue
            j = remap[int(host_of[c])]
            for g in hint.cards_of[c]:
                if inst.apps[a].gpu_whole:
                    whole[j, g] = True
                else:
                    n_cnt[a, j, g] = n_cnt.get((a, j, g), 0) + 1
        for j in {j for j, _ in cm.w}:
            n_cards = int(inst.host_gpus[hosts[j]])
            def whole_first(g: int, j: int = j) -> tuple[bool, int]:
                return (not whole.get((j, g), False), g)

            gs = sorted(range(n_cards), key=whole_first)
            for g_new, g_old in enumerate(gs):
                model.add_hint(cm.w[j, g_new], whole.get((j, g_old), False))
                for a in range(inst.n_apps):
                    if (a, j, g_new) in cm.n:
                        model.add_hint(cm.n[a, j, g_new], n_cnt.get((a, j, g_old), 0))


class _Recorder(cp_model.CpSolverSolutionCallback):
    """Records (time, objective, bound) of every new solution and forwards it as Progress."""

    def __init__(self, clock: Clock, scale: float, callback: ProgressCallback | None,
                 history: list[Progress], exact: bool = True) -> None:
        super().__init__()
        self._exact = exact
        self._clock = clock
        self._scale = scale
        self._callback = callback
        self._history = history

    def on_solution_callback(self) -> None:
        bound = self.best_objective_bound / self._scale if self._exact else None
        notify(self._callback, self._history, self._clock, self.objective_value / self._scale,
               bound, "cpsat", "solution")


def _cards_from_model(inst: Instance, cm: CpsatModel, solver: cp_model.CpSolver,
                      host_of: np.ndarray) -> list[tuple[int, ...]] | None:
    """Read card assignments from the exact GPU variables (``None`` in aggregate mode)."""
    if not cm.gpu_exact:
        return assign_cards(inst, host_of)
    cards: list[tuple[int, ...]] = [()] * inst.n_containers
    pos = {int(h): j for j, h in enumerate(cm.hosts)}
    apps = inst.container_app
    free_whole: dict[int, list[int]] = {}
    left: dict[tuple[int, int], list[int]] = {}
    for c in np.flatnonzero(host_of != UNPLACED):
        a = int(apps[c])
        k = int(inst.gpu_cards[a])
        if not k:
            continue
        h = int(host_of[c])
        j = pos[h]
        n_cards = int(inst.host_gpus[h])
        if inst.apps[a].gpu_whole:
            if j not in free_whole:
                free_whole[j] = [g for g in range(n_cards) if solver.value(cm.w[j, g])]
            cards[c] = tuple(sorted(free_whole[j][:k]))
            free_whole[j] = free_whole[j][k:]
        else:
            if (a, j) not in left:
                left[a, j] = [int(solver.value(cm.n[a, j, g])) for g in range(n_cards)]
            rem = left[a, j]
            # the k cards with most remaining shares (a valid decomposition since n <= x)
            def most_left(g: int, rem: list[int] = rem) -> tuple[int, int]:
                return (-rem[g], g)

            gs = sorted(range(n_cards), key=most_left)[:k]
            for g in gs:
                rem[g] -= 1
            cards[c] = tuple(sorted(gs))
    return cards


def solve_cpsat(
    instance: Instance,
    options: SolveOptions = DEFAULT_OPTIONS,
    *,
    lower_bound: float | None = None,
    start: Greedy | None = None,
    below: float | None = None,
) -> SolveResult:
    """Solve with the aggregated CP-SAT model, on the presolved instance.

    The instance is first reduced (:func:`solvers.exact.reduce.reduce_instance`: implied resources
    dropped, interchangeable apps merged); the solution is lifted back. A model that would take
    longer to build than the time limit is not built (first fit and the cheap bound are
    returned), so the time limit holds.

    Args:
        instance: the instance (solved offline: ``initial`` and request times are ignored).
        options: the common options (:class:`~solvers.base.SolveOptions`):

            - ``time_limit``: wall-time budget in seconds, model building included.
            - ``workers``: CP-SAT search workers.
            - ``seed``: CP-SAT random seed.
            - ``objective``: ``"hosts"``, ``"cost"``, ``"deployed"`` or ``None`` (auto).
            - ``callback``: receives a :class:`Progress` on every improving solution.
            - ``hint``: a placement to start from (used if it places at least as much as first fit).

        lower_bound: an extra proven bound to add as a constraint (e.g. column generation's).
        start: a first-fit result already computed for this objective (saves recomputing it).
        below: seek only solutions with an objective strictly below this value (``hosts`` and
            ``cost``). If none exists, the result keeps first fit's solution (if complete) with
            ``below`` as its proven bound, and the status is not ``"infeasible"``.
            - ``stop``: a stop request (:class:`solvers.base.StopFlag`): once set, CP-SAT stops within
                about 50 ms and the best solution and proven bound so far are returned.

    Returns:
        The result; the placement is not yet checked (:func:`solvers.solve` checks it).
    """
    time_limit, objective = options.time_limit, options.objective
    hint, stop = options.hint, options.stop
    from solvers.exact.reduce import reduce_instance

    clock = Clock(time_limit, stop)
    red = reduce_instance(instance)
    if red.trivial:
        return _solve_cpsat(instance, options, lower_bound=lower_bound, start=start,
                            below=below)
    res = _solve_cpsat(red.reduced,
                       options.replace(time_limit=clock.left(),
                                       objective=resolve_objective(instance, objective),
                                       hint=red.project(hint)),
                       lower_bound=lower_bound, start=None, below=below)
    if res.placement is None:
        return res
    lifted = red.lift(res.placement)
    assert lifted is not None
    kind = resolve_objective(instance, objective)
    if check(instance, lifted, require_all=kind != "deployed"):
        # the reduced model allowed a load within the float allowance that a dropped resource
        # does not (solvers.exact.scaling): keep first fit on the original, with the (valid) bound
        g = ffd(instance, kind)
        if not (g.complete or kind == "deployed"):
            return dataclasses.replace(res, status="unknown", objective=None, placement=None,
                                       hosts=None, seconds=clock.elapsed, proofs={
                                           "bound": res.proofs.get("bound", "cpsat")})
        st: Status = "optimal" if _closed(g.objective, res.bound, kind) else "feasible"
        return dataclasses.replace(res, status=st, objective=g.objective,
                                   placement=g.placement(instance), hosts=_n_hosts(g.host_of),
                                   seconds=clock.elapsed,
                                   proofs={"solution": "ffd",
                                           "bound": res.proofs.get("bound", "cpsat")})
    return dataclasses.replace(res, placement=lifted, seconds=clock.elapsed)


def _solve_cpsat(
    instance: Instance,
    options: SolveOptions,
    *,
    lower_bound: float | None = None,
    start: Greedy | None = None,
    below: float | None = None,
    strict: bool = False,
) -> SolveResult:
    """:func:`solve_cpsat` without the presolve (the same arguments and result).

    ``strict`` builds the model with strictly rounded rows (:func:`scale_instance`): what the
    relaxed model's placement failed the checker is retried that way, for solutions only.
    """
    time_limit, workers, seed = options.time_limit, options.workers, options.seed
    objective, callback, hint, stop = (options.objective, options.callback, options.hint,
                                       options.stop)
    clock = Clock(time_limit, stop)
    inst = instance
    kind = resolve_objective(inst, objective)
    history: list[Progress] = []
    greedy = start if start is not None and start.kind == kind else ffd(inst, kind)
    if hint is not None:
        g2 = _greedy_from_placement(inst, hint, kind)
        if g2 is not None and (g2.placed, -g2.objective) >= (greedy.placed, -greedy.objective):
            greedy = g2
    lb, lb_name = cheap_lower_bound(inst, kind)
    if bound_infeasible(inst, kind, lb):
        return infeasible_result(inst, kind, "cpsat", clock, lb_name, history)
    if lower_bound is not None and kind != "deployed":
        lb = max(lb, lower_bound)
    notify(callback, history, clock, greedy.objective if greedy.complete else None, lb,
           "cpsat", "first fit")
    if _closed(greedy.objective, lb, kind) and (greedy.complete or kind == "deployed"):
        return SolveResult("optimal", greedy.objective, greedy.objective, greedy.placement(inst),
                           _n_hosts(greedy.host_of), "cpsat", clock.elapsed, kind,
                           {"solution": "ffd", "bound": lb_name}, None, tuple(history))
    upper = greedy.objective if (greedy.complete and kind != "deployed") else None
    if below is not None and kind != "deployed":
        upper = below if upper is None else min(upper, below)
    else:
        below = None
    def fallback(status_name: str, bound: float) -> SolveResult:
        if kind == "deployed" or greedy.complete:
            st: Status = "optimal" if _closed(greedy.objective, bound, kind) else "feasible"
            return SolveResult(st, greedy.objective, bound, greedy.placement(inst),
                               _n_hosts(greedy.host_of), "cpsat", clock.elapsed, kind,
                               {"solution": "ffd", "bound": status_name}, None, tuple(history))
        return SolveResult("unknown", None, bound, None, None, "cpsat", clock.elapsed, kind,
                           {"bound": status_name}, None, tuple(history))

    if clock.stopped:
        return fallback(lb_name, lb)
    if model_size(inst, kind, upper) * BUILD_SECONDS_PER_VAR > clock.left(0.0):
        notify(callback, history, clock, greedy.objective if greedy.complete else None, lb,
               "cpsat", "model too large to build within the time limit")
        return fallback(lb_name, lb)
    cm = build_model(inst, objective=kind, upper=upper, lower_bound=lb, hint=greedy,
                     below=below, strict=strict)
    solver = cp_model.CpSolver()
    p = solver.parameters
    p.max_time_in_seconds = clock.left()
    p.num_workers = max(1, int(workers))
    p.random_seed = int(seed)
    p.log_search_progress = False
    scale = float(cm.cost_scale)
    rec = _Recorder(clock, scale, callback, history, cm.exact_scaling)
    status = run_cpsat(solver, cm.model, rec, stop)

    if status == cp_model.MODEL_INVALID:  # pragma: no cover - a bug in build_model
        raise RuntimeError(f"CP-SAT model invalid: {cm.model.validate()}")
    exact = cm.exact_scaling  # a relaxation of the checker's problem: its proofs hold
    if status == cp_model.INFEASIBLE and not exact:
        return fallback(lb_name, lb)
    if status == cp_model.INFEASIBLE and below is None and kind != "deployed" and greedy.complete:
        # impossible for a relaxation: a solver fault; keep the checked placement, no proof
        notify(callback, history, clock, greedy.objective, lb, "cpsat",
               "CP-SAT declared infeasible an instance first fit places: result not used")
        return fallback(lb_name, lb)
    if status == cp_model.INFEASIBLE and below is not None:  # nothing strictly below
        nothing = max(lb, below)
        return fallback("cpsat", min(nothing, greedy.objective) if greedy.complete else nothing)
    if status == cp_model.INFEASIBLE:
        reason = infeasibility_reason(inst) or (
            "CP-SAT proved that no placement of all containers exists on the available hosts")
        return infeasible_result(inst, kind, "cpsat", clock, "cpsat", history, reason)
    if not exact or (kind == "deployed" and status not in (cp_model.OPTIMAL, cp_model.FEASIBLE)):
        # stopped before it had a solution, CP-SAT leaves its bound at 0: no upper bound at all
        bound = lb
    elif kind == "deployed":
        bound = float(math.floor(solver.best_objective_bound + 1e-6))
        bound = max(min(bound, lb), greedy.objective)
    elif kind == "hosts":
        bound = max(lb, ceil_bound(solver.best_objective_bound))
    else:
        bound = max(lb, solver.best_objective_bound / scale * (1 - 1e-12))
    improved = bound < lb - EPS if kind == "deployed" else bound > lb + EPS
    bound_by = "cpsat" if improved else lb_name
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return fallback(bound_by, bound)
    xs = [(a, int(cm.hosts[j]), int(solver.value(v))) for (a, j), v in cm.x.items()]
    host_of = containers_by_host(inst, xs)
    cards = _cards_from_model(inst, cm, solver, host_of)
    value = objective_value(inst, host_of, kind)
    if cards is None or (
        _worse(value, greedy.objective, kind) and (greedy.complete or kind == "deployed")
    ):
        return fallback(bound_by, bound)
    placement = Placement.from_arrays(inst, host_of, cards)
    if check(inst, placement, require_all=kind != "deployed"):
        # a load within the rounding of a relaxed row or the float allowance of an exact one:
        # the bound stands; solutions from the strictly rounded rows, in the time left
        if not strict and kind != "deployed" and clock.left(0.0) >= STRICT_RETRY_SECONDS:
            again = _solve_cpsat(inst, options.replace(time_limit=clock.left(), objective=kind,
                                                       hint=None),
                                 lower_bound=bound, start=greedy, below=below, strict=True)
            if again.placement is not None and not _worse(again.objective or 0.0,
                                                           greedy.objective, kind):
                st2: Status = "optimal" if _closed(again.objective or 0.0, bound, kind) \
                    else "feasible"
                return dataclasses.replace(
                    again, status=st2, bound=min(bound, again.objective or bound),
                    seconds=clock.elapsed, history=tuple(history) + again.history,
                    proofs={"solution": _strict_source(again), "bound": bound_by})
        return fallback(bound_by, bound)
    closed = _closed(value, bound, kind)
    if closed:
        bound = value
    st: Status = "optimal" if closed else "feasible"
    proofs = {"solution": "cpsat", "bound": bound_by}
    return SolveResult(st, value, bound, placement, _n_hosts(host_of), "cpsat", clock.elapsed,
                       kind, proofs, None, tuple(history))


def _strict_source(res: SolveResult) -> str:
    """The ``proofs["solution"]`` of a result of the strict retry."""
    src = res.proofs.get("solution", "cpsat")
    return "cpsat (strict rows)" if src == "cpsat" else src


def _n_hosts(host_of: np.ndarray) -> int:
    return int(len(np.unique(host_of[host_of != UNPLACED])))


def _closed(value: float, bound: float, kind: Objective) -> bool:
    if kind == "deployed":
        return value >= bound - EPS
    return value <= bound + EPS * max(1.0, abs(bound))


def _worse(value: float, other: float, kind: Objective) -> bool:
    return value < other - EPS if kind == "deployed" else value > other + EPS


def _greedy_from_placement(inst: Instance, placement: Placement, kind: Objective) -> Greedy | None:
    """Wrap a user hint as a :class:`Greedy` (``None`` if it breaks a constraint)."""
    from packing.feasibility.checker import check

    if check(inst, placement):
        return None
    host_of = placement.host_array(inst)
    cards = [placement.cards_of(inst.apps[int(a)].name, int(j - inst.offsets[a]))
             for j, a in enumerate(inst.container_app)]
    return Greedy(host_of, cards, objective_value(inst, host_of, kind), kind,
                  int(np.count_nonzero(host_of != UNPLACED)), "hint")
