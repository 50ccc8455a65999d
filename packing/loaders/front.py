"""The demand door of :func:`packing.loaders.load_any`: DEMAND files and host types to an instance.

Every command (``vbp info``, ``validate``, ``solve``, ``simulate``, ``compare``, ``sweep``) and
``vbp.plan`` read a demand and host types here, with the same checks and messages:

* :func:`read_inputs`: DEMAND paths (deployments CSV, Kubernetes manifests, cluster snapshots,
  instance files; several add up, :func:`packing.loaders.deployments.load_demand`) and host types
  (CSV, YAML, an instance file's host types, inline ``[NAME=]16c64g[:count=N]``, repeatable;
  :func:`packing.loaders.host_types.load_hosts`); node selection, resources no host type offers
  and DaemonSets that leave a host nothing are refused before any work.
* :func:`demand_instance`: the instance to place them on, at full host capacity less the
  DaemonSets each host type runs (``vbp plan`` adds ``--reserve`` and ``--headroom``).

A host type without a count, by what the command needs (``pool``):

* ``"open"`` (``vbp solve``, ``info``, ``validate``): as many hosts as needed. The instance gets
  one host of the type per container (never binding: no container needs a second host), and
  ``meta["uncounted"]`` names the types, so a solver may tighten the count to a proven-safe
  bound (:func:`solvers.plan.type_bounds.bounded_pool`).
* ``"fixed"`` (``vbp simulate``, ``compare``, ``sweep``: a policy replays on a fixed pool): an
  error naming the type and asking for ``:count=N`` (or a ``count`` column).

With ``--hosts``, an instance file gives its apps and rules; its own hosts, snapshot and request
stream are not used (as in ``vbp plan``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from packing.errors import InputError, Problem
from packing.model.instance import Instance
from packing.plan.model import Adjustment, Demand, HostOffer

POOLS = ("describe", "open", "fixed")
"""What a command needs of the host types: ``describe`` (none needed: ``vbp info``,
``validate``), ``open`` (uncounted types as many as needed: ``solve``), ``fixed`` (every type
counted: ``simulate``, ``compare``, ``sweep``)."""

NO_HOSTS = {"k8s": "Kubernetes manifests carry no hosts", "deployments": "a deployments CSV carries no hosts"}
"""The first words of the error for a demand without ``--hosts``, by kind."""


def read_inputs(demand: str | Path | Sequence[str | Path] | Demand,
                hosts: str | Sequence[str | Path | HostOffer], *, zones: Sequence[str] = (),
                current: Any = None, **options: Any) -> tuple[Demand, tuple[HostOffer, ...]]:
    """The demand and the host types it is placed on, checked against each other.

    Args:
        demand: DEMAND path(s) or a :class:`~packing.plan.model.Demand`.
        hosts: host-type files and inline specs (:func:`packing.loaders.host_types.load_hosts`).
        zones: every host type without a zone once per zone (``--zones``).
        current: a cluster snapshot whose node labels and taints the host types take
            (:func:`packing.loaders.snapshot.with_node_types`); other values are ignored.
        **options: the manifest reader's keywords (``scale``, ``ignore_topology``).

    Raises:
        InputError: a bad file or spec, an app whose node selection admits no host type, a
            resource no host type offers.
    """
    from packing.loaders.deployments import load_demand
    from packing.loaders.host_types import load_hosts
    from packing.loaders.snapshot import looks_like_snapshot, with_node_types
    from packing.plan.model import check_resources, check_selection, offers_for

    dem = demand if isinstance(demand, Demand) else load_demand(demand, **options)
    offers = load_hosts(hosts, zones)
    if isinstance(current, str | Path) and looks_like_snapshot(current):
        offers = with_node_types(current, offers)
    offers = offers_for(dem, offers)
    check_selection(dem, offers)
    check_resources(dem, offers)
    return dem, offers


def demand_instance(demand: Demand, offers: Sequence[HostOffer], pool: str = "open",
                    name: str = "demand") -> Instance:
    """The instance of ``demand`` on ``offers`` at full capacity less each type's DaemonSets.

    Args:
        demand: what to place.
        offers: the host types (none: an instance without hosts, to describe).
        pool: what an uncounted type becomes (:data:`POOLS`, the module docstring).
        name: the instance name.

    Raises:
        InputError: with ``pool="fixed"``, a type without a count (naming it); DaemonSets that
            need more than a host type has.
    """
    from packing.plan.model import base_to_units, build_instance

    if pool not in POOLS:
        raise ValueError(f"pool must be one of {POOLS}, got {pool!r}")
    open_types = [o for o in offers if o.count is None]
    if pool == "fixed" and open_types:
        raise InputError([Problem(o.source, f"{o.name}.count", "the pool is fixed here (a policy "
                                  "replays on the hosts there are): give the type a count, e.g. "
                                  f"{o.name}=...:count=10 inline or a count column") for o in open_types])
    every = max(1, sum(a.count for a in demand.apps))
    counts = [every if o.count is None else o.count for o in offers]
    inst = build_instance(demand, offers, counts, Adjustment().plus(demand.overhead), name=name,
                          rounded=False)
    meta = {**inst.meta, **demand.meta, "source": "demand and host types",
            "uncounted": [o.name for o in open_types]}
    if isinstance(meta.get("k8s"), dict) and offers:  # what vbp info shows: DaemonSets per type
        res = inst.resources
        meta["k8s"] = {**meta["k8s"], "overhead": {o.name: [
            base_to_units(r, b) for r, b in zip(res, demand.daemon_load(o, res), strict=True)]
            for o in offers}}
    return inst.replace(meta=meta)


def no_hosts(kind: str, path: str) -> InputError:
    """The error for a demand of ``kind`` read from ``path`` without ``--hosts``."""
    what = NO_HOSTS.get(kind, "the input carries no hosts")
    return InputError([Problem(path, "--hosts", f"{what}; give the host types, e.g. "
                               "--hosts 16c64g:10")])


__all__ = ["NO_HOSTS", "POOLS", "demand_instance", "no_hosts", "read_inputs"]
