"""A time-indexed LP bound on the sum of DAG job finish times: mean busy times on shared machines.

Item 6 of :func:`packing.dag.bounds.capacity_bound` (read its module docstring first: *machines*,
*volumes*, *heads*, *tails*). Where the order and shift bounds see a job as done once both its own
bound and its work on every machine are, this relaxation also sees *when* its work can run and how
long after it the job still needs: a job whose work waits behind the others' cannot then shrink its
own DAG.

On a machine (capacity 1 after dividing by its capacity), count for a task of stage ``s`` the measure
of the smallest slot type it fits (at most what it holds) while it holds its slot. Stage ``s`` of job
``j`` then has counted work ``>= v_s`` (its volume on the machine), accrues it at rate ``<= r_s`` (at
most ``min(tasks, slots it fits)`` tasks at once), from ``arrival_j + head_s`` on, and its last task
ends at least ``tail_s`` before the job does. Take, per stage, the first ``v_s`` units of its counted
work (``F_j``, ``p_j = sum_s v_s`` units per job) and the last ``v_s`` units (``L_j``):

* ``Y_j(t)``, the units of ``F_j`` done by ``t``, is non-decreasing, at most
  ``A_j(t) = sum_s min(v_s, r_s * (t - arrival_j - head_s)^+)``, and the jobs' ``Y`` together grow at
  most as fast as time (the machine's capacity);
* the mean time of ``F_j``'s units is ``M_j >= t_K - (1/p_j) * integral_{t_0}^{t_K} Y_j``, and with the
  integral taken at the right end of each interval of a grid ``t_0 < ... < t_K``,
  ``M_j >= t_K - (1/p_j) * sum_k (t_{k+1} - t_k) Y_j(t_{k+1})``;
* ``L_j``'s units lie no earlier than ``F_j``'s, stage by stage, and at most
  ``V_j(u) = min(u, sum_s min(v_s, r_s * (u - tail_s)^+))`` of them lie in the last ``u`` seconds
  before ``C_j``, so ``C_j >= M_j + tau_j`` with ``tau_j = integral_0^inf (1 - min(1, V_j(u) / p_j)) du``
  (taken at right ends: smaller);
* ``C_j >= own_j``, the job's own bound.

Every episode gives values ``x_jk = Y_j(t_{k+1}) - Y_j(t_k) >= 0`` (the units done in interval ``k``)
and ``C_j`` that satisfy these constraints on every machine at once (``Y`` is the running sum of the
``x``; its cap ``A_j`` takes a row only while it is below ``p_j``, then one row caps the sum at ``p_j``;
the integral becomes ``sum_k x_jk (t_K - t_k)``), so the least ``sum_j C_j`` of the LP over those values
is a lower bound on the sum of finish times. It is read from a dual solution (any non-negative
multipliers give a bound; the multipliers of HiGHS' optimum give the LP's optimum up to rounding), so
the solver's tolerances do not leak into the proof.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

LP_JOBS = 400
"""Above this many jobs :func:`packing.dag.bounds.capacity_bound` skips this bound (its LP grows as
jobs x intervals x machines)."""

LP_MACHINES = 3
"""Machines in the joint LP: the ones whose LP alone (on a grid twice as coarse) proves the most."""

LP_STEP_SHARE = 0.1
"""Grid step: this share of the jobs' mean own bound (JCT)."""

LP_INTERVALS = 600
"""Most intervals of the grid (a coarser step beyond: the bound stays valid, only looser)."""


@dataclass(frozen=True)
class BusyMachine:
    """One machine's share of every stage, in seconds of the machine's whole capacity.

    Attributes:
        volume: each stage's least counted work on the machine, shape ``(S,)`` (0: not on it).
        rate: the most counted work each stage does per second, shape ``(S,)``.
    """

    volume: np.ndarray
    rate: np.ndarray


def right_end_tau(volume: np.ndarray, rate: np.ndarray, tail: np.ndarray, points: int = 4000) -> float:
    """``tau`` of one job on one machine (module docstring), from below, for its stages with volume.

    Args:
        volume: the stages' volumes ``v_s`` (all ``> 0``), shape ``(k,)``.
        rate: their rates ``r_s`` (all ``> 0``), shape ``(k,)``.
        tail: their least tails, shape ``(k,)``.
        points: right ends of the Riemann sum.
    """
    p = float(volume.sum())
    if p <= 0:
        return 0.0
    end = max(float((tail + volume / rate).max()), p)  # V(end) >= p: the integrand is 0 beyond
    du = end / points
    u = du * np.arange(1, points + 1)
    v = np.minimum(volume[None, :], rate[None, :] * np.maximum(0.0, u[:, None] - tail[None, :])).sum(axis=1)
    return float(du * np.maximum(0.0, 1.0 - np.minimum(u, v) / p).sum())


def busy_time_bound(own: np.ndarray, arrival: np.ndarray, machines: list[BusyMachine], first: np.ndarray,
                    head: np.ndarray, tail: np.ndarray, grid: np.ndarray) -> float:
    """The LP bound on ``sum_j C_j`` over ``machines`` together (module docstring).

    Args:
        own: each job's own bound on its finish time, shape ``(J,)``.
        arrival: arrivals, shape ``(J,)``.
        machines: the machines.
        first: index of each job's first stage, shape ``(J + 1,)``.
        head: least time from arrival until each stage is runnable, shape ``(S,)``.
        tail: least time from the end of any task of each stage until its job ends, shape ``(S,)``.
        grid: ``t_0 <= min(arrival)`` and increasing times, shape ``(K + 1,)``.

    Returns:
        A lower bound on the sum of finish times (``sum(own)`` when the LP fails).
    """
    from scipy.optimize import linprog

    J, K = len(own), len(grid) - 1
    dt = np.diff(grid)
    t_end = float(grid[-1])
    ub: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    rhs: list[np.ndarray] = []
    n_var, n_row = 0, 0
    c_rows: list[tuple[int, int]] = []  # (row, job) of each completion row
    for m in machines:
        cap_cols: list[np.ndarray] = []  # per job: its variables, for the capacity rows
        for j in range(J):
            sl = slice(int(first[j]), int(first[j + 1]))
            on = m.volume[sl] > 0
            if not on.any():
                continue
            v, r = m.volume[sl][on], m.rate[sl][on]
            start = arrival[j] + head[sl][on]
            p = float(v.sum())
            room = r[None, :] * np.maximum(0.0, grid[1:, None] - start[None, :])  # (K, k)
            a = np.minimum(v[None, :], room).sum(axis=1)  # (K,) A_j at the grid's right ends
            k0 = min(int(np.searchsorted(a > 0, True)), K - 1)  # no work before its first room
            n = K - k0
            idx = n_var + np.arange(n)  # x_k: the units of F_j done in interval k (>= 0)
            ub.append(np.minimum(a[k0:], p))
            n_var += n
            ks = np.full(K, -1)
            ks[k0:] = idx
            cap_cols.append(ks)
            # Y_j(t_(k+1)) = sum of x up to k <= A_j(t_(k+1)) while that is below p; then one row caps
            # the whole sum at p (none needed when A stays below p: its last row caps the sum already)
            sat = min(int(np.searchsorted(a[k0:] >= p, True)), n)  # intervals (from k0) with A < p
            for i in list(range(sat)) + ([n - 1] if sat < n else []):
                rows.append(np.full(i + 1, n_row))
                cols.append(idx[: i + 1])
                vals.append(np.ones(i + 1))
                rhs.append(np.array([min(float(a[k0 + i]), p)]))
                n_row += 1
            # sum_k dt_k Y_j(t_(k+1)) = sum_k x_k (t_K - t_k)
            tau = right_end_tau(v, r, tail[sl][on])
            rows.append(np.full(n, n_row))
            cols.append(idx)
            vals.append(-(t_end - grid[k0:-1]) / p)
            rhs.append(np.array([-(t_end + tau)]))
            c_rows.append((n_row, j))
            n_row += 1
        if not cap_cols:
            continue
        ks = np.stack(cap_cols)  # (J_m, K) variable of x_jk, -1 where it is 0
        for k in range(K):  # sum_j x_jk <= t_(k+1) - t_k
            now = ks[:, k][ks[:, k] >= 0]
            rows.append(np.full(len(now), n_row))
            cols.append(now)
            vals.append(np.ones(len(now)))
            rhs.append(np.array([dt[k]]))
            n_row += 1
    if not c_rows:
        return float(own.sum())
    c_var = n_var + np.arange(J)
    cr = np.array([r for r, _ in c_rows])
    cj = np.array([j for _, j in c_rows])
    rows.append(cr)
    cols.append(c_var[cj])
    vals.append(-np.ones(len(cr)))
    n_all = n_var + J
    a_ub = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n_row, n_all))
    b_ub = np.concatenate(rhs)
    lo = np.concatenate([np.zeros(n_var), own])
    hi = np.concatenate(ub + [np.full(J, np.inf)])
    cost = np.concatenate([np.zeros(n_var), np.ones(J)])
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=np.stack([lo, hi], axis=1), method="highs")
    if res.status != 0 or res.ineqlin is None:  # pragma: no cover - numerical trouble: no bound
        return float(own.sum())
    lam = np.maximum(0.0, -np.asarray(res.ineqlin.marginals, dtype=np.float64))  # (rows,) >= 0
    # C_j's reduced cost 1 - (its completion multipliers) must not be negative (C_j has no upper bound)
    per_job = np.bincount(cj, weights=lam[cr], minlength=J)
    scale = np.where(per_job > 1.0 - 1e-12, (1.0 - 1e-12) / np.maximum(per_job, 1e-300), 1.0)
    lam[cr] *= scale[cj]
    red = cost + a_ub.T @ lam  # (vars,) reduced costs of the Lagrangian
    box = np.where(red >= 0, red * lo, red * np.where(np.isfinite(hi), hi, 0.0))
    box[(red < 0) & ~np.isfinite(hi)] = -np.inf  # pragma: no cover - excluded by the scaling above
    total = float(box.sum() - lam @ b_ub)
    return total - 1e-9 * abs(total)  # less the rounding of the sums above


def busy_grid(arrival: np.ndarray, own: np.ndarray, volume_total: float, *, step_share: float = LP_STEP_SHARE,
              intervals: int = LP_INTERVALS) -> np.ndarray:
    """The grid of :func:`busy_time_bound`, shape ``(K + 1,)``.

    From the first arrival, steps of ``step_share`` of the mean own JCT, to the latest own bound or the
    first arrival plus ``volume_total`` (the later), plus one mean own JCT; at most ``intervals`` steps
    (longer ones then).
    """
    t0 = float(arrival.min())
    mean_own = max(float((own - arrival).mean()), 1e-6)
    end = max(float(own.max()), t0 + volume_total) + mean_own
    k = int(min(intervals, max(1, np.ceil((end - t0) / (step_share * mean_own)))))
    return np.linspace(t0, t0 + k * max(step_share * mean_own, (end - t0) / k), k + 1)


__all__ = ["LP_INTERVALS", "LP_JOBS", "LP_MACHINES", "LP_STEP_SHARE", "BusyMachine", "busy_grid",
           "busy_time_bound", "right_end_tau"]
