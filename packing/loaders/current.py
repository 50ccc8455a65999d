"""The running cluster for ``vbp plan --current``: a placement, an instance or a cluster snapshot.

A **cluster snapshot** (``kubectl get nodes,pods,pdb -A -o yaml``, :mod:`packing.loaders.snapshot`):
every node is a running host of the HOSTS type its instance type names (planned against that
type's capacity, like new hosts: give the kubelet's reserve with ``--reserve``), and its pods run
there; the DEMAND is the snapshot itself (:func:`packing.loaders.snapshot.snapshot_plan`).

A **placement file** (``vbp-placement/1``, see ``docs/file-format.md``) names, per app, the host of
each running container as ``"<type>#<i>"``, where ``<type>`` is a host type of the plan's HOSTS
(``null``: the container does not run yet). The hosts of a type are numbered from 0: naming
``std#5`` means hosts ``std#0`` .. ``std#5`` run (six hosts), whether or not the file names the
others. Host indices (numbers) are refused: they depend on host counts the plan chooses.

An **instance file** with ``initial``: its host types must carry names of the plan's HOSTS
types; every one of its hosts runs (host ``i`` of type ``t`` is ``"<t>#<i>"``), and ``initial``
says where the containers are. Its apps and capacities are not used (the DEMAND and HOSTS are).

Every app named must be an app of the DEMAND.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packing.errors import input_error
from packing.io.documents import read_document
from packing.model.instance import UNPLACED

_NAME = re.compile(r"^(?P<type>.+)#(?P<i>0|[1-9][0-9]{0,6})$")


@dataclass(frozen=True)
class Current:
    """The running cluster.

    Attributes:
        existing: hosts running now per host-type name.
        hosts: per app, per running container: ``(type name, index)`` or ``None`` (not running).
        gpus: per app, per container: its GPU card indices (may be empty).
        source: where it was read from.
    """

    existing: dict[str, int]
    hosts: dict[str, tuple[tuple[str, int] | None, ...]]
    gpus: dict[str, tuple[tuple[int, ...], ...]] = field(default_factory=dict)
    source: str = "<current>"


def load_current(path: str | Path, types: Collection[str], apps: Collection[str]) -> Current:
    """Read the running cluster (see the module docstring).

    Args:
        path: the placement or instance file.
        types: the host-type names of the plan.
        apps: the app names of the demand.

    Raises:
        InputError: unreadable file, unknown host type, host name or app.
    """
    src = str(path)
    from packing.loaders.snapshot import looks_like_snapshot

    if looks_like_snapshot(path):
        return _from_snapshot(path, types, apps)
    doc = read_document(path)
    if not isinstance(doc, Mapping):
        raise input_error(src, "<document>", "expected a placement or an instance object")
    if "apps" in doc:
        return _from_instance(doc, src, types, apps)
    return _from_placement(doc, src, types, apps)


def _from_snapshot(path: str | Path, types: Collection[str], apps: Collection[str]) -> Current:
    """The running cluster of a snapshot: its nodes as hosts of their type (by instance type)."""
    from packing.loaders.snapshot import read_snapshot, snapshot_plan

    src = str(path)
    snap = read_snapshot(path)
    for n in snap.nodes:
        if n.type not in types:
            raise input_error(src, f"Node/{n.name}", f"its type {n.type or '(no type label)'!r} is "
                              f"no host type of HOSTS ({', '.join(sorted(types))})")
    _demand, running = snapshot_plan(path)
    for app in running:
        if app not in apps:
            raise input_error(src, app, f"unknown app {app!r} (not in DEMAND: plan the snapshot "
                              "itself as DEMAND)")
    existing: dict[str, int] = {}
    for n in snap.nodes:
        existing[n.type] = existing.get(n.type, 0) + 1
    return Current(existing, dict(running), {}, src)


def _from_instance(doc: Mapping[str, Any], src: str, types: Collection[str],
                   apps: Collection[str]) -> Current:
    from packing.io.instance_file import instance_from_dict

    inst = instance_from_dict(doc, src)
    if inst.initial is None:
        raise input_error(src, "initial", "an instance file given as --current needs an "
                          "initial placement")
    existing: dict[str, int] = {}
    ref: list[tuple[str, int]] = []
    for t in inst.host_types:
        if t.name not in types:
            raise input_error(src, f"host_types.{t.name}",
                              f"unknown host type {t.name!r}; HOSTS has {sorted(types)}")
        base = existing.get(t.name, 0)
        existing[t.name] = base + t.count
        ref.extend((t.name, base + i) for i in range(t.count))
    hosts: dict[str, tuple[tuple[str, int] | None, ...]] = {}
    for app, hs in inst.initial.hosts.items():
        if app not in apps:
            raise input_error(src, f"initial.hosts.{app}", f"unknown app {app!r} (not in DEMAND)")
        hosts[app] = tuple(None if h == UNPLACED else ref[h] for h in hs)
    gpus = {a: tuple(tuple(c) for c in cs) for a, cs in inst.initial.gpus.items()}
    return Current(existing, hosts, gpus, src)


def _from_placement(doc: Mapping[str, Any], src: str, types: Collection[str],
                    apps: Collection[str]) -> Current:
    unknown = set(doc) - {"format", "instance", "hosts", "gpus", "meta"}
    if unknown:
        raise input_error(src, sorted(unknown)[0], "unknown key in a placement")
    ho = doc.get("hosts")
    if not isinstance(ho, Mapping):
        raise input_error(src, "hosts", "expected a mapping of app -> host names")
    existing: dict[str, int] = {}
    hosts: dict[str, tuple[tuple[str, int] | None, ...]] = {}
    for app, seq in ho.items():
        f = f"hosts.{app}"
        if app not in apps:
            raise input_error(src, f, f"unknown app {app!r} (not in DEMAND)")
        if not isinstance(seq, list):
            raise input_error(src, f, "expected a list of host names")
        out: list[tuple[str, int] | None] = []
        for j, h in enumerate(seq):
            if h is None:
                out.append(None)
                continue
            m = _NAME.match(h) if isinstance(h, str) else None
            if m is None:
                raise input_error(src, f"{f}[{j}]", f"expected a host name '<type>#<i>' or "
                                  f"null, got {h!r}")
            t, i = m["type"], int(m["i"])
            if t not in types:
                raise input_error(src, f"{f}[{j}]", f"unknown host {h!r}: no host type {t!r} "
                                  f"in HOSTS ({', '.join(sorted(types))})")
            existing[t] = max(existing.get(t, 0), i + 1)
            out.append((t, i))
        hosts[app] = tuple(out)
    gpus: dict[str, tuple[tuple[int, ...], ...]] = {}
    go = doc.get("gpus") or {}
    if not isinstance(go, Mapping):
        raise input_error(src, "gpus", "expected a mapping of app -> card lists")
    for app, seq in go.items():
        if app not in hosts or not isinstance(seq, list) or not all(
                isinstance(c, list) and all(isinstance(x, int) for x in c) for c in seq):
            raise input_error(src, f"gpus.{app}", "expected card lists of an app listed in hosts")
        gpus[app] = tuple(tuple(c) for c in seq)
    return Current(existing, hosts, gpus, src)


__all__ = ["Current", "load_current"]
