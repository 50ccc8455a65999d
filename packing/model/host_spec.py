"""The one grammar of host types written inline (``--hosts`` of ``vbp plan``, ``solve``, ``info``...).

One host type::

    [NAME=]SHAPE[:count=N][:price=P][:pods=N][:RESOURCE=Q][:LABEL=VALUE]...
    SHAPE = <cores>c<mem>g[<cards>gpu]

e.g. ``16c64g``, ``std=16c64g:price=0.77``, ``gpu=32c256g8gpu:count=4:price=12.5``,
``16c64g:count=10``, ``std=16c64g:zone=eu-1a:disk=ssd``, ``std=16c64g:pods=250:ephemeral-storage=100Gi``.
The keys come in any order. Cores and memory may be decimal (``0.5c1.5g``); ``g`` is GiB (for a
Tianchi fleet, the data set's memory unit); letters of the shape are case-insensitive. Without a
name, a type is named by its shape (``16c64g``). Several types are separated by commas.

``pods=`` is the pod slots per host; ``ephemeral-storage=`` and ``hugepages-<size>=`` are
capacities (quantities); ``zones=a;b;c`` makes one type per zone (:func:`zone_types`); every other
``key=value`` is a node label of the type (``zone`` and ``region`` stand for
``topology.kubernetes.io/zone`` and ``.../region``, :data:`packing.model.node_labels.SHORTHAND`).
A key one or two letters away from a known key (``cout=3``, ``pirce=1``) is an error, not a label
(:func:`packing.model.node_labels.near_miss`).

Two positional forms are read too (they cannot be confused: the first part is either a shape or a
name):

* ``SHAPE:N``: ``16c64g:10`` is ``16c64g:count=10``;
* ``NAME:SHAPE[:PRICE[:COUNT]]``: ``std:16c64g:0.77`` is ``std=16c64g:price=0.77``, and
  ``std:16c64g::10`` is ``std=16c64g:count=10``.

Every error names the part that is wrong (:class:`packing.errors.InputError`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from packing.errors import InputError, input_error
from packing.model.node_labels import SHORTHAND, near_miss

SHAPE = re.compile(r"(?P<cpu>[0-9]+(?:\.[0-9]+)?)c(?P<mem>[0-9]+(?:\.[0-9]+)?)g"
                   r"(?:(?P<gpu>[0-9]+)gpu)?", re.IGNORECASE)
"""``SHAPE``: cores, memory, optional whole GPU cards."""

FEATURES = ("name", "gpu", "count", "price", "pods", "resources", "labels")
"""What a host spec may carry besides cores and memory; a reader may accept fewer."""

USAGE = ("[NAME=]<cores>c<GiB>g[<cards>gpu][:count=N][:price=P][:pods=N][:KEY=VALUE...], "
         "e.g. std=16c64g:price=0.77:zone=a")
"""The grammar in one line (error messages)."""

KEYS = ("count", "price", "pods", "zones", "ephemeral-storage", *SHORTHAND)
"""The keys a spec knows besides labels (near misses of them are errors)."""


def is_capacity_key(key: str) -> bool:
    """Whether a host-list key is a capacity rather than a label: ``ephemeral-storage``, huge pages."""
    return key == "ephemeral-storage" or (key.startswith("hugepages-") and len(key) > 10)


@dataclass(frozen=True)
class HostSpec:
    """One host type as written.

    Attributes:
        text: the spec as given (one type).
        name: the name given, or ``None``.
        shape: the shape as written (``16c64g``).
        cores: cores per host, as written (a decimal).
        memory: memory per host as written (a decimal, GiB or the reader's unit).
        gpus: whole GPU cards per host.
        count: hosts available, or ``None`` (the reader decides).
        price: price of one host, or ``None``.
        pods: pod slots per host, or ``None`` (the reader's default).
        resources: other capacities as written, ``(resource, quantity text)`` pairs.
        labels: node labels, ``(key, value)`` pairs (shorthands resolved).
        zones: the zones of ``zones=a;b;c`` (one type each), or empty.
    """

    text: str
    name: str | None
    shape: str
    cores: str
    memory: str
    gpus: int = 0
    count: int | None = None
    price: float | None = None
    pods: int | None = None
    resources: tuple[tuple[str, str], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    zones: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The type's name: the given name, else the shape."""
        return self.name if self.name is not None else self.shape


def parse_host_spec(text: str, source: str = "--hosts", allow: Collection[str] = FEATURES,
                    field: str | None = None) -> HostSpec:
    """One host type in the grammar of the module docstring.

    Args:
        text: the spec of one type.
        source: where it was given (the first field of an error).
        allow: the features of :data:`FEATURES` the reader uses; any other is an error.
        field: the field of an error (e.g. ``"hosts"``, the reason then starts with the bad
            part); ``None``: the bad part is the field.

    Raises:
        InputError: the spec does not follow the grammar, or carries a feature not allowed
            (naming the part).
    """
    def bad(part: str, reason: str) -> InputError:
        if field is None:
            return input_error(source, part, reason)
        return input_error(source, field, f"{part!r}: {reason}")

    t = text.strip()
    parts = [p.strip() for p in t.split(":")]
    if not t or not parts[0]:
        raise bad(text, f"expected a host type: {USAGE}")
    first = parts[0]
    name: str | None = None
    positional: tuple[str, ...]
    if "=" in first:
        key, _, shape = (s.strip() for s in first.partition("="))
        if key.lower() in ("count", "price") or not key:
            raise bad(first, f"a host type starts with [NAME=]SHAPE: {USAGE}")
        name, rest, positional = key, parts[1:], ()
    elif SHAPE.fullmatch(first):
        shape, rest, positional = first, parts[1:], ("count",)
    elif len(parts) >= 2:
        name, shape, rest, positional = first, parts[1], parts[2:], ("price", "count")
    else:
        raise bad(first, f"expected <cores>c<GiB>g[<cards>gpu] as the shape; {USAGE}")
    m = SHAPE.fullmatch(shape)
    if m is None:
        raise bad(shape, f"expected <cores>c<GiB>g[<cards>gpu] as the shape; {USAGE}")
    values: dict[str, str] = {}
    resources: dict[str, str] = {}
    labels: dict[str, str] = {}
    for i, part in enumerate(rest):
        if "=" in part:
            raw, _, value = (s.strip() for s in part.partition("="))
            key = raw.lower() if raw.lower() in KEYS else raw
            if key not in KEYS and not is_capacity_key(key):
                near = near_miss(key, KEYS)
                if near is not None:
                    raise bad(part, f"unknown key {raw!r}; did you mean {near}=? (other keys are "
                              "node labels)")
                if not key:
                    raise bad(part, f"expected KEY=VALUE; {USAGE}")
                key = SHORTHAND.get(key, key)
                if key in labels:
                    raise bad(part, f"label {key} is given twice")
                labels[key] = value
                continue
            if is_capacity_key(key):
                if key in resources:
                    raise bad(part, f"{key} is given twice")
                resources[key] = value
                continue
            if key in SHORTHAND:
                if SHORTHAND[key] in labels:
                    raise bad(part, f"label {SHORTHAND[key]} is given twice")
                labels[SHORTHAND[key]] = value
                continue
        elif i < len(positional) and not any("=" in p for p in rest[:i]):
            key, value = positional[i], part
            if not value:
                continue  # std:16c64g::10: no price
        else:
            raise bad(part, f"unexpected part; {USAGE}")
        if key in values:
            raise bad(part, f"{key} is given twice")
        values[key] = value
    zones = tuple(z.strip() for z in values.get("zones", "").split(";") if z.strip())
    if "zones" in values and not zones:
        raise bad(f"zones={values['zones']}", "expected zones separated by ';', e.g. zones=a;b;c")
    spec = HostSpec(t, name, shape, m.group("cpu"), m.group("mem"), int(m.group("gpu") or 0),
                    _count(values["count"], bad) if "count" in values else None,
                    _price(values["price"], bad) if "price" in values else None,
                    _count(values["pods"], bad, "pods") if "pods" in values else None,
                    tuple(sorted(resources.items())), tuple(sorted(labels.items())), zones)
    if float(spec.cores) <= 0 or float(spec.memory) <= 0:
        raise bad(shape, "a host type needs CPU and memory (more than 0)")
    given = {"name": spec.name is not None, "gpu": spec.gpus > 0, "count": spec.count is not None,
             "price": spec.price is not None, "pods": spec.pods is not None,
             "resources": bool(spec.resources), "labels": bool(spec.labels or spec.zones)}
    for f in FEATURES:
        if given[f] and f not in allow:
            raise bad(t, f"{f} is not used here (host types here take "
                      f"{', '.join(a for a in FEATURES if a in allow) or 'only a shape'})")
    return spec


def zone_types(name: str, zones: Sequence[str]) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """One host type per zone of ``zones=a;b;c``: ``(name-<zone>, ((ZONE, zone),))`` each."""
    from packing.model.node_labels import ZONE

    return [(f"{name}-{z}", ((ZONE, z),)) for z in zones]


def parse_host_specs(text: str, source: str = "--hosts", allow: Collection[str] = FEATURES,
                     field: str | None = None) -> list[HostSpec]:
    """Host types separated by commas (:func:`parse_host_spec` each).

    Raises:
        InputError: a bad spec (naming it), or no spec at all.
    """
    parts = [p for p in text.split(",") if p.strip()]
    if not parts:
        raise input_error(source, field or repr(text), f"expected a host type: {USAGE}")
    return [parse_host_spec(p, source, allow, field) for p in parts]


def _count(v: str, bad: Callable[[str, str], InputError], key: str = "count") -> int:
    try:
        f = float(v)
    except ValueError:
        f = math.nan
    if not math.isfinite(f) or not f.is_integer() or f < 0:
        what = "hosts" if key == "count" else "pod slots"
        raise bad(f"{key}={v}", f"expected a whole number of {what}, not negative")
    return int(f)


def _price(v: str, bad: Callable[[str, str], InputError]) -> float:
    try:
        p = float(v)
    except ValueError:
        p = math.nan
    if not math.isfinite(p) or p < 0:
        raise bad(f"price={v}", "expected a price: a finite number, not negative")
    return p


__all__ = ["FEATURES", "KEYS", "SHAPE", "USAGE", "HostSpec", "is_capacity_key", "parse_host_spec",
           "parse_host_specs", "zone_types"]
