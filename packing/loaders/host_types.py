"""Host types for ``vbp plan``: a CSV or YAML list, or inline ``[NAME=]16c64g[:count=N][:price=P]``.

CSV, with a header::

    name,cpu,memory,gpu,price,count,zone
    std,16,64Gi,,0.80,,eu-1a
    gpu,32,256Gi,8,12.5,4,eu-1b

``name``, ``cpu`` and ``memory`` are required; ``gpu`` (whole cards), ``price`` (of one host) and
``count`` (hosts available; empty: as many as needed) are optional; every other column is a
node label of the host type (matched by node selectors and topology rules: a
``topology.kubernetes.io/zone`` column puts the type in a zone) and shown in the output. An empty
cell means the type lacks that label. Quantities are Kubernetes quantities: CPU ``16`` or
``15500m``, memory with a unit (``64Gi``, ``64G``).

YAML: a list of mappings (or ``{"host_types": [...]}``) with the keys ``name``, ``cpu``,
``memory``, ``gpu``, ``price``, ``count``, ``labels`` (a mapping of strings) and ``taints`` (a
list of ``{key, value, effect}``: pods that do not tolerate a ``NoSchedule``/``NoExecute`` taint
stay off the type).

Inline (:func:`parse_inline`), the grammar of :mod:`packing.model.host_spec`:
``[NAME=]<cores>c<GiB>g[<cards>gpu][:count=N][:price=P]``, e.g. ``std=16c64g``,
``big=64c256g:price=2.4``, ``gpu=32c256g8gpu:price=12.5:count=4``, ``16c64g:count=10``; the
positional ``NAME:SHAPE[:PRICE[:COUNT]]`` (``std:16c64g:0.8``, ``std:16c64g::10``) and
``SHAPE:COUNT`` forms are read too. ``g`` is GiB.

Either every host type has a price or none has (then the plan minimises hosts). A type's CPU and
memory must be positive; names are unique over all lists.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from packing.errors import InputError, Problem, input_error
from packing.io.documents import read_document
from packing.loaders.tables import CsvReader
from packing.model.host_spec import SHAPE, parse_host_spec
from packing.model.selection import Taint, taint_problem
from packing.plan.model import HostOffer, to_base

COLUMNS = ("name", "cpu", "memory", "gpu", "price", "count")
"""The known columns of a host-type CSV; every other column is a label."""

INLINE = SHAPE
"""An inline host type's ``SHAPE``: cores, GiB, optional cards (:data:`packing.model.host_spec.SHAPE`)."""

YAML_KEYS = ("name", "cpu", "memory", "gpu", "price", "count", "labels", "taints")


def parse_inline(text: str, source: str = "--hosts") -> HostOffer:
    """One inline host type in the grammar of :mod:`packing.model.host_spec`.

    ``[NAME=]SHAPE[:count=N][:price=P]``, or ``NAME:SHAPE[:PRICE[:COUNT]]``; without a name, the
    type is named by its shape.

    Raises:
        InputError: the text does not follow the grammar (naming the bad part).
    """
    spec = parse_host_spec(text, source)
    name = spec.label
    cpu = to_base("cpu", spec.cores, source, f"{name}.cpu")
    mem = to_base("memory", spec.memory + "Gi", source, f"{name}.memory")
    return _checked(HostOffer(name, cpu, mem, spec.gpus, spec.price, spec.count, (), source))


def _price(v: Any, source: str, fld: str) -> float:
    try:
        p = float(v)
    except (TypeError, ValueError):
        raise input_error(source, fld, f"expected a price (a number), got {v!r}") from None
    if isinstance(v, bool) or not math.isfinite(p) or p < 0:
        raise input_error(source, fld, f"must be a finite number, not negative, got {v!r}")
    return p


def _count(v: Any, source: str, fld: str) -> int:
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise input_error(source, fld, f"expected a whole number of hosts, got {v!r}") from None
    if isinstance(v, bool) or not math.isfinite(f) or not f.is_integer() or f < 0:
        raise input_error(source, fld, f"expected a whole number of hosts, not negative, got {v!r}")
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
                          ("gpu", o.gpus, "GPU cards")):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise input_error(o.source, f"{o.name}.{what}",
                              f"expected whole {unit} (an int), got {v!r}")
    if o.gpus < 0:
        raise input_error(o.source, f"{o.name}.gpu", f"must not be negative, got {o.gpus}")
    if o.cpu_milli <= 0:
        raise input_error(o.source, f"{o.name}.cpu", "a host type needs CPU (more than 0)")
    if o.memory_bytes <= 0:
        raise input_error(o.source, f"{o.name}.memory", "a host type needs memory (more than 0)")
    return o


def load_host_csv(path: str | Path) -> tuple[HostOffer, ...]:
    """Host types from a CSV (see the module docstring).

    Raises:
        InputError: a missing column, a bad quantity, zero CPU or memory, a duplicate name.
    """
    source = str(path)
    reader = CsvReader(path, COLUMNS, header=True, optional=("gpu", "price", "count"))
    out: list[HostOffer] = []
    seen: dict[str, int] = {}
    for line, row in reader.rows():
        labels = tuple((k, v.strip()) for k, v in row.items() if k not in COLUMNS and v.strip())
        name = reader.name(line, "name", row["name"])
        if name is not None and name in seen:
            reader.bad(line, "name", f"duplicate name {name!r} (also on line {seen[name]})")
            continue
        try:
            base = [to_base(r, row[r].strip() or ("0" if r == "gpu" else ""), source,
                            f"line {line}, column {r}") for r in ("cpu", "memory", "gpu")]
            price = (_price(row["price"].strip(), source, f"line {line}, column price")
                     if row["price"].strip() else None)
            count = (_count(row["count"].strip(), source, f"line {line}, column count")
                     if row["count"].strip() else None)
            if name is None:
                continue
            offer = HostOffer(name, base[0], base[1], base[2], price, count, labels, source)
            _checked(offer)
        except InputError as e:
            p = e.problems[0]
            reader.bad(line, p.field.split("column ")[-1] if "column" in p.field else None,
                       p.reason if "column" in p.field else f"{p.field}: {p.reason}")
            continue
        seen[name] = line
        out.append(offer)
    reader.require_rows("one line per host type: name,cpu,memory[,gpu][,price][,count]")
    reader.raise_if_bad()
    return tuple(out)


def load_host_yaml(path: str | Path) -> tuple[HostOffer, ...]:
    """Host types from a YAML (or JSON) list (see the module docstring).

    Raises:
        InputError: an unknown key, a bad quantity, zero CPU or memory, a duplicate name.
    """
    source = str(path)
    doc = read_document(path)
    if isinstance(doc, Mapping) and set(doc) == {"host_types"}:
        doc = doc["host_types"]
    if not isinstance(doc, list) or not doc:
        raise input_error(source, "", "expected a non-empty list of host types (name, cpu, "
                          "memory, gpu, price, count, labels)")
    out: list[HostOffer] = []
    problems: list[Problem] = []
    for i, raw in enumerate(doc):
        f = f"[{i}]"
        if not isinstance(raw, Mapping):
            problems.append(Problem(source, f, "expected a mapping with name, cpu, memory"))
            continue
        bad = [k for k in raw if k not in YAML_KEYS]
        for k in bad:
            problems.append(Problem(source, f"{f}.{k}", f"unknown key; use {', '.join(YAML_KEYS)}"))
        name = raw.get("name")
        if not isinstance(name, str) or not name.strip():
            problems.append(Problem(source, f"{f}.name", "expected a non-empty name"))
            continue
        f = f"[{i}] ({name})"
        try:
            for k in ("cpu", "memory"):
                if k not in raw:
                    raise input_error(source, f"{f}.{k}", "missing")
            base = [to_base(r, raw.get(r, 0), source, f"{f}.{r}") for r in ("cpu", "memory", "gpu")]
            price = _price(raw["price"], source, f"{f}.price") if raw.get("price") is not None else None
            count = _count(raw["count"], source, f"{f}.count") if raw.get("count") is not None else None
            labels = raw.get("labels") or {}
            if not isinstance(labels, Mapping) or not all(
                    isinstance(k, str) and isinstance(v, str | int | float) for k, v in labels.items()):
                raise input_error(source, f"{f}.labels", "expected a mapping of names to values")
            taints = _taints(raw.get("taints"), source, f"{f}.taints")
            out.append(_checked(HostOffer(name.strip(), base[0], base[1], base[2], price, count,
                                          tuple((k, str(v)) for k, v in labels.items()), source,
                                          taints)))
        except InputError as e:
            problems.extend(e.problems)
    if problems:
        raise InputError(problems)
    return tuple(out)


def load_hosts(specs: str | Sequence[str | Path | HostOffer]) -> tuple[HostOffer, ...]:
    """Host types from files and inline specs, in order (see the module docstring).

    Args:
        specs: host-type CSV/YAML files, inline specs (:mod:`packing.model.host_spec`), or
            :class:`HostOffer` objects; a single string may hold several inline specs separated
            by commas.

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
        else:
            out.append(parse_inline(str(s)))
    if not out:
        raise input_error("--hosts", "", "expected at least one host type")
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


__all__ = ["COLUMNS", "INLINE", "load_host_csv", "load_host_yaml", "load_hosts", "parse_inline"]
