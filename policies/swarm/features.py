"""Host features phi(host, request) of the swarm-tuned scoring policy.

Every feature is computed for every host as if the container were placed there, and is normalised
by fixed scales of the decision (each resource by the host's capacity, slots by the app's cap, the
index by the number of hosts): per-resource terms lie in ``[-1, 1]`` and the sums over the R
resources in ``[-R, R]``, so weights are comparable across features, decisions and instances. The
sums are not divided by R so that Best-Fit, dot-product and L2 are reproduced bit for bit. Fixed
scales (not a min-max over the feasible hosts) keep the compiled kernel, which scores only a subset
of the hosts, exactly equal to this reference.

With ``c`` the host capacity, ``u`` its load and ``d`` the demand, per resource (a resource with zero
capacity contributes 0), ``resid = (c - u - d) / c``:

=====================  =========================================================================
name                   value per host
=====================  =========================================================================
``best_fit``           ``-sum(resid)``: allocation after placing (Best-Fit, MostAllocated)
``bottleneck``         ``-max(resid)``: the fullest resource after placing (bottleneck Best-Fit)
``balance``            ``1 - std(1 - resid)``: balanced utilisation after placing
``dot``                ``sum(d/c * (c-u)/c)``: dot-product alignment (Panigrahy et al.)
``l2``                 ``-sum(((c-u)/c - d/c)^2)``: L2 residual (Panigrahy et al.)
``aa_slots``           ``(cap - count - 1) / cap``: anti-affinity slots of this app left after placing
``exclusion_pressure`` share of the host that still-pending containers of apps excluded by this one
                       (rules with k = 0, either way) would lose if this app lands here first
``opens_empty``        1 if the host runs nothing yet
``first_fit``          ``-host / n_hosts``: the host's index (First-Fit order)
``open_need``          on an empty host only: ``max_r (P_r + d_r - F_r) / c_r`` clipped to
                       ``[-1, 1]``, with ``P`` the demand still to arrive and ``F`` the free room
                       on the hosts in use: positive while what is coming does not fit in the room
                       already open, so a positive weight spreads early deployments over the hosts
                       the stream will need anyway (0 on hosts in use)
=====================  =========================================================================

A policy with weight 1 on ``best_fit`` and 0 elsewhere makes exactly Best-Fit's decisions, and one
with weight 1 on ``first_fit`` makes First-Fit's (ties go to the lowest host index in every case).
"""

from __future__ import annotations

import numpy as np

from packing.model.instance import Instance
from packing.sim.policy import Observation
from policies.scoring import colsum as _colsum
from policies.scoring import ratios as _ratios

FEATURES: tuple[str, ...] = (
    "best_fit",
    "bottleneck",
    "balance",
    "dot",
    "l2",
    "aa_slots",
    "exclusion_pressure",
    "opens_empty",
    "first_fit",
    "open_need",
)
"""Feature names, in the order of the weight vector."""

N_FEATURES = len(FEATURES)


def exclusion_partners(instance: Instance) -> list[np.ndarray]:
    """For each app, the apps it may never share a host with (a rule with k = 0, either way).

    Returns:
        One int array of app indices per app (length ``n_apps``).
    """
    ra, rb, rk = instance.rule_arrays
    zero = rk == 0
    partners: list[set[int]] = [set() for _ in range(instance.n_apps)]
    for a, b in zip(ra[zero], rb[zero], strict=True):
        partners[int(a)].add(int(b))
        partners[int(b)].add(int(a))
    return [np.array(sorted(p), dtype=np.int64) for p in partners]


def host_features(obs: Observation, partners: list[np.ndarray] | None = None) -> np.ndarray:
    """All features for the container of ``obs`` on every host.

    Args:
        obs: the decision.
        partners: :func:`exclusion_partners` of the instance (computed if omitted).

    Returns:
        Features, shape ``(n_hosts, N_FEATURES)``, columns in :data:`FEATURES` order.
    """
    inst = obs.instance
    a = obs.app
    c = obs.capacity
    pos = c > 0
    safe = np.where(pos, c, 1.0)
    resid, dn, fb = _ratios(obs)  # the same arithmetic as the heuristics and their kernels
    n_r = inst.n_resources
    util = 1.0 - resid
    mean = _colsum(util) / n_r
    std = np.sqrt(_colsum((util - mean[:, None]) ** 2) / n_r)
    n_h = inst.n_hosts
    f = np.empty((n_h, N_FEATURES), dtype=np.float64)
    f[:, 0] = -_colsum(resid)
    f[:, 1] = -resid.max(axis=1)
    f[:, 2] = 1.0 - std
    f[:, 3] = _colsum(dn * fb)
    f[:, 4] = -_colsum((fb - dn) ** 2)
    count = obs.app_count(a)
    cap = float(inst.cap[a])
    f[:, 5] = (cap - count - 1.0) / cap if cap > 0 else 0.0
    if partners is None:
        partners = exclusion_partners(inst)
    lost = np.zeros(n_h)
    for b in partners[a]:  # hosts-worth of pending excluded demand: sum_b pending_b * mean_r(d_b/c)
        size = _colsum(np.where(pos, inst.demand[b][None, :] / safe, 0.0)) / n_r
        lost = lost + size * float(obs.pending[b])
    free_after = _colsum(resid) / n_r
    f[:, 6] = np.where(count == 0, np.minimum(np.maximum(free_after, 0.0), lost), 0.0)
    f[:, 7] = (obs.state.n_on == 0).astype(np.float64)
    f[:, 8] = -np.arange(n_h, dtype=np.float64) / max(n_h, 1)
    f[:, 9] = open_need(obs)
    return f


def open_need(obs: Observation) -> np.ndarray:
    """The ``open_need`` feature per host, shape ``(n_hosts,)`` (0 on hosts in use).

    Sums run in index order (hosts, then apps), as in the compiled kernel, so both agree exactly.
    """
    inst = obs.instance
    st = obs.state
    c = st.capacity
    is_open = st.n_on > 0
    free_open = np.cumsum(np.where(is_open[:, None], c - st.used, 0.0), axis=0)[-1]
    coming = np.cumsum(obs.pending[:, None] * inst.demand, axis=0)[-1] + inst.demand[obs.app]
    safe = np.where(c > 0, c, 1.0)
    terms = np.where(c > 0, (coming[None, :] - free_open[None, :]) / safe, -np.inf)
    v = terms.max(axis=1)
    v = np.where(np.isfinite(v), np.clip(v, -1.0, 1.0), 0.0)
    return np.where(is_open, 0.0, v)


def linear_score(features: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``features @ weights`` summed feature by feature in order (as the compiled kernel does).

    Args:
        features: shape ``(n_hosts, F)``.
        weights: shape ``(F,)``.

    Returns:
        Scores, shape ``(n_hosts,)``.
    """
    s = np.zeros(features.shape[0])
    for i in range(features.shape[1]):
        s = s + features[:, i] * weights[i]
    return s
