"""A capacity-planning scenario on a running cluster (moves, verification) and made N+1.

The running cluster is read by :mod:`packing.loaders.current`, planned on by
:mod:`solvers.plan.incremental` and checked for N+1 by :mod:`solvers.plan.failover`; the results are
:class:`packing.plan.result.ScenarioResult` (see ``docs/plan.md``, "Current cluster, moves and
N+1"). :func:`solvers.plan.scenario.solve_scenario` calls these.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from packing.errors import input_error
from packing.model.instance import Instance
from packing.plan.model import HostOffer
from packing.plan.result import ScenarioResult, finite, gap_of, summarise

ALL_MOVES = "all"
"""``max_moves`` of a plan that may move any running container."""
N1_CHECK_SECONDS = 10.0
"""Budget of each exact "can this host's loss be absorbed" check, seconds."""


def needs_current(options: Any) -> bool:
    """Whether the scenario plans on (or only verifies) a running cluster.

    Args:
        options: the plan's :class:`solvers.plan.scenario.PlanOptions`.

    Raises:
        InputError: ``max_moves`` or ``verify_only`` without ``current``.
    """
    if options.max_moves is not None and options.current is None:
        raise input_error("<options>", "--max-moves", "needs --current (the running cluster)")
    if options.verify_only and options.current is None:
        raise input_error("<options>", "--verify-only", "needs --current (the cluster to verify)")
    return options.current is not None


def current_scenario(instance: Instance, growth: float, offers: Sequence[HostOffer],
                     options: Any, t0: float) -> ScenarioResult:
    """Plan on top of (or only verify) ``options.current``.

    Args:
        instance: the built scenario (no host running).
        growth: the demand multiplier.
        offers: the host types offered.
        options: the plan's :class:`solvers.plan.scenario.PlanOptions`.
        t0: when the scenario started (``time.perf_counter()``).
    """
    from packing.feasibility.checker import check
    from packing.loaders.current import Current, load_current
    from solvers.plan.incremental import plan_incremental, running_placement, with_current

    cur = options.current if isinstance(options.current, Current) else load_current(
        options.current, [t.name for t in instance.host_types], [a.name for a in instance.apps])
    cluster = with_current(instance, cur)
    inst = cluster.instance
    priced = any(o.price is not None for o in offers)
    n_exist = int(cluster.existing.sum())
    exist_cost = float(inst.host_cost[cluster.existing].sum()) if priced else None
    exist_value = exist_cost if exist_cost is not None else float(n_exist)
    fixed = np.flatnonzero(cluster.existing).tolist()
    # default: nothing moves; "all": any number (reported as every running container)
    limit: int | None = 0 if options.max_moves is None else None \
        if options.max_moves == ALL_MOVES else int(options.max_moves)
    running = int(cluster.cur.sum())
    moves: dict[str, Any] = {"max": running if limit is None else limit, "existing_hosts": n_exist,
                             "new_containers": cluster.new, "removed_containers": cluster.removed}
    if options.verify_only:
        placement = running_placement(cluster)
        bad = check(inst, placement, require_all=True)
        res = summarise(inst, growth, None if bad else placement,
                        "infeasible" if bad else "feasible", exist_value, offers,
                        time.perf_counter() - t0, {"solution": "current"},
                        str(bad[0]) if bad else None)
        res = dataclasses.replace(res, hosts=n_exist, cost=exist_cost,
                                  placement=None if bad else placement, gap=None if bad else 0.0)
        moves.update(used=0, added_hosts=0, added_cost=0.0 if priced else None, added_bound=None)
        res = dataclasses.replace(res, current=moves)
        if options.n_plus_one and not bad:
            res = with_n_plus_one(res, options, fixed, verify_only=True)
        return res
    kept = tuple(inst.host_names[h] for h in fixed)
    r = plan_incremental(cluster, objective_of(offers), limit, time_limit=options.time_limit,
                         threads=options.threads, seed=options.seed)
    res = summarise(inst, growth, r.placement, r.status, exist_value + r.bound, offers,
                    time.perf_counter() - t0, r.proofs, r.reason)
    added_hosts = None
    if r.placement is not None:
        used = np.zeros(inst.n_hosts, dtype=bool)
        h = r.placement.host_array(inst)
        used[h[h >= 0]] = True
        added_hosts = int((used & ~cluster.existing).sum())
        hosts = n_exist + added_hosts
        cost = exist_cost + float(r.added or 0.0) if exist_cost is not None else None
        value = float(cost if cost is not None else hosts)
        res = dataclasses.replace(res, hosts=hosts, cost=cost,
                                  gap=gap_of(value, exist_value + r.bound))
    moves.update(used=r.moves, added_hosts=added_hosts, added_cost=r.added if priced else None,
                 added_bound=finite(r.bound))
    res = dataclasses.replace(res, current=moves, kept=kept)
    if options.n_plus_one and r.placement is not None:
        res = with_n_plus_one(res, options, fixed, limits={
            o.name: None if o.count is None else o.count + cur.existing.get(o.name, 0)
            for o in offers})
    return res


def objective_of(offers: Sequence[HostOffer]) -> str:
    """The objective of a plan on ``offers``: ``"cost"`` when priced, else ``"hosts"``."""
    return "cost" if any(o.price is not None for o in offers) else "hosts"


def with_n_plus_one(res: ScenarioResult, options: Any, fixed: Sequence[int] = (),
                    verify_only: bool = False,
                    limits: Mapping[str, int | None] | None = None) -> ScenarioResult:
    """Make a scenario's plan N+1 (or only verify it) and record ``n_plus_one``.

    Args:
        res: the scenario with a placement.
        options: the plan's :class:`solvers.plan.scenario.PlanOptions`.
        fixed: hosts in the plan even when empty (the running cluster's).
        verify_only: verify only, add no spare.
        limits: most hosts of each type (by name) the plan may have, spares included: the
            count the host list gives (plus the running hosts); ``None``: no limit.
    """
    from solvers.plan.failover import extra_lower_bound, plan_spares, verify_n_plus_one
    from solvers.plan.failover import plan_hosts as in_plan

    inst = res.instance
    placement = res.placement
    if inst is None or placement is None:
        raise ValueError("with_n_plus_one needs a scenario with a plan")
    budget = min(N1_CHECK_SECONDS, options.time_limit)
    priced = res.cost is not None
    if verify_only:
        v = verify_n_plus_one(inst, placement, in_plan(inst, placement, fixed),
                              time_limit=budget, threads=options.threads)
        return dataclasses.replace(res, n_plus_one=n1_dict(v, 0, 0.0 if priced else None,
                                                           None, ()))
    lim = [None if limits is None else limits.get(t.name) for t in inst.host_types]
    sp = plan_spares(inst, placement, fixed=fixed, time_limit=budget, threads=options.threads,
                     limits=lim)
    spares = sp.spares
    types = sp.instance.host_type_of[list(spares)].tolist()
    extra_cost = float(sum(sp.instance.type_cost[t] for t in types)) if priced else None
    # a bound only for a plan from scratch: S - {h} is then a plain plan (solvers.plan.failover)
    extra_bound = None
    hosts = (res.hosts or 0) + len(spares)
    cost = res.cost + extra_cost if res.cost is not None and extra_cost is not None else None
    value = float(cost if cost is not None else hosts)
    bound = res.bound
    # on a running cluster: when hosts must be added at all, an N+1 plan S has a new host h, and
    # S - {h} is a plan on the cluster with the same moves: one more host (cheapest price) again
    must_add = bool(fixed) and (res.current or {}).get("added_bound") or 0.0
    if not fixed or must_add > 0:
        bound = res.bound + extra_lower_bound(inst, res.objective_kind, cheapest=bool(fixed))
        plain = float(res.cost if res.cost is not None else res.hosts or 0)
        extra_bound = max(0.0, bound - plain)
        if not priced:
            extra_bound = float(math.ceil(extra_bound - 1e-9))
    needed = bound  # what an N+1 plan needs at least (before the plan's own value caps it)
    bound = min(bound, value)
    gap = gap_of(value, bound)
    per_type = list(res.per_type)
    for t in types:
        name = sp.instance.host_types[t].name
        for i, u in enumerate(per_type):
            if u.type == name:
                per_type[i] = dataclasses.replace(
                    u, hosts=u.hosts + 1,
                    cost=None if u.cost is None else u.cost + float(sp.instance.type_cost[t]))
    status = res.status
    reason = res.reason
    n1 = n1_dict(sp.check, len(spares), extra_cost, extra_bound,
                 [sp.instance.host_names[s] for s in spares])
    most = _most(sp.instance, lim, priced)
    if sp.check.holds is not True and most is not None and most < needed - 1e-9:
        what = "cost" if priced else "hosts"
        return dataclasses.replace(
            res, status="infeasible", hosts=None, cost=None, bound=math.inf, gap=None,
            placement=None, per_type=(), n_plus_one=n1,
            reason=f"an N+1 plan needs {what} of at least {needed:g} (the plain plan's proven "
                   f"bound and a host that may be lost), and the host counts given allow "
                   f"{most:g}")
    if sp.check.holds is not True:
        status = "unknown"
        reason = "the plan is not proven to survive losing any one host"
    elif status == "optimal" and gap > 0:
        status = "feasible"
    return dataclasses.replace(
        res, hosts=hosts, cost=cost, bound=bound, gap=gap, per_type=tuple(per_type),
        status=status, reason=reason, instance=sp.instance, placement=sp.placement,
        max_hosts={t.name: t.count for t in sp.instance.host_types}, n_plus_one=n1)


def _most(instance: Instance, limits: Sequence[int | None], priced: bool) -> float | None:
    """The most hosts (or cost) the host counts allow, or ``None`` when a type has no count."""
    if any(m is None for m in limits):
        return None
    return float(sum(int(m or 0) * (float(t.cost) if priced else 1.0)
                     for m, t in zip(limits, instance.host_types, strict=True)))


def n1_dict(v: Any, extra: int, extra_cost: float | None, extra_bound: float | None,
            spares: Sequence[str]) -> dict[str, Any]:
    """The ``n_plus_one`` object of a scenario.

    Args:
        v: the :class:`solvers.plan.failover.FailoverCheck` of the plan.
        extra: spare hosts added.
        extra_cost: their price (``None`` without prices).
        extra_bound: proven bound on what an N+1 plan needs beyond the plain plan, or ``None``.
        spares: the spare hosts' names.
    """
    return {"holds": v.holds, "extra_hosts": extra, "extra_cost": extra_cost,
            "extra_bound": extra_bound, "spares": list(spares), "checked_hosts": v.checked,
            "first_failure": None if v.first_failure is None else v.first_failure.to_dict()}


__all__ = ["ALL_MOVES", "N1_CHECK_SECONDS", "current_scenario", "n1_dict", "needs_current", "objective_of",
           "with_n_plus_one"]
