"""Moving pods one at a time on a consolidation problem, with the one feasibility logic.

:class:`ClusterFit` keeps a solution ``x`` (pods per app and host, :mod:`packing.cluster.problem`)
and the :class:`packing.feasibility.predicates.ClusterState` of its instance, so whether a pod fits
on a host is decided by :meth:`ClusterState.mask` (capacity, per-host caps, exclusions, node
selection and taints), plus the rule of a running cluster it does not know: a host takes no pod
of an app beyond those it runs now when it is cordoned or no longer admits the app
(:attr:`packing.cluster.problem.ClusterProblem.limited`). The greedy parts of the solvers and the autoscaler
baselines (:mod:`policies.autoscalers`) move pods through it.
"""

from __future__ import annotations

import numpy as np

from packing.cluster.problem import ClusterProblem
from packing.feasibility.predicates import ClusterState


class ClusterFit:
    """A solution being changed pod by pod (see the module docstring).

    Args:
        problem: the problem.
        x: the solution to start from, shape ``(A, H)`` (copied).
    """

    def __init__(self, problem: ClusterProblem, x: np.ndarray) -> None:
        self.problem = problem
        self.x = np.array(x, dtype=np.int64, copy=True)
        inst = problem.instance
        self.state = ClusterState.from_placement(inst, problem.assign(self.x))
        self.n_moves = problem.moves(self.x)
        self.log: list[tuple[int, int, int]] = []
        scale = np.where(problem.capacity > 0, problem.capacity, 1).astype(np.float64)
        self._scale = scale  # (H, R)

    # ------------------------------------------------------------------------------------
    def mask(self, app: int, exclude: np.ndarray | None = None) -> np.ndarray:
        """Hosts that can take one more pod of ``app``, shape ``(H,)``.

        Args:
            app: the app.
            exclude: hosts not to use, shape ``(H,)`` bool.
        """
        P = self.problem
        ok = self.state.mask(app)
        ok &= P.allowed[app] & (~P.limited[app] | (self.x[app] < P.orig[app]))
        if exclude is not None:
            ok &= ~exclude
        return ok

    def used(self) -> np.ndarray:
        """Hosts with a pod, shape ``(H,)``."""
        return self.state.n_on > 0

    def cost(self) -> float:
        """The price of the used hosts."""
        return float(self.problem.price[self.used()].sum())

    def mark(self) -> int:
        """A point to :meth:`rollback` to."""
        return len(self.log)

    def rollback(self, mark: int) -> None:
        """Undo every move made since ``mark``."""
        while len(self.log) > mark:
            app, src, dst = self.log.pop()
            self.move(app, dst, src)
            self.log.pop()

    def move(self, app: int, src: int, dst: int) -> None:
        """Move one pod of ``app`` from host ``src`` to host ``dst`` (``src`` -1: a Pending pod)."""
        P = self.problem
        self.log.append((app, src, dst))
        if src >= 0:
            if self.x[app, src] <= P.orig[app, src]:
                self.n_moves += 1
            self.x[app, src] -= 1
            self.state.remove(app, src)
        if self.x[app, dst] < P.orig[app, dst]:
            self.n_moves -= 1
        self.x[app, dst] += 1
        self.state.place(app, dst)

    def fill_after(self, app: int, hosts: np.ndarray) -> np.ndarray:
        """How full each of ``hosts`` would be with one more pod of ``app`` (the fullest resource)."""
        P = self.problem
        load = self.state.used[hosts] + P.instance.demand[app]
        cap = P.instance.host_capacity[hosts]
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(cap > 0, load / np.where(cap > 0, cap, 1), 0.0)
        return share.max(axis=1) if share.size else np.zeros(len(hosts))

    def best_fit(self, app: int, exclude: np.ndarray | None = None,
                 prefer: np.ndarray | None = None) -> int:
        """The host for one more pod of ``app`` (best fit), -1 when none fits.

        Among the ``prefer`` hosts that fit when any does (else among all that fit), the one left
        fullest.
        """
        ok = self.mask(app, exclude)
        if prefer is not None and (ok & prefer).any():
            ok &= prefer
        cand = np.flatnonzero(ok)
        if not len(cand):
            return -1
        fill = self.fill_after(app, cand)
        return int(cand[int(np.argmax(fill))])

    def drain(self, host: int, exclude: np.ndarray, budget: int | None = None,
              prefer: np.ndarray | None = None) -> bool:
        """Move every movable pod off ``host`` (largest first, best fit), or change nothing.

        Args:
            host: the host to empty.
            exclude: hosts the pods may not go to (``host`` is added).
            budget: most moves the whole solution may have (``None``: no limit).
            prefer: hosts to use before the others (e.g. those already in use).

        Returns:
            Whether the host is empty of movable pods now (on ``False`` nothing changed).
        """
        P = self.problem
        apps = np.flatnonzero((self.x[:, host] > 0) & ~P.pinned)
        if P.pinned[self.x[:, host] > 0].any():
            return False
        size = (P.demand[apps] / self._scale[host]).max(axis=1) if len(apps) else np.zeros(0)
        start = self.mark()
        ex = exclude.copy()
        ex[host] = True
        for a in apps[np.argsort(-size, kind="stable")].tolist():
            for _ in range(int(self.x[a, host])):
                dst = self.best_fit(a, ex, prefer)
                if dst < 0:
                    self.rollback(start)
                    return False
                self.move(a, host, dst)
                if budget is not None and self.n_moves > budget:
                    self.rollback(start)
                    return False
        return True


def start(problem: ClusterProblem, max_moves: int | None = None) -> np.ndarray | None:
    """The running cluster with the Pending pods placed, or ``None`` when that fails.

    Every pod stays where it runs; the Pending pods, largest first, go best fit on the nodes
    already used, then on any node, then on a new node of the cheapest type that takes them
    (first fit decreasing onto the cheapest type that fits, as cluster-autoscaler and Karpenter
    provision). A node over its capacity now first sheds pods (the smallest first) onto others.
    """
    P = problem
    fit = ClusterFit(P, P.orig)
    over = (P.load(P.orig) > P.capacity).any(axis=1)
    for h in np.flatnonzero(over).tolist():
        apps = [a for a in np.flatnonzero((fit.x[:, h] > 0) & ~P.pinned).tolist()]
        apps.sort(key=lambda a: (P.demand[a] / np.maximum(P.capacity[h], 1)).max())
        for a in apps:
            while fit.x[a, h] > 0 and (P.load(fit.x)[h] > P.capacity[h]).any():
                away = np.zeros(P.n_hosts, dtype=bool)
                away[h] = True
                dst = fit.best_fit(a, away, prefer=fit.used() & P.existing)
                if dst < 0:
                    break
                fit.move(a, h, dst)
        if (P.load(fit.x)[h] > P.capacity[h]).any():
            return None
    pending = P.counts - fit.x.sum(axis=1)
    scale = np.maximum(P.capacity.max(axis=0), 1)
    size = (P.demand / scale).max(axis=1)
    order = sorted(np.flatnonzero(pending > 0).tolist(), key=lambda a: (-size[a], a))
    cheap = np.argsort(P.price, kind="stable")
    for a in order:
        for _ in range(int(pending[a])):
            dst = fit.best_fit(a, prefer=fit.used() & P.existing)
            if dst < 0 or not P.existing[dst]:
                ok = fit.mask(a) & ~P.existing
                cand = [h for h in cheap.tolist() if ok[h]]
                dst = cand[0] if cand else dst
            if dst < 0:
                return None
            fit.move(a, -1, dst)
    if max_moves is not None and fit.n_moves > max_moves:
        return None
    return fit.x


__all__ = ["ClusterFit", "start"]
