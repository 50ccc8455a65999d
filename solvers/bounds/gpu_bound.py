"""Offline bounds on the GPU any scheduler can allocate in the FGD paper's protocol.

:class:`GpuBound` bounds the GPU that any placement of the pods arrived so far can allocate (cards
respected), per arrival level of a workload of :mod:`packing.gpu.fgd_protocol`; :func:`evaluate_bound`
gives it for every seed's workload, the same workloads as the policies replay. As unallocated GPU %,
the bound is below every policy's value at every level.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from packing.gpu.fgd_protocol import (
    Workload,
    build_workload,
    gpu_capacity,
    level_bins,
    pod_sequence,
    task_gpu,
)
from packing.model.instance import Instance
from solvers.bounds.gpu_config import ConfigBound

CONFIG_LEVELS = (90, 95, 100)
"""Levels where :class:`GpuBound` solves the configuration LP by default. Not 130%: there its master
LP already allocates 99.8% of openb's GPU (seed 42), so no bound from it can exceed 0.2% unallocated,
and column generation does not close in 8 minutes."""

BOUND_METHODS = ("config", "aggregate")
"""Offline bounds :class:`GpuBound` can compute: the configuration LP (per host) or the aggregated LP."""

BOUND_CLIQUES = (1, 2, 3)
"""``j`` of the card-count cuts of :class:`GpuBound`: a card holds at most ``j`` GPU-sharing tasks
whose share exceeds ``1/(j+1)`` of the card."""


class GpuBound:
    """Upper bound on the GPU that any placement of some pods can allocate (offline, cards respected).

    **The relaxation.** Hosts are grouped by host type ``t`` (``N_t`` hosts, each with capacity
    ``C_t`` on every host resource, ``G_t`` cards of share ``K_t``). Variable ``x[a, t] >= 0`` is the
    number of pods of app (shape) ``a`` placed on hosts of type ``t``; it exists only when one pod
    fits on an empty host of the type (resources, ``k_a <= G_t`` cards of enough share, accepted card
    model). With ``n_a`` pods of the app arrived and ``q[a, t] = k_a K_t`` (a whole-card pod) or
    ``k_a g_a`` (a GPU-sharing pod) the GPU one pod allocates there, the LP is::

        max  sum_{a,t} q[a,t] x[a,t]
        s.t. sum_t x[a,t]                          <= n_a                 (arrived pods)
             sum_a d[a,r] x[a,t]                   <= N_t C_t[r]          (every host resource r)
             sum_a q[a,t] x[a,t]                   <= N_t G_t K_t         (GPU share)
             sum_{a whole} k_a x[a,t]
               + sum_{a sharing, g_a > K_t/(j+1)} k_a x[a,t] / j  <= N_t G_t   (cards, j = 1, 2, 3)

    **Validity.** Take any placement of the arrived pods that the checker accepts, and let ``x[a,t]``
    count its pods of app ``a`` on type ``t``. Every constraint is the sum over the type's hosts of
    a constraint every single host satisfies: its resources and its cards' shares are not exceeded;
    a whole-card pod occupies ``k_a`` cards on which nothing else runs; a card holds at most ``j``
    sharing pods with share ``> K/(j+1)`` (``j+1`` of them would need more than ``K``), so such a pod
    uses at least ``1/j`` of a card that no whole-card pod uses. So ``x`` is feasible and its
    objective is exactly the GPU the placement allocates: the LP optimum is at least the allocated
    GPU of every placement, the exact offline optimum included. (The placement problem also needs
    the shares to pack into individual cards and hosts; dropping that only loosens the bound.)
    Capacities are taken with the checker's tolerance (:data:`packing.feasibility.predicates.TOL`).

    **Float safety.** The number returned is not the solver's objective but a *dual certificate*:
    with ``y >= 0`` the solver's duals of the inequalities and ``z = max(0, q - A^T y)``, weak duality
    gives ``opt <= b.y + n.z`` for any ``y >= 0``, whatever the solver's tolerances; it is computed in
    float64 and inflated by ``1e-9`` relative plus ``1e-6`` absolute, then capped by the trivial
    bounds (the arrived GPU and the capacity, which are valid too). Cost: one HiGHS solve of about
    ``apps x types`` variables (a few milliseconds at openb's size).

    **The configuration bound** (``method="config"``, the default for :meth:`levels`): at the
    arrival levels ``config_levels`` the per-host configuration LP of
    :class:`solvers.bounds.gpu_config.ConfigBound` is solved by column generation with exact CP-SAT pricing
    (cards, CPU, memory and card models of one host coupled exactly); its value is a Lagrangian
    certificate valid at every iteration, so a time limit only loosens it. Each level gets the least
    of the valid bounds it has: this LP's, the aggregated LP's, and the configuration bound of any
    later prefix (allocation only grows with the pods arrived).

    Args:
        instance: the cluster and the apps (pod shapes); rules and anti-affinity are ignored (openb has
            none; ignoring constraints keeps the bound valid).
        method: ``"config"`` (the configuration LP at ``config_levels`` on top of the aggregated LP)
            or ``"aggregate"`` (the aggregated LP only, about 1 s per seed).
        config_levels: arrival levels (%) where the configuration LP is solved.
        time_limit: seconds of column generation per level (the bound is valid when it stops).
    """

    def __init__(self, instance: Instance, method: str = "config",
                 config_levels: Sequence[int] = CONFIG_LEVELS, time_limit: float = 300.0) -> None:
        from scipy.sparse import csr_matrix

        if method not in BOUND_METHODS:
            raise ValueError(f"unknown bound method {method!r}; expected one of {', '.join(BOUND_METHODS)}")
        self.method = method
        self.config_levels = tuple(int(x) for x in config_levels)
        self.time_limit = float(time_limit)
        self._config: Any = None
        self.config_results: dict[int, Any] = {}
        """Per level where the configuration LP ran: its :class:`solvers.bounds.gpu_config.ConfigResult`."""

        from packing.feasibility.predicates import TOL

        inst = instance
        self.instance = inst
        n_types = len(inst.host_types)
        cap_r = inst.type_capacity * (1.0 + TOL) + TOL  # (T, R)
        count = inst.type_count.astype(np.float64)  # (T,)
        has_gpu = bool(inst.gpu_resources) and inst.max_gpus > 0
        gpus = np.array([t.gpus for t in inst.host_types], dtype=np.float64)
        kcap = inst.card_capacity[:, 0].astype(np.float64) if has_gpu else np.zeros(n_types)
        k = inst.gpu_cards.astype(np.float64)
        whole = np.array([a.gpu_whole for a in inst.apps], dtype=bool) & (k > 0)
        share = np.where(k > 0, np.where(whole, 0.0, inst.gpu_demand[:, 0] if has_gpu else 0.0), 0.0)
        share = np.nan_to_num(share, posinf=0.0)
        q = np.where(whole[:, None], k[:, None] * kcap[None, :], (k * share)[:, None] * np.ones(n_types))
        ok = (inst.demand[:, None, :] <= cap_r[None, :, :]).all(axis=2)  # (A, T)
        ok &= (k[:, None] <= gpus[None, :])
        ok &= ~((k[:, None] > 0) & (kcap[None, :] <= 0))
        ok &= ~((~whole & (k > 0))[:, None] & (share[:, None] > kcap[None, :] * (1.0 + TOL) + TOL))
        if inst.type_allowed is not None:
            ok &= inst.type_allowed
        self.var_app, self.var_type = np.nonzero(ok)
        a_, t_ = self.var_app, self.var_type
        self.q = q[a_, t_]
        nv = len(a_)
        rows: list[np.ndarray] = []
        rhs: list[float] = []
        for t in range(n_types):
            on = t_ == t
            for r in range(inst.n_resources):
                rows.append(np.where(on, inst.demand[a_, r], 0.0))
                rhs.append(float(count[t] * cap_r[t, r]))
            if gpus[t] > 0 and has_gpu:
                rows.append(np.where(on, self.q, 0.0))
                rhs.append(float(count[t] * gpus[t] * (kcap[t] * (1.0 + TOL) + TOL)))
                for j in BOUND_CLIQUES:
                    big = ~whole[a_] & (k[a_] > 0) & (share[a_] > kcap[t] * (1.0 + TOL) / (j + 1))
                    coef = np.where(whole[a_], k[a_], 0.0) + np.where(big, k[a_] / j, 0.0)
                    rows.append(np.where(on, coef, 0.0))
                    rhs.append(float(count[t] * gpus[t]))
        self.apps = np.unique(a_)  # one arrived-pod row per app with a variable (not variable
        # bounds, whose duals HiGHS reports separately)
        arr = (a_[None, :] == self.apps[:, None]).astype(np.float64)
        self.A = np.vstack([np.array(rows).reshape(len(rows), nv), arr])
        self.b = np.array(rhs, dtype=np.float64)
        self._sparse = csr_matrix(self.A)
        self.task_gpu = task_gpu(inst)[0]
        self.capacity = gpu_capacity(inst)

    def solve(self, counts: np.ndarray) -> float:
        """The bound on allocated GPU for ``counts[a]`` arrived pods per app, shape ``(n_apps,)``."""
        from scipy.optimize import linprog

        c = np.asarray(counts, dtype=np.float64)
        # pods of an app that fits no host type allocate nothing
        trivial = min(float(self.task_gpu[self.apps] @ c[self.apps]), self.capacity)
        if len(self.q) == 0 or trivial <= 0:
            return 0.0
        u = c[self.var_app]
        b = np.concatenate([self.b, c[self.apps]])
        res = linprog(-self.q, A_ub=self._sparse, b_ub=b, bounds=(0, None), method="highs")
        if res.status != 0 or res.ineqlin is None:
            return trivial
        y = np.maximum(-np.asarray(res.ineqlin.marginals, dtype=np.float64), 0.0)
        z = np.maximum(self.q - self.A.T @ y, 0.0)
        cert = float(b @ y + u @ z)
        cert = cert * (1.0 + 1e-9) + 1e-6
        return min(cert, trivial + 1e-6 * max(1.0, trivial))

    def levels(self, workload: Workload, until: int = 130,
               log: Callable[[str], None] | None = None) -> np.ndarray:
        """The bound per whole arrival level ``0..until`` %, as unallocated GPU %, shape ``(until + 1,)``.

        Level ``L`` of :meth:`~packing.gpu.fgd_protocol.Run.levels` averages the records whose arrived
        demand rounds to ``L`` (or to ``L-1..L+1``); allocation only grows with the pods arrived, so
        every one of them is below the bound of the *last* of those records, which is what is
        returned (as ``100 -`` the bound in % of capacity, rounded like ``Run.levels``, a monotone
        map; NaN where no record exists). The median (or mean) over seeds of these lower bounds is
        below every policy's median (mean).

        Only levels where the LP can beat the trivial bound ``min(arrived, capacity)`` are solved: the
        prefixes whose arrived pods all fit fractionally are downward closed (scale a solution down
        app by app) and those whose LP reaches the capacity are upward closed (the LP grows with the
        pods), so two bisections find the levels in between; the others get the trivial bound, which
        is valid by itself. With ``method="config"`` the configuration LP then tightens the levels
        of ``config_levels`` and every level before them (:meth:`_config_levels`).
        """
        seq = pod_sequence(workload.instance)
        total = task_gpu(workload.instance)[0]
        arrived = np.concatenate([[0.0], np.cumsum(total[seq])])
        cap = workload.capacity
        ratio = np.round(arrived / cap * 100.0)
        last = np.full(until + 1, -1, dtype=np.int64)  # record index (= pods arrived) per level
        for lvl, (lo, hi) in enumerate(level_bins(ratio, until)):  # ratio is sorted (a cumsum)
            if hi > lo:
                last[lvl] = hi - 1
        have = np.flatnonzero(last >= 0)
        cache: dict[int, float] = {}

        def bound(i: int) -> float:
            p = int(last[have[i]])
            if p not in cache:
                cache[p] = self.solve(np.bincount(seq[:p], minlength=workload.instance.n_apps))
            return cache[p]

        def trivial(i: int) -> float:
            return min(float(arrived[last[have[i]]]), cap)

        def all_fit(i: int) -> bool:
            return bool(arrived[last[have[i]]] < cap and bound(i) >= trivial(i) * (1 - 1e-9))

        def full(i: int) -> bool:
            return bound(i) >= cap * (1 - 1e-9)

        lo, hi = 0, len(have)  # first index where not all_fit
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if all_fit(mid) else (lo, mid)
        first = lo
        lo, hi = first, len(have)  # first index where full
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if full(mid) else (mid + 1, hi)
        out = np.full(until + 1, np.nan)
        for i, lvl in enumerate(have.tolist()):
            b = bound(i) if first <= i < lo else trivial(i)
            out[lvl] = 100.0 - np.round(b * (1.0 + 1e-9) / cap * 100.0, 2)
        if self.method == "config":
            self._config_levels(workload, seq, last, out, log)
        return out

    def solve_config(self, counts: np.ndarray, log: Callable[[str], None] | None = None) -> Any:
        """The configuration LP bound (:class:`solvers.bounds.gpu_config.ConfigResult`), ``counts`` per app.

        Columns are kept between calls (warm start for the next level).
        """
        if self._config is None:
            self._config = ConfigBound(self.instance)
        return self._config.solve(np.asarray(counts), time_limit=self.time_limit, log=log)

    def _config_levels(self, workload: Workload, seq: np.ndarray, last: np.ndarray, out: np.ndarray,
                       log: Callable[[str], None] | None) -> None:
        """Tighten ``out`` (unallocated %, shape ``(until + 1,)``) with the configuration LP.

        The bound of the prefix of ``p`` pods holds for every shorter prefix too, so each level takes the
        largest unallocated % of the configuration bounds at its own or any later solved prefix.
        """
        cap = workload.capacity
        n = workload.instance.n_apps
        todo = [x for x in self.config_levels if 0 <= x < len(out) and last[x] >= 0]
        for lvl in sorted(todo, key=lambda x: (abs(x - 100), -x)):  # 100% first (the paper's bars)
            p = int(last[lvl])
            if lvl in self.config_results:
                continue
            res = self.solve_config(np.bincount(seq[:p], minlength=n), log=log)
            self.config_results[lvl] = res
            un = 100.0 - np.round(res.bound * (1.0 + 1e-9) / cap * 100.0, 2)
            for other in np.flatnonzero((last >= 0) & (last <= p)).tolist():
                if np.isfinite(out[other]) and un > out[other]:
                    out[other] = un


@dataclass
class BoundResult:
    """The offline bound (:class:`GpuBound`) of every seed's workload, as unallocated GPU %.

    Attributes:
        seeds: the workload seeds.
        curves: per seed and level ``0..until``, shape ``(n_seeds, until + 1)``.
        seconds: wall time per seed.
    """

    seeds: list[int]
    curves: np.ndarray
    seconds: list[float]
    method: str = "aggregate"
    details: list[dict[int, Any]] = field(default_factory=list)
    """Per seed, per level where the configuration LP ran: its ``ConfigResult``."""

    def curve(self, stat: str = "median") -> np.ndarray:
        """Median (or mean) over seeds, shape ``(until + 1,)``: below every policy's median (mean)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmedian(self.curves, axis=0) if stat == "median" else np.nanmean(self.curves, axis=0)

    def at(self, levels: Sequence[int], stat: str = "median") -> dict[str, float | None]:
        """The curve at some levels (``None`` beyond ``until`` or without a record)."""
        c = self.curve(stat)
        return {str(lv): (None if lv >= len(c) or not np.isfinite(c[lv]) else round(float(c[lv]), 2))
                for lv in levels}

    def summary(self, levels: Sequence[int]) -> dict[str, Any]:
        """The bound's row of ``vbp gpu-frag --json``: median and mean at ``levels``, time, definition.

        ``converged`` counts, per level, the seeds whose configuration LP converged (``None`` for
        the aggregate method).
        """
        config = self.method == "config"
        return {
            "median": self.at(levels), "mean": self.at(levels, stat="mean"),
            "seconds_per_seed": round(float(sum(self.seconds) / len(self.seconds)), 3),
            "method": self.method,
            "converged": None if not config else {
                str(lv): sum(bool(d[lv].converged) for d in self.details if lv in d) for lv in levels},
            "definition": ("per-node configuration LP (solvers.bounds.gpu_bound.GpuBound, "
                           "solvers.bounds.gpu_config): "
                           "Lagrangian certificate from column generation with exact CP-SAT pricing, at "
                           "least the aggregated LP" if config else
                           "LP relaxation by pod shape x node type (solvers.bounds.gpu_bound.GpuBound)")
                          + ": least unallocated GPU % any placement of the arrived pods can reach"}


def evaluate_bound(instance: Instance, seeds: Sequence[int], until: float = 1.3, *, method: str = "config",
                   config_levels: Sequence[int] = CONFIG_LEVELS, time_limit: float = 300.0,
                   log: Callable[[str], None] | None = None) -> BoundResult:
    """:meth:`GpuBound.levels` on every seed's workload (the same workloads as :func:`evaluate`).

    Args:
        instance: the pod list's cluster.
        seeds: workload seeds.
        until: arrivals until this fraction of the GPU capacity.
        method: ``"config"`` or ``"aggregate"`` (see :class:`GpuBound`).
        config_levels: levels (%) where the configuration LP runs.
        time_limit: seconds of column generation per level and seed.
        log: progress lines.
    """
    top = int(round(until * 100))
    curves, secs, details = [], [], []
    for s in seeds:
        t0 = time.perf_counter()
        wl = build_workload(instance, int(s), until)
        gb = GpuBound(wl.instance, method=method, config_levels=config_levels, time_limit=time_limit)
        curves.append(gb.levels(wl, top, log=log))
        secs.append(time.perf_counter() - t0)
        details.append(dict(gb.config_results))
    return BoundResult([int(s) for s in seeds], np.array(curves).reshape(len(curves), top + 1), secs,
                       method, details)


__all__ = ["BOUND_CLIQUES", "BOUND_METHODS", "CONFIG_LEVELS", "BoundResult", "GpuBound", "evaluate_bound"]
