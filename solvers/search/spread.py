"""Construction for large instances: shaped host-by-host filling.

Tianchi-sized instances (tens of thousands of containers, thousands of hosts, tens of thousands of
``<A, B, k>`` rules) are too large for the exact models and for the dense tables of the tabu
search. This module builds a good packing quickly; :mod:`solvers.search.repack` then frees hosts.

:func:`fill` (used by ``auto``) is *bin-centric*: it opens one host at a time and adds, one
container at a time, the feasible container whose demand brings the host's load closest to a
*shaped* capacity: ``shape_scale * s[r] * capacity[r]``, where ``s[r]`` is resource ``r``'s total
demand over the fleet's total capacity relative to the most demanded resource
(:func:`demand_shape`). Every host is thus filled in the proportions of the whole demand, so no
resource is left over at the end (filling by plain size leaves a tail of hosts full in memory and
a third empty in CPU on Tianchi's uniform fleet). With ``shape_scale`` below 1 large containers
fill a host to about that share and then the smallest overshoot, i.e. small containers, tops it
up. The filling is sensitive to the scale, so ``auto`` tries several and keeps the best.
With *urgency* an app whose per-host cap (anti-affinity) makes it need a large share of the
hosts still to fill goes first on every host: on the contest machines of Tianchi 2018 the plain
filling leaves apps such as one of 117 containers at most one per host to the end, each then
alone on a small host (3,210 hosts after one filling); with urgency the big hosts reach 99.3%
CPU and one filling needs 2,970 hosts (bound 2,951). Rules
need no special treatment: a container whose rules forbid the host is never a candidate, and the
host-by-host order keeps the candidates of a host in a list that only shrinks (loads and counts
only grow while a host fills, so an app that does not fit never fits on that host again).

An item-centric alternative (containers in a fixed order, the constrained apps first, each on the
best-fitting host) gives about 5,830 hosts on Tianchi's uniform fleet with the cross rules, against
5,181 for one filling.

Every feasibility decision is :func:`packing.feasibility.kernels.feasible` (the compiled predicates of
:mod:`packing.feasibility.predicates`) on the arrays of a
:class:`packing.feasibility.predicates.ClusterState`.
On instances with time-indexed resources (the full Tianchi view: ``cpu_t00 .. cpu_t97``) it
runs on a *peak surrogate* (:func:`surrogate`) by default: each group of time points becomes one
resource with the largest demand and the smallest capacity of the group. A host within capacity on
the surrogate is within capacity at every time point, so the placement is feasible on the real
instance (the checker confirms it).
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

import numba
import numpy as np

from packing.feasibility.kernels import feasible, first_fit_kernel, place
from packing.feasibility.predicates import ClusterState
from packing.model.instance import UNPLACED, Instance
from solvers.result import Objective

if TYPE_CHECKING:
    from solvers.base import Stop

CHUNK_SECONDS = 0.2
"""About this long between two looks at the clock while filling."""

URGENCY = 1e6
"""The urgency bonus ``auto`` uses on fleets of several host types (see :func:`fill`)."""

URGENCY_THRESHOLD = 0.5
"""Default share of the hosts left from which an app's cap makes it urgent."""

_TIME_POINT = re.compile(r"^(.*)_t\d+$")


def applicable(instance: Instance) -> bool:
    """Whether the compiled construction and repacking cover the instance.

    No GPU cards and no host-type restriction (the compiled feasibility's scope), at least one
    resource, container and host.
    """
    inst = instance
    if inst.n_containers == 0 or inst.n_resources == 0 or inst.n_hosts == 0:
        return False
    if inst.max_gpus or bool(np.any(inst.gpu_cards > 0)):
        return False
    return inst.type_allowed is None and not inst.has_topology


def surrogate(instance: Instance, blocks: int = 1) -> tuple[np.ndarray, np.ndarray] | None:
    """The peak surrogate of time-indexed resources, or ``None`` when there are none.

    Resources named ``<base>_t<digits>`` with the same base form one group; each group is cut
    into ``blocks`` runs of consecutive time points (as equal as possible), and each run becomes
    one resource with demand ``max`` over the run and capacity ``min`` over the run (other
    resources are kept). A placement within the surrogate capacities is within the real ones;
    more blocks see more of the curves (containers whose peaks fall in different blocks share a
    host) at more cost per test.

    Returns:
        ``(demand, capacity)``: shapes ``(n_apps, m)`` and ``(n_hosts, m)`` with ``m`` the number
        of groups plus the other resources.
    """
    groups: dict[str, list[int]] = {}
    order: list[str] = []
    for r, name in enumerate(instance.resources):
        m = _TIME_POINT.match(name)
        key = f"{m.group(1)}_t*" if m else name
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(r)
    if len(order) == instance.n_resources:
        return None
    runs = [run for k in order for run in np.array_split(np.asarray(groups[k]), max(1, blocks))
            if len(run)]
    demand = np.stack([instance.demand[:, run].max(axis=1) for run in runs], axis=1)
    capacity = np.stack([instance.host_capacity[:, run].min(axis=1) for run in runs], axis=1)
    return np.ascontiguousarray(demand), np.ascontiguousarray(capacity)


def resource_weights(demand: np.ndarray, capacity: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """How much each resource binds: total demand over total capacity, shape ``(n_resources,)``.

    Normalised to sum to 1 (equal weights when nothing is demanded).
    """
    need = (demand * counts[:, None]).sum(axis=0)
    have = capacity.sum(axis=0)
    w = np.where(have > 0, need / np.where(have > 0, have, 1.0), 0.0)
    if w.sum() <= 0:
        w = np.ones(len(w))
    return w / w.sum()


def rule_degree(instance: Instance) -> np.ndarray:
    """Rules that name each app (exclusions count double), shape ``(n_apps,)`` float.

    An app with a cap below its count gets at least 1.
    """
    inst = instance
    ra, rb, rk = inst.rule_arrays
    deg = np.zeros(inst.n_apps)
    w = np.where(rk == 0, 2.0, 1.0)
    np.add.at(deg, ra, w)
    np.add.at(deg, rb, w)
    same = ra == rb
    np.add.at(deg, ra[same], -w[same])  # a self rule names its app once
    capped = inst.cap < inst.counts
    deg[capped] = np.maximum(deg[capped], 1.0)
    return deg


@numba.njit(cache=True)
def _fill_hosts(apps, left, demand, capacity, used, count, n_on, col, cap, in_ptr, in_cols, in_k,
                out_ptr, out_cols, out_k, host_type, type_rank, wcap, prio, mode, shape,
                capf, urgency, threshold, host_list, app_list, n_out, h_next,
                max_hosts):  # pragma: no cover - compiled
    """Bin-centric filling: open a host, add the best-scoring feasible container until none fits.

    ``apps`` ``(m,)`` lists the apps to place and ``left`` ``(n_apps,)`` how many containers of each
    are still to place (decremented in place). The score of app ``a`` on host ``h`` (higher wins)
    is, for ``mode`` 0, the weighted dot product of its demand with the host's remaining capacity;
    for ``mode`` 1, its weighted size; for ``mode`` 2, minus the weighted squared distance between
    the remaining capacity and the demand; for ``mode`` 3 the same towards the *shaped* capacity
    ``shape[t, r] * capacity[h, r]`` (``shape`` ``(n_types, n_resources)``, ``t`` the host's type,
    see :func:`demand_shape`), so every host is filled in the proportions of the whole demand and
    no resource is left over at the end. ``prio`` ``(n_apps,)`` is added (constrained apps first).
    New hosts are taken in ``type_rank`` order (lowest unused index of the type, ``h_next``
    ``(n_types,)`` keeps where the scan of each type stands). The placements are appended to
    ``host_list`` / ``app_list`` (one entry per container) from ``n_out`` on. At most ``max_hosts``
    hosts are filled per call (so the caller can look at the clock); returns the new ``n_out``,
    or ``-1 - n_out`` when no unused host takes any remaining container.

    *Urgency* (``urgency`` > 0): when a host opens, ``R`` estimates the hosts still to fill (the
    largest ratio of the remaining total demand to the host's capacity over the resources). An
    app whose per-host cap ``capf[a]`` (``(n_apps,)`` float, ``inf`` for none) needs
    ``u = left[a] / capf[a]`` hosts with ``u >= threshold * R`` gets ``urgency * u / R`` added
    to its score, so it is spread over the hosts while enough of them are left (apps with a cap
    of 1 and a hundred containers otherwise end alone on a hundred hosts).
    """
    n_h = capacity.shape[0]
    n_r = demand.shape[1]
    live = apps.copy()
    cand = apps.copy()
    live_pos = np.zeros(left.shape[0], dtype=np.int64)
    n_live = 0
    for i in range(apps.shape[0]):
        if left[apps[i]] > 0:
            live[n_live] = apps[i]
            live_pos[apps[i]] = n_live
            n_live += 1
    rem = np.zeros(n_r)
    for i in range(n_live):
        a = live[i]
        for r in range(n_r):
            rem[r] += left[a] * demand[a, r]
    n_filled = 0
    while n_live > 0 and n_filled < max_hosts:
        n_filled += 1
        # the next unused host of the first type that takes some live app
        h = -1
        for k in range(type_rank.shape[0]):
            ty = type_rank[k]
            g = h_next[ty]
            while g < n_h and (host_type[g] != ty or n_on[g] > 0):
                g += 1
            h_next[ty] = g
            if g >= n_h:
                continue
            for i in range(n_live):
                if feasible(g, live[i], demand, capacity, used, count, col, cap, in_ptr, in_cols,
                            in_k, out_ptr, out_cols, out_k):
                    h = g
                    break
            if h >= 0:
                break
        if h < 0:
            return -1 - n_out  # no unused host takes any remaining container
        n_rem = 1.0
        for r in range(n_r):
            if capacity[h, r] > 0 and rem[r] / capacity[h, r] > n_rem:
                n_rem = rem[r] / capacity[h, r]
        # the apps that may still fit on h: loads and counts only grow while h is filled, so an
        # app that does not fit now never fits on h again (the candidates only shrink)
        n_cand = n_live
        for i in range(n_live):
            cand[i] = live[i]
        while True:
            best = -1
            best_s = -1e300
            j = 0
            for i in range(n_cand):
                a = cand[i]
                if left[a] == 0 or not feasible(h, a, demand, capacity, used, count, col, cap,
                                                in_ptr, in_cols, in_k, out_ptr, out_cols, out_k):
                    continue
                cand[j] = a
                j += 1
                s = prio[a]
                if urgency > 0.0:
                    need = left[a] / capf[a]
                    if need >= threshold * n_rem:
                        s += urgency * need / n_rem
                if mode == 0:
                    for r in range(n_r):
                        s += demand[a, r] * wcap[h, r] * (capacity[h, r] - used[h, r]) * wcap[h, r]
                elif mode == 1:
                    for r in range(n_r):
                        s += demand[a, r] * wcap[h, r]
                elif mode == 2:
                    for r in range(n_r):
                        f = (capacity[h, r] - used[h, r] - demand[a, r]) * wcap[h, r]
                        s -= f * f
                else:
                    for r in range(n_r):
                        f = (shape[host_type[h], r] * capacity[h, r] - used[h, r]
                             - demand[a, r]) * wcap[h, r]
                        s -= f * f
                if s > best_s:
                    best_s = s
                    best = a
            n_cand = j
            if best < 0:
                break
            a = best
            place(h, a, demand, used, count, col, n_on)
            for r in range(n_r):
                rem[r] -= demand[a, r]
            host_list[n_out] = h
            app_list[n_out] = a
            n_out += 1
            left[a] -= 1
            if left[a] == 0:
                p = live_pos[a]
                n_live -= 1
                last = live[n_live]
                live[p] = last
                live_pos[last] = p
    return n_out


def cap_float(instance: Instance) -> np.ndarray:
    """Per-host cap of every app as floats, ``inf`` where none binds, shape ``(n_apps,)``."""
    cap = instance.cap.astype(np.float64)
    return np.ascontiguousarray(np.where(cap >= instance.counts, np.inf, np.maximum(cap, 1.0)))


def work_arrays(instance: Instance, use_surrogate: bool = True, blocks: int = 1
                ) -> tuple[np.ndarray, np.ndarray]:
    """``(demand, capacity)`` the compiled loops run on.

    The surrogate (``blocks`` runs per curve) where it exists and is asked for, else the
    instance's own arrays.
    """
    sur = surrogate(instance, blocks) if use_surrogate else None
    if sur is not None:
        return sur
    return (np.ascontiguousarray(instance.demand, dtype=np.float64),
            np.ascontiguousarray(instance.host_capacity, dtype=np.float64))


def demand_shape(demand: np.ndarray, capacity: np.ndarray, counts: np.ndarray,
                 n_types: int = 1) -> np.ndarray:
    """Each resource's total demand over the fleet's total capacity, relative to the largest.

    Returns shape ``(n_types, n_resources)`` (the same row for every host type; values in
    ``[0, 1]``). Per-type proportions were tried and packed the contest fleet worse.
    """
    w = resource_weights(demand, capacity, counts)
    row = w / max(float(w.max()), 1e-12)
    return np.ascontiguousarray(np.tile(row, (n_types, 1)))


def weighted_capacity(demand: np.ndarray, capacity: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``w[r] / capacity[h, r]`` per host and resource (0 where the capacity is 0)."""
    w = resource_weights(demand, capacity, counts)
    return np.ascontiguousarray(
        np.where(capacity > 0, w[None, :] / np.where(capacity > 0, capacity, 1.0), 0.0))


def fill(instance: Instance, mode: int = 3, kind: Objective = "hosts", use_surrogate: bool = True,
         constrained_first: float = 0.0, deadline: float | None = None,
         stop: Stop | None = None, shape_scale: float = 1.0, blocks: int = 1,
         finish_late: bool = False, urgency: float = 0.0,
         urgency_threshold: float = URGENCY_THRESHOLD) -> np.ndarray | None:
    """A placement built host by host (bin-centric; ``mode`` as in the kernel ``_fill_hosts``).

    Args:
        instance: the instance (:func:`applicable` must hold).
        mode: 0 dot product, 1 largest first, 2 closest to the remaining capacity, 3 closest to
            the remaining capacity shaped like the whole demand (the default: best on Tianchi).
        kind: the objective (decides the order of host types).
        use_surrogate: run on the peak surrogate where the instance has time-indexed resources.
        constrained_first: score bonus per unit of ``log1p`` of the rule degree (0: none).
        deadline: ``time.perf_counter()`` value to give up at (``None``: none).
        stop: a stop request, looked at between chunks of hosts.
        shape_scale: multiplies the shape of every resource (mode 3; capped at 1). Below 1 the
            filling aims below the capacity: large containers fill a host to about that share,
            then the smallest overshoot (small containers) tops it up; other scales give other
            packings to choose from.
        blocks: runs of time points per curve in the surrogate (see :func:`surrogate`).
        finish_late: at the deadline, place the containers still to place by first fit
            (:func:`packing.feasibility.kernels` first-fit kernel, lowest feasible host index) instead of
            giving up.
        urgency: score bonus for apps whose per-host cap makes them need a large share of the
            hosts still to fill (see the kernel ``_fill_hosts``; 0: none, else e.g. 1e6 so that
            urgent apps go first on every host).
        urgency_threshold: an app is urgent once the hosts its cap needs reach this share of the
            estimated hosts left.

    Returns:
        Host per container, shape ``(n_containers,)``, -1 for containers no host takes; ``None``
        when a stop came first, or the deadline without ``finish_late``.
    """
    from solvers.search.greedy import type_order

    inst = instance
    demand, capacity = work_arrays(inst, use_surrogate, blocks)
    st = ClusterState(inst)
    used = np.zeros_like(capacity)
    left = inst.counts.astype(np.int64).copy()
    prio = np.ascontiguousarray(constrained_first * np.log1p(rule_degree(inst)))
    n = inst.n_containers
    hl = np.empty(n, dtype=np.int64)
    al = np.empty(n, dtype=np.int64)
    rank = np.asarray(type_order(inst, kind), dtype=np.int64)
    h_next = np.zeros(len(rank), dtype=np.int64)
    shape = demand_shape(demand, capacity, inst.counts, len(inst.host_types))
    shaped = np.ascontiguousarray(np.minimum(1.0, shape * shape_scale))
    args = (demand, capacity, used, st.count, st.n_on, st.col, inst.cap.astype(np.int64),
            *st.rule_tables, np.ascontiguousarray(inst.host_type_of, dtype=np.int64), rank,
            weighted_capacity(demand, capacity, inst.counts), prio, mode,
            shaped, cap_float(inst), float(urgency), float(urgency_threshold), hl, al)
    apps = np.arange(inst.n_apps, dtype=np.int64)
    k, chunk = 0, 8
    while int(left.sum()) > 0:
        if stop is not None and stop.is_set():
            return None
        if deadline is not None and time.perf_counter() >= deadline:
            if not finish_late:
                return None
            # out of time: the containers still to place go by first fit (a single scan each)
            size = demand @ resource_weights(demand, capacity, inst.counts)
            order = np.argsort(-size, kind="stable")
            seq = np.repeat(order, left[order]).astype(np.int64)
            out = np.empty(len(seq), dtype=np.int64)
            first_fit_kernel(seq, demand, capacity, used, st.count, st.n_on,  # type: ignore[call-arg]
                       st.col, inst.cap.astype(np.int64), *st.rule_tables,
                       np.ascontiguousarray(inst.host_type_of, dtype=np.int64),
                       len(inst.host_types), out)
            ok = out >= 0
            hl[k:k + int(ok.sum())] = out[ok]
            al[k:k + int(ok.sum())] = seq[ok]
            k += int(ok.sum())
            break
        t = time.perf_counter()
        k = int(_fill_hosts(apps, left, *args, k, h_next, chunk))  # type: ignore[call-arg]
        if k < 0:
            k = -1 - k
            break
        took = time.perf_counter() - t
        chunk = int(max(1, min(4 * chunk, chunk * CHUNK_SECONDS / max(took, 1e-6))))
    return assign(inst, hl[:k], al[:k])


def assign(inst: Instance, hosts: np.ndarray, apps: np.ndarray) -> np.ndarray:
    """Host per container from (host, app) pairs, one per placed container (apps' slots in order)."""
    host_of = np.full(inst.n_containers, UNPLACED, dtype=np.int64)
    order = np.argsort(apps, kind="stable")
    a_sorted = apps[order]
    start = np.searchsorted(a_sorted, np.arange(inst.n_apps))
    rank = np.arange(len(order)) - start[a_sorted]
    host_of[inst.offsets[a_sorted] + rank] = hosts[order]
    return host_of


__all__ = ["URGENCY", "URGENCY_THRESHOLD", "applicable", "assign", "cap_float", "demand_shape",
           "fill", "resource_weights", "rule_degree", "surrogate", "weighted_capacity", "work_arrays"]
