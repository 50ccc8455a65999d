"""Time-aware balanced assignment: a fixed set of hosts whose load curves follow the total demand.

On the full Tianchi view (98 CPU and memory time points per container) the volume bound asks every
host to be full at the one busiest time point of the *total* demand. Filling hosts one at a time
(:mod:`solvers.search.spread`) makes each host full at *its own* busiest point, which falls at many
different time points. :func:`balance` does the opposite: it opens ``n_hosts`` hosts at once and
places the containers, largest first, each on the open host where it raises the weighted sum of
squared relative loads least, i.e. on the host whose load is least correlated with the
container's demand (its peaks elsewhere). Minimising the sum of squares with the total fixed drives
every host towards the same load vector, the total demand divided by the number of hosts, so each
host's curve takes the shape of the total curve: containers that peak at night pair with those that
peak in the day. Resources of one curve (``cpu_t00 .. cpu_t97``) share one weight (each gets the
curve's weight over its length) and every resource is weighted by how full the open hosts would be
on it (total demand over their total capacity), so the binding resources steer.

The order matters as much as the score: first the apps that ``k = 0`` rules keep off many hosts
(:func:`excluded_mass`; placed late they find every host taken by an app that excludes them),
then the apps whose per-host cap makes them need many hosts (most hosts first), then the
containers that take at least ``BIG`` of a host in some resource, then the apps any rule ties to
others, then the rest, each group largest first. Containers that no open host takes at the end
are settled on the open hosts by the tabu search (:func:`settle`: inserted where they overload the
hosts least, then moves until no host is overloaded; a packing on exactly the open hosts), or, when
that fails, placed by first fit, on the open hosts and then on the others in first fit's order
(:func:`first_fit_rest`); the search then frees hosts (:func:`solvers.search.tabu.tabu_pack` on the type
of host used, see :func:`improve`). Feasibility is :func:`packing.feasibility.kernels.feasible` (capacities,
anti-affinity caps, ``<A, B, k>`` rules) on the peak surrogate of :func:`solvers.search.spread.surrogate`
(a placement within the surrogate is within every time point; the tabu search works on every time
point) and the result passes :func:`packing.feasibility.checker.check`.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numba
import numpy as np

from packing.feasibility.checker import check
from packing.feasibility.kernels import feasible, place
from packing.feasibility.predicates import ClusterState
from packing.model.instance import UNPLACED, Instance, Placement
from solvers.search.spread import assign, rule_degree, work_arrays

if TYPE_CHECKING:
    from solvers.base import Stop
    from solvers.result import Objective

_TIME_POINT = re.compile(r"^(.*)_t\d+$")

BLOCKS = 49
"""Runs of time points per curve in the surrogate the assignment runs on (2 points each on Tianchi)."""

URGENT = 0.01
"""An app whose cap makes it need at least this share of the open hosts is placed first."""

BIG = 0.1
"""Containers with at least this share of a host in some resource go first, largest first."""

WALLED = 0.25
"""An app whose excluding apps could cover this share of the open hosts is placed first of all."""

SLACK = (0.04, 0.05, 0.03)
"""Hosts :func:`balance_search` opens, as a share above the bound, tried in order."""

SETTLE_SECONDS = 240.0
"""Seconds :func:`balance_search` gives the tabu search to settle the leftovers on the open hosts."""


def timed(instance: Instance) -> bool:
    """Whether the instance has time-indexed resources (names ``<base>_t<digits>``)."""
    return any(_TIME_POINT.match(r) for r in instance.resources)


def group_weights(instance: Instance, demand: np.ndarray, capacity: np.ndarray,
                  counts: np.ndarray, blocks: int) -> np.ndarray:
    """Weight of each surrogate resource in the score, shape ``(m,)`` (``m`` surrogate resources).

    Resource ``r`` weighs its fullness ``need[r] / have[r]`` (total demand over the open hosts'
    total capacity ``capacity`` ``(n_open, m)``) squared, divided by the number of resources its
    curve has in the surrogate (1 for a resource without time points), so a curve counts as much
    as a single resource.
    """
    size: dict[str, int] = {}  # resources per group, in the order of first appearance
    for r in instance.resources:
        m = _TIME_POINT.match(r)
        key = f"{m.group(1)}_t*" if m else r
        size[key] = size.get(key, 0) + 1
    sizes = [min(blocks, n) if k.endswith("_t*") else 1 for k, n in size.items()]
    per = np.concatenate([np.full(s, 1.0 / s) for s in sizes])
    need = (demand * counts[:, None]).sum(axis=0)
    have = capacity.sum(axis=0)
    full = np.where(have > 0, need / np.where(have > 0, have, 1.0), 0.0)
    w = per * full ** 2
    return w / max(float(w.sum()), 1e-300)


def excluded_mass(instance: Instance, n_hosts: int) -> np.ndarray:
    """Hosts the apps that exclude each app could cover, shape ``(n_apps,)``.

    For app ``a``: the sum over the apps ``b`` in a ``k = 0`` rule with ``a`` (either side) of
    ``b``'s count, at most ``n_hosts`` each.
    """
    ra, rb, rk = instance.rule_arrays
    zero = (rk == 0) & (ra != rb)
    cnt = np.minimum(instance.counts, n_hosts).astype(np.float64)
    mass = np.zeros(instance.n_apps)
    np.add.at(mass, rb[zero], cnt[ra[zero]])
    np.add.at(mass, ra[zero], cnt[rb[zero]])
    return mass


@numba.njit(cache=True)
def _balance(seq, hosts, demand, capacity, used, count, n_on, col, cap, in_ptr, in_cols, in_k,
             out_ptr, out_cols, out_k, coef, out):  # pragma: no cover - compiled
    """Place ``seq`` ``(n,)`` (app per container, in order) on the hosts ``hosts`` ``(m,)``.

    Each container goes on the feasible host with the least ``sum_r coef[h, r] * used[h, r] *
    demand[a, r]`` (``coef`` ``(n_hosts, R)`` = weight over capacity squared: the growth of the
    weighted sum of squared relative loads, up to a term the same on every host); ties go to the
    first host of ``hosts``. ``out`` ``(n,)`` receives the host or -1. Mutates ``used``,
    ``count`` and ``n_on``.
    """
    n_r = demand.shape[1]
    for t in range(seq.shape[0]):
        a = seq[t]
        best = -1
        best_s = np.inf
        for j in range(hosts.shape[0]):
            h = hosts[j]
            s = 0.0
            for r in range(n_r):
                s += coef[h, r] * used[h, r] * demand[a, r]
            if s >= best_s:
                continue
            if feasible(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k,
                        out_ptr, out_cols, out_k):
                best = h
                best_s = s
        out[t] = best
        if best < 0:
            continue
        place(best, a, demand, used, count, col, n_on)


def open_hosts(instance: Instance, n_hosts: int, kind: Objective = "hosts") -> np.ndarray:
    """The first ``n_hosts`` hosts in first fit's order (largest type first), shape ``(k,)``."""
    from solvers.search.greedy import host_order

    return np.ascontiguousarray(host_order(instance, kind)[:n_hosts], dtype=np.int64)


def balance(instance: Instance, n_hosts: int, *, blocks: int = BLOCKS, kind: Objective = "hosts",
            finish: bool = True) -> np.ndarray:
    """Place every container on ``n_hosts`` open hosts, balancing their load curves.

    Args:
        instance: the instance (no GPU cards, no host-type restriction:
            :func:`solvers.search.spread.applicable`).
        n_hosts: hosts opened at once (the first in first fit's host order).
        blocks: runs of time points per curve in the surrogate (see :func:`solvers.search.spread.surrogate`).
        kind: the objective (decides the order of host types).
        finish: place the containers no open host takes by first fit (the open hosts, then the
            others in first fit's order).

    Returns:
        Host per container, shape ``(n_containers,)``; ``-1`` for a container no host takes.
    """
    inst = instance
    demand, capacity = work_arrays(inst, True, blocks)
    hosts = open_hosts(inst, n_hosts, kind)
    w = group_weights(inst, demand, capacity[hosts], inst.counts, blocks)
    inv = np.where(capacity > 0, 1.0 / np.where(capacity > 0, capacity, 1.0), 0.0)
    coef = np.ascontiguousarray(w[None, :] * inv * inv)
    top = capacity[hosts].mean(axis=0) if len(hosts) else capacity.max(axis=0)
    size = (demand / np.where(top > 0, top, 1.0)) @ w
    # the order of the module docstring: walled, urgent, big, tied, the rest; largest first
    mass = excluded_mass(inst, len(hosts))
    walled = np.where(mass >= WALLED * max(1, len(hosts)), mass, 0.0)
    need = inst.counts / np.maximum(inst.cap, 1)
    urgent = np.where(need >= URGENT * max(1, len(hosts)), need, 0.0)
    big = (demand / np.where(top > 0, top, 1.0)).max(axis=1) >= BIG
    tied = rule_degree(inst) > 0
    order = np.lexsort((-size, ~tied, -np.where(big, size, 0.0), -urgent, -walled))
    seq = np.ascontiguousarray(np.repeat(order, inst.counts[order]).astype(np.int64))
    st = ClusterState(inst)
    used = np.zeros_like(capacity)
    cap = inst.cap.astype(np.int64)
    out = np.full(len(seq), -1, dtype=np.int64)
    _balance(seq, hosts, demand, capacity, used, st.count, st.n_on, st.col,  # type: ignore[call-arg]
             cap, *st.rule_tables, coef, out)
    if finish and (out < 0).any():  # the rest by first fit: open hosts, then the others
        from solvers.search.greedy import host_order

        is_open = np.zeros(inst.n_hosts, dtype=bool)
        is_open[hosts] = True
        rest = host_order(inst, kind)
        order_h = np.ascontiguousarray(np.concatenate([hosts, rest[~is_open[rest]]]),
                                       dtype=np.int64)
        _first_fit(seq, order_h, demand, capacity, used, st.count,  # type: ignore[call-arg]
                   st.n_on, st.col, cap, *st.rule_tables, out)
    return assign(inst, out[out >= 0], seq[out >= 0])


@numba.njit(cache=True)
def _first_fit(seq, order, demand, capacity, used, count, n_on, col, cap, in_ptr, in_cols, in_k,
               out_ptr, out_cols, out_k, out):  # pragma: no cover - compiled
    """Each container of ``seq`` ``(n,)`` with ``out == -1`` on the first feasible host of ``order``.

    ``order`` ``(m,)`` lists host indexes; ``out`` ``(n,)`` receives the host (or stays -1).
    Mutates ``used``, ``count`` and ``n_on``.
    """
    for t in range(seq.shape[0]):
        if out[t] >= 0:
            continue
        a = seq[t]
        for j in range(order.shape[0]):
            h = order[j]
            if feasible(h, a, demand, capacity, used, count, col, cap, in_ptr, in_cols, in_k,
                        out_ptr, out_cols, out_k):
                out[t] = h
                place(h, a, demand, used, count, col, n_on)
                break


def first_fit_rest(instance: Instance, host_of: np.ndarray, hosts: np.ndarray, *,
                   blocks: int = BLOCKS, kind: Objective = "hosts") -> np.ndarray:
    """Place what ``host_of`` leaves unplaced by first fit: on ``hosts``, then the other hosts.

    The other hosts come in first fit's order; the containers go largest first (weighted by
    the open hosts' fullness, as in :func:`balance`), on the peak surrogate of ``blocks`` runs.

    Args:
        instance: the instance.
        host_of: host per container, ``UNPLACED`` where none, shape ``(n_containers,)``.
        hosts: the open hosts, tried first, shape ``(k,)``.
        blocks: runs of time points per curve in the surrogate.
        kind: the objective (decides the order of the other hosts).

    Returns:
        Host per container, shape ``(n_containers,)``; ``UNPLACED`` for a container no host takes.
    """
    from solvers.search.greedy import host_order

    inst = instance
    demand, capacity = work_arrays(inst, True, blocks)
    app = inst.container_app.astype(np.int64)
    placed = host_of != UNPLACED
    used = np.zeros_like(capacity)
    np.add.at(used, host_of[placed], demand[app[placed]])
    st = ClusterState(inst)
    tracked = placed & (st.col[app] >= 0)
    np.add.at(st.count, (host_of[tracked], st.col[app[tracked]]), 1)
    st.n_on[:] = np.bincount(host_of[placed], minlength=inst.n_hosts)
    rest = np.flatnonzero(~placed)
    hosts = np.asarray(hosts, dtype=np.int64)
    w = group_weights(inst, demand, capacity[hosts], inst.counts, blocks)
    top = capacity[hosts].mean(axis=0) if len(hosts) else capacity.max(axis=0)
    size = (demand[app[rest]] / np.where(top > 0, top, 1.0)) @ w
    rest = rest[np.argsort(-size, kind="stable")]
    seq = np.ascontiguousarray(app[rest])
    is_open = np.zeros(inst.n_hosts, dtype=bool)
    is_open[hosts] = True
    others = host_order(inst, kind)
    order_h = np.ascontiguousarray(np.concatenate([hosts, others[~is_open[others]]]),
                                   dtype=np.int64)
    out = np.full(len(seq), -1, dtype=np.int64)
    _first_fit(seq, order_h, demand, capacity, used, st.count,  # type: ignore[call-arg]
               st.n_on, st.col, inst.cap.astype(np.int64), *st.rule_tables, out)
    full = host_of.copy()
    full[rest] = np.where(out >= 0, out, UNPLACED)
    return full


def one_type(instance: Instance, host_of: np.ndarray,
             hosts: np.ndarray | None = None) -> tuple[Instance, int] | None:
    """The instance restricted to the one host type ``host_of`` uses, and that type's first host.

    ``None`` when ``host_of`` uses hosts of several types or leaves a container unplaced (with
    ``hosts`` ``(k,)``, open hosts: unplaced containers are allowed and these hosts count as
    used). The restricted instance has that type's hosts only (host ``h`` of it is host
    ``first + h`` of ``instance``) and no initial placement.
    """
    placed = host_of != UNPLACED
    if hosts is None and (host_of.size == 0 or not bool(placed.all())):
        return None
    used = np.unique(host_of[placed])
    if hosts is not None:
        used = np.union1d(used, hosts)
    if used.size == 0:
        return None
    types = np.unique(instance.host_type_of[used])
    if len(types) != 1:
        return None
    t = int(types[0])
    if len(instance.host_types) == 1:
        return instance, 0
    first = int(np.concatenate([[0], np.cumsum(instance.type_count)])[t])
    return instance.replace(host_types=(instance.host_types[t],), initial=None), first


def improve(instance: Instance, host_of: np.ndarray, *, target: int, time_limit: float,
            seed: int = 0, on_improve: Callable[[int], None] | None = None,
            stop: Stop | None = None, patience: int | None = None) -> np.ndarray | None:
    """Free hosts of ``host_of`` with the tabu search on the one host type it uses.

    When a run stops short of the time limit (no lower excess for a while) after freeing hosts, a
    new run starts from its packing with the next seed, until one frees none or the time is up.

    ``patience``: iterations without a lower excess after which a run gives up (``None``: the
    tabu search's default).

    Returns:
        Host per container on fewer hosts (checked), shape ``(n_containers,)``, or ``None`` when
        none was found or ``host_of`` uses several host types.
    """
    from solvers.search.tabu import PATIENCE, applicable, tabu_pack

    t0 = time.perf_counter()
    sub = one_type(instance, host_of)
    if sub is None or not applicable(sub[0]):
        return None
    inst1, first = sub
    best: np.ndarray | None = None
    start = host_of - first
    k = 0
    while True:
        left = time_limit - (time.perf_counter() - t0)
        if left <= 0 or (stop is not None and stop.is_set()):
            break
        found = tabu_pack(inst1, start, target=target, time_limit=left, seed=seed + k,
                          on_improve=on_improve, stop=stop,
                          patience=PATIENCE if patience is None else patience)
        if found is None:
            break
        best = start = found
        k += 1
    return None if best is None else _lifted(instance, best, first)


def _lifted(instance: Instance, sub_host_of: np.ndarray, first: int) -> np.ndarray | None:
    """A packing of :func:`one_type`'s sub-instance on ``instance``'s hosts, checked, shape ``(n,)``."""
    out = sub_host_of + first
    if check(instance, Placement.from_arrays(instance, out, None), require_all=True):
        return None  # pragma: no cover - the tabu search checks its own result
    return out


def settle(instance: Instance, host_of: np.ndarray, hosts: np.ndarray, *, target: int,
           time_limit: float, settle_limit: float | None = None, seed: int = 0,
           on_improve: Callable[[int], None] | None = None, stop: Stop | None = None,
           patience: int | None = None) -> np.ndarray | None:
    """Place what ``host_of`` leaves unplaced on the open ``hosts`` (fixed number), then free hosts.

    The tabu search (:func:`solvers.search.tabu.tabu_pack` with ``hosts``) puts the unplaced containers
    where they overload the open hosts least (an ejection when caps or rules keep one off every
    host) and moves containers until no host is overloaded: a packing on ``len(hosts)`` hosts.
    It has ``settle_limit`` seconds for that; then it frees hosts for the rest of ``time_limit``.
    ``host_of`` and ``hosts`` must use one host type.

    Args:
        instance: the instance.
        host_of: host per container, ``UNPLACED`` for the containers to place, shape
            ``(n_containers,)``.
        hosts: the open hosts, shape ``(k,)``.
        target: stop at this many hosts (a lower bound).
        time_limit: seconds in all.
        settle_limit: seconds to reach a packing on the open hosts (``None``: ``time_limit``).
        seed: seed of the search.
        on_improve: called with the number of hosts after every improvement.
        stop: a stop request.
        patience: iterations without a lower excess after which a stage gives up.

    Returns:
        Host per container on at most ``len(hosts)`` hosts (checked), shape
        ``(n_containers,)``, or ``None`` when the open hosts were not settled in time.
    """
    from solvers.search.tabu import PATIENCE, applicable, tabu_pack

    hosts = np.asarray(hosts, dtype=np.int64)
    sub = one_type(instance, host_of, hosts)
    if sub is None or not applicable(sub[0]):
        return None
    inst1, first = sub
    start = np.where(host_of == UNPLACED, UNPLACED, host_of - first)
    found = tabu_pack(inst1, start, target=target, time_limit=time_limit, seed=seed,
                      on_improve=on_improve, stop=stop, hosts=hosts - first,
                      settle_limit=settle_limit,
                      patience=PATIENCE if patience is None else patience)
    return None if found is None else _lifted(instance, found, first)


def balance_search(instance: Instance, bound: float, *, deadline: float, kind: Objective = "hosts",
                   slack: tuple[float, ...] = SLACK, blocks: int = BLOCKS,
                   stop: Stop | None = None,
                   on_found: Callable[[np.ndarray, int], None] | None = None,
                   settle_limit: float | None = None, seed: int = 0) -> np.ndarray | None:
    """Balanced assignments on ``ceil(bound * (1 + s))`` hosts for ``s`` in ``slack``; the best.

    What the open hosts do not take is settled on them (:func:`settle`: the tabu search at a
    fixed number of hosts, at most ``settle_limit`` seconds, ``None``: ``SETTLE_SECONDS``, and not
    past ``deadline``); a packing on the open hosts ends the search (the tabu search frees hosts
    from it faster than another balancing would). When settling fails the rest goes by first fit
    (:func:`first_fit_rest`) and the next size is tried, only while the longest run so far
    suggests it ends before ``deadline`` (a ``time.perf_counter()`` value), and only if it opens
    fewer hosts than the best packing so far uses (the balancing uses every host it opens).

    Returns:
        Host per container on the fewest hosts (every container placed), or ``None``.
    """
    best: np.ndarray | None = None
    n_best = 0
    took = 0.0
    for s in slack:
        if stop is not None and stop.is_set():
            break
        if best is not None and time.perf_counter() + 1.2 * took > deadline:
            break
        n_open = min(instance.n_hosts, max(1, math.ceil(bound * (1.0 + s))))
        if best is not None and n_open >= n_best:
            continue
        t0 = time.perf_counter()
        h = balance(instance, n_open, blocks=blocks, kind=kind, finish=False)
        settled = not (h == UNPLACED).any()
        if not settled:
            hosts = open_hosts(instance, n_open, kind)
            left = min(SETTLE_SECONDS if settle_limit is None else settle_limit,
                       deadline - time.perf_counter())
            fixed = None if left <= 0 else settle(
                instance, h, hosts, target=n_open, time_limit=left, seed=seed, stop=stop)
            settled = fixed is not None
            h = fixed if fixed is not None else first_fit_rest(instance, h, hosts, blocks=blocks,
                                                               kind=kind)
        took = max(took, time.perf_counter() - t0)
        if (h == UNPLACED).any():
            continue
        n = len(np.unique(h))
        if best is None or n < n_best:
            best, n_best = h, n
            if on_found is not None:
                on_found(h, n)
        if settled:
            break
    return best


__all__ = ["BLOCKS", "SETTLE_SECONDS", "SLACK", "balance", "balance_search", "first_fit_rest",
           "group_weights", "improve", "one_type", "open_hosts", "settle", "timed"]
