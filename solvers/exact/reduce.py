"""Presolve: drop resources that can never bind and merge apps that are interchangeable.

Two reductions give an equivalent, smaller instance; solutions of the reduced instance lift back
to the original one (:meth:`Reduction.lift`) with the same hosts and the same objective.

Implied resources
    Resource ``r`` is implied by resource ``s`` when every app's demand on ``r`` is at most
    ``alpha`` times its demand on ``s`` (``alpha = max_a d[a, r] / d[a, s]``) and every host type
    has ``alpha * C[t, s] <= C[t, r]``: a host within capacity on ``s`` is then within capacity on
    ``r``. A resource whose total demand fits in the smallest host is implied as well. On the
    random ``binding="cpu"`` instances memory is implied by CPU.
Interchangeable apps
    Apps with equal demand on the kept resources, no GPU cards, in no rule or exclusion and with
    no binding cap (``cap >= count``) differ in nothing the constraints see, so they merge into
    one app whose count is the sum. The reduced instance lists every unmerged app, then the merged
    classes. Merging is done only when it removes at least :data:`MERGE_MIN_SHARE` of the apps:
    the item-ordering symmetry breaking of :mod:`solvers.exact.cpsat` (all counts 1) is worth more than
    a handful of merged pairs.

Lifting a placement gives the containers of a merged class to its apps in order; hosts and GPU
cards are unchanged, so the lifted placement has the same objective (verify it with
:func:`packing.feasibility.checker.check` as always).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from packing.model.instance import UNPLACED, App, Instance, Placement

MERGE_MIN_SHARE = 0.25
"""Merge interchangeable apps only when that removes at least this share of the apps."""


@dataclass(frozen=True)
class Reduction:
    """An instance, its reduced form and the maps between them.

    Attributes:
        original: the instance as given.
        reduced: the equivalent smaller instance.
        kept: indices of the original resources the reduced instance keeps, shape ``(n_kept,)``.
        app_class: reduced app of every original app, shape ``(n_apps,)``.
    """

    original: Instance
    reduced: Instance
    kept: np.ndarray
    app_class: np.ndarray

    @property
    def trivial(self) -> bool:
        """Whether nothing was reduced (``reduced`` is ``original``)."""
        return self.reduced is self.original

    def _members(self) -> list[np.ndarray]:
        """Original apps of each reduced app, in order."""
        order = np.argsort(self.app_class, kind="stable")
        bounds = np.searchsorted(self.app_class[order], np.arange(self.reduced.n_apps + 1))
        return [order[bounds[c]:bounds[c + 1]] for c in range(self.reduced.n_apps)]

    def lift(self, placement: Placement | None) -> Placement | None:
        """A placement of ``reduced`` as a placement of ``original`` (``None`` stays ``None``)."""
        if placement is None or self.trivial:
            return placement
        red, orig = self.reduced, self.original
        host_red = placement.host_array(red)
        host_of = np.full(orig.n_containers, UNPLACED, dtype=np.int64)
        cards: list[tuple[int, ...]] = [()] * orig.n_containers
        for c, members in enumerate(self._members()):
            lo = int(red.offsets[c])
            name = red.apps[c].name
            for a in members.tolist():
                n = int(orig.counts[a])
                o = int(orig.offsets[a])
                host_of[o:o + n] = host_red[lo:lo + n]
                if orig.apps[a].gpu_cards:
                    for j in range(n):
                        cards[o + j] = placement.cards_of(name, lo - int(red.offsets[c]) + j)
                lo += n
        return Placement.from_arrays(orig, host_of, cards if orig.max_gpus else None)

    def project(self, placement: Placement | None) -> Placement | None:
        """A placement of ``original`` as a placement of ``reduced`` (for hints)."""
        if placement is None or self.trivial:
            return placement
        red, orig = self.reduced, self.original
        host_orig = placement.host_array(orig)
        host_of = np.full(red.n_containers, UNPLACED, dtype=np.int64)
        cards: list[tuple[int, ...]] = [()] * red.n_containers
        for c, members in enumerate(self._members()):
            lo = int(red.offsets[c])
            for a in members.tolist():
                n = int(orig.counts[a])
                o = int(orig.offsets[a])
                host_of[lo:lo + n] = host_orig[o:o + n]
                if orig.apps[a].gpu_cards:
                    for j in range(n):
                        cards[lo + j] = placement.cards_of(orig.apps[a].name, j)
                lo += n
        return Placement.from_arrays(red, host_of, cards if red.max_gpus else None)


def implied_resources(instance: Instance) -> np.ndarray:
    """Which resources can never bind, shape ``(n_resources,)`` (see the module docstring).

    Of two resources implying each other only the later one is marked, so at least one stays.
    """
    inst = instance
    n_r = inst.n_resources
    out = np.zeros(n_r, dtype=bool)
    if not inst.n_apps or not len(inst.host_types):
        return out
    d = inst.demand  # (A, R)
    c = inst.type_capacity  # (T, R)
    active = inst.counts > 0
    total = (inst.counts[:, None] * d).sum(axis=0)
    for r in range(n_r):
        if total[r] <= c[:, r].min():
            out[r] = True
            continue
        for s in range(n_r):
            if s == r or out[s]:
                continue
            dr, ds = d[active, r], d[active, s]
            if np.any((dr > 0) & (ds <= 0)):
                continue
            with np.errstate(divide="ignore", invalid="ignore"):
                alpha = float(np.max(np.where(dr > 0, dr / np.where(ds > 0, ds, 1.0), 0.0),
                                     initial=0.0))
            ok = np.all(alpha * c[:, s] <= c[:, r]) and np.all(
                alpha * np.maximum(1.0, c[:, s]) <= np.maximum(1.0, c[:, r]))
            if ok:
                out[r] = True
                break
    if out.all():  # keep one resource so that the model stays well formed
        out[0] = False
    return out


def reduce_instance(instance: Instance) -> Reduction:
    """Drop implied resources and merge interchangeable apps (see the module docstring).

    Args:
        instance: the instance (``initial`` and ``requests`` are dropped: solvers are offline).

    Returns:
        The :class:`Reduction`; ``trivial`` when nothing changed.
    """
    inst = instance
    implied = implied_resources(inst)
    kept = np.flatnonzero(~implied)
    d = inst.demand[:, kept]
    ra, rb, _ = inst.rule_arrays
    in_rule = np.zeros(inst.n_apps, dtype=bool)
    in_rule[ra] = True
    in_rule[rb] = True
    for r in inst.rules:  # self-rules too: their app must keep its name
        for name in (r.a, r.b):
            if name in inst.app_index:
                in_rule[inst.app_index[name]] = True
    free = (~in_rule) & (inst.cap >= inst.counts) & (inst.gpu_cards == 0)
    free &= ~np.array([a.has_topology for a in inst.apps], dtype=bool)  # keep their rules
    if inst.type_allowed is not None:  # a merged class may run on every host type
        free &= inst.type_allowed.all(axis=1)
    groups: dict[tuple[float, ...], list[int]] = {}
    for a in np.flatnonzero(free).tolist():
        groups.setdefault(tuple(d[a].tolist()), []).append(a)
    merged = inst.n_apps - (int((~free).sum()) + len(groups))
    merge = merged >= max(1, MERGE_MIN_SHARE * inst.n_apps)
    if not implied.any() and not merge:
        return Reduction(inst, inst, np.arange(inst.n_resources), np.arange(inst.n_apps))
    app_class = np.empty(inst.n_apps, dtype=np.int64)
    apps: list[App] = []

    def shrink(app: App) -> App:
        dem = tuple(float(v) for v in np.asarray(app.demand, dtype=np.float64)[kept])
        return dataclasses.replace(app, demand=dem)

    for a, app in enumerate(inst.apps):
        if merge and free[a]:
            continue
        app_class[a] = len(apps)
        apps.append(shrink(app))
    if merge:
        taken = {a.name for a in apps}
        for k, (key, members) in enumerate(groups.items()):
            name = f"class{k}"
            while name in taken:
                name = "_" + name
            taken.add(name)
            app_class[members] = len(apps)
            apps.append(App(name, key, int(inst.counts[members].sum())))
    types = tuple(dataclasses.replace(t, capacity=tuple(float(v) for v in
                                                         np.asarray(t.capacity)[kept]))
                  for t in inst.host_types)
    red = inst.replace(resources=tuple(inst.resources[r] for r in kept.tolist()),
                       host_types=types, apps=tuple(apps), initial=None, requests=())
    return Reduction(inst, red, kept, app_class)


__all__ = ["MERGE_MIN_SHARE", "Reduction", "implied_resources", "reduce_instance"]
