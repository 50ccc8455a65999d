"""A rule-aware LP lower bound on the number of hosts ("host kinds" LP), with a proof certificate.

Take a clique ``Q`` of apps that pairwise cannot share a host (exclusions, ``<A, B, 0>``; a single
app is a clique too). Every used host runs at most one app of ``Q``, so it has a *kind*: ``a`` in
``Q`` (it runs ``a``) or ``0`` (it runs none). Group any feasible placement by kind and host type
``t`` and count:

* ``x[k, t]``: used hosts of kind ``k`` and type ``t`` (``sum_k x[k, t] <= count_t``);
* ``y[b, k, t]``: containers of app ``b`` on them, ``sum_{k,t} y[b, k, t] = count_b``, and at most
  ``lim[b, k, t]`` per host: :func:`packing.feasibility.bounds.per_host_max` (cap, capacity, GPU cards), ``k``
  of a rule ``<a, b, k>`` on kind-``a`` hosts, ``0`` when ``<b, a, 0>`` (``b`` excludes ``a``) and
  ``0`` for the other apps of ``Q`` (and for ``Q`` apps on kind-0 hosts);
* a kind-``a`` host runs at least one ``a``: ``x[a, t] <= y[a, a, t]``;
* capacity per kind, type and resource: ``sum_b d[b, r] y[b, k, t] <= C[t, r] x[k, t]``.

The minimum of ``sum x`` over the LP relaxation is a lower bound. The apps whose containers are
restricted (by ``Q``'s rules or a binding cap) are kept one by one; the others only as per-resource
volume ("fluid", split across kinds and types independently per resource — a relaxation, hence
still valid). Without rules it is the volume bound with the cap bound fused in; with exclusions,
it sees that the hosts forced open by ``Q`` cannot take the volume of the apps ``Q`` excludes.

Proof. The LP is solved in floating point (HiGHS via SciPy) and then **not trusted**: every
variable has finite bounds ``0 <= v <= u``, so for *any* multipliers ``mu >= 0`` of the rows
``A v <= b`` weak duality gives ``sum x >= -mu.b + sum_j min(0, (c + A^T mu)_j u_j)``. The solver's
duals (clipped to ``mu >= 0``) are plugged in, the sum is evaluated with a rounding margin, and
the bound is its ceiling. Capacities get the same tolerance slack as the checker
(:func:`packing.feasibility.bounds.slack`), so non-integer data cannot make the bound exceed the optimum.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from packing.feasibility.bounds import lower_bounds, per_host_max, slack
from packing.model.instance import Instance
from solvers.base import Stop

MAX_KINDS = 8
"""Most clique apps used as host kinds (the heaviest ones of the clique bound's clique)."""


@dataclass(frozen=True)
class RuleBound:
    """The result of :func:`rule_bound`.

    Attributes:
        value: the proven lower bound on the number of hosts (at least the cheap bound).
        certified: the certified LP value before rounding up (``nan`` if no LP was solved).
        lp: the LP optimum as the solver reports it (``nan`` if none).
        cheap: :func:`packing.feasibility.bounds.lower_bounds` ``.best``.
        kinds: the clique apps that define the host kinds.
        explicit_apps: apps modelled one by one (the rest as per-resource volume).
        status: ``"optimal"``, ``"time_limit"``, ``"stopped"``, ``"failed"``, ``"infeasible"`` (the solver
            found the LP infeasible: not certified, the cheap bound is kept) or ``"trivial"``.
        seconds: wall time.
    """

    value: int
    certified: float
    lp: float
    cheap: int
    kinds: tuple[str, ...]
    explicit_apps: int
    status: str
    seconds: float


def _kind_limits(inst: Instance, q: list[int], m: np.ndarray) -> np.ndarray:
    """Per-host limit of each app on each kind and type, shape ``(n_apps, 1 + len(q), n_types)``."""
    n_k = 1 + len(q)
    lim = np.repeat(m[:, None, :], n_k, axis=1)
    qpos = {a: j + 1 for j, a in enumerate(q)}
    for a in q:
        lim[a, :, :] = 0
        lim[a, qpos[a], :] = m[a]
    ra, rb, rk = inst.rule_arrays
    for a, b, k in zip(ra.tolist(), rb.tolist(), rk.tolist(), strict=True):
        if a in qpos and b not in qpos:  # <a, b, k>: kind-a hosts run at most k of b
            lim[b, qpos[a], :] = np.minimum(lim[b, qpos[a], :], k)
        if b in qpos and k == 0 and a not in qpos:  # <a, b, 0>: a host with a runs no b
            lim[a, qpos[b], :] = 0
    return lim


def _certify(c: np.ndarray, a_ub: sp.csr_matrix, b_ub: np.ndarray, upper: np.ndarray,
             marg: np.ndarray) -> float:
    """Weak-duality value for ``min c.v, A v <= b, 0 <= v <= upper`` from row multipliers.

    Valid for any multipliers: ``mu = max(0, -marg)`` (SciPy's marginals are ``<= 0`` on ``<=``
    rows). A margin covers the floating-point error of the sums.
    """
    mu = np.maximum(0.0, -np.asarray(marg, dtype=np.float64))
    red = c + a_ub.T @ mu
    terms = np.concatenate([-mu * b_ub, np.minimum(0.0, red * upper)])
    val = math.fsum(terms.tolist())
    # error of forming A^T mu and the products, bounded generously (relative 1e-12 per unit of
    # each term's magnitude, plus the reduced-cost error times the upper bounds)
    scale = float(np.abs(terms).sum()) + float((np.abs(a_ub).T @ mu) @ upper) + float(
        np.abs(c) @ upper)
    return val - 1e-9 * scale - 1e-9


def rule_bound(instance: Instance, time_limit: float = 60.0, stop: Stop | None = None, *,
               max_kinds: int = MAX_KINDS, max_explicit: int = 6000,
               max_nonzeros: int = 3_000_000) -> RuleBound:
    """The host-kinds LP bound (see the module docstring) with its certificate.

    Args:
        instance: the instance (GPU cards only enter through the per-host limits).
        time_limit: seconds for the LP solver.
        stop: a stop request; if set before the solve, the cheap bound is returned.
        max_kinds: most clique apps used as host kinds.
        max_explicit: most apps modelled one by one (the most restricted first).
        max_nonzeros: further limits the explicit apps to about this many capacity-row
            entries (apps x kinds x types x resources; 200 resources on Tianchi's full view).

    Returns:
        The :class:`RuleBound`; ``value`` is always a valid lower bound.
    """
    from scipy.optimize import linprog

    t0 = time.perf_counter()
    inst = instance
    lb = lower_bounds(inst)
    cheap = lb.best

    def out(value: float, cert: float, lp: float, kinds: tuple[str, ...], n_e: int,
            status: str) -> RuleBound:
        v = max(cheap, int(math.ceil(value)) if math.isfinite(value) else cheap)
        return RuleBound(v, cert, lp, cheap, kinds, n_e, status, time.perf_counter() - t0)

    nan = math.nan
    if lb.infeasible or inst.n_containers == 0 or not len(inst.host_types):
        return out(nan, nan, nan, (), 0, "trivial")
    if stop is not None and stop.is_set():
        return out(nan, nan, nan, (), 0, "stopped")
    n_t, n_r = len(inst.host_types), inst.n_resources
    counts = inst.counts
    m = per_host_max(inst)
    m = np.minimum(m, counts[:, None].astype(np.float64))
    # host kinds: the heaviest apps of the clique bound's clique (a sub-clique is a clique)
    idx = inst.app_index
    w = np.array([math.ceil(counts[i] / max(m[i].max(), 1.0)) for i in range(inst.n_apps)])
    q = sorted((idx[a] for a in lb.clique_apps), key=lambda a: -w[a])[:max_kinds]
    kinds = tuple(inst.apps[a].name for a in q)
    n_k = 1 + len(q)
    lim = _kind_limits(inst, q, m)
    active = counts > 0
    # explicit apps: Q, apps restricted on some kind, apps whose cap forces several hosts
    restricted = (lim < m[:, None, :]).any(axis=(1, 2))
    explicit = active & (restricted | (w >= 2))
    explicit[q] = True
    e_idx = np.flatnonzero(explicit)
    max_explicit = min(max_explicit, max(len(q) + 1, max_nonzeros // (n_k * n_t * max(1, n_r))))
    if len(e_idx) > max_explicit:
        keep = e_idx[np.argsort(-(w[e_idx] + 1e6 * restricted[e_idx]), kind="stable")]
        explicit[:] = False
        explicit[keep[:max_explicit]] = True
        explicit[q] = True
        e_idx = np.flatnonzero(explicit)
    fluid = (counts[~explicit & active, None] * inst.demand[~explicit & active]).sum(axis=0)
    caps = slack(inst.type_capacity)  # (types, res)

    # variables: x[k, t], then y[b, k, t] with lim > 0, then g[r, k, t] for fluid resources
    n_x = n_k * n_t
    yb, yk, yt = np.nonzero(lim[e_idx] > 0)
    yb = e_idx[yb]
    n_y = len(yb)
    fr = np.flatnonzero(fluid > 0)
    gr = np.repeat(fr, n_k * n_t)
    gk = np.tile(np.repeat(np.arange(n_k), n_t), len(fr))
    gt = np.tile(np.arange(n_t), len(fr) * n_k)
    n_g = len(gr)
    xs = 0
    ys = n_x
    gs = n_x + n_y
    n_v = gs + n_g
    cost = np.zeros(n_v)
    cost[:n_x] = 1.0
    upper = np.concatenate([np.tile(inst.type_count.astype(np.float64), n_k),
                            counts[yb].astype(np.float64), fluid[gr]])
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    rhs: list[np.ndarray] = []
    n_rows = 0

    def add(r: Any, c: Any, v: Any) -> None:
        rows.append(np.asarray(r, dtype=np.int64))
        cols.append(np.asarray(c, dtype=np.int64))
        vals.append(np.asarray(v, dtype=np.float64))

    def xcol(k: np.ndarray | int, t: np.ndarray | int) -> np.ndarray:
        return np.asarray(xs + np.asarray(k) * n_t + np.asarray(t))

    # (1) sum_k x[k, t] <= count_t
    kk, tt = np.meshgrid(np.arange(n_k), np.arange(n_t), indexing="ij")
    add(n_rows + tt.ravel(), xcol(kk.ravel(), tt.ravel()), np.ones(n_x))
    rhs.append(inst.type_count.astype(np.float64))
    n_rows += n_t
    # (2) -sum_{k,t} y[b, k, t] <= -count_b
    bpos = np.full(inst.n_apps, -1)
    bpos[e_idx] = np.arange(len(e_idx))
    add(n_rows + bpos[yb], ys + np.arange(n_y), -np.ones(n_y))
    rhs.append(-counts[e_idx].astype(np.float64))
    n_rows += len(e_idx)
    # (3) y[b, k, t] - lim x[k, t] <= 0 where the limit can bind
    lv = lim[yb, yk, yt]
    link = np.flatnonzero(lv * inst.type_count[yt] > 0)
    link = link[lv[link] < counts[yb[link]]] if len(link) else link
    nl = len(link)
    add(n_rows + np.arange(nl), ys + link, np.ones(nl))
    add(n_rows + np.arange(nl), xcol(yk[link], yt[link]), -lv[link])
    rhs.append(np.zeros(nl))
    n_rows += nl
    # (4) x[a, t] - y[a, a, t] <= 0: a kind-a host runs a
    for j, a in enumerate(q):
        for t in range(n_t):
            sel = np.flatnonzero((yb == a) & (yk == j + 1) & (yt == t))
            add([n_rows], [int(xcol(j + 1, t))], [1.0])
            if len(sel):
                add([n_rows], [ys + int(sel[0])], [-1.0])
            rhs.append(np.zeros(1))
            n_rows += 1
    # (5) -sum g[r, k, t] <= -fluid_r
    gpos = np.full(n_r, -1)
    gpos[fr] = np.arange(len(fr))
    add(n_rows + gpos[gr], gs + np.arange(n_g), -np.ones(n_g))
    rhs.append(-fluid[fr])
    n_rows += len(fr)
    # (6) capacity: sum_b d y + g - C x <= 0 per (k, t, r)
    cap_row = lambda k, t, r: n_rows + (np.asarray(k) * n_t + np.asarray(t)) * n_r + np.asarray(r)  # noqa: E731
    d_y = inst.demand[yb]  # (n_y, res)
    nz_y, nz_r = np.nonzero(d_y > 0)
    add(cap_row(yk[nz_y], yt[nz_y], nz_r), ys + nz_y, d_y[nz_y, nz_r])
    add(cap_row(gk, gt, gr), gs + np.arange(n_g), np.ones(n_g))
    ck, ct, cr = np.meshgrid(np.arange(n_k), np.arange(n_t), np.arange(n_r), indexing="ij")
    add(cap_row(ck.ravel(), ct.ravel(), cr.ravel()), xcol(ck.ravel(), ct.ravel()),
        -caps[ct.ravel(), cr.ravel()])
    rhs.append(np.zeros(n_k * n_t * n_r))
    n_rows += n_k * n_t * n_r

    a_ub = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n_rows, n_v))
    b_ub = np.concatenate(rhs)
    remaining = max(0.1, time_limit - (time.perf_counter() - t0))
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=np.column_stack([np.zeros(n_v), upper]),
                  method="highs", options={"time_limit": remaining, "presolve": True})
    n_e = len(e_idx)
    if res.status == 2:  # infeasible in floating point: not a certificate, keep the cheap bound
        return out(nan, nan, nan, kinds, n_e, "infeasible")
    marg = getattr(getattr(res, "ineqlin", None), "marginals", None)
    if marg is None or len(marg) != n_rows:
        return out(nan, nan, nan, kinds, n_e, "failed" if res.status != 1 else "time_limit")
    cert = _certify(cost, a_ub, b_ub, upper, marg)
    lp = float(res.fun) if res.fun is not None else nan
    status = "optimal" if res.status == 0 else ("time_limit" if res.status == 1 else "failed")
    return out(cert, cert, lp, kinds, n_e, status)


@dataclass(frozen=True)
class ClassBound:
    """The result of :func:`class_config_bound`.

    Attributes:
        value: the proven lower bound on the number of hosts.
        lp_bound: the proven bound on the configuration LP (before rounding up).
        classes: apps after merging identical demands.
        converged: exact pricing proved the LP optimal.
        seconds: wall time.
    """

    value: int
    lp_bound: float
    classes: int
    converged: bool
    seconds: float


def merge_classes(instance: Instance) -> Instance:
    """A relaxation with one app per distinct demand (GPU request, allowed host types), no rules.

    The merged app's per-host cap is the sum of its apps' effective caps (at most its count), so
    every placement of ``instance`` is one of the merged instance: its optimum is a lower bound.
    """
    import dataclasses

    inst = instance
    ok = inst.type_allowed
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, a in enumerate(inst.apps):
        if a.count:
            key = (a.demand, a.gpu_cards, a.gpu_per_card, a.gpu_whole, a.gpu_models,
                   tuple(ok[i].tolist()) if ok is not None else ())
            groups.setdefault(key, []).append(i)
    apps = []
    for j, idx in enumerate(groups.values()):
        a0 = inst.apps[idx[0]]
        count = int(inst.counts[idx].sum())
        cap = int(min(count, inst.cap[idx].sum()))
        # the members share their allowed host types, so a0's node selection stands for all
        apps.append(dataclasses.replace(a0, name=f"class{j}", count=count,
                                        max_per_host=cap if cap < count else None))
    return inst.replace(name=f"{inst.name}-classes", apps=tuple(apps), rules=(), exclusions=(),
                        initial=None, requests=())


def class_config_bound(instance: Instance, time_limit: float = 60.0) -> ClassBound:
    """The Gilmore-Gomory (configuration LP) bound of :func:`merge_classes` (rules ignored).

    Column generation (:func:`solvers.exact.colgen.colgen_bound`) on the merged instance; its bound is
    proven on any data (see :mod:`solvers.exact.colgen`). Meant for instances with few distinct demands
    and integer data (e.g. Tianchi on a uniform fleet rounded up: 144 classes), where pricing is a
    dynamic programme; with many non-integer demands pricing falls back to CP-SAT and is slow.
    """
    from solvers.exact.colgen import colgen_bound

    t0 = time.perf_counter()
    import dataclasses

    agg = merge_classes(instance)
    # count hosts: every type costs 1 (colgen minimises cost when the costs differ)
    agg = agg.replace(host_types=tuple(dataclasses.replace(t, cost=1.0) for t in agg.host_types))
    res = colgen_bound(agg, time_limit=time_limit)
    value = int(res.bound) if math.isfinite(res.bound) else 0
    return ClassBound(value, float(res.lp_bound), agg.n_apps, bool(res.converged),
                      time.perf_counter() - t0)


def rule_lower_bound(instance: Instance, time_limit: float = 60.0, stop: Stop | None = None
                     ) -> int:
    """The proven host lower bound of :func:`rule_bound` (never below the cheap bounds)."""
    return rule_bound(instance, time_limit, stop).value


__all__ = ["MAX_KINDS", "ClassBound", "RuleBound", "class_config_bound", "merge_classes",
           "rule_bound", "rule_lower_bound"]
