"""Topology rules over host labels: domain caps and spread (``App.domain_caps``, ``App.spreads``).

A *topology key* is a host label key (``topology.kubernetes.io/zone``); its *domains* are the
label's values. Every host of a type carrying the label is in the domain of the type's value; a
host whose type lacks the label is in no domain. The key :data:`HOSTNAME`
(``kubernetes.io/hostname``) is special: every host is its own domain (host types label their
hosts collectively, so a per-host label cannot be written on a type).

* **Domain cap** ``(key, k)``: at most ``k`` containers of the app in any one domain of ``key``.
  Hosts in no domain are not limited (the scheduler's InterPodAffinity filter only looks at
  existing pods in the node's own topology domain, and a node without the key has none; see
  ``docs/kubernetes.md``). With :data:`HOSTNAME` it is a per-host cap.
* **Spread** ``(key, max_skew)`` (``whenUnsatisfiable: DoNotSchedule``): the app runs only on
  hosts that have the key, and over its *eligible domains* the container counts of any two
  domains differ by at most ``max_skew``. The eligible domains are the key's values on the host
  types whose labels satisfy the app's node selector and required node affinity (taints are
  ignored: the scheduler's defaults ``nodeAffinityPolicy: Honor``, ``nodeTaintsPolicy: Ignore``).
  A domain is eligible whether or not the instance has hosts of its types (a type's count may
  be 0, e.g. when a plan derives that none of its hosts can be used): the fleet offered in a
  zone is what defines the zone, so a plan, ``vbp solve`` on the same fleet with any counts, the
  checker and the simulator agree on the domains. For :data:`HOSTNAME` the eligible domains are
  the *used* hosts (running at least one container of any app) of those types: a host that runs
  nothing is not provisioned, so it is no node the scheduler could count.

The checker applies the rules to a final placement (:func:`violations`); the simulator's filter
(:func:`mask`) to one more container: a domain cap forbids the placement that would exceed it,
and a spread forbids placing where the domain's count after placement would exceed the smallest
count of the eligible domains *now* by more than ``max_skew`` (the scheduler's per-pod check). In
a simulation every host of the instance exists, so for :data:`HOSTNAME` the filter takes the
minimum over every host of an eligible type, used or not (stricter than the plan's rule over used
hosts, which it implies). While containers are only added the per-pod check keeps
``max - min <= max_skew`` over the eligible domains (the minimum never decreases), so the final
placement passes the checker; a departure can lower the minimum afterwards, as in a cluster
(the scheduler does not move pods), so with departures the final state may break a spread
(:func:`packing.sim.simulator.simulate` then does not count ``spread`` as a simulator fault).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from packing.model.instance import Instance
from packing.model.selection import node_selection_holds

HOSTNAME = "kubernetes.io/hostname"
"""The topology key that makes every host its own domain."""
ZONE = "topology.kubernetes.io/zone"
"""The standard zone label key."""


@dataclass(frozen=True)
class Domains:
    """The domains of one topology key.

    Attributes:
        key: the label key.
        of_host: domain index of each host, shape ``(n_hosts,)``; -1 for hosts in no domain.
        names: the domain names (label values; host names for :data:`HOSTNAME`).
    """

    key: str
    of_host: np.ndarray
    names: tuple[str, ...]
    of_type: np.ndarray | None = None
    """Domain index of each host type, shape ``(n_types,)`` (-1: no label); ``None`` for
    :data:`HOSTNAME`."""

    @property
    def per_host(self) -> bool:
        """Whether every host is its own domain (:data:`HOSTNAME`)."""
        return self.key == HOSTNAME


_CACHE: dict[tuple[int, str], tuple[weakref.ref[Instance], Domains]] = {}


def domains(inst: Instance, key: str) -> Domains:
    """The domains of ``key`` on ``inst`` (cached per instance)."""
    hit = _CACHE.get((id(inst), key))
    if hit is not None and hit[0]() is inst:
        return hit[1]
    if key == HOSTNAME:
        d = Domains(key, np.arange(inst.n_hosts, dtype=np.int64), inst.host_names)
    else:
        values: dict[str, int] = {}
        per_type = np.full(len(inst.host_types), -1, dtype=np.int64)
        for t, ht in enumerate(inst.host_types):
            v = dict(ht.labels).get(key)
            if v is not None:
                per_type[t] = values.setdefault(v, len(values))
        per_type.setflags(write=False)
        d = Domains(key, per_type[inst.host_type_of] if inst.n_hosts else per_type[:0],
                    tuple(values), per_type)
    d.of_host.setflags(write=False)
    if len(_CACHE) >= 256:
        _CACHE.clear()
    _CACHE[(id(inst), key)] = (weakref.ref(inst), d)
    return d


def has_key(inst: Instance, key: str) -> np.ndarray:
    """Whether each host type carries ``key``, shape ``(n_types,)`` (all true for HOSTNAME)."""
    return np.array([key == HOSTNAME or key in dict(t.labels) for t in inst.host_types],
                    dtype=bool)


def spread_types(inst: Instance, app: int, key: str) -> np.ndarray:
    """Host types whose domains are eligible for a spread of ``app`` over ``key``, ``(n_types,)``.

    A type is eligible when it carries the key and its labels satisfy the app's node selector and
    required node affinity (taints ignored).
    """
    hit = _TYPES.get((id(inst), app, key))
    if hit is not None and hit[0]() is inst:
        return hit[1]
    a = inst.apps[app]
    ok = np.array([(key == HOSTNAME or key in dict(t.labels))
                   and node_selection_holds(a.node_selector, a.node_affinity, dict(t.labels))
                   for t in inst.host_types], dtype=bool)
    ok.setflags(write=False)
    if len(_TYPES) >= 1024:
        _TYPES.clear()
    _TYPES[(id(inst), app, key)] = (weakref.ref(inst), ok)
    return ok


_TYPES: dict[tuple[int, int, str], tuple[weakref.ref[Instance], np.ndarray]] = {}


def eligible_domains(inst: Instance, app: int, key: str,
                     used: np.ndarray | None = None) -> np.ndarray:
    """The eligible domains of a spread of ``app`` over ``key`` (sorted domain indices).

    Args:
        inst: the instance.
        app: app index.
        key: the topology key.
        used: per host whether it is used, shape ``(n_hosts,)``; only for :data:`HOSTNAME`
            (required there), where the eligible domains are the used hosts of eligible types.
    """
    d = domains(inst, key)
    ok_type = spread_types(inst, app, key)
    if d.per_host:
        assert used is not None
        return np.flatnonzero(ok_type[inst.host_type_of] & used)
    assert d.of_type is not None
    return np.unique(d.of_type[ok_type & (d.of_type >= 0)])


def domain_counts(d: Domains, host_counts: np.ndarray) -> np.ndarray:
    """Containers per domain from containers per host (``(n_hosts,)`` -> ``(n_domains,)``)."""
    if d.per_host:
        return np.asarray(host_counts, dtype=np.int64)
    inside = d.of_host >= 0
    return np.bincount(d.of_host[inside], weights=host_counts[inside],
                       minlength=len(d.names)).astype(np.int64)


@dataclass(frozen=True)
class Broken:
    """One broken topology rule (the checker turns it into a violation).

    Attributes:
        kind: ``"domain_cap"`` or ``"spread"``.
        app: app index.
        key: the topology key.
        message: a sentence naming app, key, domains and counts.
        host: a host of the offending domain (for per-host keys), else ``None``.
    """

    kind: str
    app: int
    key: str
    message: str
    host: int | None = None


def violations(inst: Instance, host_counts: np.ndarray, used: np.ndarray) -> Iterator[Broken]:
    """The topology rules a final state breaks.

    Args:
        inst: the instance.
        host_counts: callable-free table: containers of app ``a`` on host ``h`` for every app with
            topology rules, shape ``(n_apps, n_hosts)`` (rows of other apps are ignored).
        used: whether each host runs any container, shape ``(n_hosts,)``.

    Yields:
        The broken rules, app by app, caps before spreads. A spread app on a host without the
        key is not reported here: ``Instance.type_allowed`` excludes such hosts (the checker
        reports ``node_selection``).
    """
    for i, app in enumerate(inst.apps):
        for key, k in app.domain_caps:
            d = domains(inst, key)
            c = domain_counts(d, host_counts[i])
            for dom in np.flatnonzero(c > k).tolist():
                yield Broken("domain_cap", i, key, (
                    f"app {app.name!r} has {int(c[dom])} containers in {key}={d.names[dom]}; "
                    f"at most {k} are allowed per domain"), dom if d.per_host else None)
        for key, skew in app.spreads:
            d = domains(inst, key)
            c = domain_counts(d, host_counts[i])
            el = eligible_domains(inst, i, key, used)
            if not len(el):
                continue
            ce = c[el]
            lo, hi = int(ce.argmin()), int(ce.argmax())
            if int(ce[hi]) - int(ce[lo]) > skew:
                yield Broken("spread", i, key, (
                    f"app {app.name!r} has {int(ce[hi])} containers in "
                    f"{key}={d.names[el[hi]]} but {int(ce[lo])} in {key}={d.names[el[lo]]}; "
                    f"maxSkew is {skew}"), int(el[hi]) if d.per_host else None)


def mask(inst: Instance, app: int, host_counts: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Hosts where one more container of ``app`` keeps its topology rules, ``(n_hosts,)`` bool.

    Args:
        inst: the instance.
        app: app index.
        host_counts: containers of the app per host now, shape ``(n_hosts,)``.
        used: whether each host runs any container now, shape ``(n_hosts,)``.
    """
    a = inst.apps[app]
    ok = np.ones(inst.n_hosts, dtype=bool)
    for key, k in a.domain_caps:
        d = domains(inst, key)
        c = domain_counts(d, host_counts)
        inside = d.of_host >= 0
        ok[inside] &= c[d.of_host[inside]] + 1 <= k
    for key, skew in a.spreads:
        d = domains(inst, key)
        c = domain_counts(d, host_counts)
        inside = d.of_host >= 0
        ok &= inside
        # every host of the instance exists in a simulation: for the host name key the minimum
        # is over every host of an eligible type (see the module docstring)
        el = eligible_domains(inst, app, key, np.ones(inst.n_hosts, dtype=bool))
        low = int(c[el].min()) if len(el) else 0
        after = c[d.of_host[inside]] + 1
        ok[inside] &= after - low <= skew
    return ok


def cap_shortfalls(inst: Instance, per_host: np.ndarray) -> list[str]:
    """Apps whose domain caps leave room for fewer containers than they have (one sentence each).

    An app with cap ``(key, k)`` holds at most ``k`` containers in each domain of ``key`` that has
    a host able to run it, plus what its hosts without the key can take (``per_host`` of each).

    Args:
        inst: the instance.
        per_host: most containers of each app on one host of each type, shape ``(n_apps, n_types)``
            (:func:`packing.feasibility.bounds.per_host_max`).
    """
    out = []
    for i, app in enumerate(inst.apps):
        for key, k in app.domain_caps:
            if key == HOSTNAME or not app.count:
                continue
            d = domains(inst, key)
            can = per_host[i][inst.host_type_of] > 0
            n_dom = len(np.unique(d.of_host[can & (d.of_host >= 0)]))
            outside = int(per_host[i][inst.host_type_of][can & (d.of_host < 0)].sum())
            most = k * n_dom + outside
            if most < app.count:
                out.append(f"app {app.name!r}: {app.count} containers, at most {k} per value of "
                           f"{key!r} on the {n_dom} values its hosts carry"
                           + (f" and {outside} on hosts without the label" if outside else "")
                           + f": room for {most}")
    return out


def type_needs_key(inst: Instance, app: int) -> np.ndarray:
    """Host types an app's spreads admit (they carry every spread key), shape ``(n_types,)``."""
    ok = np.ones(len(inst.host_types), dtype=bool)
    for key, _ in inst.apps[app].spreads:
        ok &= has_key(inst, key)
    return ok


__all__ = ["HOSTNAME", "ZONE", "Broken", "Domains", "cap_shortfalls", "domain_counts", "domains",
           "eligible_domains", "has_key", "mask", "spread_types", "type_needs_key", "violations"]
