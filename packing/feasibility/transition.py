"""Changing a running placement into another: pinned pods stay, closed hosts take no more, few moves.

:func:`check_transition` judges the step from ``before`` (where the containers run now) to
``after`` (a placement the one checker, :func:`packing.feasibility.checker.check`, accepts):

* a *fixed* container (a pinned pod: cluster-autoscaler's ``safe-to-evict: "false"``, Karpenter's
  ``do-not-disrupt``, a bare pod, local storage) is on the same host after;
* a *closed* host (a cordoned node, ``spec.unschedulable``; or, per app, a node whose labels
  or taints no longer admit the app) runs no more containers of an app after than before;
* with a budget, at most ``max_moves`` containers that ran before run on another host after
  (containers of one app are alike: per app and host, the containers that leave count).

Used by :mod:`solvers.consolidate` on every answer.
"""

from __future__ import annotations

import numpy as np

from packing.feasibility.checker import Violation
from packing.model.instance import UNPLACED, Instance

KINDS = ("fixed", "closed_host", "moves")
"""The kinds of violation :func:`check_transition` reports."""


def _counts(inst: Instance, host_of: np.ndarray) -> np.ndarray:
    x = np.zeros((inst.n_apps, inst.n_hosts), dtype=np.int64)
    ok = host_of != UNPLACED
    np.add.at(x, (inst.container_app[ok], host_of[ok]), 1)
    return x


def check_transition(instance: Instance, before: np.ndarray, after: np.ndarray, *,
                     fixed: np.ndarray | None = None, closed: np.ndarray | None = None,
                     max_moves: int | None = None) -> list[Violation]:
    """The violations of the step from ``before`` to ``after`` (see the module docstring).

    Args:
        instance: the instance.
        before: host per container now, shape ``(n_containers,)`` (-1: not running).
        after: host per container after, shape ``(n_containers,)``.
        fixed: containers that must stay, shape ``(n_containers,)`` bool.
        closed: hosts that take no new container, shape ``(n_hosts,)`` bool, or per app and
            host, shape ``(n_apps, n_hosts)``.
        max_moves: most containers that move (``None``: no limit).
    """
    inst = instance
    out: list[Violation] = []
    names = inst.host_names
    apps = inst.container_app
    if fixed is not None:
        for c in np.flatnonzero(fixed & (before != after)).tolist():
            app = inst.apps[int(apps[c])].name
            out.append(Violation("fixed", f"a pinned container of {app!r} leaves "
                                 f"{names[before[c]] if before[c] >= 0 else 'nowhere'}", app=app))
    x0, x1 = _counts(inst, before), _counts(inst, after)
    if closed is not None:
        shut = closed if closed.ndim == 2 else np.broadcast_to(closed[None, :], x0.shape)
        for a, h in zip(*np.nonzero((x1 > x0) & shut), strict=True):
            out.append(Violation("closed_host", f"{names[h]} is closed to it and gets "
                                 f"{x1[a, h] - x0[a, h]} more of {inst.apps[a].name!r}",
                                 host=int(h), app=inst.apps[a].name))
    if max_moves is not None:
        moved = int(np.maximum(x0 - x1, 0).sum())
        if moved > max_moves:
            out.append(Violation("moves", f"{moved} containers move, more than the {max_moves} "
                                 "allowed"))
    return out


__all__ = ["KINDS", "check_transition"]
