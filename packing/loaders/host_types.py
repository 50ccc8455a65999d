"""Host types for ``vbp plan``: a CSV or YAML list, or inline ``[NAME=]16c64g[:count=N][:price=P]``.

CSV, with a header::

    name,cpu,memory,gpu,price,count,pods,ephemeral-storage,zone
    std,16,64Gi,,0.80,,110,100Gi,eu-1a
    gpu,32,256Gi,8,12.5,4,,,eu-1b

``name``, ``cpu`` and ``memory`` are required; ``gpu`` (whole cards), ``price`` (of one host),
``count`` (hosts available; empty: as many as needed), ``pods`` (pod slots per host; empty:
110, the kubelet's default), ``ephemeral-storage`` and ``hugepages-<size>`` (capacities) and
``zones`` (``a;b;c``: one type per zone, named ``<name>-<zone>``) are optional. ``zone`` and
``region`` stand for the labels ``topology.kubernetes.io/zone`` and ``.../region``. Every other
column is a node label of the host type (matched by node selectors and topology rules) and shown
in the output; a column named after an extended resource some pod requests (``example.com/foo``)
is that resource's capacity (:func:`packing.plan.model.offers_for`). An empty cell means the type
lacks that label. A column given twice, or one or two letters away from a known column
(``pirce``, ``cout``: :func:`packing.model.node_labels.near_miss`), is an error. Quantities are
Kubernetes quantities: CPU ``16`` or ``15500m``, memory with a unit (``64Gi``, ``64G``); a
capacity is rounded down to whole millicores and bytes, never up.

YAML: a list of mappings (or ``{"host_types": [...]}``) with the keys ``name``, ``cpu``,
``memory``, ``gpu``, ``price``, ``count``, ``pods``, ``zone``, ``region``, ``zones`` (a list),
``labels`` (a mapping of strings), ``taints`` (a list of ``{key, value, effect}``: pods that do
not tolerate a ``NoSchedule``/``NoExecute`` taint stay off the type) and resources
(``ephemeral-storage``, ``hugepages-<size>``, extended resources such as ``example.com/foo``).
An instance file (``resources`` and ``host_types``) gives its host types (:func:`instance_hosts`).

Inline (:func:`inline_offers`), the grammar of :mod:`packing.model.host_spec`:
``[NAME=]<cores>c<GiB>g[<cards>gpu][:count=N][:price=P][:pods=N][:KEY=VALUE...]``, e.g.
``std=16c64g``, ``big=64c256g:price=2.4``, ``gpu=32c256g8gpu:price=12.5:count=4``,
``std=16c64g:zone=eu-1a``, ``std=16c64g:zones=a;b;c``; the positional
``NAME:SHAPE[:PRICE[:COUNT]]`` (``std:16c64g:0.8``, ``std:16c64g::10``) and ``SHAPE:COUNT`` forms
are read too. ``g`` is GiB.

Every host type carries the kubelet's well-known labels it does not give
(:func:`packing.model.node_labels.well_known`: ``kubernetes.io/os: linux``,
``kubernetes.io/arch: amd64``, their ``beta.`` twins, ``node.kubernetes.io/instance-type: <name>``).
Either every host type has a price or none has (then the plan minimises hosts). A type's CPU and
memory must be positive; names are unique over all lists.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from packing.errors import InputError, Problem, input_error
from packing.io.documents import read_document
from packing.loaders.tables import CsvReader
from packing.model.host_spec import SHAPE, is_capacity_key, parse_host_spec, zone_types
from packing.model.node_labels import (
    INSTANCE_TYPE,
    SHORTHAND,
    ZONE,
    label_value,
    near_miss,
    well_known,
)
from packing.model.quantity import is_extended_resource
from packing.model.selection import Taint, taint_problem
from packing.plan.model import DEFAULT_PODS, HostOffer, to_base

COLUMNS = ("name", "cpu", "memory", "gpu", "price", "count", "pods", "zones")
"""The known columns of a host-type CSV besides capacities and the shorthands; the others are labels."""

INLINE = SHAPE
"""An inline host type's ``SHAPE``: cores, GiB, optional cards (:data:`packing.model.host_spec.SHAPE`)."""

YAML_KEYS = ("name", "cpu", "memory", "gpu", "price", "count", "pods", "labels", "taints", "zones",
             *SHORTHAND)
"""The keys of a YAML host type besides capacities (``ephemeral-storage``, ``hugepages-*``, and
domain-qualified extended resources such as ``example.com/foo``)."""

KNOWN = (*COLUMNS, *SHORTHAND, "ephemeral-storage", "labels", "taints")
"""Names a column or key one or two letters away from is a misspelling (an error, not a label)."""


def parse_inline(text: str, source: str = "--hosts") -> HostOffer:
    """One inline host type in the grammar of :mod:`packing.model.host_spec`.

    ``[NAME=]SHAPE[:count=N][:price=P][:pods=N][:KEY=VALUE...]``, or
    ``NAME:SHAPE[:PRICE[:COUNT]]``; without a name, the type is named by its shape. Capacities are
    rounded down to whole millicores and bytes, never up.

    Raises:
        InputError: the text does not follow the grammar (naming the bad part), or has
            ``zones=`` (several types: :func:`inline_offers`).
    """
    offers = inline_offers(text, source)
    if len(offers) != 1:
        raise input_error(source, text, "zones= makes one host type per zone; give it to --hosts")
    return offers[0]


def inline_offers(text: str, source: str = "--hosts") -> tuple[HostOffer, ...]:
    """The host types of one inline spec: one, or one per zone of ``zones=a;b;c``.

    Raises:
        InputError: the text does not follow the grammar (naming the bad part).
    """
    spec = parse_host_spec(text, source)
    name = spec.label
    cpu = to_base("cpu", spec.cores, source, f"{name}.cpu", up=False)
    mem = to_base("memory", spec.memory + "Gi", source, f"{name}.memory", up=False)
    other = tuple((r, to_base(r, q, source, f"{name}.{r}", up=False)) for r, q in spec.resources)
    base = _checked(HostOffer(name, cpu, mem, spec.gpus, spec.price, spec.count, spec.labels,
                              source, (), DEFAULT_PODS if spec.pods is None else spec.pods, other))
    return _per_zone(base, spec.zones, source)


def _per_zone(o: HostOffer, zones: Sequence[str], source: str) -> tuple[HostOffer, ...]:
    """``o`` once per zone (``<name>-<zone>``, labelled with the zone), or itself."""
    if not zones:
        return (o,)
    if ZONE in dict(o.labels):
        raise input_error(source, f"{o.name}.zones", "give zones or a zone, not both")
    kind = dict(o.labels).get(INSTANCE_TYPE, label_value(o.name))  # the same machine type
    labels = {**dict(o.labels), INSTANCE_TYPE: kind}
    return tuple(dataclasses.replace(o, name=n, labels=tuple(sorted({**labels, **dict(z)}.items())))
                 for n, z in zone_types(o.name, zones))


def with_zones(offers: Sequence[HostOffer], zones: Sequence[str]) -> tuple[HostOffer, ...]:
    """Every offer without a zone label once per zone of ``zones`` (``--zones a,b,c``).

    Each copy is named ``<name>-<zone>`` and labelled ``topology.kubernetes.io/zone: <zone>``
    (a count given applies to each copy); offers that have a zone stay as they are.
    """
    zs = [z.strip() for z in zones if z.strip()]
    if not zs:
        return tuple(offers)
    return tuple(c for o in offers for c in
                 ((o,) if ZONE in dict(o.labels) else _per_zone(o, zs, o.source)))


def _price(v: Any, source: str, fld: str) -> float:
    try:
        p = float(v)
    except (TypeError, ValueError):
        raise input_error(source, fld, f"expected a price (a number), got {v!r}") from None
    if isinstance(v, bool) or not math.isfinite(p) or p < 0:
        raise input_error(source, fld, f"must be a finite number, not negative, got {v!r}")
    return p


def _count(v: Any, source: str, fld: str, what: str = "hosts") -> int:
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise input_error(source, fld, f"expected a whole number of {what}, got {v!r}") from None
    if isinstance(v, bool) or not math.isfinite(f) or not f.is_integer() or f < 0:
        raise input_error(source, fld, f"expected a whole number of {what}, not negative, got {v!r}")
    return int(f)


def _taints(v: Any, source: str, fld: str) -> tuple[Taint, ...]:
    """Taints ``[{key, value, effect}]`` of a YAML host type (``effect`` NoSchedule by default)."""
    if v is None:
        return ()
    if not isinstance(v, list):
        raise input_error(source, fld, "expected a list of {key, value, effect}")
    out = []
    for i, raw in enumerate(v):
        if not isinstance(raw, Mapping) or any(k not in ("key", "value", "effect") for k in raw) \
                or not all(isinstance(raw.get(k, ""), str) for k in ("key", "value", "effect")):
            raise input_error(source, f"{fld}[{i}]", "expected a mapping of key, value, effect "
                              "(strings)")
        t = Taint(raw.get("key", ""), raw.get("value", ""), raw.get("effect", "NoSchedule"))
        why = taint_problem(t)
        if why is not None:
            raise input_error(source, f"{fld}[{i}]", why)
        out.append(t)
    return tuple(out)


def _checked(o: HostOffer) -> HostOffer:
    for what, v, unit in (("cpu", o.cpu_milli, "millicores"), ("memory", o.memory_bytes, "bytes"),
                          ("gpu", o.gpus, "GPU cards"), ("pods", o.pods, "pod slots")):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise input_error(o.source, f"{o.name}.{what}",
                              f"expected whole {unit} (an int), got {v!r}")
    if o.gpus < 0:
        raise input_error(o.source, f"{o.name}.gpu", f"must not be negative, got {o.gpus}")
    if o.pods < 0:
        raise input_error(o.source, f"{o.name}.pods", f"must not be negative, got {o.pods}")
    if o.cpu_milli <= 0:
        raise input_error(o.source, f"{o.name}.cpu", "a host type needs CPU (more than 0)")
    if o.memory_bytes <= 0:
        raise input_error(o.source, f"{o.name}.memory", "a host type needs memory (more than 0)")
    for r, v in o.other:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
            raise input_error(o.source, f"{o.name}.{r}", f"expected a whole amount, not negative, "
                              f"got {v!r}")
    return o


def _columns(reader: CsvReader) -> list[str]:
    """The header of a host CSV, checked: no duplicate column, no near miss of a known one."""
    names = reader.header_fields()
    problems = []
    seen: set[str] = set()
    for c in names:
        if c in seen:
            problems.append(Problem(reader.source, f"line 1, column {c}", "the column is given "
                                    "twice"))
        seen.add(c)
        near = (None if c in KNOWN or is_capacity_key(c) else near_miss(c, KNOWN))
        if near is not None:
            problems.append(Problem(reader.source, f"line 1, column {c}", f"unknown column; did "
                                    f"you mean {near!r}? (a column that is no known one is a "
                                    "node label)"))
    if problems:
        raise InputError(problems)
    return names


def load_host_csv(path: str | Path) -> tuple[HostOffer, ...]:
    """Host types from a CSV (see the module docstring).

    Raises:
        InputError: a missing, duplicate or misspelt column, a bad quantity, zero CPU or memory,
            a duplicate name.
    """
    source = str(path)
    reader = CsvReader(path, ("name", "cpu", "memory"), header=True)
    header = _columns(reader)
    capacity = [c for c in header if is_capacity_key(c)]
    out: list[HostOffer] = []
    seen: dict[str, int] = {}
    for line, row in reader.rows():
        def cell(c: str, row: dict[str, str] = row) -> str:
            return row.get(c, "").strip()

        labels = tuple((SHORTHAND.get(k, k), v.strip()) for k, v in row.items()
                       if (k in SHORTHAND or k not in KNOWN) and not is_capacity_key(k)
                       and v.strip())
        name = reader.name(line, "name", row["name"])
        if name is not None and name in seen:
            reader.bad(line, "name", f"duplicate name {name!r} (also on line {seen[name]})")
            continue
        try:
            base = [to_base(r, cell(r) or ("0" if r == "gpu" else ""), source,
                            f"line {line}, column {r}", up=False) for r in ("cpu", "memory", "gpu")]
            price = _price(cell("price"), source, f"line {line}, column price") if cell("price") else None
            count = _count(cell("count"), source, f"line {line}, column count") if cell("count") else None
            pods = (_count(cell("pods"), source, f"line {line}, column pods", "pod slots")
                    if cell("pods") else DEFAULT_PODS)
            other = tuple((c, to_base(c, cell(c), source, f"line {line}, column {c}", up=False))
                          for c in capacity if cell(c))
            if name is None:
                continue
            offer = _checked(HostOffer(name, base[0], base[1], base[2], price, count, labels,
                                       source, (), pods, other))
            zones = [z.strip() for z in cell("zones").split(";") if z.strip()]
            offers = _per_zone(offer, zones, source)
        except InputError as e:
            p = e.problems[0]
            reader.bad(line, p.field.split("column ")[-1] if "column" in p.field else None,
                       p.reason if "column" in p.field else f"{p.field}: {p.reason}")
            continue
        seen[name] = line
        out.extend(offers)
    reader.require_rows("one line per host type: name,cpu,memory[,gpu][,price][,count][,pods]")
    reader.raise_if_bad()
    return tuple(out)


def load_host_yaml(path: str | Path) -> tuple[HostOffer, ...]:
    """Host types from a YAML (or JSON) list (see the module docstring).

    Raises:
        InputError: an unknown key, a bad quantity, zero CPU or memory, a duplicate name.
    """
    source = str(path)
    doc = read_document(path)
    if isinstance(doc, Mapping) and "resources" in doc and "host_types" in doc:
        return instance_hosts(doc, source)
    if isinstance(doc, Mapping) and set(doc) == {"host_types"}:
        doc = doc["host_types"]
    if not isinstance(doc, list) or not doc:
        raise input_error(source, "", "expected a non-empty list of host types (name, cpu, "
                          "memory, gpu, price, count, pods, labels, taints)")
    out: list[HostOffer] = []
    problems: list[Problem] = []
    for i, raw in enumerate(doc):
        f = f"[{i}]"
        if not isinstance(raw, Mapping):
            problems.append(Problem(source, f, "expected a mapping with name, cpu, memory"))
            continue
        capacity = [k for k in raw if isinstance(k, str)
                    and (is_capacity_key(k) or is_extended_resource(k))]
        for k in raw:
            if k in YAML_KEYS or k in capacity:
                continue
            near = near_miss(str(k), KNOWN)
            hint = f"did you mean {near!r}? " if near else ""
            problems.append(Problem(source, f"{f}.{k}", f"unknown key; {hint}use "
                                    f"{', '.join(YAML_KEYS)}, a resource (ephemeral-storage, "
                                    "hugepages-<size>, example.com/foo) or labels"))
        name = raw.get("name")
        if not isinstance(name, str) or not name.strip():
            problems.append(Problem(source, f"{f}.name", "expected a non-empty name"))
            continue
        f = f"[{i}] ({name})"
        try:
            for k in ("cpu", "memory"):
                if k not in raw:
                    raise input_error(source, f"{f}.{k}", "missing")
            base = [to_base(r, raw.get(r, 0), source, f"{f}.{r}", up=False)
                    for r in ("cpu", "memory", "gpu")]
            price = _price(raw["price"], source, f"{f}.price") if raw.get("price") is not None else None
            count = _count(raw["count"], source, f"{f}.count") if raw.get("count") is not None else None
            pods = (_count(raw["pods"], source, f"{f}.pods", "pod slots")
                    if raw.get("pods") is not None else DEFAULT_PODS)
            labels = raw.get("labels") or {}
            if not isinstance(labels, Mapping) or not all(
                    isinstance(k, str) and isinstance(v, str | int | float) for k, v in labels.items()):
                raise input_error(source, f"{f}.labels", "expected a mapping of names to values")
            pairs = {str(k): str(v) for k, v in labels.items()}
            for k, key in SHORTHAND.items():
                if raw.get(k) is not None:
                    pairs[key] = str(raw[k])
            taints = _taints(raw.get("taints"), source, f"{f}.taints")
            other = tuple((k, to_base(k, raw[k], source, f"{f}.{k}", up=False)) for k in capacity)
            zones = raw.get("zones") or []
            if not isinstance(zones, list) or not all(isinstance(z, str) for z in zones):
                raise input_error(source, f"{f}.zones", "expected a list of zone names")
            offer = _checked(HostOffer(name.strip(), base[0], base[1], base[2], price, count,
                                       tuple(pairs.items()), source, taints, pods, other))
            out.extend(_per_zone(offer, zones, source))
        except InputError as e:
            problems.extend(e.problems)
    if problems:
        raise InputError(problems)
    return tuple(out)


def instance_hosts(doc: Mapping[str, Any], source: str) -> tuple[HostOffer, ...]:
    """The host types of an instance file (``resources`` and ``host_types``; its apps are ignored).

    Capacities are read by resource name: ``cpu`` (cores), ``memory`` or ``mem`` (GiB), ``gpu``
    (cards), ``pods`` (110 when not named), the others as host-list columns; each is rounded
    down to whole millicores, bytes and units. Labels, taints, costs (the price) and counts are kept.

    Raises:
        InputError: the file is not a valid instance file, or a capacity is not whole units.
    """
    from fractions import Fraction

    from packing.io.instance_file import instance_from_dict
    from packing.plan.model import unit_of

    keep = {k: v for k, v in doc.items() if k in ("format", "name", "resources", "host_types")}
    inst = instance_from_dict({**keep, "apps": []}, source)
    names = [{"mem": "memory", "gpus": "gpu"}.get(r.lower(), r.lower()) for r in inst.resources]
    out = []
    priced = any(ht.cost != 1.0 for ht in inst.host_types)  # an instance file's cost is 1 by default
    for t in inst.host_types:
        base = {r: math.floor(Fraction(repr(float(x))) / unit_of(r))
                for r, x in zip(names, t.capacity, strict=True)}
        other = tuple(sorted((r, b) for r, b in base.items() if r not in ("cpu", "memory", "gpu", "pods")))
        out.append(_checked(HostOffer(t.name, base.get("cpu", 0), base.get("memory", 0),
                                      base.get("gpu", 0), t.cost if priced else None, t.count,
                                      tuple(t.labels), source, tuple(t.taints),
                                      base.get("pods", DEFAULT_PODS), other)))
    return tuple(out)


def load_hosts(specs: str | Sequence[str | Path | HostOffer],
               zones: Sequence[str] = ()) -> tuple[HostOffer, ...]:
    """Host types from files and inline specs, in order (see the module docstring).

    Every host type gets the kubelet's well-known labels it does not give
    (:func:`packing.model.node_labels.well_known`).

    Args:
        specs: host-type CSV/YAML files, inline specs (:mod:`packing.model.host_spec`), or
            :class:`HostOffer` objects; a string may hold several inline specs separated by
            commas.
        zones: every type without a zone once per zone (:func:`with_zones`; ``--zones``).

    Raises:
        InputError: a bad file or spec, duplicate names, or prices on some types only.
    """
    items: list[str | Path | HostOffer] = (
        [s.strip() for s in specs.split(",")] if isinstance(specs, str) and not Path(specs).exists()
        else [specs] if isinstance(specs, str) else list(specs))
    out: list[HostOffer] = []
    for s in items:
        if isinstance(s, HostOffer):
            out.append(_checked(s))
            continue
        p = Path(s)
        if p.is_file():
            if p.suffix.lower() == ".csv":
                out.extend(load_host_csv(p))
            elif p.suffix.lower() in (".yaml", ".yml", ".json"):
                out.extend(load_host_yaml(p))
            else:
                raise input_error(str(p), "", "expected a host-type list (.csv, .yaml, .yml, .json)")
        elif p.is_dir():
            raise input_error(str(p), "", "is a folder; expected a host-type list or NAME=16c64g")
        else:  # several inline specs separated by commas, as in a single string
            for part in str(s).split(","):
                out.extend(inline_offers(part.strip()))
    if not out:
        raise input_error("--hosts", "", "expected at least one host type")
    out = [dataclasses.replace(o, labels=well_known(o.name, o.labels))
           for o in with_zones(out, zones)]
    problems: list[Problem] = []
    first: dict[str, str] = {}
    for o in out:
        if o.name in first:
            problems.append(Problem(o.source, o.name, f"duplicate host type name (also in "
                                    f"{first[o.name]})"))
        first.setdefault(o.name, o.source)
    priced = [o.price is not None for o in out]
    if any(priced) and not all(priced):
        for o in out:
            if o.price is None:
                problems.append(Problem(o.source, f"{o.name}.price", "other host types have a "
                                        "price: give every host type a price, or none"))
    if problems:
        raise InputError(problems)
    return tuple(out)


__all__ = ["COLUMNS", "INLINE", "KNOWN", "inline_offers", "instance_hosts", "load_host_csv", "load_host_yaml",
           "load_hosts", "parse_inline", "with_zones"]
