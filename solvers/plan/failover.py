"""N+1: does a placement survive the loss of any one host, and what does surviving cost.

Verification (:func:`verify_n_plus_one`): the plan's hosts are the hosts that run containers plus
any spare hosts named. For each plan host ``h`` in index order, the containers of ``h`` must be
re-placed on the *free* capacity of the other plan hosts, every container elsewhere staying put,
with every rule kept (capacity, caps, exclusions, ``<A, B, k>`` rules, GPU cards and models):

1. first fit: the lost containers, largest first, each on the first plan host the one feasibility
   logic (:meth:`packing.feasibility.predicates.ClusterState.mask`) accepts. Success is a re-placement, hence
   a proof that the loss is absorbed.
2. only when first fit fails: an exact CP-SAT model of "place the lost containers on the other
   hosts' free capacity" on integers scaled exactly (:func:`solvers.exact.cpsat.scale_instance`; the
   free capacity is the integer capacity minus the integer loads, so it is never stricter than the
   checker). Infeasible is then a proof that the loss cannot be absorbed. It covers capacity,
   caps, rules and GPU models. Data without an exact integer scaling are relaxed (demands
   rounded down, capacities up), which keeps "infeasible" a proof; "feasible" on relaxed data,
   or a lost container that needs GPU cards, leaves the loss undecided: ``holds`` is ``None``.

Planning (:func:`plan_spares`): plan, verify, add spare hosts: the cheapest set of up to three
spares that first fit proves N+1 (sets in order of total cost), else one spare at a time,
cheapest type first, each try verified from scratch with the exact check.

Lower bound (:func:`extra_lower_bound`): if hosts ``S`` survive losing any host ``h``, the
containers then all run on ``S - {h}`` with every rule kept, so ``S - {h}`` is a plain plan:
``|S| - 1 >= OPT`` (hosts), ``cost(S) - cost(h) >= OPT`` for every ``h`` in ``S``, so
``cost(S) >= OPT + max_{h in S} price(h)`` (cost), at least the cheapest price among the host
types some app fits on (maximised over apps). Any proven lower bound of the plain plan can
stand in for ``OPT``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.model.instance import UNPLACED, Instance, Placement


@dataclass(frozen=True)
class HostLoss:
    """What losing one host does.

    Attributes:
        host: the host's name.
        absorbed: its containers can be re-placed (``None``: not proven either way).
        proof: ``"first-fit"`` (a re-placement found), ``"cpsat"`` (exact model: feasible or
            proven infeasible) or ``"none"`` (no exact check possible: GPU cards or inexact data).
        unplaced: containers per app first fit could not re-place (empty when absorbed).
    """

    host: str
    absorbed: bool | None
    proof: str
    unplaced: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``{"host", "absorbed", "proof", "unplaced"}``."""
        return {"host": self.host, "absorbed": self.absorbed, "proof": self.proof,
                "unplaced": dict(self.unplaced)}


@dataclass(frozen=True)
class FailoverCheck:
    """The N+1 verdict of one placement.

    Attributes:
        holds: every host's loss is absorbed (``None``: some loss could not be decided).
        checked: hosts checked (checking stops at the first loss proven not absorbed).
        first_failure: the first host (by index) whose loss is not absorbed or undecided.
    """

    holds: bool | None
    checked: int
    first_failure: HostLoss | None = None


def plan_hosts(instance: Instance, placement: Placement,
               spares: Sequence[int] = ()) -> np.ndarray:
    """The plan's hosts: those running containers plus ``spares``, shape ``(n_hosts,)`` bool."""
    host_of = placement.host_array(instance)
    mask = np.zeros(instance.n_hosts, dtype=bool)
    mask[host_of[host_of != UNPLACED]] = True
    mask[list(spares)] = True
    return mask


def verify_n_plus_one(instance: Instance, placement: Placement,
                      hosts: np.ndarray | None = None, *, time_limit: float = 10.0,
                      threads: int = 1, exact: bool = True) -> FailoverCheck:
    """Whether ``placement`` survives losing any one of ``hosts`` (see the module docstring).

    Args:
        instance: the instance (the placement passes its checker).
        placement: the plan.
        hosts: the plan's hosts, shape ``(n_hosts,)`` bool (``None``: the hosts in use).
        time_limit: budget of each exact check, seconds.
        threads: CP-SAT workers of the exact checks.
        exact: run the exact check when first fit fails (``False``: such a loss is undecided,
            and checking stops there).

    Returns:
        The verdict; checking stops at the first host whose loss is not absorbed.
    """
    inst = instance
    mask = plan_hosts(inst, placement) if hosts is None else np.asarray(hosts, dtype=bool)
    host_of = placement.host_array(inst)
    cards = placement.card_lists(inst)
    base = ClusterState.from_placement(inst, host_of, cards)
    undecided: HostLoss | None = None
    checked = 0
    for h in np.flatnonzero(mask).tolist():
        checked += 1
        loss = lose_host(inst, base, host_of, cards, mask, h, time_limit, threads, exact)
        if loss.absorbed is False or (loss.absorbed is None and not exact):
            return FailoverCheck(loss.absorbed, checked, loss)
        if loss.absorbed is None and undecided is None:
            undecided = loss
    return FailoverCheck(None if undecided else True, checked, undecided)


def lose_host(inst: Instance, base: ClusterState, host_of: np.ndarray,
              cards: Sequence[tuple[int, ...]] | None, mask: np.ndarray, h: int,
              time_limit: float = 10.0, threads: int = 1, exact: bool = True) -> HostLoss:
    """Whether the containers of host ``h`` fit on the other plan hosts (first fit, then exact).

    Args:
        inst: the instance.
        base: the state of the whole placement (not modified).
        host_of: host per container, shape ``(n_containers,)``.
        cards: GPU cards per container, or ``None``.
        mask: the plan's hosts, shape ``(n_hosts,)`` bool.
        h: the host lost.
        time_limit: budget of the exact check, seconds.
        threads: CP-SAT workers.
        exact: run the exact check when first fit fails (else the loss is undecided).
    """
    lost = np.flatnonzero(host_of == h)
    name = inst.host_names[h]
    if not len(lost):
        return HostLoss(name, True, "first-fit")
    st = base.copy()
    apps = inst.container_app
    for j in lost.tolist():
        st.remove(int(apps[j]), h, cards[j] if cards is not None else ())
    others = mask.copy()
    others[h] = False
    size = (inst.demand / np.maximum(inst.type_capacity.max(axis=0), 1e-12)).max(axis=1) \
        if inst.n_resources else np.zeros(inst.n_apps)
    order = lost[np.lexsort((lost, -size[apps[lost]]))]
    left: dict[str, int] = {}
    for j in order.tolist():
        a = int(apps[j])
        ok = np.flatnonzero(st.mask(a) & others)
        if not len(ok):
            left[inst.apps[a].name] = left.get(inst.apps[a].name, 0) + 1
            continue
        g = int(ok[0])
        st.place(a, g, st.choose_cards(a, g))
    if not left:
        return HostLoss(name, True, "first-fit")
    if not exact:
        return HostLoss(name, None, "none", left)
    verdict = _exact_absorb(inst, base, host_of, lost, others, time_limit, threads)
    if verdict is None:
        return HostLoss(name, None, "none", left)
    return HostLoss(name, verdict, "cpsat", {} if verdict else left)


def _exact_absorb(inst: Instance, base: ClusterState, host_of: np.ndarray, lost: np.ndarray,
                  others: np.ndarray, time_limit: float, threads: int) -> bool | None:
    """Exact check that the ``lost`` containers fit on the ``others`` (``None``: no proof).

    Integer data as in :mod:`solvers.exact.cpsat` (:mod:`solvers.exact.scaling`); loads of the other hosts
    are integer sums of the integer demands of the containers staying, so free capacity is
    exact. When a column has no exact scaling it is relaxed (demands rounded down, capacities
    up): "infeasible" is still a proof, "feasible" is then no proof (``None``). Zone caps and
    spreads (:mod:`packing.model.topology`) are left out, so on such instances only "infeasible" counts.
    """
    from ortools.sat.python import cp_model

    from solvers.exact.scaling import CPSAT_LIMIT, scale_columns

    apps = inst.container_app
    if (inst.gpu_cards[apps[lost]] > 0).any():
        return None
    rows = scale_columns(inst.demand, inst.type_capacity, inst.counts, limit=CPSAT_LIMIT,
                         fallback="relaxed")
    dem = rows.demand.astype(np.int64)  # (A, R)
    cap = rows.capacity.astype(np.int64)  # (T, R)
    stay = (host_of != UNPLACED) & ~np.isin(np.arange(len(host_of)), lost)
    n_h, n_a = inst.n_hosts, inst.n_apps
    load = np.zeros((n_h, inst.n_resources), dtype=np.int64)
    np.add.at(load, host_of[stay], dem[apps[stay]])
    cnt = np.zeros((n_h, n_a), dtype=np.int64)
    np.add.at(cnt, (host_of[stay], apps[stay]), 1)
    free = cap[inst.host_type_of] - load  # (H, R)
    need = np.bincount(apps[lost], minlength=n_a)
    lost_apps = np.flatnonzero(need)
    hs = np.flatnonzero(others)
    ok_type = inst.type_allowed
    m = cp_model.CpModel()
    x: dict[tuple[int, int], Any] = {}
    for a in lost_apps.tolist():
        for g in hs.tolist():
            ub = int(min(need[a], inst.cap[a] - cnt[g, a]))
            if ok_type is not None and not ok_type[a][inst.host_type_of[g]]:
                ub = 0
            pos = dem[a] > 0
            if pos.any():
                ub = min(ub, int((np.maximum(free[g][pos], -1) // dem[a][pos]).min()))
            if ub > 0:
                x[a, g] = m.new_int_var(0, ub, f"x{a}_{g}")
    for a in lost_apps.tolist():
        vs = [x[a, g] for g in hs.tolist() if (a, g) in x]
        if not vs:
            return False
        m.add(sum(vs) == int(need[a]))
    for g in hs.tolist():
        vs = [(a, x[a, g]) for a in lost_apps.tolist() if (a, g) in x]
        for r in range(inst.n_resources):
            terms = [(int(dem[a, r]), v) for a, v in vs if dem[a, r] > 0]
            if terms:
                m.add(sum(c * v for c, v in terms) <= int(free[g, r]))
    lost_set = set(lost_apps.tolist())
    z: dict[tuple[int, int], Any] = {}

    def present(a: int, g: int) -> Any:
        """1 if app ``a`` runs on ``g`` after the re-placement (int or BoolVar)."""
        if cnt[g, a] > 0:
            return 1
        if (a, g) not in x:
            return 0
        if (a, g) not in z:
            b = m.new_bool_var(f"z{a}_{g}")
            m.add(x[a, g] <= int(need[a]) * b)
            z[a, g] = b
        return z[a, g]

    ra, rb, rk = inst.rule_arrays
    for a, b, k in zip(ra.tolist(), rb.tolist(), rk.tolist(), strict=True):
        if a not in lost_set and b not in lost_set:
            continue
        for g in hs.tolist():
            pa = present(a, g)
            if isinstance(pa, int) and pa == 0:
                continue
            count_b = int(cnt[g, b]) + (x[b, g] if (b, g) in x else 0)
            if isinstance(count_b, int) and count_b <= k:
                continue
            if isinstance(pa, int):
                m.add(count_b <= k)
            else:
                m.add(count_b <= k).only_enforce_if(pa)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = max(1, int(threads))
    status = solver.solve(m)
    if status == cp_model.INFEASIBLE:
        return False
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) and rows.exact and not inst.has_topology:
        return True  # zone caps and spreads are not in this model: with them, "fits" is no proof
    return None


def extra_lower_bound(instance: Instance, kind: str, *, cheapest: bool = False) -> float:
    """What an N+1 plan needs beyond any proven lower bound of the plain plan (module docstring).

    For cost: ``cost(S) >= OPT + max_{h in S} price(h)``, and ``S`` holds every container, so
    for each app it has a host of a type the app fits on alone: ``max_{h in S} price(h)`` is at
    least ``max_a min {price(t) : a fits alone on t}``.

    With ``cheapest`` (a running cluster, where the host left out must be a new one, of any
    type) it is the cheapest price of a type with hosts.

    Returns:
        1 (hosts), or that price (cost; 0 without containers).
    """
    if kind != "cost":
        return 1.0
    if cheapest:
        costs = [t.cost for t in instance.host_types if t.count > 0]
        return float(min(costs)) if costs else 0.0
    from solvers.plan.type_bounds import fits_alone

    fit = fits_alone(instance) & (instance.type_count > 0)[None, :]
    cost = instance.type_cost
    best = 0.0
    for a in np.flatnonzero(instance.counts > 0).tolist():
        if fit[a].any():
            best = max(best, float(cost[fit[a]].min()))
    return best


def with_extra_host(instance: Instance, placement: Placement,
                    t: int) -> tuple[Instance, Placement, int]:
    """The instance with one more host of type ``t`` (appended to its type), and the placement on it.

    Returns:
        ``(instance, placement, index of the new host)``; host indices of later types shift by 1.
    """
    types = list(instance.host_types)
    old = types[t]
    names = None if old.host_names is None else (*old.host_names, f"{old.name}#{old.count}")
    types[t] = dataclasses.replace(old, count=old.count + 1, host_names=names)
    new_inst = instance.replace(host_types=tuple(types))
    new_h = int(instance.type_count[: t + 1].sum())
    hosts = {a: tuple(h + 1 if h != UNPLACED and h >= new_h else h for h in hs)
             for a, hs in placement.hosts.items()}
    return new_inst, Placement(hosts, dict(placement.gpus)), new_h


def _spare_order(instance: Instance) -> list[int]:
    """Host types to try as the spare: cheapest first, then the largest (by total share)."""
    top = np.maximum(instance.type_capacity.max(axis=0), 1e-12) if instance.n_resources else 1.0
    share = (instance.type_capacity / top).sum(axis=1) if instance.n_resources else \
        np.zeros(len(instance.host_types))
    ts = range(len(instance.host_types))
    return sorted(ts, key=lambda t: (float(instance.type_cost[t]), -float(share[t]), t))


@dataclass(frozen=True)
class SparePlan:
    """A plan made N+1 by spare hosts.

    Attributes:
        instance: the instance, with host counts raised where spares were added.
        placement: the placement on it (unchanged apart from host indices).
        spares: global indices of the spare hosts (empty hosts in the plan).
        check: the verdict with the spares.
    """

    instance: Instance
    placement: Placement
    spares: tuple[int, ...]
    check: FailoverCheck


def plan_spares(instance: Instance, placement: Placement, *, fixed: Sequence[int] = (),
                max_spares: int = 3, time_limit: float = 10.0, threads: int = 1,
                limits: Sequence[int | None] | None = None) -> SparePlan:
    """Add spare hosts until the plan is N+1.

    First the sets of up to ``max_spares`` spares in order of total cost (then fewer hosts, then
    larger ones), each checked by first fit alone (a success is a proof; up to
    :data:`SPARE_SETS` sets); when none holds, one spare at a time, cheapest type first, with
    the exact check.

    Args:
        instance: the instance.
        placement: the plan (checked).
        fixed: hosts in the plan even when empty (e.g. existing hosts of a running cluster).
        max_spares: most spares added before giving up (the last verdict is returned).
        time_limit: budget of each exact check, seconds.
        threads: CP-SAT workers of the exact checks.
        limits: most hosts of each type the plan may have, spares included (a count the host
            list gives), shape ``(n_types,)``; ``None`` entries (or ``None``): no limit. A
            spare is an idle host of its type, or a new one only below the limit.
    """
    lim = list(limits) if limits is not None else [None] * len(instance.host_types)
    spares: list[int] = list(fixed)
    n_fixed = len(spares)
    verdict = verify_n_plus_one(instance, placement, plan_hosts(instance, placement, spares),
                                time_limit=time_limit, threads=threads)
    inst, pl = instance, placement
    if verdict.holds is not True:
        found = _cheapest_set(inst, pl, spares, max_spares, lim)
        if found is not None:
            inst, pl, spares, verdict = found
    while verdict.holds is not True and len(spares) - n_fixed < max_spares:
        best: tuple[Instance, Placement, list[int], FailoverCheck] | None = None
        in_plan = plan_hosts(inst, pl, spares)
        for t in _spare_order(inst):
            idle = np.flatnonzero(~in_plan & (inst.host_type_of == t))
            if len(idle):
                i2, p2, h = inst, pl, int(idle[0])
                s2 = [*spares, h]
            elif lim[t] is not None and inst.host_types[t].count >= int(lim[t] or 0):
                continue  # the host list allows no more hosts of this type
            else:
                i2, p2, h = with_extra_host(inst, pl, t)
                s2 = [s + 1 if s >= h else s for s in spares] + [h]
            v = verify_n_plus_one(i2, p2, plan_hosts(i2, p2, s2), time_limit=time_limit,
                                  threads=threads)
            if best is None:
                best = (i2, p2, s2, v)
            if v.holds is True:
                best = (i2, p2, s2, v)
                break
        if best is None:  # every type is at its limit: no spare can be added
            break
        inst, pl, spares, verdict = best
    bad = check(inst, pl, require_all=True)
    if bad:
        raise AssertionError(f"re-indexed placement breaks the checker: {bad[0]}")
    return SparePlan(inst, pl, tuple(spares[n_fixed:]), verdict)


SPARE_SETS = 60
"""Most spare sets :func:`plan_spares` tries by first fit before adding spares one by one."""


def _add(inst: Instance, pl: Placement, spares: list[int], t: int,
         limit: int | None = None) -> tuple[Instance, Placement, list[int]] | None:
    """One more spare of type ``t``: an allowed idle host of the type, or a new one.

    A new host only below ``limit`` hosts of the type; ``None`` when there is neither.
    """
    idle = np.flatnonzero(~plan_hosts(inst, pl, spares) & (inst.host_type_of == t))
    if len(idle):
        return inst, pl, [*spares, int(idle[0])]
    if limit is not None and inst.host_types[t].count >= limit:
        return None
    i2, p2, h = with_extra_host(inst, pl, t)
    return i2, p2, [s + 1 if s >= h else s for s in spares] + [h]


def _cheapest_set(inst: Instance, pl: Placement, spares: list[int], max_spares: int,
                  limits: Sequence[int | None]
                  ) -> tuple[Instance, Placement, list[int], FailoverCheck] | None:
    """The cheapest set of spares that first fit proves N+1, or ``None``."""
    import itertools

    order = _spare_order(inst)
    top = np.maximum(inst.type_capacity.max(axis=0), 1e-12) if inst.n_resources else 1.0
    share = (inst.type_capacity / top).sum(axis=1) if inst.n_resources else np.zeros(
        len(inst.host_types))
    sets = [c for k in range(1, max_spares + 1)
            for c in itertools.combinations_with_replacement(order, k)]
    sets.sort(key=lambda c: (float(sum(inst.type_cost[t] for t in c)), len(c),
                             -float(sum(share[t] for t in c)), c))
    for c in sets[:SPARE_SETS]:
        got: tuple[Instance, Placement, list[int]] | None = (inst, pl, list(spares))
        for t in c:
            if got is not None:
                got = _add(*got, t, limits[t])
        if got is None:
            continue
        i2, p2, s2 = got
        v = verify_n_plus_one(i2, p2, plan_hosts(i2, p2, s2), exact=False)
        if v.holds is True:
            return i2, p2, s2, v
    return None


__all__ = ["SPARE_SETS", "FailoverCheck", "HostLoss", "SparePlan", "extra_lower_bound", "lose_host",
           "plan_hosts", "plan_spares", "verify_n_plus_one", "with_extra_host"]
