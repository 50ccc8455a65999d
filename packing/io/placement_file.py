"""Placement files: a placement as a document and back, loaded and saved as JSON or YAML.

The format is documented in ``docs/file-format.md``; :mod:`packing.io` re-exports everything here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from packing.errors import InputError
from packing.io.documents import read_document, write_document
from packing.io.fields import FieldReader, check_plain
from packing.model.instance import UNPLACED, Instance, Placement
from packing.model.validation import MAX_CONTAINERS
from packing.model.validation import describe as _kind
from packing.model.validation import short as _short

PLACEMENT_FORMAT = "vbp-placement/1"


def placement_to_dict(p: Placement, inst: Instance) -> dict[str, Any]:
    """A placement document: host names per container (``null`` = unplaced), GPU cards per app."""
    names = inst.host_names

    def host_ref(h: int) -> str | int | None:
        if h == UNPLACED:
            return None
        return names[h] if 0 <= h < len(names) else h

    doc: dict[str, Any] = {"format": PLACEMENT_FORMAT, "instance": inst.name,
                           "hosts": {a: [host_ref(h) for h in hs] for a, hs in p.hosts.items()}}
    gpus = {a: [list(c) for c in cs] for a, cs in p.gpus.items() if cs}
    if gpus:
        doc["gpus"] = gpus
    return doc


def placement_from_dict(doc: Any, inst: Instance, source: str = "<placement>",
                        field: str = "") -> Placement:
    """Build a placement from a document; hosts may be given by name or by index.

    A container is unplaced only when its entry is ``null``; a host index must be one of
    ``0 .. n_hosts - 1`` (``-1`` is an error, not "unplaced"). GPU card lists must belong to apps
    the placement lists, one list per container at most, with card indices the container's host
    has. Unknown app names and wrong container counts are kept: the checker reports them.

    Raises:
        InputError: with one :class:`Problem` per thing wrong.
    """
    r = FieldReader(source)
    pre = f"{field}." if field else ""
    d = r.obj(doc, field)
    if d is None or r.other_vbp_format(d, field, PLACEMENT_FORMAT):
        raise InputError(r.problems)
    r.unknown_keys(d, field, {"format", "instance", "hosts", "gpus", "meta"})
    fmt = d.get("format", PLACEMENT_FORMAT)
    if fmt != PLACEMENT_FORMAT:
        r.bad(f"{pre}format", f"expected {PLACEMENT_FORMAT!r}, got {fmt!r}")
    if d.get("instance") is not None:
        r.string(d["instance"], f"{pre}instance")
    if d.get("meta") is not None:
        if isinstance(d["meta"], Mapping):
            check_plain(r, d["meta"], f"{pre}meta")
        else:
            r.bad(f"{pre}meta", f"expected an object, got {_kind(d['meta'])}")
    idx = inst.host_index
    n_hosts = inst.n_hosts
    hosts: dict[str, tuple[int, ...]] = {}
    ho = r.obj(d.get("hosts"), f"{pre}hosts") or {}
    for app, seq in ho.items():
        if r.string(app, f"{pre}hosts") is None:
            continue
        f = f"{pre}hosts.{app}"
        lst = r.seq(seq, f)
        if lst is None:
            continue
        if len(lst) > MAX_CONTAINERS:
            r.bad(f, f"at most {MAX_CONTAINERS:,} containers are supported, got {len(lst):,}")
            continue
        out = []
        for j, h in enumerate(lst):
            if h is None:
                out.append(UNPLACED)
            elif isinstance(h, str):
                if h not in idx:
                    r.bad(f"{f}[{j}]", f"unknown host {h!r}")
                    out.append(UNPLACED)
                else:
                    out.append(idx[h])
            elif isinstance(h, int) and not isinstance(h, bool):
                if not 0 <= h < n_hosts:
                    hint = "; write null for an unplaced container" if h < 0 else ""
                    span = f"0..{n_hosts - 1}" if n_hosts else "none: the instance has no hosts"
                    r.bad(f"{f}[{j}]", f"host index {_short(h)} is out of range ({span}){hint}")
                    out.append(UNPLACED)
                else:
                    out.append(h)
            else:
                r.bad(f"{f}[{j}]", f"expected a host name, index or null, got {_kind(h)}")
                out.append(UNPLACED)
        hosts[app] = tuple(out)
    gpus: dict[str, tuple[tuple[int, ...], ...]] = {}
    go = r.obj(d.get("gpus", {}), f"{pre}gpus") or {}
    host_gpus = inst.host_gpus
    for app, seq in go.items():
        if r.string(app, f"{pre}gpus") is None:
            continue
        f = f"{pre}gpus.{app}"
        lst = r.seq(seq, f)
        if lst is None:
            continue
        if app not in hosts:
            r.bad(f, f"GPU cards for app {app!r}, which the placement's hosts do not list")
            continue
        hs = hosts[app]
        if len(lst) > len(hs):
            r.bad(f, f"has {len(lst)} card lists for the {len(hs)} containers of app {app!r}")
            continue
        cs = []
        for j, c in enumerate(lst):
            if not isinstance(c, list) or not all(isinstance(x, int) and not isinstance(x, bool)
                                                  for x in c):
                r.bad(f"{f}[{j}]", f"expected a list of card indices, got {_kind(c)}")
                c = []
            h = hs[j]
            if c and h == UNPLACED:
                r.bad(f"{f}[{j}]", f"cards {c} for container {j}, which is not on a host")
                c = []
            elif c:
                n_cards = int(host_gpus[h])
                wrong = [x for x in c if not 0 <= x < n_cards]
                if wrong:
                    have = f"cards 0..{n_cards - 1}" if n_cards else "no GPU cards"
                    r.bad(f"{f}[{j}]", f"card {_short(wrong[0])} on host "
                          f"{inst.host_names[h]!r}, which has {have}")
                    c = []
            cs.append(tuple(c))
        gpus[app] = tuple(cs)
    if r.problems:
        raise InputError(r.problems)
    return Placement(hosts, gpus)


def load_placement(path: str | Path, inst: Instance) -> Placement:
    """Load a placement file for ``inst``."""
    return placement_from_dict(read_document(path), inst, str(path))


def save_placement(p: Placement, inst: Instance, path: str | Path) -> None:
    """Save a placement as JSON or YAML (by extension), atomically."""
    write_document(path, placement_to_dict(p, inst))


__all__: list[str] = [
    "PLACEMENT_FORMAT", "load_placement", "placement_from_dict", "placement_to_dict",
    "save_placement",
]
