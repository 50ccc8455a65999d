"""The one feasibility logic: predicates and the cluster state both the checker and the simulator use.

Feasibility is decided only by the three predicates below (:func:`fits`, :func:`over_cap`,
:func:`rule_broken`) applied to host loads, per-card GPU loads and per-host app counts. The checker
(:mod:`packing.feasibility.checker`) applies them to the state a whole placement produces; the simulator's
filter (:meth:`ClusterState.mask`) applies them to the state that placing one more container would
produce. The predicates are plain arithmetic, so they work elementwise on NumPy arrays and can be
compiled with ``numba.njit`` for a fast kernel without changing their meaning.

A container that takes GPU cards whole loads each card with its full capacity, so "whole card" needs
no special case: the card fits it only when empty, and nothing fits on it afterwards.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from packing.model import topology
from packing.model.instance import UNPLACED, Instance

TOL = 1e-9
"""Relative tolerance of capacity comparisons (absolute for capacities below 1)."""


def fits(load: Any, capacity: Any) -> Any:
    """True where ``load`` is within ``capacity`` (elementwise on arrays or scalars, with :data:`TOL`)."""
    return load <= capacity + TOL * np.maximum(1.0, np.abs(capacity))


def over_cap(count: Any, cap: Any) -> Any:
    """True where a per-host count exceeds the anti-affinity cap (elementwise)."""
    return count > cap


def rule_broken(count_a: Any, count_b: Any, k: Any) -> Any:
    """True where rule ``<A, B, k>`` is broken: the host runs A and more than ``k`` of B (elementwise)."""
    return (count_a > 0) & (count_b > k)


def _rule_tables(inst: Instance, col: np.ndarray) -> tuple[np.ndarray, ...]:
    """CSR tables of the cross-app rules per app, in count-table columns.

    Returns:
        ``(in_ptr, in_cols, in_k, out_ptr, out_cols, out_k)``: the rules ``<A, b, k>`` that limit app
        ``b`` are ``in_cols[in_ptr[b]:in_ptr[b+1]]`` (the count columns of their A) with ``in_k``;
        the rules ``<a, B, k>`` of app ``a`` are ``out_cols[out_ptr[a]:out_ptr[a+1]]`` (columns of
        B). Pointers have shape ``(n_apps + 1,)``; all arrays are int64.
    """
    ra, rb, rk = inst.rule_arrays
    out: list[np.ndarray] = []
    for key, other in ((rb, ra), (ra, rb)):
        order = np.argsort(key, kind="stable")
        ptr = np.searchsorted(key[order], np.arange(inst.n_apps + 1)).astype(np.int64)
        out += [ptr, col[other[order]].astype(np.int64), rk[order].astype(np.int64)]
    return tuple(out)


class _Layout(NamedTuple):
    """What a :class:`ClusterState` derives from its instance alone (read-only, shared by all states)."""

    col: np.ndarray
    n_tracked: int
    rule_tables: tuple[np.ndarray, ...]
    card_capacity: np.ndarray
    card_exists: np.ndarray
    simple: bool
    """No GPU cards, no host-type restriction (``Instance.type_allowed`` is None) and no topology
    rules: the compiled episode paths cover the instance."""


_LAYOUTS: dict[int, tuple[weakref.ref[Instance], _Layout]] = {}


def _layout(inst: Instance) -> _Layout:
    """The instance's :class:`_Layout`, built once per instance (cached by identity)."""
    hit = _LAYOUTS.get(id(inst))
    if hit is not None and hit[0]() is inst:
        return hit[1]
    ra, rb, _ = inst.rule_arrays
    tracked = np.zeros(inst.n_apps, dtype=bool)
    tracked[inst.cap < inst.counts] = True
    tracked[ra] = True
    tracked[rb] = True
    tracked[[a.has_topology for a in inst.apps]] = True
    col = np.full(inst.n_apps, -1, dtype=np.int64)
    col[tracked] = np.arange(int(tracked.sum()))
    tables = _rule_tables(inst, col)
    card_capacity = inst.card_capacity[inst.host_type_of]
    card_exists = np.arange(inst.max_gpus)[None, :] < inst.host_gpus[:, None]
    for a in (col, card_capacity, card_exists, *tables):
        a.setflags(write=False)
    simple = (inst.max_gpus == 0 and not bool(np.any(inst.gpu_cards > 0))
              and inst.type_allowed is None and not inst.has_topology)
    layout = _Layout(col, int(tracked.sum()), tables, card_capacity, card_exists, simple)
    if len(_LAYOUTS) >= 64:
        _LAYOUTS.clear()
    _LAYOUTS[id(inst)] = (weakref.ref(inst), layout)
    return layout


class ClusterState:
    """Loads and app counts of every host; mutable, owned by one checker run or simulation.

    Attributes:
        instance: the instance.
        used: load per host and resource, shape ``(n_hosts, n_resources)``.
        card_used: load per host, card and GPU resource, shape ``(n_hosts, max_gpus, n_gpu_res)``.
        count: containers per host of each tracked app, shape ``(n_hosts, n_tracked)``.
        col: column of each app in ``count``, shape ``(n_apps,)``; -1 for apps that need no
            per-host count (no cap below their count, in no rule).
        n_on: containers per host, shape ``(n_hosts,)``.
        rule_tables: the rules per app as CSR arrays (see :func:`_rule_tables`).
    """

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        inst = instance
        n_h, n_r = inst.n_hosts, inst.n_resources
        layout = _layout(inst)
        self.capacity = inst.host_capacity
        self.used = np.zeros((n_h, n_r), dtype=np.float64)
        self.card_capacity = layout.card_capacity  # (n_hosts, n_gpu_res)
        self.card_used = np.zeros((n_h, inst.max_gpus, len(inst.gpu_resources)), dtype=np.float64)
        # a card index beyond a host's card count is never usable
        self.card_exists = layout.card_exists
        self.col = layout.col
        self.count = np.zeros((n_h, layout.n_tracked), dtype=np.int32)
        self.n_on = np.zeros(n_h, dtype=np.int64)
        # rules by the app they constrain, as CSR tables over apps (see rule_tables)
        self.rule_tables = layout.rule_tables
        self.simple = layout.simple
        """No GPU cards and no host-type restriction (the compiled paths cover this state)."""
        # allowed host types per app (GPU models, node selection, taints); None: all allowed
        self._type_ok: np.ndarray | None = inst.type_allowed

    # ------------------------------------------------------------------------------------
    def copy(self) -> ClusterState:
        """An independent copy (shares the immutable instance and rule tables)."""
        new = object.__new__(ClusterState)
        new.__dict__.update(self.__dict__)
        new.used = self.used.copy()
        new.card_used = self.card_used.copy()
        new.count = self.count.copy()
        new.n_on = self.n_on.copy()
        return new

    def type_allowed(self, app: int) -> np.ndarray:
        """Whether each host's type admits the app (``Instance.type_allowed``), shape ``(n_hosts,)``."""
        if self._type_ok is None:
            return np.ones(self.instance.n_hosts, dtype=bool)
        return self._type_ok[app][self.instance.host_type_of]

    def card_load(self, app: int, host: int) -> np.ndarray:
        """Load one container of ``app`` puts on each of its cards on ``host``, ``(n_gpu_res,)``."""
        if self.instance.apps[app].gpu_whole:
            return self.card_capacity[host]
        return self.instance.gpu_demand[app]

    def cards_fitting(self, app: int, host: int) -> np.ndarray:
        """Indices of the cards of ``host`` that can take one more card-share of ``app``."""
        load = self.card_load(app, host)
        ok = fits(self.card_used[host] + load, self.card_capacity[host]).all(axis=1)
        ok &= self.card_exists[host]
        return np.flatnonzero(ok)

    def choose_cards(self, app: int, host: int) -> tuple[int, ...]:
        """Cards for one container of ``app`` on ``host``: the fullest fitting cards, then by index.

        Returns an empty tuple for apps without GPU demand; raises ``ValueError`` when the host
        lacks enough fitting cards (callers check :meth:`mask` first).
        """
        k = int(self.instance.gpu_cards[app])
        if k == 0:
            return ()
        cand = self.cards_fitting(app, host)
        if len(cand) < k:
            raise ValueError(f"host {host} has {len(cand)} fitting cards, app needs {k}")
        fill = self.card_used[host, cand].sum(axis=1)
        order = np.lexsort((cand, -fill))
        return tuple(sorted(int(c) for c in cand[order[:k]]))

    # ------------------------------------------------------------------------------------
    def mask(self, app: int) -> np.ndarray:
        """Hosts that can take one more container of ``app``, shape ``(n_hosts,)`` bool.

        The state after the placement must satisfy every predicate: capacity per resource,
        GPU cards, anti-affinity cap, every ``<A, B, k>`` rule that involves the app, and the
        host's type must admit the app (``Instance.type_allowed``), and the app's topology
        rules must hold for one more container (:func:`packing.model.topology.mask`: domain caps, and
        spread relative to the current smallest count of the eligible domains).
        """
        inst = self.instance
        ok = fits(self.used + inst.demand[app], self.capacity).all(axis=1)
        c = self.col[app]
        if c >= 0:
            after = self.count[:, c] + 1
            ok &= ~over_cap(after, int(inst.cap[app]))
            in_ptr, in_cols, in_k, out_ptr, out_cols, out_k = self.rule_tables
            lo, hi = in_ptr[app], in_ptr[app + 1]
            if hi > lo:
                ok &= ~rule_broken(self.count[:, in_cols[lo:hi]], after[:, None],
                                   in_k[lo:hi]).any(axis=1)
            lo, hi = out_ptr[app], out_ptr[app + 1]
            if hi > lo:
                ok &= ~rule_broken(after[:, None], self.count[:, out_cols[lo:hi]],
                                   out_k[lo:hi]).any(axis=1)
        k = int(inst.gpu_cards[app])
        if k:
            if inst.apps[app].gpu_whole:
                load = self.card_capacity[:, None, :]
            else:
                load = inst.gpu_demand[app][None, None, :]
            card_ok = fits(self.card_used + load, self.card_capacity[:, None, :]).all(axis=2)
            card_ok &= self.card_exists
            ok &= card_ok.sum(axis=1) >= k
        if self._type_ok is not None:
            ok &= self.type_allowed(app)
        if inst.apps[app].has_topology:
            ok &= topology.mask(inst, app, self.count[:, c], self.n_on > 0)
        return ok

    def can_place(self, app: int, host: int) -> bool:
        """Whether one more container of ``app`` fits on ``host`` (see :meth:`mask`)."""
        return bool(self.mask(app)[host])

    # ------------------------------------------------------------------------------------
    def place(self, app: int, host: int, cards: Sequence[int] = ()) -> None:
        """Put one container of ``app`` on ``host`` (and its GPU ``cards``), without checking."""
        self.used[host] += self.instance.demand[app]
        c = self.col[app]
        if c >= 0:
            self.count[host, c] += 1
        self.n_on[host] += 1
        if cards:
            load = self.card_load(app, host)
            for g in cards:
                self.card_used[host, g] += load

    def remove(self, app: int, host: int, cards: Sequence[int] = ()) -> None:
        """Take one container of ``app`` off ``host`` (the inverse of :meth:`place`)."""
        self.used[host] -= self.instance.demand[app]
        c = self.col[app]
        if c >= 0:
            self.count[host, c] -= 1
        self.n_on[host] -= 1
        if cards:
            load = self.card_load(app, host)
            for g in cards:
                self.card_used[host, g] -= load
        # clean float residue so an emptied host compares equal to a fresh one
        if self.n_on[host] == 0:
            self.used[host] = 0.0
            self.card_used[host] = 0.0

    def topology_broken(self) -> list[topology.Broken]:
        """The topology rules (domain caps, spread) the current state breaks, as a final placement."""
        inst = self.instance
        if not inst.has_topology:
            return []
        counts = np.zeros((inst.n_apps, inst.n_hosts), dtype=np.int64)
        for i, app in enumerate(inst.apps):
            if app.has_topology:
                counts[i] = self.count[:, self.col[i]]
        return list(topology.violations(inst, counts, self.n_on > 0))

    def used_hosts(self) -> np.ndarray:
        """Boolean mask of hosts running at least one container, shape ``(n_hosts,)``."""
        return self.n_on > 0

    @classmethod
    def from_placement(cls, instance: Instance, host_of: np.ndarray,
                       cards_of: Sequence[tuple[int, ...]] | None = None) -> ClusterState:
        """The state a placement produces (no checks: use :func:`packing.feasibility.checker.check`).

        Args:
            instance: the instance.
            host_of: host per container, shape ``(n_containers,)``; -1 = unplaced. Indices
                outside ``0..n_hosts-1`` are skipped.
            cards_of: GPU cards per container, or ``None``.
        """
        st = cls(instance)
        apps = instance.container_app
        valid = (host_of >= 0) & (host_of < instance.n_hosts)
        h = host_of[valid]
        a = apps[valid]
        np.add.at(st.used, h, instance.demand[a])
        np.add.at(st.n_on, h, 1)
        cols = st.col[a]
        t = cols >= 0
        np.add.at(st.count, (h[t], cols[t]), 1)
        if cards_of is not None and instance.max_gpus:
            for j in np.flatnonzero(valid & (instance.gpu_cards[apps] > 0)):
                host = int(host_of[j])
                load = st.card_load(int(apps[j]), host)
                for g in cards_of[int(j)]:
                    if 0 <= g < instance.max_gpus:
                        st.card_used[host, g] += load
        return st


__all__ = ["TOL", "UNPLACED", "ClusterState", "fits", "over_cap", "rule_broken"]
