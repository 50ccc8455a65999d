"""The placement model: resources, host types, apps, rules, snapshots and request streams.

Everything here is immutable plain data. Array views (``Instance.demand``, ``Instance.host_capacity``,
...) are computed once and returned read-only, so fast code (solvers, the simulator, policies) can
work on NumPy arrays without reshaping the model.

Conventions
-----------
* Resources are named; ``Instance.resources`` fixes their order, and every demand or capacity
  vector has shape ``(n_resources,)`` in that order.
* GPU cards are modelled per card. ``Instance.gpu_resources`` names the per-card resources (for
  example ``("gpu_milli",)`` with 1000 per card, or ``("gpu_milli", "gpu_mem_mib")``). A host type
  carries ``gpus`` cards of capacity ``gpu_capacity`` each. An app asks for ``gpu_cards`` cards:
  either a share ``gpu_per_card`` of each (a GPU-sharing pod asks for 1 card and a share) or, with
  ``gpu_whole=True``, whole cards that nothing else may use.
* Hosts are enumerated type by type: host types ``t = 0..T-1`` with ``count[t]`` hosts each give
  global host indices ``0..n_hosts-1``; ``Instance.host_type_of[h]`` maps back. A host type may name
  its hosts (``host_names``), e.g. Tianchi's ``machine_17``; otherwise hosts are called
  ``"<type>#<i>"``.
* Containers are enumerated app by app: app ``a`` owns containers
  ``offsets[a] .. offsets[a] + count[a] - 1``.

Rules
-----
A :class:`Rule` ``<A, B, k>`` means: a host that runs at least one container of A may run at most
``k`` containers of B. An exclusion pair ``(A, B)`` is the two rules ``<A, B, 0>`` and
``<B, A, 0>``. ``App.max_per_host`` is the anti-affinity cap: at most that many containers of the
app on one host.

A self-rule ``<A, A, k>`` reads literally: "a host that runs A runs at most k of A". For ``k >= 1``
that is exactly ``max_per_host = k``; for ``k = 0`` no host may run A at all. vbp folds self-rules
into the effective per-host cap (:attr:`Instance.cap`), ``min(max_per_host, k)``. Note that the
Tianchi 2018 evaluator adds 1 to ``k`` for self-rules; its loader converts those rows to
``max_per_host = k + 1`` so that the model keeps the literal meaning.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from packing.model.selection import Labels, Taint, Term, Toleration, allowed
from packing.model.validation import ModelTypes, register_model, validate

_HOSTNAME = "kubernetes.io/hostname"
"""The topology key of one domain per host (:data:`packing.model.topology.HOSTNAME`)."""

UNPLACED = -1
"""Host index of a container that is on no host (unplaced, rejected, not yet arrived or departed)."""


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class HostType:
    """A kind of host, and how many of them exist.

    A vector may also be given as a mapping by resource name (``{"cpu": 64, "mem": 256}``,
    missing names 0); the :class:`Instance` that holds the host type resolves it into
    ``Instance.resources`` order (see :mod:`packing.model.validation`).

    Attributes:
        name: unique name of the type.
        capacity: capacity per resource, shape ``(n_resources,)``.
        count: how many hosts of this type are available.
        cost: cost of using one host (the objective minimises total cost; 1.0 counts hosts).
        cluster: optional cluster label (multi-cluster scheduling).
        gpus: number of GPU cards per host.
        gpu_capacity: capacity of each card per GPU resource, shape ``(n_gpu_resources,)``.
        gpu_model: the card model (e.g. ``"V100M32"``), matched against ``App.gpu_models``.
        host_names: optional names of the individual hosts, ``len == count``.
        labels: node labels as sorted ``(key, value)`` pairs, matched by app node selectors.
        taints: node taints; ``NoSchedule``/``NoExecute`` ones keep apps that do not tolerate
            them off the type (:mod:`packing.model.selection`).
    """

    name: str
    capacity: tuple[float, ...]
    count: int
    cost: float = 1.0
    cluster: str | None = None
    gpus: int = 0
    gpu_capacity: tuple[float, ...] = ()
    gpu_model: str | None = None
    host_names: tuple[str, ...] | None = None
    labels: Labels = ()
    taints: tuple[Taint, ...] = ()


@dataclass(frozen=True)
class App:
    """An application: ``count`` identical containers.

    A vector may also be given as a mapping by resource name (``{"cpu": 4, "mem": 8}``, missing
    names 0); the :class:`Instance` that holds the app resolves it into ``Instance.resources``
    order (see :mod:`packing.model.validation`).

    Attributes:
        name: unique name of the app.
        demand: demand of one container per resource, shape ``(n_resources,)``.
        count: number of containers.
        max_per_host: anti-affinity cap, at most this many containers on one host
            (``None``: no cap).
        gpu_cards: number of GPU cards one container uses (0: none).
        gpu_per_card: the container's demand on each of its cards per GPU resource,
            shape ``(n_gpu_resources,)``; ignored when ``gpu_whole``.
        gpu_whole: the container takes its cards whole (each must be otherwise empty).
        gpu_models: card models the container accepts (empty: any).
        node_selector: labels a host type must carry, as sorted ``(key, value)`` pairs.
        node_affinity: required node affinity terms, ORed; each term's requirements ANDed
            (``None``: no node affinity; an empty tuple matches no host type).
        tolerations: the taints the app tolerates.
        domain_caps: topology domain caps as sorted ``(label key, k)`` pairs: at most ``k``
            containers of the app per value of the host label (:mod:`packing.model.topology`; the key
            :data:`packing.model.topology.HOSTNAME` makes every host its own domain).
        spreads: topology spread as sorted ``(label key, max_skew)`` pairs: the app's container
            counts of any two eligible domains of the key differ by at most ``max_skew``
            (:mod:`packing.model.topology`).
    """

    name: str
    demand: tuple[float, ...]
    count: int
    max_per_host: int | None = None
    gpu_cards: int = 0
    gpu_per_card: tuple[float, ...] = ()
    gpu_whole: bool = False
    gpu_models: tuple[str, ...] = ()
    node_selector: Labels = ()
    node_affinity: tuple[Term, ...] | None = None
    tolerations: tuple[Toleration, ...] = ()
    domain_caps: tuple[tuple[str, int], ...] = ()
    spreads: tuple[tuple[str, int], ...] = ()

    @property
    def has_topology(self) -> bool:
        """Whether the app has domain caps or spread rules (:mod:`packing.model.topology`)."""
        return bool(self.domain_caps) or bool(self.spreads)

    @property
    def selects_nodes(self) -> bool:
        """Whether the app restricts host types by labels (a node selector or node affinity)."""
        return bool(self.node_selector) or self.node_affinity is not None


@dataclass(frozen=True)
class Rule:
    """``<a, b, k>``: a host that runs app ``a`` may run at most ``k`` containers of app ``b``."""

    a: str
    b: str
    k: int


@dataclass(frozen=True)
class Request:
    """An arrival of ``count`` containers of ``app`` at ``time``, leaving at ``end``.

    Attributes:
        time: arrival time (any unit; order matters, ties keep the stream order).
        app: app name.
        count: number of containers arriving together.
        end: departure time of these containers (``None``: they stay).
    """

    time: float
    app: str
    count: int = 1
    end: float | None = None


@dataclass(frozen=True)
class Placement:
    """Where each container is.

    ``hosts[app]`` lists, for each container of the app (in container order), the global host
    index, or :data:`UNPLACED`. ``gpus[app]`` lists, for each container, the indices of the GPU
    cards it uses on its host (empty for containers without GPU demand or unplaced ones). Apps
    missing from ``hosts`` have all their containers unplaced.

    A placement may name apps or hosts the instance does not know; the checker reports those.
    """

    hosts: Mapping[str, tuple[int, ...]]
    gpus: Mapping[str, tuple[tuple[int, ...], ...]] = field(default_factory=dict)

    @classmethod
    def empty(cls, instance: Instance) -> Placement:
        """A placement with every container unplaced."""
        return cls({a.name: (UNPLACED,) * a.count for a in instance.apps})

    @classmethod
    def from_arrays(
        cls,
        instance: Instance,
        host_of: np.ndarray,
        cards_of: Sequence[tuple[int, ...]] | None = None,
    ) -> Placement:
        """Build a placement from per-container arrays.

        Args:
            instance: the instance whose container order is used.
            host_of: host index per container, shape ``(n_containers,)``, -1 for unplaced.
            cards_of: GPU card indices per container (length ``n_containers``), or ``None``.
        """
        host_of = np.asarray(host_of, dtype=np.int64)
        if host_of.shape != (instance.n_containers,):
            raise ValueError(
                f"host_of has shape {host_of.shape}, expected ({instance.n_containers},)"
            )
        hosts: dict[str, tuple[int, ...]] = {}
        gpus: dict[str, tuple[tuple[int, ...], ...]] = {}
        off = instance.offsets
        flat = host_of.tolist()
        bounds = off.tolist()
        for i, app in enumerate(instance.apps):
            lo, hi = bounds[i], bounds[i + 1]
            hosts[app.name] = tuple(flat[lo:hi])
            if cards_of is not None and app.gpu_cards > 0:
                gpus[app.name] = tuple(tuple(int(c) for c in cards_of[j]) for j in range(lo, hi))
        return cls(hosts, gpus)

    def host_array(self, instance: Instance) -> np.ndarray:
        """Host index per container of ``instance``, shape ``(n_containers,)``; -1 = unplaced.

        Apps of the placement that the instance does not know are ignored, and containers
        beyond an app's count are dropped (the checker reports both).
        """
        out = np.full(instance.n_containers, UNPLACED, dtype=np.int64)
        for i, app in enumerate(instance.apps):
            hs = self.hosts.get(app.name)
            if hs:
                n = min(len(hs), app.count)
                lo = int(instance.offsets[i])
                out[lo : lo + n] = hs[:n]
        return out

    def cards_of(self, app: str, j: int) -> tuple[int, ...]:
        """GPU cards of container ``j`` of ``app`` (empty if none recorded)."""
        g = self.gpus.get(app)
        return g[j] if g is not None and j < len(g) else ()

    def card_lists(self, instance: Instance) -> list[tuple[int, ...]] | None:
        """GPU cards of every container of ``instance``, in container order.

        Returns:
            ``n_containers`` tuples of card indices (empty for unplaced or card-less
            containers), or ``None`` for an instance without GPU cards.
        """
        if not instance.max_gpus:
            return None
        return [self.cards_of(app.name, j) for app in instance.apps for j in range(app.count)]

    @property
    def n_placed(self) -> int:
        """Number of containers on a host."""
        return sum(sum(1 for h in hs if h != UNPLACED) for hs in self.hosts.values())


@dataclass(frozen=True)
class Instance:
    """A container placement problem, checked when it is built.

    Building one (the constructor, ``dataclasses.replace``, :meth:`replace`) brings Python input
    to canonical form (lists to tuples, vectors given by resource name to ``resources`` order)
    and checks it with the rules of an instance file (:mod:`packing.model.validation`): an invalid
    instance raises :class:`packing.errors.InputError` listing every problem, so no solver,
    simulator or study ever receives one.

    Attributes:
        name: a short name.
        resources: resource names, fixing the order of every vector.
        host_types: the kinds of hosts and their counts.
        apps: the applications (containers of one app are identical).
        rules: ``<A, B, k>`` rules (see the module docstring).
        exclusions: pairs of apps that may never share a host.
        gpu_resources: names of the per-card GPU resources.
        initial: optional initial placement (a cluster snapshot).
        requests: optional request stream (arrivals with times, and departures).
        meta: free-form provenance (source file, loader options, generator seed...).
    """

    name: str
    resources: tuple[str, ...]
    host_types: tuple[HostType, ...]
    apps: tuple[App, ...]
    rules: tuple[Rule, ...] = ()
    exclusions: tuple[tuple[str, str], ...] = ()
    gpu_resources: tuple[str, ...] = ()
    initial: Placement | None = None
    requests: tuple[Request, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Canonical form and every check (:func:`packing.model.validation.validate`)."""
        validate(self)

    # ----------------------------------------------------------------------------------------
    # sizes and indices
    @property
    def n_resources(self) -> int:
        """Number of resources."""
        return len(self.resources)

    @property
    def n_apps(self) -> int:
        """Number of apps."""
        return len(self.apps)

    @functools.cached_property
    def n_hosts(self) -> int:
        """Total number of hosts over all host types."""
        return sum(t.count for t in self.host_types)

    @functools.cached_property
    def n_containers(self) -> int:
        """Total number of containers over all apps."""
        return sum(a.count for a in self.apps)

    @functools.cached_property
    def app_index(self) -> dict[str, int]:
        """App name to index."""
        return {a.name: i for i, a in enumerate(self.apps)}

    @functools.cached_property
    def type_index(self) -> dict[str, int]:
        """Host type name to index."""
        return {t.name: i for i, t in enumerate(self.host_types)}

    @functools.cached_property
    def host_names(self) -> tuple[str, ...]:
        """Name of each host, shape ``(n_hosts,)``."""
        names: list[str] = []
        for t in self.host_types:
            if t.host_names is not None:
                names.extend(t.host_names)
            else:
                names.extend(f"{t.name}#{i}" for i in range(t.count))
        return tuple(names)

    @functools.cached_property
    def host_index(self) -> dict[str, int]:
        """Host name to global host index."""
        return {n: i for i, n in enumerate(self.host_names)}

    # ----------------------------------------------------------------------------------------
    # array views (read-only)
    @functools.cached_property
    def offsets(self) -> np.ndarray:
        """Container offsets per app, shape ``(n_apps + 1,)``; app a owns ``offsets[a]:offsets[a+1]``."""
        return _readonly(np.concatenate([[0], np.cumsum(self.counts)]).astype(np.int64))

    @functools.cached_property
    def container_app(self) -> np.ndarray:
        """App index of each container, shape ``(n_containers,)``."""
        return _readonly(np.repeat(np.arange(self.n_apps, dtype=np.int64), self.counts))

    @functools.cached_property
    def counts(self) -> np.ndarray:
        """Containers per app, shape ``(n_apps,)``."""
        return _readonly(np.array([a.count for a in self.apps], dtype=np.int64))

    @functools.cached_property
    def demand(self) -> np.ndarray:
        """Demand of one container per app and resource, shape ``(n_apps, n_resources)``."""
        d = np.array([a.demand for a in self.apps], dtype=np.float64)
        return _readonly(d.reshape(self.n_apps, self.n_resources))

    @functools.cached_property
    def type_capacity(self) -> np.ndarray:
        """Capacity per host type and resource, shape ``(n_types, n_resources)``."""
        c = np.array([t.capacity for t in self.host_types], dtype=np.float64)
        return _readonly(c.reshape(len(self.host_types), self.n_resources))

    @functools.cached_property
    def type_count(self) -> np.ndarray:
        """Hosts per host type, shape ``(n_types,)``."""
        return _readonly(np.array([t.count for t in self.host_types], dtype=np.int64))

    @functools.cached_property
    def type_cost(self) -> np.ndarray:
        """Cost of one host per host type, shape ``(n_types,)``."""
        return _readonly(np.array([t.cost for t in self.host_types], dtype=np.float64))

    @functools.cached_property
    def host_type_of(self) -> np.ndarray:
        """Host type index of each host, shape ``(n_hosts,)``."""
        return _readonly(
            np.repeat(np.arange(len(self.host_types), dtype=np.int64), self.type_count)
        )

    @functools.cached_property
    def host_capacity(self) -> np.ndarray:
        """Capacity per host and resource, shape ``(n_hosts, n_resources)``."""
        return _readonly(self.type_capacity[self.host_type_of])

    @functools.cached_property
    def host_cost(self) -> np.ndarray:
        """Cost per host, shape ``(n_hosts,)``."""
        return _readonly(self.type_cost[self.host_type_of])

    @functools.cached_property
    def host_gpus(self) -> np.ndarray:
        """GPU cards per host, shape ``(n_hosts,)``."""
        g = np.array([t.gpus for t in self.host_types], dtype=np.int64)
        return _readonly(g[self.host_type_of] if self.n_hosts else g[:0])

    @functools.cached_property
    def max_gpus(self) -> int:
        """Most GPU cards on any host type (0 without GPUs)."""
        return max((t.gpus for t in self.host_types), default=0)

    @functools.cached_property
    def card_capacity(self) -> np.ndarray:
        """Per-card capacity per host type, shape ``(n_types, n_gpu_resources)`` (0 without cards)."""
        g = len(self.gpu_resources)
        c = np.zeros((len(self.host_types), g), dtype=np.float64)
        for i, t in enumerate(self.host_types):
            if t.gpus:
                c[i] = t.gpu_capacity
        return _readonly(c)

    @functools.cached_property
    def gpu_demand(self) -> np.ndarray:
        """Per-card GPU demand of one container per app, shape ``(n_apps, n_gpu_resources)``.

        For whole-card apps the entry is ``inf`` (the card must be empty); see ``gpu_whole``.
        """
        g = len(self.gpu_resources)
        d = np.zeros((self.n_apps, g), dtype=np.float64)
        for i, a in enumerate(self.apps):
            if a.gpu_cards:
                d[i] = np.inf if a.gpu_whole else a.gpu_per_card
        return _readonly(d)

    @functools.cached_property
    def gpu_cards(self) -> np.ndarray:
        """GPU cards per container per app, shape ``(n_apps,)``."""
        return _readonly(np.array([a.gpu_cards for a in self.apps], dtype=np.int64))

    @functools.cached_property
    def type_allowed(self) -> np.ndarray | None:
        """Whether each app may run on each host type, shape ``(n_apps, n_types)`` bool.

        The one matrix of host-type eligibility: an app may run on a type when it accepts the
        type's GPU model (``App.gpu_models``; empty: any), the type's labels satisfy its node
        selector and required node affinity, and it tolerates every ``NoSchedule``/``NoExecute``
        taint of the type (:func:`packing.model.selection.allowed`), and the type carries the key of
        every spread of the app (:mod:`packing.model.topology`). ``None`` when every app may run on
        every type (so fast paths need no per-type check).
        """
        taints = any(x.effect in ("NoSchedule", "NoExecute") for t in self.host_types
                     for x in t.taints)
        if not taints and not any(a.gpu_models or a.selects_nodes or a.spreads
                                  for a in self.apps):
            return None
        ok = np.ones((self.n_apps, len(self.host_types)), dtype=bool)
        for i, a in enumerate(self.apps):
            if not (taints or a.gpu_models or a.selects_nodes or a.spreads):
                continue
            ok[i] = [(not a.gpu_models or t.gpu_model in a.gpu_models)
                     and allowed(a.node_selector, a.node_affinity, a.tolerations, t.labels,
                                 t.taints)
                     and all(k == _HOSTNAME or k in dict(t.labels) for k, _ in a.spreads)
                     for t in self.host_types]
        return None if ok.all() else _readonly(ok)

    @functools.cached_property
    def has_topology(self) -> bool:
        """Whether any app has domain caps or spread rules (:mod:`packing.model.topology`)."""
        return any(a.has_topology for a in self.apps)

    # ----------------------------------------------------------------------------------------
    # rules
    @functools.cached_property
    def all_rules(self) -> tuple[Rule, ...]:
        """Cross-app rules including exclusions (as ``k = 0`` both ways), deduplicated.

        Self-rules are not included: they are folded into :attr:`cap`. When the same ``(a, b)``
        appears twice, the tighter ``k`` wins.
        """
        best: dict[tuple[str, str], int] = {}
        for r in self.rules:
            if r.a != r.b:
                best[(r.a, r.b)] = min(best.get((r.a, r.b), r.k), r.k)
        for a, b in self.exclusions:
            best[(a, b)] = 0
            best[(b, a)] = 0
        return tuple(Rule(a, b, k) for (a, b), k in best.items())

    @functools.cached_property
    def rule_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cross-app rules as COO arrays ``(a_idx, b_idx, k)``, each of shape ``(n_rules,)``.

        Rules naming unknown apps are skipped (validation reports them).
        """
        ai, bi, ks = [], [], []
        idx = self.app_index
        for r in self.all_rules:
            if r.a in idx and r.b in idx:
                ai.append(idx[r.a])
                bi.append(idx[r.b])
                ks.append(r.k)
        return (
            _readonly(np.array(ai, dtype=np.int64)),
            _readonly(np.array(bi, dtype=np.int64)),
            _readonly(np.array(ks, dtype=np.int64)),
        )

    def rule_matrix(self) -> np.ndarray:
        """Dense rule matrix ``K[a, b]`` = k of rule ``<a, b, k>``, or -1 where there is none.

        Shape ``(n_apps, n_apps)``. Meant for small instances; large ones use :attr:`rule_arrays`.
        Self-rules appear on the diagonal as the effective cap when it is below the app's count.
        """
        m = np.full((self.n_apps, self.n_apps), -1, dtype=np.int64)
        a, b, k = self.rule_arrays
        m[a, b] = k
        for i in range(self.n_apps):
            if self.cap[i] < self.counts[i]:
                m[i, i] = self.cap[i]
        return m

    @functools.cached_property
    def cap(self) -> np.ndarray:
        """Effective per-host cap per app, shape ``(n_apps,)``.

        ``min(max_per_host, k of any self-rule, count)``; 0 means the app fits on no host.
        """
        c = self.counts.copy()
        for i, a in enumerate(self.apps):
            if a.max_per_host is not None:
                c[i] = min(c[i], a.max_per_host)
        idx = self.app_index
        for r in self.rules:
            if r.a == r.b and r.a in idx:
                i = idx[r.a]
                c[i] = min(c[i], r.k)
        return _readonly(np.maximum(c, 0))

    # ----------------------------------------------------------------------------------------
    def replace(self, **changes: Any) -> Instance:
        """A copy with some fields replaced (the instance itself is immutable), checked.

        The copy is brought to canonical form and checked like a new instance, but only the
        checks that depend on the changed fields run (this instance passed the others when it
        was built), and an app that differs from one of this instance only by its count gets
        only its name and count checked: the fast path for the derived instances solvers build
        (sub-instances, reductions, views). ``dataclasses.replace`` runs every check.

        Raises:
            InputError: the copy is invalid (every problem listed).
            TypeError: a keyword is not a field of :class:`Instance`.
        """
        unknown = sorted(set(changes) - _FIELDS)
        if unknown:
            raise TypeError(f"Instance.replace() got unexpected keyword arguments {unknown}")
        new = object.__new__(type(self))
        for name in _FIELDS:
            object.__setattr__(new, name, changes[name] if name in changes else
                               getattr(self, name))
        validate(new, changed=frozenset(changes), base=self)
        return new

    def summary(self) -> dict[str, Any]:
        """Counts that describe the instance (used by ``vbp info``)."""
        return {
            "name": self.name,
            "apps": self.n_apps,
            "containers": self.n_containers,
            "hosts": self.n_hosts,
            "host_types": len(self.host_types),
            "rules": len(self.rules) + len(self.exclusions),
            "cross_rules": len(self.all_rules),
            "exclusions": len(self.exclusions),
            "resources": self.n_resources,
            "gpu_resources": list(self.gpu_resources),
            "gpus": int(self.host_gpus.sum()),
            "initially_placed": self.initial.n_placed if self.initial is not None else 0,
            "requests": len(self.requests),
        }


_FIELDS = frozenset(f.name for f in fields(Instance))
"""The field names of :class:`Instance` (for :meth:`Instance.replace`)."""

register_model(ModelTypes(App, HostType, Rule, Request, Placement, UNPLACED))
