"""The consolidation problem of a running cluster: which nodes to keep, where each pod goes.

Built from a :class:`~packing.cluster.snapshot.Snapshot` and host offers (``--hosts``) by
:func:`build_problem`. Everything is exact, in base units (:mod:`packing.cluster.snapshot`).

Hosts
-----
Index ``h`` runs over the snapshot's nodes (grouped by kind, see :attr:`ClusterProblem.instance`)
and then over *slots* for new nodes of each offered type (``replace``). A node's free capacity is
its allocatable minus its DaemonSet pods; a new node's allocatable is that of the snapshot's nodes
of its type (the most common one), or for a type the cluster does not run, the offer's cpu,
memory and GPU cards, 110 ``pods`` (the kubelet's default) and the largest ephemeral storage of
the nodes; less the DaemonSets whose pods' node selector and tolerations admit it (the
DaemonSet controller's own tolerations included). Prices come from the
offers, matched to nodes by type (instance type); without prices every node costs 1, so the cost
counts nodes.

Pods
----
DaemonSet pods are per-node load, not placed: they stay with their node and go with it. Every
other pod that runs or is Pending belongs to an *app*: the pods of one controller with the same
request and the same node selection and anti-affinity (so a Deployment in the middle of a
rollout with two pod shapes is two apps). A pinned pod (:mod:`packing.loaders.snapshot`; also a
pod a PodDisruptionBudget lets no disruption to now) is in an app of its own kind whose pods stay
where they run, and its node stays. A Pending pod that fits on no host at all (alone, by
capacity, node selection and taints) cannot be placed: it is listed in
:attr:`ClusterProblem.unplaced` with the reason and left out.

Rules per node: capacity per resource; node selector, required node affinity and tolerations of
NoSchedule/NoExecute taints against the node's labels and taints; required pod anti-affinity on
``kubernetes.io/hostname`` (a cap of one pod per node for the app's own pods, an exclusion between
two apps); a cordoned node (``spec.unschedulable``) takes no new pod (its own pods may stay).

A *solution* is ``x``, shape ``(n_apps, n_hosts)``: the pods of each app on each host. Pods of an
app are alike, so ``x`` says everything; the pods that move are, per app and host, the
``max(0, orig - x)`` pods that leave (:meth:`ClusterProblem.moves`). A host is used when any
pod is on it; the cost is the price of the used hosts; a node no pod stays on is removed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np

from packing.cluster.budgets import BudgetState, budget_states
from packing.cluster.snapshot import Node, Pod, Snapshot, show, to_units
from packing.errors import InputError, Problem
from packing.model.instance import UNPLACED, App, HostType, Instance, Placement
from packing.model.selection import Labels, Taint, Toleration, allowed, requirement_holds
from packing.plan.model import HostOffer

HOSTNAME = "kubernetes.io/hostname"
NEW_NODE_PODS = 110
"""``pods`` of a new node: the kubelet's default ``maxPods``."""
DAEMON_TOLERATIONS = tuple(
    Toleration(f"node.kubernetes.io/{k}", "Exists", "", e) for k, e in (
        ("not-ready", "NoExecute"), ("unreachable", "NoExecute"), ("disk-pressure", "NoSchedule"),
        ("memory-pressure", "NoSchedule"), ("pid-pressure", "NoSchedule"),
        ("unschedulable", "NoSchedule")))
"""Tolerations the DaemonSet controller adds to its pods (as the manifest reader's
:data:`packing.loaders.k8s.DAEMON_TOLERATIONS`)."""
TOLERATE_ALL = (Toleration("", "Exists", "", ""),)


@dataclass(frozen=True)
class AppGroup:
    """An app: pods of one controller alike in request and rules.

    Attributes:
        name: a short unique name (``web``, ``shop/web``, ``web#2``, ``web (pinned)``).
        controller: ``Kind/namespace/name`` or ``None`` (a bare pod).
        pods: indices into ``snapshot.pods``: running pods by host, then Pending ones.
        pinned: the pods stay where they run.
        why: why pinned (the first pod's reason).
    """

    name: str
    controller: str | None
    pods: tuple[int, ...]
    pinned: bool = False
    why: str | None = None


@dataclass(frozen=True)
class ClusterProblem:
    """A snapshot as a consolidation problem (see the module docstring).

    Attributes:
        snapshot: the snapshot.
        resources: resource names, shape ``(R,)``.
        host_names: per host: the node's name, or ``<type>-new-<k>`` for a slot.
        host_node: per host: index into ``snapshot.nodes``, -1 for a slot, shape ``(H,)``.
        host_type: per host: the node's type or the offer's name.
        existing: per host: a node of the snapshot, shape ``(H,)``.
        closed: per host: cordoned (takes no new pod), shape ``(H,)``.
        price: per host, shape ``(H,)``.
        capacity: free capacity per host (allocatable minus DaemonSets, at least 0), base units,
            shape ``(H, R)``.
        daemon_load: the DaemonSet load per host, base units, shape ``(H, R)``.
        apps: the apps.
        demand: one pod per app, base units, shape ``(A, R)``.
        orig: pods per app and host now, shape ``(A, H)``.
        allowed: the app may run on the host: its node selection and taints admit it, or it
            runs there now, shape ``(A, H)``.
        cap: most pods of the app per host, shape ``(A,)``.
        exclusions: app pairs that never share a host.
        unplaced: ``(pod index, reason)`` of Pending pods no host can take.
        budgets: the PodDisruptionBudgets over ``snapshot.pods``.
        priced: prices are given (else every node costs 1).
        ignored: what is not modelled, one line each.
    """

    snapshot: Snapshot
    resources: tuple[str, ...]
    host_names: tuple[str, ...]
    host_node: np.ndarray
    host_type: tuple[str, ...]
    existing: np.ndarray
    closed: np.ndarray
    price: np.ndarray
    capacity: np.ndarray
    daemon_load: np.ndarray
    apps: tuple[AppGroup, ...]
    demand: np.ndarray
    orig: np.ndarray
    allowed: np.ndarray
    cap: np.ndarray
    exclusions: tuple[tuple[int, int], ...]
    unplaced: tuple[tuple[int, str], ...] = ()
    budgets: tuple[BudgetState, ...] = ()
    priced: bool = False
    ignored: tuple[str, ...] = ()
    groups: tuple[tuple[int, int], ...] = field(default=(), repr=False)
    """Host type runs of :attr:`instance`: ``(first host, count)`` per host type."""
    offers: tuple[HostOffer, ...] = ()
    """The offers new nodes are drawn from (``replace``), one per run of slots."""
    admitted: np.ndarray | None = field(default=None, repr=False)
    """Node selection and taints admit the app on the host now, shape ``(A, H)`` (``None``:
    :attr:`allowed`). A pod may stay where it runs though its node no longer admits it (the
    rules are ``IgnoredDuringExecution``; a taint added later is ``NoSchedule``), so
    :attr:`allowed` is this or where the app runs now."""

    @cached_property
    def limited(self) -> np.ndarray:
        """Whether the app may not gain pods on the host, shape ``(A, H)``.

        A cordoned host, or one whose labels or taints do not admit the app, keeps at most the
        pods the app runs there now.
        """
        adm = self.allowed if self.admitted is None else self.admitted
        return self.closed[None, :] | ~adm

    # ------------------------------------------------------------------------------------
    @property
    def n_hosts(self) -> int:
        """Hosts (nodes and slots)."""
        return len(self.host_names)

    @property
    def n_apps(self) -> int:
        """Apps."""
        return len(self.apps)

    @cached_property
    def counts(self) -> np.ndarray:
        """Pods per app, shape ``(A,)``."""
        return np.array([len(a.pods) for a in self.apps], dtype=np.int64)

    @cached_property
    def pinned(self) -> np.ndarray:
        """Whether each app is pinned, shape ``(A,)``."""
        return np.array([a.pinned for a in self.apps], dtype=bool)

    @cached_property
    def keep(self) -> np.ndarray:
        """Hosts that must stay (they run pinned pods), shape ``(H,)``."""
        return self.orig[self.pinned].sum(axis=0) > 0 if self.n_apps else np.zeros(self.n_hosts, bool)

    @cached_property
    def movable_on(self) -> np.ndarray:
        """Pods of movable apps running on each host now, shape ``(H,)``."""
        return self.orig[~self.pinned].sum(axis=0) if self.n_apps else np.zeros(self.n_hosts, np.int64)

    @property
    def cost_before(self) -> float:
        """The price of every node now."""
        return int(self.scaled_price[self.existing].sum()) / self.price_scale

    @property
    def nodes_before(self) -> int:
        """The nodes now."""
        return int(self.existing.sum())

    def used(self, x: np.ndarray) -> np.ndarray:
        """Hosts a solution uses, shape ``(H,)``."""
        return x.sum(axis=0) > 0

    @cached_property
    def price_scale(self) -> int:
        """The least power of ten (at most ``10**9``) that makes every price an integer, read as written."""
        k = 0
        for p in self.price.tolist():
            f = Fraction(repr(float(p)))
            while (f * 10**k).denominator != 1 and k < 9:
                k += 1
        return 10**k

    @cached_property
    def scaled_price(self) -> np.ndarray:
        """Prices times :attr:`price_scale`, as integers (exact when the scale is), shape ``(H,)``."""
        return np.array([round(float(p) * self.price_scale) for p in self.price], dtype=np.int64)

    def cost(self, x: np.ndarray) -> float:
        """The price of the hosts a solution uses (summed exactly on the scaled prices)."""
        return int(self.scaled_price[self.used(x)].sum()) / self.price_scale

    def moves(self, x: np.ndarray) -> int:
        """Pods a solution moves: per app and host, the pods that leave (pinned apps never move)."""
        return int(np.maximum(self.orig - x, 0).sum())

    def load(self, x: np.ndarray) -> np.ndarray:
        """Load per host of a solution, base units, shape ``(H, R)``."""
        return x.T @ self.demand

    def over(self, x: np.ndarray) -> list[tuple[int, int, int]]:
        """``(host, resource, amount over)`` where a solution exceeds the free capacity."""
        diff = self.load(x) - self.capacity
        diff[~self.used(x)] = np.minimum(diff[~self.used(x)], 0)
        return [(int(h), int(r), int(diff[h, r])) for h, r in zip(*np.nonzero(diff > 0), strict=True)]

    def describe_over(self, x: np.ndarray, most: int = 5) -> str:
        """The hosts and resources a solution exceeds, for people."""
        parts = [f"{self.host_names[h]} {self.resources[r]} over by {show(self.resources[r], a)}"
                 for h, r, a in self.over(x)[:most]]
        return "; ".join(parts)

    # ------------------------------------------------------------------------------------
    @cached_property
    def instance(self) -> Instance:
        """The instance every solution is checked on (:func:`packing.feasibility.checker.check`).

        Hosts with the same free capacity, labels (but the hostname), taints and price are one
        host type (named hosts), in host order; apps in app order, their containers the pods of
        :attr:`AppGroup.pods`, and ``initial`` where they run now. Units: cores, GiB, counts.
        """
        res = self.resources
        types: list[HostType] = []
        for first, n in self.groups:
            h = first
            node = self.snapshot.nodes[int(self.host_node[h])] if self.existing[h] else None
            labels = _without_hostname(node.labels) if node is not None else self._slot_labels(h)
            taints = node.taints if node is not None else self._slot_taints(h)
            taints = tuple(t for t in taints if t.key != "node.kubernetes.io/unschedulable")
            types.append(HostType(
                f"{self.host_type[h] or 'node'}@{len(types)}",
                tuple(to_units(r, int(c)) for r, c in zip(res, self.capacity[h], strict=True)),
                n, float(self.price[h]), host_names=tuple(self.host_names[first: first + n]),
                labels=labels, taints=taints))
        pods = self.snapshot.pods
        apps = []
        # an app that runs where its node no longer admits it is checked without its node
        # selection; where it may gain pods is the transition's rule (limited)
        relaxed = ((self.orig > 0) & self.limited & ~self.closed[None, :]).any(axis=1)
        for a, g in enumerate(self.apps):
            p = pods[g.pods[0]]
            free = g.pinned or bool(relaxed[a])
            apps.append(App(
                g.name, tuple(to_units(r, int(d)) for r, d in zip(res, self.demand[a], strict=True)),
                len(g.pods), max_per_host=int(self.cap[a]) if self.cap[a] < len(g.pods) else None,
                node_selector=() if free else p.node_selector,
                node_affinity=None if free else p.node_affinity,
                tolerations=TOLERATE_ALL if free else p.tolerations))
        names = [a.name for a in apps]
        excl = tuple((names[a], names[b]) for a, b in self.exclusions)
        inst = Instance("snapshot", res, tuple(types), tuple(apps), exclusions=excl,
                        meta={"source": "kubernetes snapshot"})
        return inst.replace(initial=self.placement(self.orig, keep_unplaced=True))

    def _slot_labels(self, h: int) -> Labels:
        return tuple(sorted(self._offers_by_name[self.host_type[h]].labels))

    def _slot_taints(self, h: int) -> tuple[Taint, ...]:
        return self._offers_by_name[self.host_type[h]].taints

    @cached_property
    def _offers_by_name(self) -> dict[str, HostOffer]:
        return {o.name: o for o in self.offers}

    # ------------------------------------------------------------------------------------
    def assign(self, x: np.ndarray) -> np.ndarray:
        """Host per container (instance order) for a solution: pods stay where ``x`` keeps them.

        Per app and host, the first ``min(orig, x)`` pods running there stay; the pods that leave
        and the Pending pods take the hosts where ``x`` exceeds ``orig``, in host order.

        Returns:
            Host per container, shape ``(n_containers,)``; -1 where ``x`` places fewer pods.
        """
        out = np.full(int(self.counts.sum()), UNPLACED, dtype=np.int64)
        pos = 0
        for a in range(self.n_apps):
            n = int(self.counts[a])
            here = np.full(n, UNPLACED, dtype=np.int64)
            runs = np.repeat(np.arange(self.n_hosts), self.orig[a])  # running pods, by host
            kept = np.minimum(self.orig[a], x[a])
            movers: list[int] = []
            seen: Counter[int] = Counter()
            for j, h in enumerate(runs.tolist()):
                if seen[h] < kept[h]:
                    here[j] = h
                else:
                    movers.append(j)
                seen[h] += 1
            movers.extend(range(len(runs), n))
            slots = np.repeat(np.arange(self.n_hosts), np.maximum(x[a] - self.orig[a], 0)).tolist()
            for j, h in zip(movers, slots, strict=False):
                here[j] = h
            out[pos: pos + n] = here
            pos += n
        return out

    def placement(self, x: np.ndarray, keep_unplaced: bool = False) -> Placement:
        """The :class:`Placement` of a solution on :attr:`instance` (see :meth:`assign`)."""
        host_of = self.assign(x)
        hosts: dict[str, tuple[int, ...]] = {}
        pos = 0
        for a, g in enumerate(self.apps):
            n = int(self.counts[a])
            hosts[g.name] = tuple(host_of[pos: pos + n].tolist())
            pos += n
        return Placement(hosts)

    def x_of(self, host_of: np.ndarray) -> np.ndarray:
        """The solution a host-per-container array gives, shape ``(A, H)``."""
        x = np.zeros((self.n_apps, self.n_hosts), dtype=np.int64)
        apps = np.repeat(np.arange(self.n_apps), self.counts)
        ok = host_of != UNPLACED
        np.add.at(x, (apps[ok], host_of[ok]), 1)
        return x

    @cached_property
    def container_pod(self) -> np.ndarray:
        """The snapshot pod of each container (instance order), shape ``(n_containers,)``."""
        return np.array([p for g in self.apps for p in g.pods], dtype=np.int64)


def _without_hostname(labels: Labels) -> Labels:
    return tuple((k, v) for k, v in labels if k != HOSTNAME)


# ------------------------------------------------------------------------------------------------
# building
def _new_node(offer: HostOffer, resources: Sequence[str], nodes: Sequence[Node],
              alloc: np.ndarray) -> np.ndarray:
    """The allocatable of a new node of ``offer``, base units, shape ``(R,)``.

    The most common allocatable of the snapshot's nodes of that type when it has some (the
    kubelet reserves the same on alike nodes); else the offer's cpu, memory and GPU cards, 110
    ``pods``, the largest ``ephemeral-storage`` of the snapshot's nodes and no other resource.
    """
    same = [tuple(alloc[i].tolist()) for i, n in enumerate(nodes) if n.type == offer.name]
    if same:
        return np.array(Counter(same).most_common(1)[0][0], dtype=np.int64)
    disk = int(alloc[:, list(resources).index("ephemeral-storage")].max()) \
        if "ephemeral-storage" in resources and len(alloc) else 0
    have = {"cpu": offer.cpu_milli, "memory": offer.memory_bytes, "gpu": offer.gpus,
            "pods": NEW_NODE_PODS, "ephemeral-storage": disk}
    return np.array([have.get(r, 0) for r in resources], dtype=np.int64)


def _vec(m: Mapping[str, int], resources: Sequence[str]) -> np.ndarray:
    return np.array([int(m.get(r, 0)) for r in resources], dtype=np.int64)


def _selection(p: Pod) -> tuple[Any, ...]:
    return (p.node_selector, p.node_affinity, p.tolerations)


def _short_names(keys: Sequence[str]) -> list[str]:
    """``name``, else ``namespace/name``, else ``Kind/namespace/name`` (unique)."""
    by_name = Counter(k.rsplit("/", 1)[-1] for k in keys)
    by_ns = Counter("/".join(k.split("/")[-2:]) for k in keys)
    out = []
    for k in keys:
        name, ns = k.rsplit("/", 1)[-1], "/".join(k.split("/")[-2:])
        out.append(name if by_name[name] == 1 else ns if by_ns[ns] == 1 else k)
    return out


def build_problem(snapshot: Snapshot, offers: Sequence[HostOffer] = (), *, replace: bool = False,
                  source: str = "--hosts") -> ClusterProblem:
    """The consolidation problem of a snapshot (see the module docstring).

    Args:
        snapshot: the cluster.
        offers: host types: their prices price the nodes (matched by type) and, with
            ``replace``, they are the types new nodes may be of.
        replace: new nodes of the offered types may be added; per type at most the hosts first
            fit decreasing needs for every movable pod that fits on it (rules kept), which is
            never fewer than an optimal solution uses (:func:`slot_bound`).
        source: named in errors.

    Raises:
        InputError: prices are given and a node's type has no offer (naming the node and type).
    """
    snap = snapshot
    res = snap.resources
    pods = snap.pods
    by_name = {o.name: o for o in offers}
    priced = any(o.price is not None for o in offers)
    if priced:
        missing: dict[str, str] = {}
        for n in snap.nodes:
            if n.type not in by_name:
                missing.setdefault(n.type, n.name)
        if missing:
            raise InputError([Problem(source, f"node {name}", f"its type {t or '(no type label)'!r} "
                                      "has no price: give every node type a host type of that name")
                              for t, name in missing.items()])
    offers = tuple(offers) if replace else ()
    # ---- nodes, grouped by kind
    nidx = snap.node_index()
    ds = np.zeros((len(snap.nodes), len(res)), dtype=np.int64)
    for p in pods:
        if p.daemon and p.node is not None:
            ds[nidx[p.node]] += _vec(p.request, res)
    alloc = np.array([_vec(n.allocatable, res) for n in snap.nodes], dtype=np.int64).reshape(
        len(snap.nodes), len(res))

    def node_price(n: Node) -> float:
        o = by_name.get(n.type)
        return float(o.price) if priced and o is not None and o.price is not None else 1.0

    kinds: dict[tuple[Any, ...], list[int]] = {}
    for i, n in enumerate(snap.nodes):
        key = (tuple((alloc[i] - ds[i]).tolist()), _without_hostname(n.labels), n.taints,
               node_price(n), n.type)
        kinds.setdefault(key, []).append(i)
    order = [i for members in kinds.values() for i in members]
    host_of_node = {i: h for h, i in enumerate(order)}
    N = len(order)
    # ---- offers: their DaemonSet load
    daemons = {p.controller: p for p in pods if p.daemon and p.controller}
    offer_ds = np.zeros((len(offers), len(res)), dtype=np.int64)
    for t, o in enumerate(offers):
        for d in daemons.values():
            if allowed(d.node_selector, d.node_affinity, d.tolerations + DAEMON_TOLERATIONS,
                       tuple(sorted(o.labels)), o.taints):
                offer_ds[t] += _vec(d.request, res)
    offer_cap = np.array([_new_node(o, res, snap.nodes, alloc) for o in offers],
                         dtype=np.int64).reshape(len(offers), len(res)) - offer_ds
    node_cap = np.array([alloc[i] - ds[i] for i in order], dtype=np.int64).reshape(N, len(res))
    closed_n = np.array([snap.nodes[i].unschedulable for i in order], dtype=bool)
    # ---- budgets, pins
    states = budget_states(snap.budgets, pods)
    pin = {i: p.pinned for i, p in enumerate(pods) if p.pinned}
    for s in states:
        if s.allowed == 0:
            for i in s.pods:
                if pods[i].node is not None and not pods[i].daemon and i not in pin:
                    pin[i] = f"PodDisruptionBudget {s.budget.key} allows no disruption now"
    # ---- apps, with where they may go: the nodes (N) and the offered types (T)
    keys: dict[tuple[Any, ...], list[int]] = {}
    for i, p in enumerate(pods):
        if not p.daemon:
            ctrl = p.controller or f"Pod/{p.key}"
            sig = (tuple(int(p.request.get(r, 0)) for r in res), _selection(p), p.anti)
            keys.setdefault((ctrl, i in pin, sig), []).append(i)
    by_host = any(_mentions_hostname(k[2][1]) for k in keys)
    sigs = [(n.labels if by_host else _without_hostname(n.labels), n.taints)
            for n in (snap.nodes[i] for i in order)] + [
        (tuple(sorted(o.labels)), o.taints) for o in offers]
    distinct = list(dict.fromkeys(sigs))
    sig_of = np.array([distinct.index(x) for x in sigs], dtype=np.int64) if sigs else np.zeros(0, np.int64)
    caps_all = np.concatenate([np.maximum(node_cap, 0), np.maximum(offer_cap, 0)])
    open_all = np.concatenate([~closed_n, np.ones(len(offers), dtype=bool)])
    short = dict(zip(sorted({k[0] for k in keys}), _short_names(sorted({k[0] for k in keys})),
                     strict=True))
    cache: dict[tuple[Any, ...], np.ndarray] = {}
    seen_ctrl: Counter[str] = Counter()
    apps: list[AppGroup] = []
    ok_rows, adm_rows, orig_rows, dem_rows = [], [], [], []
    unplaced: list[tuple[int, str]] = []
    for (ctrl, is_pin, sig), members in keys.items():
        dem = np.array(sig[0], dtype=np.int64)
        run = sorted((i for i in members if pods[i].node is not None),
                     key=lambda i: host_of_node[nidx[str(pods[i].node)]])
        orig = np.zeros(N + len(offers), dtype=np.int64)
        for i in run:
            orig[host_of_node[nidx[str(pods[i].node)]]] += 1
        if is_pin:
            ok = orig > 0
        else:
            if sig[1] not in cache:
                sel, aff, tols = sig[1]
                cache[sig[1]] = np.array([allowed(sel, aff, tols, lab, tnt) for lab, tnt in distinct],
                                         dtype=bool)
            ok = cache[sig[1]][sig_of]
        pend = [i for i in members if pods[i].node is None]
        if pend and not (ok & open_all & (caps_all >= dem).all(axis=1)).any():
            why = _why_nowhere(dem, ok, caps_all, res, open_all)
            unplaced.extend((i, why) for i in pend)
            pend = []
        if not run + pend:
            continue
        seen_ctrl[ctrl] += 1
        name = short[ctrl] + ("" if seen_ctrl[ctrl] == 1 else f"#{seen_ctrl[ctrl]}")
        apps.append(AppGroup(name + (" (pinned)" if is_pin else ""), pods[members[0]].controller,
                             tuple(run + pend), is_pin, pin.get(run[0]) if is_pin else None))
        ok_rows.append(ok | (orig > 0))
        adm_rows.append(ok)
        orig_rows.append(orig)
        dem_rows.append(dem)
    A = len(apps)
    demand = np.array(dem_rows, dtype=np.int64).reshape(A, len(res))
    ok_t = np.array(ok_rows, dtype=bool).reshape(A, N + len(offers))
    adm_t = np.array(adm_rows, dtype=bool).reshape(A, N + len(offers))
    orig_t = np.array(orig_rows, dtype=np.int64).reshape(A, N + len(offers))
    cap, excl = _anti_affinity(apps, pods)
    cap, excl, broken = _kept_by_now(apps, cap, excl, orig_t)
    # ---- slots for new nodes
    counts = np.array([len(g.pods) for g in apps], dtype=np.int64)
    movable = ~np.array([g.pinned for g in apps], dtype=bool)
    slots = [slot_bound(demand, np.where(movable, counts, 0), ok_t[:, N + t], offer_cap[t], cap, excl)
             for t in range(len(offers))]
    slots = [s if o.count is None else min(s, o.count) for s, o in zip(slots, offers, strict=True)]
    groups = []
    pos = 0
    for members in kinds.values():
        groups.append((pos, len(members)))
        pos += len(members)
    col = list(range(N))
    names = [snap.nodes[i].name for i in order]
    types = [snap.nodes[i].type for i in order]
    prices = [node_price(snap.nodes[i]) for i in order]
    used_offers = []
    for t, (o, n_t) in enumerate(zip(offers, slots, strict=True)):
        if n_t <= 0:
            continue
        used_offers.append(o)
        groups.append((pos, n_t))
        pos += n_t
        col += [N + t] * n_t
        names += [f"{o.name}-new-{k}" for k in range(n_t)]
        types += [o.name] * n_t
        prices += [1.0 if o.price is None else float(o.price)] * n_t
    H = len(names)
    raw_cap = np.concatenate([node_cap, offer_cap])[col].reshape(H, len(res))
    ignored = list(snap.ignored) + broken
    for h in range(H):
        short_r = [r for r, c in zip(res, raw_cap[h], strict=True) if c < 0]
        if short_r:
            ignored.append(f"{names[h]}: its DaemonSets ask for more {', '.join(short_r)} than "
                           "it has (no other pod fits there)")
    return ClusterProblem(
        snap, res, tuple(names), np.array(order + [-1] * (H - N), dtype=np.int64), tuple(types),
        np.arange(H) < N, np.concatenate([closed_n, np.zeros(H - N, dtype=bool)]),
        np.array(prices, dtype=np.float64), np.maximum(raw_cap, 0),
        np.concatenate([ds[order].reshape(N, len(res)), offer_ds])[col].reshape(H, len(res)),
        tuple(apps), demand, orig_t[:, col].reshape(A, H), ok_t[:, col].reshape(A, H), cap,
        excl, tuple(unplaced), states, priced, tuple(ignored), tuple(groups), tuple(used_offers),
        adm_t[:, col].reshape(A, H))


def _mentions_hostname(selection: tuple[Any, ...]) -> bool:
    """Whether a node selection (selector, affinity, tolerations) names the hostname label."""
    node_selector, node_affinity, _ = selection
    return any(k == HOSTNAME for k, _ in node_selector) or any(
        r.key == HOSTNAME for t in node_affinity or () for r in t)


def _anti_affinity(apps: Sequence[AppGroup], pods: Sequence[Pod]
                   ) -> tuple[np.ndarray, tuple[tuple[int, int], ...]]:
    """Per-host caps and exclusions from required pod anti-affinity on the hostname.

    A term that matches the app's own pods caps it at one pod per host; one that matches another
    app's pods (in the term's namespaces) keeps the two apart (the scheduler checks both ways).
    """
    cap = np.array([len(g.pods) for g in apps], dtype=np.int64)
    excl: set[tuple[int, int]] = set()
    for a, g in enumerate(apps):
        for sel, nss, _key, _fld in pods[g.pods[0]].anti:
            for b, other in enumerate(apps):
                q = pods[other.pods[0]]
                if (nss is None or q.namespace in nss) and all(
                        requirement_holds(r, dict(q.labels)) for r in sel):
                    if b == a or (other.controller is not None and other.controller == g.controller):
                        cap[a] = 1
                        if b != a:
                            excl.add((min(a, b), max(a, b)))
                    else:
                        excl.add((min(a, b), max(a, b)))
    return cap, tuple(sorted(excl))


def _kept_by_now(apps: Sequence[AppGroup], cap: np.ndarray, excl: tuple[tuple[int, int], ...],
                 orig: np.ndarray) -> tuple[np.ndarray, tuple[tuple[int, int], ...], list[str]]:
    """Drop the anti-affinity rules the running pods already break (with a line each).

    Required anti-affinity is ``IgnoredDuringExecution``: pods that break it (labels changed
    after they were placed) keep running. vbp does not model "may stay but not grow" for it,
    so such an app is planned without the rule, and the line says so.
    """
    cap = cap.copy()
    out = []
    broken = {apps[a].controller or apps[a].name
              for a in np.flatnonzero((orig > cap[:, None]).any(axis=1)).tolist()}
    for a, g in enumerate(apps):
        if (g.controller or g.name) in broken and cap[a] < len(g.pods):
            cap[a] = len(g.pods)
            out.append(f"{g.name}: its running pods already break its hostname anti-affinity; "
                       "planned without it")
    kept = []
    for a, b in excl:
        same = apps[a].controller is not None and apps[a].controller == apps[b].controller
        if same and apps[a].controller in broken:
            continue
        if ((orig[a] > 0) & (orig[b] > 0)).any():
            out.append(f"{apps[a].name}, {apps[b].name}: run together now against their "
                       "anti-affinity; planned without it")
        else:
            kept.append((a, b))
    return cap, tuple(kept), out


def slot_bound(demand: np.ndarray, counts: np.ndarray, ok: np.ndarray, capacity: np.ndarray,
               cap: np.ndarray, exclusions: Sequence[tuple[int, int]]) -> int:
    """Hosts of one type first fit decreasing needs for the pods that fit on it alone, rules kept.

    An optimal solution never uses more new hosts of the type: the pods on them can be repacked
    onto an optimal packing of just those pods, which needs at most the hosts of an optimal (so of
    a first-fit) packing of every pod that fits on the type; every rule is per host and holds
    for a subset of a host's pods, and the pods on new hosts move anyway.

    Args:
        demand: per app, base units, shape ``(A, R)``.
        counts: pods per app to pack, shape ``(A,)``.
        ok: the type admits the app, shape ``(A,)``.
        capacity: the type's free capacity, shape ``(R,)``.
        cap: most pods of an app per host, shape ``(A,)``.
        exclusions: app pairs that never share a host.
    """
    fit = ok & (demand <= capacity).all(axis=1) & (counts > 0) & (cap > 0)
    if not fit.any():
        return 0
    scale = np.where(capacity > 0, capacity, 1).astype(np.float64)
    size = (demand / scale).max(axis=1)
    apart: dict[int, set[int]] = {}
    for a, b in exclusions:
        apart.setdefault(a, set()).add(b)
        apart.setdefault(b, set()).add(a)
    n_max = int(counts[fit].sum())
    loads = np.zeros((n_max, len(capacity)), dtype=np.int64)
    tracked = [a for a in range(len(counts)) if cap[a] < counts[a] or a in apart]
    col = {a: i for i, a in enumerate(tracked)}
    per = np.zeros((n_max, len(tracked)), dtype=np.int64)
    opened = 0
    for a in sorted(np.flatnonzero(fit).tolist(), key=lambda a: (-size[a], a)):
        others = [col[b] for b in sorted(apart.get(a, ()))]
        for _ in range(int(counts[a])):
            ok = (loads[:opened] + demand[a] <= capacity).all(axis=1)
            if a in col:
                ok &= per[:opened, col[a]] < cap[a]
            if others:
                ok &= per[:opened, others].sum(axis=1) == 0
            k = int(np.argmax(ok)) if ok.any() else opened
            opened = max(opened, k + 1)
            loads[k] += demand[a]
            if a in col:
                per[k, col[a]] += 1
    return opened


def _why_nowhere(dem: np.ndarray, ok: np.ndarray, capacity: np.ndarray, res: Sequence[str],
                 open_: np.ndarray) -> str:
    if not ok.any():
        return "its node selection and tolerations admit no node"
    open_ok = ok & open_
    if not open_ok.any():
        return "the nodes its node selection admits are cordoned"
    short = [r for k, r in enumerate(res) if not (capacity[open_ok, k] >= dem[k]).any()]
    return f"no node it may use has the free {', '.join(short)} it asks for"


__all__ = ["BASE_SCALE", "DAEMON_TOLERATIONS", "NEW_NODE_PODS", "AppGroup", "ClusterProblem",
           "build_problem", "from_instance", "slot_bound"]


# ------------------------------------------------------------------------------------------------
# a running cluster that is a planning instance (vbp plan --current)
BASE_SCALE = {"cpu": 1000, "memory": 2**30, "gpu": 1}
"""Base units per planning unit: millicores per core, bytes per GiB, cards."""


def from_instance(instance: Instance, existing: np.ndarray, running: np.ndarray) -> ClusterProblem | None:
    """A planning instance with running hosts as a consolidation problem (``None``: not modelled).

    The hosts are the instance's, in its order; the running ones (``existing``) cost nothing
    (already paid), the others their type's cost. ``running[a, h]`` containers of app ``a`` run
    on host ``h`` now; an app with fewer containers in the demand keeps those on its first hosts.
    Demands and capacities become integer base units (:data:`BASE_SCALE`: millicores, bytes,
    cards; capacities rounded down, demands to the nearest, which must be within ``1e-6``).
    Not modelled (then ``None``): ``<A, B, k>`` rules with ``k > 0``, topology rules, GPU cards
    modelled per card, resources other than cpu, memory and gpu.
    """
    inst = instance
    if any(r.k > 0 for r in inst.all_rules) or inst.has_topology or inst.max_gpus \
            or any(r not in BASE_SCALE for r in inst.resources):
        return None
    scale = np.array([BASE_SCALE[r] for r in inst.resources], dtype=np.float64)
    dem_f = inst.demand * scale
    demand = np.rint(dem_f).astype(np.int64)
    if (np.abs(dem_f - demand) > 1e-6).any():
        return None
    capacity = np.floor(inst.host_capacity * scale + 1e-6).astype(np.int64)
    H, A = inst.n_hosts, inst.n_apps
    orig = np.zeros((A, H), dtype=np.int64)
    for a in range(A):
        left = int(inst.counts[a])
        for h in np.flatnonzero(running[a]).tolist():
            k = min(left, int(running[a, h]))
            orig[a, h] = k
            left -= k
    ok = inst.type_allowed
    allowed_m = np.ones((A, H), dtype=bool) if ok is None else ok[:, inst.host_type_of]
    idx = inst.app_index
    excl = tuple(sorted({(min(idx[r.a], idx[r.b]), max(idx[r.a], idx[r.b])) for r in inst.all_rules}))
    price = np.where(existing, 0.0, inst.host_cost)
    groups, pos = [], 0
    for t in inst.host_types:
        groups.append((pos, t.count))
        pos += t.count
    apps = tuple(AppGroup(a.name, None, tuple(range(a.count))) for a in inst.apps)
    snap = Snapshot((), (), resources=inst.resources)
    P = ClusterProblem(snap, inst.resources, inst.host_names, np.full(H, -1, dtype=np.int64),
                       tuple(inst.host_types[t].name for t in inst.host_type_of.tolist()),
                       existing.copy(), np.zeros(H, dtype=bool), price, capacity,
                       np.zeros((H, len(inst.resources)), dtype=np.int64), apps, demand, orig,
                       allowed_m | (orig > 0), inst.cap.astype(np.int64), excl, groups=tuple(groups),
                       admitted=allowed_m)
    P.__dict__["instance"] = inst  # the planning instance itself (a cached property)
    return P
