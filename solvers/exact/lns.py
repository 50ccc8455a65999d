"""Large-neighbourhood search: repack a few hosts of a solution with CP-SAT to free one.

Every constraint of the model is local to a host (capacities, GPU cards, caps, rules), so the
containers on any set of hosts can be repacked onto those same hosts independently of the rest.
Each step takes a neighbourhood of used hosts (the emptiest host and others drawn from the
emptier hosts, where the slack is), builds the sub-instance of their containers on hosts of the same
types (:meth:`Instance.replace`), solves it with :func:`solvers.exact.cpsat.solve_cpsat` (hinted with
the current packing) and keeps the result when it uses fewer hosts (or costs less). The size of
the neighbourhood grows when steps fail and shrinks when sub-solves run out of time.

Topology rules (``App.domain_caps``, ``App.spreads``) are not local to a host: sub-instances are
solved without them and a repacking is kept only when the whole packing still keeps them.

Used by :func:`solvers.exact.auto.solve_auto` as its last stage on instances too large for one CP-SAT
model, with the column-generation solution as the start.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.model.instance import UNPLACED, Instance, Placement
from solvers.base import EPS, Clock, SolveOptions, Stop, objective_value
from solvers.result import Objective

NEIGHBOURHOOD = 16
"""Hosts in the first neighbourhood."""

NEIGHBOURHOOD_MAX = 80
"""Most hosts in a neighbourhood."""

STEP_SECONDS = 2.0
"""Most seconds of one sub-solve."""

POOL_FACTOR = 2.0
"""Neighbourhoods of ``k`` hosts are drawn from the ``POOL_FACTOR * k`` emptiest hosts."""


def _fill(instance: Instance, host_of: np.ndarray) -> np.ndarray:
    """Largest relative load of every host, shape ``(n_hosts,)`` (0 for empty hosts)."""
    inst = instance
    load = np.zeros((inst.n_hosts, inst.n_resources))
    placed = host_of != UNPLACED
    np.add.at(load, host_of[placed], inst.demand[inst.container_app[placed]])
    cap = inst.host_capacity
    rel = np.where(cap > 0, load / np.where(cap > 0, cap, 1.0), 0.0)
    fill = rel.mean(axis=1) if inst.n_resources else np.zeros(inst.n_hosts)
    # count containers too, so hosts with only GPU or zero-demand apps rank as well
    n_on = np.bincount(host_of[placed], minlength=inst.n_hosts)
    return fill + 1e-6 * n_on


def sub_instance(inst: Instance, hosts: np.ndarray, host_of: np.ndarray, compact: bool = False
                  ) -> tuple[Instance, np.ndarray, np.ndarray]:
    """The containers on ``hosts`` as an instance of their own.

    Args:
        inst: the instance.
        hosts: the chosen hosts, shape ``(k,)``.
        host_of: host per container, shape ``(n_containers,)``.
        compact: keep only the apps with a container on ``hosts`` and the rules and exclusions
            between two kept apps (a rule naming an app absent from these hosts cannot bind on
            them); for instances with thousands of apps, of which a neighbourhood holds few.

    Returns:
        ``(sub, hosts_sorted, containers)``: the sub-instance (every app kept, or only the present
        ones when ``compact``, with the count it has on ``hosts``; one host type per original type
        with as many hosts as chosen), the chosen hosts in the sub-instance's host order, shape
        ``(k,)``, and the original containers in the sub-instance's container order, shape
        ``(n_sub,)``.
    """
    hosts = np.sort(hosts)  # global order is type order, so sub host j <-> hosts[j]
    on = np.isin(host_of, hosts)
    containers = np.flatnonzero(on)  # app by app, as the sub-instance enumerates them
    counts = np.bincount(inst.container_app[containers], minlength=inst.n_apps)
    per_type = np.bincount(inst.host_type_of[hosts], minlength=len(inst.host_types))
    types = tuple(dataclasses.replace(t, count=int(n), host_names=None)
                  for t, n in zip(inst.host_types, per_type.tolist(), strict=True))
    if inst.has_topology:  # relaxed here; the merged placement is checked on the instance
        apps = tuple(dataclasses.replace(a, count=int(n), domain_caps=(), spreads=())
                     for a, n in zip(inst.apps, counts.tolist(), strict=True))
    else:
        apps = tuple(dataclasses.replace(a, count=int(n))
                     for a, n in zip(inst.apps, counts.tolist(), strict=True))
    if not compact:
        sub = inst.replace(apps=apps, host_types=types, initial=None, requests=())
        return sub, hosts, containers
    keep = counts > 0  # containers stay in app order: the kept apps keep their relative order
    names = {a.name for a, k in zip(inst.apps, keep.tolist(), strict=True) if k}
    sub = inst.replace(apps=tuple(a for a, k in zip(apps, keep.tolist(), strict=True) if k),
                       host_types=types, initial=None, requests=(),
                       rules=tuple(r for r in inst.rules if r.a in names and r.b in names),
                       exclusions=tuple(e for e in inst.exclusions
                                        if e[0] in names and e[1] in names))
    return sub, hosts, containers


def improve(
    instance: Instance,
    placement: Placement,
    *,
    kind: Objective,
    time_limit: float | None = None,
    lower_bound: float = 0.0,
    seed: int = 0,
    workers: int = 2,
    on_improve: Callable[[float], None] | None = None,
    stop: Stop | None = None,
    options: SolveOptions | None = None,
) -> Placement:
    """Improve a complete placement by repacking neighbourhoods of hosts (module docstring).

    Args:
        instance: the instance.
        placement: a complete, feasible placement to start from.
        kind: ``"hosts"`` or ``"cost"`` (``"deployed"`` returns ``placement`` unchanged).
        time_limit: seconds.
        lower_bound: a proven bound; the search stops when it is reached.
        seed: seed of the neighbourhood choice and of CP-SAT.
        workers: CP-SAT workers.
        on_improve: called as ``on_improve(objective)`` after every improvement.
        stop: a stop request (:class:`solvers.base.StopFlag`): the current neighbourhood's
            CP-SAT is stopped and no further neighbourhood is tried.
        options: the common options (:class:`solvers.base.SolveOptions`); when given, its
            ``time_limit``, ``seed``, ``workers`` and ``stop`` replace the keywords of those
            names.

    Returns:
        The best placement found (``placement`` itself if none is better).

    Raises:
        TypeError: neither ``time_limit`` nor ``options`` is given.
    """
    from solvers.exact.cpsat import solve_cpsat

    if options is not None:
        time_limit, seed, workers, stop = (options.time_limit, options.seed, options.workers,
                                           options.stop)
    if time_limit is None:
        raise TypeError("improve needs time_limit or options")
    inst = instance
    if kind == "deployed" or inst.n_hosts == 0:
        return placement
    clock = Clock(time_limit, stop)
    rng = np.random.default_rng(seed)
    host_of = placement.host_array(inst)
    cards = [placement.cards_of(inst.apps[int(a)].name, int(j - inst.offsets[a]))
             for j, a in enumerate(inst.container_app)]
    value = objective_value(inst, host_of, kind)
    size = NEIGHBOURHOOD
    fails = 0
    while clock.left(0.0) > 0.3 and value > lower_bound + EPS * max(1.0, lower_bound):
        used = np.flatnonzero(np.bincount(host_of[host_of != UNPLACED], minlength=inst.n_hosts))
        if len(used) < 2:
            break
        k = min(size, len(used))
        fill = _fill(inst, host_of)[used]
        # the emptiest host, and k - 1 hosts drawn from the emptier ones (where the slack is)
        pool = used[np.argsort(fill, kind="stable")]
        wide = pool[1: max(2, min(len(pool), int(POOL_FACTOR * k)))]
        hosts = np.concatenate([pool[:1], rng.choice(wide, size=min(k - 1, len(wide)),
                                                      replace=False)]).astype(np.int64)
        sub, hosts, members = sub_instance(inst, hosts, host_of)
        pos = np.searchsorted(hosts, host_of[members])
        sub_cards = [cards[int(c)] for c in members] if inst.max_gpus else None
        start = Placement.from_arrays(sub, pos, sub_cards)
        before = objective_value(sub, pos, kind)
        step = min(STEP_SECONDS, clock.left(0.0) - 0.2)
        if step <= 0.1:
            break
        res = solve_cpsat(sub, SolveOptions(time_limit=step, workers=workers,
                                            seed=int(rng.integers(2**31 - 1)), objective=kind,
                                            hint=start, stop=stop),
                          below=before)
        if res.placement is None or res.objective is None or res.objective >= before - EPS:
            fails += 1
            proven = res.bound >= before - EPS  # nothing better on these hosts
            if proven or fails >= 3:  # this size cannot free a host: grow
                size = min(NEIGHBOURHOOD_MAX, int(size * 1.5) + 1)
                fails = 0
            elif res.seconds >= step - 0.05:  # too hard to solve in a step: shrink
                size = max(8, int(size * 0.8))
            continue
        if check(sub, res.placement, require_all=True):  # pragma: no cover - a bug in cpsat
            continue
        new_pos = res.placement.host_array(sub)
        old_host_of = host_of
        host_of = host_of.copy()
        host_of[members] = hosts[new_pos]
        if inst.has_topology and _topology_broken(inst, host_of):
            host_of = old_host_of  # domain caps and spread couple hosts: the move breaks them
            fails += 1
            continue
        if inst.max_gpus:
            for i, c in enumerate(members.tolist()):
                a = int(sub.container_app[i])
                cards[c] = res.placement.cards_of(sub.apps[a].name, int(i - sub.offsets[a]))
        value = objective_value(inst, host_of, kind)
        fails = 0
        if on_improve is not None:
            on_improve(value)
    return Placement.from_arrays(inst, host_of, cards if inst.max_gpus else None)


def _topology_broken(inst: Instance, host_of: np.ndarray) -> bool:
    """Whether a complete packing breaks a domain cap or spread (:mod:`packing.model.topology`)."""
    return bool(ClusterState.from_placement(inst, host_of).topology_broken())


__all__ = ["NEIGHBOURHOOD", "NEIGHBOURHOOD_MAX", "POOL_FACTOR", "STEP_SECONDS", "improve", "sub_instance"]
