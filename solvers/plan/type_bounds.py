"""How many hosts of each type a plan may need: a safe, tight upper bound per host type.

For each host type ``t`` let ``F_t`` be the containers that fit *alone* on an empty type-``t`` host
(capacity, GPU cards, a positive per-host cap). The bound for ``t`` is the number of type-``t``
hosts that first-fit decreasing (:func:`solvers.search.greedy.ffd`, every rule honoured; on large
inputs one size measure only, see :data:`QUICK_WORK`) uses to place all of ``F_t`` on type-``t``
hosts alone. Any complete packing gives a valid bound; first fit keeps it tight.

Why it is safe (no optimal plan is cut off). Every constraint of the model acts per host (capacity,
cards, caps ``max_per_host``, rules ``<A, B, k>``, exclusions) and is *hereditary*: removing
containers from a feasible host keeps it feasible. Take any optimal plan ``P`` and let ``S_t`` be
the containers it puts on type-``t`` hosts, on ``n_t`` hosts. Those hosts are a feasible packing of
``S_t`` on type-``t`` hosts, so ``opt_t(S_t) <= n_t``; replacing that part of ``P`` by an optimal
packing of ``S_t`` on type-``t`` hosts keeps every other host as it is and changes the objective
by ``c_t * (opt_t(S_t) - n_t) <= 0`` (``c_t`` is the type's cost, 1 when counting hosts), so the
result is optimal too. Every container of ``S_t`` fits alone on ``t`` (heredity), so
``S_t ⊆ F_t``, and an optimal packing of a subset needs no more hosts than one of the whole set
(drop the other containers: heredity again): ``opt_t(S_t) <= opt_t(F_t) <= ffd_t(F_t)``. Hence an
optimal plan exists with at most ``ffd_t(F_t)`` hosts of every type ``t`` at once, and capping each
type's count there loses no optimum. A count given by the user is a hard limit, and the same
argument holds below it, so ``min(given, bound)`` is safe too.

A second cap comes from the objective: when one type ``u`` takes every container (all fit on it)
and first fit's ``b_u`` hosts of it are available (within a given count), they are a complete plan
of cost ``U = c_u * b_u``; an optimal plan costs
at most ``U``, so it has at most ``floor(U / c_t)`` hosts of a type with ``c_t > 0``. Both caps hold
for the repacked optimal plan above at once (it is optimal), so :func:`count_bounds` returns the
smaller of the two per type.

Topology rules (:mod:`packing.model.topology`). A domain cap or spread over a label key that host
types carry (a zone) counts containers per domain, and all hosts of a type are in one domain:
repacking ``S_t`` within type ``t`` keeps every app's count per type, hence per domain, so the
argument above holds with those rules left out of the first fit. A domain cap on
``kubernetes.io/hostname`` is a per-host cap and is folded into ``max_per_host``. A spread over
``kubernetes.io/hostname`` depends on which hosts are used, so repacking may break it: a type
with such an app in ``F_t`` gets the trivial bound ``|F_t|`` (an optimal plan uses no empty host).
The one-type plan of the second cap need not keep zone caps and spreads, so that cap is skipped
when an app has one.

First fit with more hosts than it needs gives the same result as with exactly those (it takes the
lowest feasible host, and hosts of one type are identical), so the bound is found by first fit on a
guess of hosts, doubled until every container of ``F_t`` is placed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from packing.feasibility.predicates import ClusterState
from packing.model.instance import App, Instance
from packing.model.topology import HOSTNAME
from solvers.search.greedy import ffd, first_fit

QUICK_WORK = 1_000_000
"""From this many containers x hosts on, the bound takes first fit with one size measure (the
largest normalised resource) instead of the best of all (:func:`solvers.search.greedy.ffd`)."""


def fits_alone(instance: Instance) -> np.ndarray:
    """Whether one container of each app fits on an empty host of each type, shape ``(n_apps, n_types)``."""
    inst = instance
    out = np.zeros((inst.n_apps, len(inst.host_types)), dtype=bool)
    one = inst.replace(host_types=tuple(dataclasses.replace(t, count=1, host_names=None)
                                        for t in inst.host_types), initial=None, requests=())
    st = ClusterState(one)
    for a in range(inst.n_apps):
        out[a] = st.mask(a)
    return out


def type_bound(instance: Instance, t: int, fit: np.ndarray | None = None) -> int:
    """First-fit-decreasing hosts of type ``t`` for every container that fits alone on ``t``.

    Args:
        instance: the instance (its counts are ignored).
        t: the host type.
        fit: :func:`fits_alone` of the instance, if already computed.
    """
    fit = fits_alone(instance) if fit is None else fit
    counts = np.where(fit[:, t], instance.counts, 0)
    n = int(counts.sum())
    if n == 0:
        return 0
    ht = instance.host_types[t]
    if any(c and any(k == HOSTNAME for k, _ in a.spreads)
           for a, c in zip(instance.apps, counts.tolist(), strict=True)):
        return n  # hostname spread: repacking may break it (module docstring)
    apps = tuple(a.__class__(a.name, a.demand, int(c), _host_cap(a), a.gpu_cards, a.gpu_per_card,
                             a.gpu_whole, a.gpu_models)
                 for a, c in zip(instance.apps, counts.tolist(), strict=True))
    cap = np.asarray(ht.capacity, dtype=np.float64)
    vol = instance.demand.T @ counts
    share = np.divide(vol, cap, out=np.zeros_like(vol), where=cap > 0)
    guess = max(1, min(n, math.ceil(1.25 * float(share.max(initial=0.0))) + 1))
    while True:
        one = instance.replace(
            host_types=(ht.__class__(ht.name, ht.capacity, guess, 1.0, None, ht.gpus,
                                     ht.gpu_capacity, ht.gpu_model, None),),
            apps=apps, initial=None, requests=())
        g = first_fit(one, "hosts", "max") if n * guess >= QUICK_WORK else ffd(one, "hosts")
        if g.complete or guess >= n:
            if not g.complete:  # cannot happen: one container per host always fits
                raise AssertionError("first fit left a container that fits alone unplaced")
            return int(g.objective)
        guess = min(n, 2 * guess)


def _host_cap(app: App) -> int | None:
    """``max_per_host`` with the app's hostname domain caps folded in."""
    caps = [k for key, k in app.domain_caps if key == HOSTNAME]
    if app.max_per_host is not None:
        caps.append(app.max_per_host)
    return min(caps) if caps else None


def count_bounds(instance: Instance, limits: Sequence[int | None] | None = None) -> np.ndarray:
    """The safe upper bound on hosts of every type (see the module docstring), shape ``(n_types,)``.

    Args:
        instance: the instance; its own counts are not used.
        limits: hosts available per type (``None``: as many as needed), shape ``(n_types,)``;
            ``None`` for no limits. The result is at most the limit.
    """
    fit = fits_alone(instance)
    bounds = np.array([type_bound(instance, t, fit) for t in range(len(instance.host_types))],
                      dtype=np.int64)
    return cost_cap(instance, bounds, fit, limits)


def cost_cap(instance: Instance, bounds: np.ndarray, fit: np.ndarray | None = None,
             limits: Sequence[int | None] | None = None) -> np.ndarray:
    """Tighten per-type bounds by the cost of a one-type plan (see the module docstring).

    Args:
        instance: the instance; its host costs are the objective's weights (1 counts hosts).
        bounds: first fit's hosts per type, shape ``(n_types,)``.
        fit: :func:`fits_alone` of the instance, if already computed.
        limits: hosts available per type (``None``: unlimited), shape ``(n_types,)``; a one-type
            plan counts only within its type's limit, and every bound is cut to its limit.

    Returns:
        The tightened bounds, shape ``(n_types,)``.
    """
    fit = fits_alone(instance) if fit is None else fit
    lim = list(limits) if limits is not None else [None] * len(bounds)
    needed = instance.counts > 0
    cost = instance.type_cost
    whole = [t for t in range(len(instance.host_types))
             if fit[needed, t].all() and (lim[t] is None or int(bounds[t]) <= int(lim[t] or 0))]
    bounds = np.array([b if m is None else min(int(b), m) for b, m in zip(bounds.tolist(), lim,
                                                                           strict=True)],
                      dtype=np.int64)
    if not whole or any(a.spreads or any(k != HOSTNAME for k, _ in a.domain_caps)
                        for a in instance.apps):
        return bounds
    upper = min(float(cost[t]) * int(bounds[t]) for t in whole)
    out = bounds.copy()
    for t in range(len(out)):
        if cost[t] > 0:
            out[t] = min(int(out[t]), math.floor(upper / float(cost[t]) * (1 + 1e-12)))
    return out


def bounded_pool(instance: Instance) -> Instance:
    """``instance`` with its uncounted host types capped at :func:`count_bounds`.

    A type is uncounted (as many hosts as needed) when ``meta["uncounted"]`` names it
    (:mod:`packing.loaders.front`); the cap cuts off no optimum. Other instances are returned as
    they are.
    """
    meta = instance.meta if isinstance(instance.meta, dict) else {}
    open_types = set(meta.get("uncounted") or ())
    if not open_types or not instance.apps:
        return instance
    limits = [None if t.name in open_types else t.count for t in instance.host_types]
    counts = count_bounds(instance, limits).tolist()
    return instance.replace(host_types=tuple(
        dataclasses.replace(t, count=int(c)) for t, c in zip(instance.host_types, counts, strict=True)))


__all__ = ["QUICK_WORK", "bounded_pool", "cost_cap", "count_bounds", "fits_alone", "type_bound"]
