"""How large the aggregated CP-SAT model of an instance is, without importing CP-SAT.

``auto`` decides its stages by the model's size (:func:`model_size`) before it knows whether it
will run CP-SAT at all; OR-Tools' CP-SAT module (and the pandas it imports) costs a large part of
a short solve, so the counting lives here and :mod:`solvers.exact.cpsat` builds on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from packing.model.instance import Instance
from solvers.result import Objective


def model_hosts(instance: Instance, kind: Objective, upper: float | None) -> np.ndarray:
    """The hosts the model needs, shape ``(m,)``: per type the first ``n_t`` hosts.

    ``n_t = min(count, n_containers, floor(upper / cost))`` when an upper bound on the objective is
    known (``hosts``/``cost``): no solution at most as good as ``upper`` uses more hosts of a type.
    """
    inst = instance
    out = []
    start = 0
    for t in inst.host_types:
        n = min(t.count, inst.n_containers)
        if upper is not None and kind != "deployed":
            c = t.cost if kind == "cost" else 1.0
            if c > 0:
                n = min(n, int(math.floor(upper / c + 1e-9)))
        out.append(np.arange(start, start + n))
        start += t.count
    return np.concatenate(out).astype(np.int64) if out else np.zeros(0, dtype=np.int64)


def model_size(instance: Instance, kind: Objective, upper: float | None = None) -> int:
    """Count variables ``x[a, j]`` the aggregated model of ``instance`` would have (at most).

    Args:
        instance: the instance.
        kind: the objective.
        upper: a known objective value limiting the hosts (see :func:`model_hosts`).
    """
    inst = instance
    hosts = model_hosts(inst, kind, upper)
    if not len(hosts) or not inst.n_apps:
        return 0
    types, first, per_type = np.unique(inst.host_type_of[hosts], return_index=True,
                                       return_counts=True)
    ub = _upper_counts(inst, hosts[first])  # (A, n_types in the model)
    return int(((ub > 0).sum(axis=0) * per_type).sum())


def _upper_counts(instance: Instance, hosts: np.ndarray) -> np.ndarray:
    """Most containers of each app one model host can hold alone, shape ``(n_apps, m)``."""
    inst = instance
    t_of = inst.host_type_of[hosts]
    cap_t = inst.type_capacity  # (T, R)
    d = inst.demand  # (A, R)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(d[:, None, :] > 0, cap_t[None, :, :] / d[:, None, :], np.inf)
    per_type = np.floor(ratio.min(axis=2) + 1e-9) if inst.n_resources else np.full(
        (inst.n_apps, len(inst.host_types)), np.inf)
    per_type = np.minimum(per_type, inst.cap[:, None].astype(np.float64))

    def per_card(a: int, ti: int) -> float | None:
        s = np.asarray(inst.apps[a].gpu_per_card, dtype=np.float64)
        c = np.asarray(inst.host_types[ti].gpu_capacity, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            most = float(np.where(s > 0, np.floor(c / s + 1e-9), np.inf).min(initial=np.inf))
        return most if np.isfinite(most) else None

    limit_by_type(inst, per_type, per_card)
    per_type = np.where(np.isfinite(per_type), per_type, inst.counts[:, None])
    return per_type[:, t_of].astype(np.int64)


def limit_by_type(instance: Instance, per_type: np.ndarray,
                  per_card: Callable[[int, int], float | None]) -> None:
    """Lower the most containers per host to what host types and GPU cards allow, in place.

    Args:
        instance: the instance.
        per_type: most containers of each app one host of each type holds, shape
            ``(n_apps, n_types)``; apps a type may not run get 0, apps of GPU cards at most
            what the type's cards hold.
        per_card: ``per_card(app, type)``: most card-shares of a shared-card app one card of the
            type holds (``None``: no limit).
    """
    allowed = instance.type_allowed
    for a, app in enumerate(instance.apps):
        for ti, t in enumerate(instance.host_types):
            if allowed is not None and not allowed[a, ti]:
                per_type[a, ti] = 0
            elif app.gpu_cards:
                if t.gpus < app.gpu_cards:
                    per_type[a, ti] = 0
                elif app.gpu_whole:
                    per_type[a, ti] = min(per_type[a, ti], t.gpus // app.gpu_cards)
                else:
                    most = per_card(a, ti)
                    if most is not None:
                        per_type[a, ti] = min(per_type[a, ti], (t.gpus * most) // app.gpu_cards)


__all__ = ["limit_by_type", "model_hosts", "model_size"]
