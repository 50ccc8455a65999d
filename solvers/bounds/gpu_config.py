"""A configuration LP bound on the GPU any offline placement can allocate (cards respected exactly).

**The problem bounded.** Some pods (``counts[a]`` of each app ``a``) and a cluster of host types. A
placement that the checker (:func:`packing.feasibility.checker.check`) accepts allocates on each GPU card the
shares of the pods on it (a whole-card pod the card's capacity), first GPU resource; its *allocated
GPU* is the sum. :class:`ConfigBound` returns a number that no accepted placement exceeds.

**Configurations.** For a host type ``t`` a configuration is a count vector ``x`` (pods per app) that
fits on *one* host of the type exactly as the checker tests it: every host resource within capacity;
every pod on its own distinct cards, a whole-card pod alone on each of its cards, the shares on each
card within the card's capacity per GPU resource; only apps that accept the type's card model
(:attr:`packing.model.instance.Instance.type_allowed`). Its value is ``c_t(x) = sum_a q[a, t] x[a]`` with
``q[a, t]`` the GPU one pod allocates there (``cards * card capacity`` for a whole-card pod, ``cards *
share`` otherwise). Only apps with ``q > 0`` are considered: taking pods off a host never breaks a
constraint (openb has no rules; cross-app rules are ignored, which only loosens the bound), so pods
that allocate nothing change no placement's value.

**The configuration LP** (Gilmore-Gomory)::

    max  sum_t sum_{x in P_t} c_t(x) lam[t, x]
    s.t. sum_{x in P_t} lam[t, x]                  <= N_t       (hosts of type t; dual mu_t)
         sum_t sum_{x in P_t} x[a] lam[t, x]        <= n_a       (arrived pods of app a; dual pi_a)
         lam >= 0

with ``P_t`` the configurations of type ``t`` with ``x <= n``. A real placement is an integer point
(``lam[t, x]`` = hosts of type ``t`` holding exactly ``x``), so the LP optimum is at least every
placement's allocated GPU. It couples CPU, memory and the cards *per host*, which the aggregated LP of
``solvers.bounds.gpu_bound.GpuBound`` cannot.

**The proof (Lagrangian / Farley-type bound).** For *any* ``pi >= 0``, weak duality with the best
``mu`` gives::

    LP <= L(pi) = sum_a pi_a n_a + sum_t N_t max(0, R_t(pi)),
    R_t(pi) >= max_{x in P_t} sum_a (q[a,t] - pi_a) x[a]

so the bound needs nothing from the master LP but its duals ``pi``, and holds at every iteration and
whatever the LP solver's tolerances. ``R_t`` is an upper bound proven by the pricing: CP-SAT maximises
``sum_a V_a x_a`` over exact integer rows, with ``V_a = floor((q - pi)_a S) + 1 > (q - pi)_a S`` for a
power of two ``S``, so ``R_t = bound / S`` is at least the true maximum whether CP-SAT finished or
stopped at its time limit (its proven bound; with no bound at all the trivial ``sum V_a u_a``). Apps
with ``q_a - pi_a <= 0`` are left out of the pricing (a configuration without them is as good).
The reported value is the least ``L`` met over the iterations (column generation with Wentges dual
smoothing), inflated by ``1e-9`` relative plus ``1e-6`` absolute for its float sums, and capped by the
trivial bound ``min(arrived GPU, capacity)``.

**Integer rows.** Resources and per-card shares are scaled by :func:`solvers.exact.scaling.scale_columns`
per host type: exactly for decimal data (openb's integer milli-CPU, MiB and milli-GPU are read as they
are), with the checker's tolerance and an allowance for its float rounding in the capacities, so the
rows are never stricter than the checker; data with no exact decimal reading are rounded the relaxed
way (demands down, capacities up), which keeps the bound valid (``ConfigResult.exact`` says which);
so are integers above :data:`solvers.exact.scaling.CPSAT_COEF_LIMIT`, which CP-SAT's presolve may overflow
on (:func:`solvers.exact.scaling.shrink`).

**Card model of the pricing** (host type with ``G`` cards, per card capacity ``K`` per GPU resource)::

    x[a] in 0..min(n_a, u_a)                           pods of app a
    sum_a d[a, r] x[a] <= C[r]                          host resources
    w[c] in {0, 1},  sum_c w[c] = sum_{a whole} k_a x[a]        card c taken whole
    z[a, c] in 0..x[a] (sharing app a on card c),  sum_c z[a, c] = k_a x[a]
    sum_a s[a, g] z[a, c] + K_full[g] w[c] <= K[g]     every card c and GPU resource g

which is exactly the checker's card rule (pods of a sharing app with ``k_a`` cards can be split into
``x[a]`` groups of ``k_a`` distinct cards when no card holds more than ``x[a]`` of them). Symmetric
cards are ordered (whole cards first, then by non-increasing share load).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from packing.feasibility.predicates import TOL
from packing.model.instance import Instance
from solvers.exact.scaling import CPSAT_LIMIT, scale_columns, shrink

VALUE_BITS = 30
"""The pricing's objective coefficients are scaled to at most about ``2**VALUE_BITS``."""


@dataclass(frozen=True)
class TypeData:
    """One host type's pricing data (integer rows), for the apps that may allocate GPU on it.

    Attributes:
        t: host type index.
        count: hosts of the type.
        gpus: cards per host.
        apps: the candidate apps, shape ``(m,)`` (``q > 0``, one pod fits an empty host).
        value: GPU one pod of each allocates here, shape ``(m,)``.
        dem: integer host demand, shape ``(m, n_resources)``.
        cap: integer host capacity, tolerance included, shape ``(n_resources,)``.
        share: integer per-card share, shape ``(m, n_gpu_res)`` (0 for whole-card apps).
        card_cap: integer card capacity, tolerance included, shape ``(n_gpu_res,)``.
        card_full: integer load of a card taken whole, shape ``(n_gpu_res,)``.
        cards: cards per pod, shape ``(m,)``.
        whole: whole-card apps, shape ``(m,)``.
        ub: most pods of each app one host holds alone, shape ``(m,)``.
        exact: whether the integer rows are the checker's exactly.
    """

    t: int
    count: int
    gpus: int
    apps: np.ndarray
    value: np.ndarray
    dem: np.ndarray
    cap: np.ndarray
    share: np.ndarray
    card_cap: np.ndarray
    card_full: np.ndarray
    cards: np.ndarray
    whole: np.ndarray
    ub: np.ndarray
    exact: bool


@dataclass
class ConfigResult:
    """What :meth:`ConfigBound.solve` found.

    Attributes:
        bound: proven upper bound on the GPU any placement of the pods allocates.
        lp: the last restricted master value (a lower bound on the configuration LP, not a bound on
            placements).
        trivial: ``min(arrived GPU, capacity)`` over the apps with a place to go.
        iterations: column generation iterations.
        columns: columns in the master at the end.
        seconds: wall time.
        converged: the bound met the master value (the configuration LP was solved).
        pricing_optimal: every pricing of the best iteration was solved to optimality.
        exact: integer rows were exact (otherwise a relaxation, still valid).
    """

    bound: float
    lp: float
    trivial: float
    iterations: int
    columns: int
    seconds: float
    converged: bool
    pricing_optimal: bool
    exact: bool


@dataclass
class _Pool:
    """Columns kept across solves: per type, configurations as count vectors over the type's apps."""

    cols: list[set[tuple[int, ...]]] = field(default_factory=list)


def gpu_value(instance: Instance) -> np.ndarray:
    """GPU (first GPU resource) one pod of each app allocates on each host type, ``(n_apps, n_types)``.

    ``cards * card capacity`` for a whole-card app, ``cards * share`` for a sharing app, 0 without
    cards or on a type without cards.
    """
    inst = instance
    n_t = len(inst.host_types)
    if not inst.gpu_resources or inst.max_gpus == 0:
        return np.zeros((inst.n_apps, n_t))
    k = inst.gpu_cards.astype(np.float64)
    kcap = inst.card_capacity[:, 0].astype(np.float64)  # (T,)
    whole = np.array([a.gpu_whole for a in inst.apps], dtype=bool)
    share = np.where(whole | (k == 0), 0.0, np.nan_to_num(inst.gpu_demand[:, 0], posinf=0.0))
    q = np.where(whole[:, None], k[:, None] * kcap[None, :], (k * share)[:, None] * np.ones(n_t))
    gpus = np.array([t.gpus for t in inst.host_types])
    return np.where((gpus[None, :] > 0) & (k[:, None] > 0), q, 0.0)


def _type_data(inst: Instance, t: int, q: np.ndarray) -> TypeData | None:
    """The pricing data of host type ``t`` (``None``: no app allocates GPU on it)."""
    ht = inst.host_types[t]
    if ht.gpus <= 0 or not inst.gpu_resources:
        return None
    k = inst.gpu_cards
    whole_all = np.array([a.gpu_whole for a in inst.apps], dtype=bool)
    ok = (q[:, t] > 0) & (k <= ht.gpus) & (k > 0)
    if inst.type_allowed is not None:
        ok &= inst.type_allowed[:, t]
    apps = np.flatnonzero(ok)
    if len(apps) == 0:
        return None
    # generous float estimate of how many pods of an app one host holds (only the float allowance
    # of the scaling depends on it: more addends, a larger allowance, still valid)
    cap = inst.type_capacity[t] * (1 + 4 * TOL) + 4 * TOL
    d = inst.demand[apps]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_r = np.where(d > 0, np.floor(cap[None, :] / np.where(d > 0, d, 1.0)) + 1, np.inf)
    share_f = np.where(whole_all[apps, None], 0.0, np.nan_to_num(inst.gpu_demand[apps], posinf=0.0))
    card = inst.card_capacity[t] * (1 + 4 * TOL) + 4 * TOL
    with np.errstate(divide="ignore", invalid="ignore"):
        per_card = np.where(share_f > 0, np.floor(card[None, :] / np.where(share_f > 0, share_f, 1.0)) + 1,
                            np.inf).min(axis=1)
    per_card = np.where(whole_all[apps], 1.0, per_card)
    est = np.minimum(per_r.min(axis=1, initial=np.inf), ht.gpus * per_card / k[apps])
    est = np.where(np.isfinite(est), est, float(inst.counts.sum() + 1))
    est = np.minimum(est, 10**9).astype(np.int64) + 1
    rows = shrink(scale_columns(d, inst.type_capacity[t:t + 1], est, limit=CPSAT_LIMIT,
                                fallback="relaxed"))
    per_card_n = est * k[apps]
    cards = shrink(scale_columns(share_f, inst.card_capacity[t:t + 1], per_card_n,
                                 limit=CPSAT_LIMIT // 16, fallback="relaxed",
                                 n_add=int(per_card_n.sum())))
    dem, hcap = rows.demand, rows.capacity[0]
    share, ccap, full = cards.demand, cards.capacity[0], cards.full[0]
    whole = whole_all[apps]
    kk = k[apps].astype(np.int64)
    # one pod must fit an empty host; whole-card pods need an empty card (full <= capacity)
    fit = (dem <= hcap[None, :]).all(axis=1)
    fit &= np.where(whole, (full <= ccap).all(), (share <= ccap[None, :]).all(axis=1))
    big = np.iinfo(np.int64).max // 4
    with np.errstate(divide="ignore"):
        ub_r = np.where(dem > 0, hcap[None, :] // np.maximum(dem, 1), big).min(axis=1, initial=big)
        ub_c = np.where(share > 0, ccap[None, :] // np.maximum(share, 1), big).min(axis=1, initial=big)
    ub_cards = np.where(whole, ht.gpus // kk,
                        np.where(ub_c >= big, big, (ht.gpus * np.minimum(ub_c, big // 64)) // kk))
    ub = np.minimum(ub_r, ub_cards)
    ub = np.where(fit, ub, 0)
    keep = ub > 0
    if not keep.any():
        return None
    sel = np.flatnonzero(keep)
    return TypeData(t, int(ht.count), int(ht.gpus), apps[sel], q[apps[sel], t].astype(np.float64),
                    dem[sel], hcap, share[sel], ccap, full, kk[sel], whole[sel], ub[sel],
                    bool(rows.exact and cards.exact))


@dataclass
class PricingResult:
    """One pricing: a proven upper bound and the best configuration found.

    Attributes:
        upper: upper bound on ``max_x sum (value - pi) x`` over the type's configurations.
        x: best configuration found, counts over ``TypeData.apps``, shape ``(m,)``.
        found: ``sum (value - pi) x`` of ``x`` (float).
        optimal: CP-SAT proved optimality (within its relative gap).
        more: other configurations met during the search (each shape ``(m,)``).
    """

    upper: float
    x: np.ndarray
    found: float
    optimal: bool
    more: list[np.ndarray] = field(default_factory=list)


def price(td: TypeData, v: np.ndarray, n: np.ndarray, time_limit: float = 5.0, seed: int = 0,
          workers: int = 1, rel_gap: float = 1e-5, hint: np.ndarray | None = None,
          keep: int = 1, linearization: int = 1) -> PricingResult:
    """The best configuration of type ``td`` for profits ``v`` (shape ``(m,)``), at most ``n`` per app.

    Exact CP-SAT model of the module docstring. ``upper`` is proven (CP-SAT's bound on the
    rounded-up integer profits) even when the time limit or the relative gap ``rel_gap`` stops the
    search (``optimal`` then says whether it closed). ``hint``: a configuration to start from
    (shape ``(m,)``); ``keep``: how many of the solutions met on the way to return in ``more``.
    """
    from ortools.sat.python import cp_model

    m = len(td.apps)
    ub = np.minimum(td.ub, np.asarray(n, dtype=np.int64))
    act = np.flatnonzero((v > 0) & (ub > 0))
    x_out = np.zeros(m, dtype=np.int64)
    if len(act) == 0:
        return PricingResult(0.0, x_out, 0.0, True)
    vmax = float(v[act].max())
    e = VALUE_BITS - math.frexp(vmax)[1]
    s = math.ldexp(1.0, e)  # a power of two: v * s is exact
    vi = (np.floor(v[act] * s) + 1).astype(np.int64)  # > v * s
    triv = int((vi * ub[act]).sum())
    model = cp_model.CpModel()
    x = [model.new_int_var(0, int(ub[i]), f"x{i}") for i in act]
    for r in range(td.dem.shape[1]):
        coef = td.dem[act, r]
        if coef.any():
            model.add(cp_model.LinearExpr.weighted_sum(x, coef.tolist()) <= int(td.cap[r]))
    g = td.gpus
    wh = [j for j, i in enumerate(act) if td.whole[i]]
    sh = [j for j, i in enumerate(act) if not td.whole[i]]
    w = []
    if wh:
        w = [model.new_bool_var(f"w{c}") for c in range(g)]
        model.add(sum(w) == cp_model.LinearExpr.weighted_sum([x[j] for j in wh],
                                                               [int(td.cards[act[j]]) for j in wh]))
        for c in range(g - 1):
            model.add(w[c] >= w[c + 1])
    if sh:
        # sharing pods with the same share on one card each are interchangeable on the cards:
        # one card variable per (share, class) instead of per app (exact: the rows only see shares)
        groups: dict[tuple[int, ...], list[int]] = {}
        for j in sh:
            i = act[j]
            key = (tuple(int(s_) for s_ in td.share[i]) if td.cards[i] == 1 else (-1 - int(j),))
            groups.setdefault(key, []).append(j)
        z: dict[tuple[int, int], cp_model.IntVar] = {}
        gshare: list[np.ndarray] = []
        for gi, members in enumerate(groups.values()):
            i0 = act[members[0]]
            tot = int(sum(int(ub[act[j]]) * int(td.cards[act[j]]) for j in members))
            per = tot
            share_pos = td.share[i0] > 0
            if share_pos.any():
                per = min(per, int((td.card_cap[share_pos] // td.share[i0, share_pos]).min()))
            zs = [model.new_int_var(0, per, f"z{gi}_{c}") for c in range(g)]
            model.add(sum(zs) == cp_model.LinearExpr.weighted_sum(
                [x[j] for j in members], [int(td.cards[act[j]]) for j in members]))
            if len(members) == 1 and td.cards[i0] > 1:
                for zc in zs:
                    model.add(zc <= x[members[0]])
            for c in range(g):
                z[gi, c] = zs[c]
            gshare.append(td.share[i0])
        ng = len(gshare)
        loads = []
        for c in range(g):
            for gr in range(td.share.shape[1]):
                coef = [int(gshare[gi][gr]) for gi in range(ng)]
                expr = cp_model.LinearExpr.weighted_sum([z[gi, c] for gi in range(ng)], coef)
                if w:
                    model.add(expr + int(td.card_full[gr]) * w[c] <= int(td.card_cap[gr]))
                else:
                    model.add(expr <= int(td.card_cap[gr]))
                if gr == 0:
                    loads.append(expr)
        # card cuts (implied, they tighten the LP relaxation): a card holds at most j pods whose share
        # exceeds 1/(j+1) of it on some GPU resource, and none if it is taken whole
        for j_ in (1, 2, 3):
            bigs = [gi for gi in range(ng) if ((j_ + 1) * gshare[gi] > td.card_cap).any()]
            if bigs:
                for c in range(g):
                    many = cp_model.LinearExpr.sum([z[gi, c] for gi in bigs])
                    model.add(many + j_ * w[c] <= j_ if w else many <= j_)
        big = int(td.card_cap[0])
        for c in range(g - 1):  # identical cards: share loads non-increasing after the whole cards
            if w:
                model.add(loads[c] + big * w[c] >= loads[c + 1])
            else:
                model.add(loads[c] >= loads[c + 1])
    model.maximize(cp_model.LinearExpr.weighted_sum(x, vi.tolist()))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(float(time_limit), 0.01)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    solver.parameters.relative_gap_limit = float(rel_gap)  # the proven bound is what is used
    solver.parameters.linearization_level = int(linearization)
    if hint is not None:
        for j, i in enumerate(act):
            model.add_hint(x[j], int(min(hint[i], ub[i])))
    sols: list[np.ndarray] = []

    class _Keep(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            if len(sols) < keep:
                sols.append(np.array([self.value(xx) for xx in x], dtype=np.int64))

    status = solver.solve(model, _Keep() if keep > 1 else None)
    upper_int = float(triv)
    found = 0.0
    opt = False
    more: list[np.ndarray] = []
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        upper_int = min(upper_int, float(solver.best_objective_bound))
        xs = np.array([solver.value(xx) for xx in x], dtype=np.int64)
        x_out[act] = xs
        found = float(v[act] @ xs)
        opt = status == cp_model.OPTIMAL
        for sol in sols:
            full = np.zeros(m, dtype=np.int64)
            full[act] = sol
            more.append(full)
    return PricingResult(upper_int / s, x_out, found, opt, more)


class ConfigBound:
    """The configuration LP bound (module docstring) for one cluster and its apps.

    Args:
        instance: the cluster and the apps (pod shapes); ``counts`` are given to :meth:`solve`.

    Columns found by one :meth:`solve` are kept (clipped to the next counts) for the next one.
    """

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self.q = gpu_value(instance)
        types = [_type_data(instance, t, self.q) for t in range(len(instance.host_types))]
        self.types: list[TypeData] = [td for td in types if td is not None]
        self.exact = all(td.exact for td in self.types)
        self._pool = _Pool([set() for _ in self.types])
        self.capacity = float(sum(td.count * td.gpus * float(instance.card_capacity[td.t, 0])
                                  for td in self.types))

    def trivial(self, counts: np.ndarray) -> float:
        """``min(arrived GPU of the apps with somewhere to go, capacity)`` (valid by itself)."""
        c = np.asarray(counts, dtype=np.float64)
        best = np.zeros(self.instance.n_apps)
        for td in self.types:
            best[td.apps] = np.maximum(best[td.apps], td.value)
        return min(float(best @ c), self.capacity)

    def _seed_columns(self, counts: np.ndarray) -> None:
        """Single-app columns: as many pods of one app as one host takes (valid configurations)."""
        for k, td in enumerate(self.types):
            n = counts[td.apps]
            for j in range(len(td.apps)):
                if n[j] > 0:
                    col = [0] * len(td.apps)
                    col[j] = int(min(td.ub[j], n[j]))
                    self._pool.cols[k].add(tuple(col))

    def solve(self, counts: np.ndarray, *, time_limit: float = 60.0, pricing_limit: float = 2.0,
              fast_limit: float = 0.3, alpha: float = 0.5, gap: float = 1e-5, seed: int = 0,
              final_factor: float = 5.0,
              log: Callable[[str], None] | None = None) -> ConfigResult:
        """The bound for ``counts[a]`` pods per app, shape ``(n_apps,)``.

        Args:
            counts: pods per app.
            time_limit: seconds for the whole column generation (the bound is valid when it stops).
            pricing_limit: seconds per pricing (CP-SAT) in the proof phase; its proven bound is used
                if it stops early.
            fast_limit: seconds per pricing at first; doubled (up to ``pricing_limit``) whenever an
                iteration finds columns for fewer than half the host types (every iteration's
                bound counts).
            final_factor: when no column is found but some pricing was not proven optimal, one more
                round prices with ``final_factor * pricing_limit`` seconds to close the bound.
            alpha: Wentges smoothing weight of the best duals so far (0: plain column generation).
            gap: stop when the bound is within ``gap`` (relative to the capacity) of the master.
            seed: CP-SAT seed.
            log: progress lines.
        """
        from scipy.optimize import linprog
        from scipy.sparse import csr_matrix

        t0 = time.perf_counter()
        n_all = np.asarray(counts, dtype=np.int64)
        trivial = self.trivial(n_all)
        used_apps = np.unique(np.concatenate([td.apps[n_all[td.apps] > 0] for td in self.types]
                                             or [np.zeros(0, dtype=np.int64)]))
        if trivial <= 0 or len(used_apps) == 0:
            return ConfigResult(0.0, 0.0, 0.0, 0, 0, time.perf_counter() - t0, True, True, self.exact)
        row_of = np.full(self.instance.n_apps, -1, dtype=np.int64)
        row_of[used_apps] = np.arange(len(used_apps))
        n_rows_t = len(self.types)
        b = np.concatenate([[float(td.count) for td in self.types], n_all[used_apps].astype(np.float64)])
        # clip kept columns to these counts
        for k, td in enumerate(self.types):
            n = n_all[td.apps]
            self._pool.cols[k] = {tuple(np.minimum(np.array(c), n).tolist()) for c in self._pool.cols[k]}
            self._pool.cols[k].discard(tuple([0] * len(td.apps)))
        self._seed_columns(n_all)
        best = math.inf
        best_opt = False
        center: np.ndarray | None = None
        lp_val = 0.0
        it = 0
        converged = False
        a_cur = alpha
        lim_cur = min(fast_limit, pricing_limit)
        hints: list[np.ndarray | None] = [None] * len(self.types)
        tol_abs = gap * max(self.capacity, 1.0)
        while it == 0 or time.perf_counter() - t0 < time_limit:
            it += 1
            # restricted master
            cols: list[tuple[int, tuple[int, ...]]] = [(k, c) for k in range(n_rows_t)
                                                      for c in sorted(self._pool.cols[k])]
            obj = np.zeros(len(cols))
            ri, ci, vals = [], [], []
            for j, (k, c) in enumerate(cols):
                td = self.types[k]
                cv = np.array(c, dtype=np.float64)
                obj[j] = float(td.value @ cv)
                ri.append(k)
                ci.append(j)
                vals.append(1.0)
                nz = np.flatnonzero(cv)
                ri.extend((n_rows_t + row_of[td.apps[nz]]).tolist())
                ci.extend([j] * len(nz))
                vals.extend(cv[nz].tolist())
            A = csr_matrix((vals, (ri, ci)), shape=(len(b), len(cols)))
            res = linprog(-obj, A_ub=A, b_ub=b, bounds=(0, None), method="highs")
            if res.status != 0 or res.ineqlin is None:
                pi_lp = np.zeros(len(used_apps))
                mu = np.zeros(n_rows_t)
            else:
                lp_val = -float(res.fun)
                marg = np.maximum(-np.asarray(res.ineqlin.marginals, dtype=np.float64), 0.0)
                mu, pi_lp = marg[:n_rows_t], marg[n_rows_t:]
            if lp_val >= trivial - tol_abs:  # the LP reaches the trivial bound: nothing to gain
                converged = True
                break
            pi = pi_lp if center is None or a_cur <= 0 else a_cur * center + (1 - a_cur) * pi_lp
            # pricing at pi: the Lagrangian bound, and columns for the master
            left = time_limit - (time.perf_counter() - t0)
            lag = float(pi @ b[n_rows_t:])
            added = 0
            all_opt = True
            for k, td in enumerate(self.types):
                pia = np.zeros(len(td.apps))
                on = row_of[td.apps] >= 0
                pia[on] = pi[row_of[td.apps[on]]]
                v = td.value - pia
                tp = time.perf_counter()
                share_left = left / max(1, len(self.types) - k)
                pr = price(td, v, n_all[td.apps], time_limit=max(0.01, min(lim_cur, share_left)),
                           seed=seed, hint=hints[k], keep=8)
                if log is not None and time.perf_counter() - tp > 0.5 and lim_cur >= pricing_limit:
                    log(f"   type {td.t}: pricing {time.perf_counter() - tp:.1f} s, optimal {pr.optimal}, "
                        f"upper {pr.upper:.1f} found {pr.found:.1f}")
                all_opt &= pr.optimal
                lag += td.count * max(0.0, pr.upper)
                if pr.x.any():
                    hints[k] = pr.x
                pil = np.zeros(len(td.apps))
                pil[on] = pi_lp[row_of[td.apps[on]]]
                for xc in [pr.x, *pr.more]:
                    if not xc.any():
                        continue
                    red = float((td.value - pil) @ xc) - float(mu[k])
                    col = tuple(xc.tolist())
                    if red > 1e-9 * max(1.0, float(td.value.max())) and col not in self._pool.cols[k]:
                        self._pool.cols[k].add(col)
                        added += 1
            if lag < best:
                best, best_opt = lag, all_opt
                center = pi.copy()
            elapsed = time.perf_counter() - t0
            if log is not None:
                log(f"it {it}: master {lp_val:.3f}  L {lag:.3f}  best {best:.3f}  cols +{added}  "
                    f"alpha {a_cur:.2f}  pricing {lim_cur:.2f} s  {elapsed:.1f} s")
            if best - lp_val <= tol_abs:
                converged = True
                break
            if added < len(self.types) / 2 and lim_cur < pricing_limit:
                lim_cur = min(2 * lim_cur, pricing_limit)  # columns no longer come easily: price harder
                if added == 0:
                    continue
            if added == 0:
                if a_cur > 0:
                    a_cur = 0.0  # mispricing: price at the master's duals next
                    continue
                if not all_opt and lim_cur < final_factor * pricing_limit:
                    lim_cur = final_factor * pricing_limit  # no column, bound not closed: prove harder
                    continue
                break
            a_cur = alpha
            if elapsed >= time_limit:
                break
        out = best * (1.0 + 1e-9) + 1e-6
        out = min(out, trivial * (1.0 + 1e-9) + 1e-6)
        return ConfigResult(out, lp_val, trivial, it, sum(len(c) for c in self._pool.cols),
                            time.perf_counter() - t0, converged, best_opt, self.exact)


__all__ = ["ConfigBound", "ConfigResult", "PricingResult", "TypeData", "gpu_value", "price"]
