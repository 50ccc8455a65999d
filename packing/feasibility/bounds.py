"""Cheap, provably valid lower bounds on the number of hosts and on the cost of a packing.

Every bound here holds for *any* placement of all containers that :func:`packing.feasibility.checker.check`
accepts (the initial placement is ignored: the bounds are for placing everything from scratch).
A bound above ``Instance.n_hosts`` proves that no such placement exists.

volume
    Per resource, the fewest hosts whose capacities can hold the total demand, taking the largest
    hosts first and respecting how many of each type exist.
cap
    Per app, ``ceil(count / m)`` where ``m`` is the most containers of the app one host can take:
    the effective cap (:attr:`Instance.cap`, self-rules folded in), and no more than fit on the
    best host type by capacity, GPU cards and card models.
clique
    Apps that pairwise cannot share a host (an exclusion pair, or a rule ``<A, B, 0>`` in either
    direction) need disjoint hosts, so the hosts they need add up: the maximum over such cliques
    of the sum of their cap bounds. Exact (``networkx.max_weight_clique``) on connected components
    of at most :data:`EXACT_CLIQUE_NODES` apps, a greedy clique on larger ones (still valid, maybe
    weaker).
gpu
    GPU cards needed (whole cards, plus the total card shares over the largest card) against the
    fewest hosts that carry that many cards.
excluded
    Forced hosts plus the volume they cannot take. The hosts that run app ``a`` (at least its cap
    bound ``w_a``) can run no container of an app that conflicts with ``a``, so those apps'
    volume needs further hosts: ``w_a + fewest hosts for the volume of a's conflict neighbours``
    (per resource, largest hosts first). The same for the heaviest ``j`` apps ``Q`` of the clique
    bound's clique (every ``j``): their hosts (at least ``sum w``) are closed to every app that
    conflicts with all of ``Q``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np

from packing.feasibility.predicates import TOL
from packing.model.instance import Instance

EXACT_CLIQUE_NODES = 60
"""Connected components of the conflict graph up to this size get an exact maximum-weight clique."""

_NO_CARDS = 10**12


@dataclass(frozen=True)
class LowerBounds:
    """Lower bounds on the number of hosts of any feasible placement of all containers.

    Attributes:
        volume: the volume bound.
        cap: the per-app bound.
        clique: the conflict-clique bound.
        gpu: the GPU-card bound.
        best: the largest of them.
        n_hosts: hosts available; ``best > n_hosts`` proves infeasibility.
        volume_resource: the resource achieving ``volume`` (``None`` without demand).
        cap_app: the app achieving ``cap``.
        clique_apps: the apps of the clique achieving ``clique``.
        clique_exact: whether ``clique`` is the exact maximum-weight clique.
        gpu_cards: GPU cards needed at least.
        excluded: the forced-hosts-plus-excluded-volume bound.
        excluded_apps: the app (or clique) whose hosts achieve ``excluded``.
    """

    volume: int
    cap: int
    clique: int
    gpu: int
    best: int
    n_hosts: int
    volume_resource: str | None = None
    cap_app: str | None = None
    clique_apps: tuple[str, ...] = ()
    clique_exact: bool = True
    gpu_cards: int = 0
    excluded: int = 0
    excluded_apps: tuple[str, ...] = ()

    @property
    def infeasible(self) -> bool:
        """Whether the bounds prove that not every container can be placed."""
        return self.best > self.n_hosts


def slack(c: np.ndarray | float) -> np.ndarray:
    """Capacity plus twice the feasibility tolerance, so bounds never exceed what fits."""
    a = np.asarray(c, dtype=np.float64)
    return a + 2 * TOL * np.maximum(1.0, np.abs(a))


def per_host_max(instance: Instance) -> np.ndarray:
    """Most containers of each app one host of each type can take, shape ``(n_apps, n_types)``.

    Counts capacity, the effective cap, GPU cards (whole or shared, per card capacity) and the
    allowed host types (``Instance.type_allowed``: GPU models, node selection, taints). It is an
    upper bound (rules between apps are ignored); 0 means the type cannot run
    the app at all.
    """
    inst = instance
    n_t = len(inst.host_types)
    d = inst.demand[:, None, :]  # (apps, 1, res)
    c = slack(inst.type_capacity)[None, :, :]  # (1, types, res)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # tiny d: inf, capped below
        per_res = np.where(d > 0, np.floor(c / np.where(d > 0, d, 1.0) + 1e-9), np.inf)
    m = per_res.min(axis=2) if inst.n_resources else np.full((inst.n_apps, n_t), np.inf)
    m = np.minimum(m, inst.cap[:, None].astype(np.float64))
    if inst.type_allowed is not None:
        m[~inst.type_allowed] = 0
    gpus = np.array([t.gpus for t in inst.host_types], dtype=np.float64)
    for i, app in enumerate(inst.apps):
        k = app.gpu_cards
        if not k:
            continue
        for t, ht in enumerate(inst.host_types):
            if ht.gpus < k:
                m[i, t] = 0
                continue
            if app.gpu_whole:
                per_card = 1.0
            else:
                share = np.asarray(app.gpu_per_card, dtype=np.float64)
                cc = slack(np.asarray(ht.gpu_capacity, dtype=np.float64))
                with np.errstate(divide="ignore", invalid="ignore"):
                    fit = np.where(share > 0, np.floor(cc / np.where(share > 0, share, 1.0)
                                                       + 1e-9), np.inf)
                per_card = float(fit.min()) if len(fit) else math.inf
            if math.isinf(per_card):
                continue
            m[i, t] = min(m[i, t], math.floor(gpus[t] * per_card / k))
    return np.maximum(m, 0)


def fewest_hosts(need: float, caps: np.ndarray, counts: np.ndarray, n_hosts: int) -> int:
    """Fewest hosts, largest first, whose ``caps`` sum to at least ``need``; ``n_hosts + 1`` if none."""
    if need <= 0:
        return 0
    acc, used = 0.0, 0
    for t in np.argsort(-caps, kind="stable"):
        c, n = float(caps[t]), int(counts[t])
        if c <= 0 or n == 0:
            continue
        take = math.ceil((need - acc) / c - 1e-9)
        if take <= n:
            return used + max(take, 0)
        acc += c * n
        used += n
    return n_hosts + 1


def _fewest_hosts_many(need: np.ndarray, caps: np.ndarray, counts: np.ndarray,
                       n_hosts: int) -> np.ndarray:
    """:func:`fewest_hosts` for many needs at once.

    Args:
        need: demands, shape ``(n,)``.
        caps: capacity per host type, shape ``(n_types,)``.
        counts: hosts per type, shape ``(n_types,)``.
        n_hosts: returned plus one where nothing fits.

    Returns:
        Fewest hosts per need, shape ``(n,)`` (int64).
    """
    need = np.asarray(need, dtype=np.float64)
    out = np.zeros(need.shape, dtype=np.int64)
    order = [int(t) for t in np.argsort(-caps, kind="stable") if caps[t] > 0 and counts[t] > 0]
    left = need > 0
    acc = np.zeros(need.shape)
    used = 0
    for t in order:
        c, n = float(caps[t]), int(counts[t])
        take = np.ceil((need - acc) / c - 1e-9)
        done = left & (take <= n)
        out[done] = used + np.maximum(take[done], 0).astype(np.int64)
        left &= ~done
        acc += c * n
        used += n
    out[left] = n_hosts + 1
    return out


def _excluded_bound(instance: Instance, weight: np.ndarray, clique_apps: tuple[str, ...]
                    ) -> tuple[int, tuple[str, ...]]:
    """The forced-hosts-plus-excluded-volume bound (see the module docstring)."""
    inst = instance
    edges = _conflict_edges(inst, inst.counts > 0)
    if not edges:
        return 0, ()
    import scipy.sparse as sp  # only with conflicts: the import costs more than the rest

    e = np.array(edges, dtype=np.int64)
    n = inst.n_apps
    rows = np.concatenate([e[:, 0], e[:, 1]])
    cols = np.concatenate([e[:, 1], e[:, 0]])
    adj = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    vol = inst.counts[:, None] * inst.demand  # (apps, res)
    caps = slack(inst.type_capacity)
    cand = np.unique(rows)
    nvol = np.asarray(adj[cand] @ vol)  # (cand, res): volume of each candidate's neighbours
    best_v, best_apps = 0, cast(tuple[str, ...], ())
    extra = np.zeros(len(cand), dtype=np.int64)
    for r in range(inst.n_resources):
        extra = np.maximum(extra, _fewest_hosts_many(nvol[:, r], caps[:, r], inst.type_count,
                                                     inst.n_hosts))
    tot = weight[cand] + extra
    if len(tot):
        i = int(np.argmax(tot))
        best_v, best_apps = int(tot[i]), (inst.apps[int(cand[i])].name,)
    q = sorted((inst.app_index[a] for a in clique_apps), key=lambda a: (-weight[a], a))
    for j in range(2, len(q) + 1):  # the heaviest j apps of the clique
        sub = q[:j]
        common = np.asarray(adj[sub].sum(axis=0)).ravel() >= j  # conflicts with all of them
        v = vol[common].sum(axis=0)
        ex = max(fewest_hosts(float(v[r]), caps[:, r], inst.type_count, inst.n_hosts)
                 for r in range(inst.n_resources))
        s = int(weight[sub].sum()) + ex
        if s > best_v:
            best_v, best_apps = s, tuple(inst.apps[a].name for a in sub)
    return best_v, best_apps


def _conflict_edges(instance: Instance, active: np.ndarray) -> list[tuple[int, int]]:
    """Pairs of active apps that may not share a host, as sorted index pairs."""
    a, b, k = instance.rule_arrays
    sel = (k == 0) & active[a] & active[b]
    pairs = {(int(min(x, y)), int(max(x, y))) for x, y in zip(a[sel], b[sel], strict=True)}
    return sorted(pairs)


def _greedy_clique(nodes: list[int], adj: dict[int, set[int]], w: dict[int, int]
                   ) -> tuple[int, list[int]]:
    """A heavy clique: from each node, repeatedly add the heaviest common neighbour."""
    best, best_c = 0, []
    for v in nodes:
        clique, cand = [v], set(adj[v])
        while cand:
            u = max(cand, key=lambda x: (w[x], -x))
            clique.append(u)
            cand &= adj[u]
        s = sum(w[x] for x in clique)
        if s > best:
            best, best_c = s, clique
    return best, best_c


def _clique_bound(instance: Instance, weight: np.ndarray) -> tuple[int, tuple[str, ...], bool]:
    active = instance.counts > 0
    edges = _conflict_edges(instance, active)
    if not edges:
        i = int(np.argmax(weight)) if len(weight) else 0
        return (int(weight[i]), (instance.apps[i].name,), True) if len(weight) else (0, (), True)
    import networkx as nx  # only with conflicts: the import costs more than the rest

    g = nx.Graph()
    g.add_edges_from(edges)
    best, best_c, exact = 0, [], True
    big = int(min(np.iinfo(np.int64).max // 4, max(1, instance.n_hosts + 1)))
    w = {int(v): int(min(weight[v], big)) for v in g.nodes}
    for comp in nx.connected_components(g):
        if len(comp) <= EXACT_CLIQUE_NODES:
            sub = g.subgraph(comp).copy()
            nx.set_node_attributes(sub, {v: w[v] for v in comp}, "weight")
            c, s = nx.max_weight_clique(sub, weight="weight")
        else:
            exact = False
            adj = {v: set(g.adj[v]) for v in comp}
            s, c = _greedy_clique(sorted(comp), adj, w)
        if s > best:
            best, best_c = int(s), list(c)
    # a single app (with no conflicts) is a clique too
    i = int(np.argmax(weight))
    if weight[i] > best:
        best, best_c = int(weight[i]), [i]
    return best, tuple(instance.apps[v].name for v in sorted(best_c)), exact


def _gpu_cards_needed(instance: Instance) -> int:
    """GPU cards any feasible placement uses at least (a huge number if no card can serve)."""
    inst = instance
    if not any(a.gpu_cards and a.count for a in inst.apps):
        return 0
    whole = sum(a.count * a.gpu_cards for a in inst.apps if a.gpu_whole)
    # whole cards are otherwise empty, so shared containers need further cards: at least the
    # total share over the largest card, and at least the cards one container spans
    shared = max([0] + [a.gpu_cards for a in inst.apps
                        if a.gpu_cards and a.count and not a.gpu_whole])
    for g in range(len(inst.gpu_resources)):
        vol = sum(a.count * a.gpu_cards * a.gpu_per_card[g] for a in inst.apps
                  if a.gpu_cards and not a.gpu_whole)
        if vol <= 0:
            continue
        caps = [t.gpu_capacity[g] for t in inst.host_types if t.gpus]
        cmax = float(slack(max(caps))) if caps else 0.0
        if cmax <= 0:
            return _NO_CARDS
        shared = max(shared, math.ceil(vol / cmax - 1e-9))
    return int(whole + shared)


def lower_bounds(instance: Instance) -> LowerBounds:
    """All cheap lower bounds on the number of hosts (see the module docstring).

    Args:
        instance: the instance.

    Returns:
        The :class:`LowerBounds`; its ``best`` is the strongest.
    """
    inst = instance
    n_hosts = inst.n_hosts
    infeasible = n_hosts + 1
    # volume
    vol, vol_res = 0, None
    total = (inst.counts[:, None] * inst.demand).sum(axis=0) if inst.n_apps else np.zeros(
        inst.n_resources)
    caps_eff = slack(inst.type_capacity)
    for r in range(inst.n_resources):
        v = fewest_hosts(float(total[r]), caps_eff[:, r], inst.type_count, n_hosts)
        if v > vol:
            vol, vol_res = v, inst.resources[r]
    # cap (per app)
    weight = np.zeros(inst.n_apps, dtype=np.int64)
    if inst.n_apps and len(inst.host_types):
        m = per_host_max(inst)
        for i in np.flatnonzero(inst.counts > 0):
            # fewest hosts (most containers per host first) that can hold all the containers
            weight[i] = fewest_hosts(float(inst.counts[i]), m[i], inst.type_count, n_hosts)
    elif inst.n_apps:
        weight[inst.counts > 0] = infeasible
    cap_b = int(weight.max()) if inst.n_apps else 0
    cap_app = inst.apps[int(np.argmax(weight))].name if cap_b > 0 else None
    # cliques
    clique, exact = 0, True
    clique_apps: tuple[str, ...] = ()
    if inst.n_apps:
        clique, clique_apps, exact = _clique_bound(inst, weight)
        clique = min(clique, infeasible)
    # GPU cards
    cards = _gpu_cards_needed(inst)
    gpu = 0
    if cards:
        gcount = np.array([t.gpus for t in inst.host_types], dtype=np.float64)
        gpu = fewest_hosts(cards, gcount, inst.type_count, n_hosts)
    excl, excl_apps = 0, cast(tuple[str, ...], ())
    if inst.n_apps and inst.n_resources:
        excl, excl_apps = _excluded_bound(inst, weight, clique_apps)
        excl = min(excl, infeasible)
    best = max(vol, cap_b, clique, gpu, excl)
    return LowerBounds(vol, cap_b, clique, gpu, best, n_hosts, vol_res, cap_app,
                       clique_apps, exact, cards, excl, excl_apps)


def cost_lower_bound(instance: Instance, bounds: LowerBounds | None = None) -> float:
    """A lower bound on the total cost of the used hosts (``inf`` if provably infeasible).

    The LP relaxation of "choose how many hosts of each type to use" (``0 <= x_t <= count_t``)
    with, as covering constraints: every resource's total demand, every app's containers (each
    host of type ``t`` takes at most :func:`per_host_max` of them), the GPU cards needed, and at
    least ``bounds.best`` hosts. It dominates the per-resource fractional cover bound.

    Args:
        instance: the instance.
        bounds: the host bounds, if already computed.
    """
    from scipy.optimize import linprog

    inst = instance
    lb = bounds if bounds is not None else lower_bounds(inst)
    if lb.infeasible:
        return math.inf
    if inst.n_containers == 0 or not len(inst.host_types):
        return 0.0
    n_t = len(inst.host_types)
    rows: list[np.ndarray] = []
    rhs: list[float] = []
    total = (inst.counts[:, None] * inst.demand).sum(axis=0)
    caps = slack(inst.type_capacity)
    for r in range(inst.n_resources):
        if total[r] > 0:
            rows.append(caps[:, r])
            rhs.append(float(total[r]))
    m = per_host_max(inst)
    m = np.minimum(m, inst.counts[:, None].astype(np.float64))  # keep the LP finite
    for i in np.flatnonzero(inst.counts > 0):
        rows.append(m[i])
        rhs.append(float(inst.counts[i]))
    if lb.gpu_cards:
        rows.append(np.array([t.gpus for t in inst.host_types], dtype=np.float64))
        rhs.append(float(lb.gpu_cards))
    rows.append(np.ones(n_t))
    rhs.append(float(lb.best))
    a_ub = -np.vstack(rows)
    b_ub = -np.array(rhs)
    res = linprog(inst.type_cost, A_ub=a_ub, b_ub=b_ub,
                  bounds=[(0, float(c)) for c in inst.type_count], method="highs")
    if res.status == 2:
        return math.inf
    if res.status != 0:  # pragma: no cover - numerical trouble: fall back to the trivial bound
        return 0.0
    cheapest = float(np.sort(inst.host_cost)[: lb.best].sum())
    # shave the LP optimum by more than HiGHS' feasibility and optimality tolerances (1e-7) so that
    # it stays a valid bound after the caller rounds it up
    return max(0.0, float(res.fun) * (1 - 1e-6) - 1e-6, cheapest)


__all__ = ["EXACT_CLIQUE_NODES", "LowerBounds", "cost_lower_bound", "lower_bounds",
           "fewest_hosts", "per_host_max", "slack"]
