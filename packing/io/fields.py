"""A small validating reader for the fields of a parsed document.

:class:`FieldReader` checks one field at a time (objects, lists, strings, whole numbers, numbers,
resource vectors, unknown keys) and collects a :class:`packing.errors.Problem` for each thing
wrong instead of raising, so that a file's every problem is reported at once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from packing.errors import InputError, Problem
from packing.model.validation import MAX_NUMBER, escape_control, has_control, name_list
from packing.model.validation import describe as _kind
from packing.model.validation import short as _short


class FieldReader:
    """Reads fields of a raw document, collecting problems instead of raising."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Problem] = []
        self._indices: dict[int, tuple[Sequence[str], dict[str, int]]] = {}

    def bad(self, field: str, reason: str) -> None:
        """Record a problem with ``field``."""
        self.problems.append(Problem(self.source, field, reason))

    def obj(self, v: Any, field: str) -> Mapping[str, Any] | None:
        """``v`` if it is an object, else ``None`` (and a problem)."""
        if not isinstance(v, Mapping):
            self.bad(field, f"expected an object, got {_kind(v)}")
            return None
        return v

    def seq(self, v: Any, field: str) -> Sequence[Any] | None:
        """``v`` if it is a list, else ``None`` (and a problem)."""
        if not isinstance(v, list):
            self.bad(field, f"expected a list, got {_kind(v)}")
            return None
        return v

    def string(self, v: Any, field: str) -> str | None:
        """``v`` if it is a non-empty string without control characters, else ``None``."""
        if not isinstance(v, str) or not v:
            self.bad(field, f"expected a non-empty string, got {_kind(v)}")
            return None
        if has_control(v):
            self.bad(field, f"must not contain control characters (newline, tab, ...), got {v!r}")
            return None
        return v

    def _too_large(self, v: float, field: str) -> bool:
        if abs(v) > MAX_NUMBER:
            self.bad(field, f"is beyond the supported range (magnitude at most 2^53 = "
                     f"{MAX_NUMBER}), got {_short(v)}")
            return True
        return False

    def integer(self, v: Any, field: str, minimum: int = 0, maximum: int | None = None,
                what: str = "") -> int | None:
        """``v`` as an int if it is a whole number in ``minimum .. maximum``, else ``None``."""
        if isinstance(v, bool) or not isinstance(v, int | float) or (
            isinstance(v, float) and not v.is_integer()
        ):
            self.bad(field, f"expected a whole number, got {_kind(v)}")
            return None
        if self._too_large(v, field):
            return None
        if v < minimum:
            self.bad(field, f"must be at least {minimum}, got {v:g}")
            return None
        if maximum is not None and v > maximum:
            self.bad(field, f"at most {maximum:,} {what} are supported, got {int(v):,}")
            return None
        return int(v)

    def number(self, v: Any, field: str, minimum: float = 0.0) -> float | None:
        """``v`` as a float if it is a finite number of at least ``minimum``, else ``None``."""
        if isinstance(v, bool) or not isinstance(v, int | float):
            self.bad(field, f"expected a number, got {_kind(v)}")
            return None
        if isinstance(v, float) and not math.isfinite(v):
            self.bad(field, f"must be finite, got {v}")
            return None
        if self._too_large(v, field):
            return None
        if v < minimum:
            reason = "must not be negative" if minimum == 0 else f"must be at least {minimum:g}"
            self.bad(field, f"{reason}, got {v:g}")
            return None
        return float(v)

    def vector(self, v: Any, field: str, names: Sequence[str]) -> tuple[float, ...] | None:
        """A vector given as a list in ``names`` order or as an object keyed by name.

        An object costs time in the keys it gives, not in the number of resources (missing keys
        are 0): a short file naming many resources expands cheaply.
        """
        if isinstance(v, Mapping):
            index = self._index(names)
            out = [0.0] * len(names)
            ok = True
            for k, x in v.items():
                i = index.get(k) if isinstance(k, str) else None
                if i is None:
                    self.bad(f"{field}.{k}", f"unknown resource {k!r}; resources are "
                             f"{name_list(names)}")
                    ok = False
                    continue
                val = self.number(x, f"{field}.{k}")
                if val is None:
                    ok = False
                else:
                    out[i] = val
            return tuple(out) if ok else None
        if isinstance(v, list):
            if len(v) != len(names):
                self.bad(field, f"has {len(v)} values, expected {len(names)} "
                         f"({name_list(names)})")
                return None
            vals = [self.number(x, f"{field}[{i}]") for i, x in enumerate(v)]
        else:
            self.bad(field, f"expected a list or an object of numbers, got {_kind(v)}")
            return None
        if any(x is None for x in vals):
            return None
        return tuple(x for x in vals if x is not None)

    def _index(self, names: Sequence[str]) -> dict[str, int]:
        """``{name: position}`` of ``names``, built once per list of names."""
        key = id(names)
        cached = self._indices.get(key)
        if cached is None or cached[0] is not names:
            cached = (names, {n: i for i, n in enumerate(names)})
            self._indices[key] = cached
        return cached[1]

    def unknown_keys(self, d: Mapping[str, Any], field: str, allowed: set[str]) -> None:
        """Record a problem for every key of ``d`` not in ``allowed``."""
        for k in d:
            if k not in allowed:
                self.bad(f"{field}.{k}" if field else k,
                         f"unknown field; allowed: {', '.join(sorted(allowed))}")

    def other_vbp_format(self, d: Mapping[str, Any], field: str, expected: str) -> bool:
        """Whether ``d`` is another kind of vbp file (its ``format`` is ``vbp-...``, not ``expected``).

        Then the one problem is recorded, naming what the file is, and the caller stops: the
        other fields of, say, a placement given as an instance are no use to report.
        """
        fmt = d.get("format", expected)
        what = other_vbp_kind(fmt, expected)
        if what is None:
            return False
        self.bad(f"{field}.format" if field else "format", f"expected {expected!r}, got {fmt!r}{what}")
        return True


def other_vbp_kind(fmt: Any, expected: str) -> str | None:
    """What a ``format`` of another vbp kind is, as a note for a message.

    Returns:
        `` (a placement file, not an instance)`` for ``vbp-placement/1`` where ``expected`` is
        ``vbp-instance/1``; ``""`` for another version of the expected kind; ``None`` when ``fmt``
        is ``expected`` or no vbp format.
    """
    if not isinstance(fmt, str) or fmt == expected or not fmt.startswith("vbp-"):
        return None
    kind, want = (f"{'an' if k[:1] in 'aeiou' else 'a'} {k}"
                  for k in (fmt[4:].split("/")[0], expected[4:].split("/")[0]))
    return f" ({kind} file, not {want})" if kind != want else ""


MAX_SEED = 2**32 - 1
"""Largest seed a front door takes (NumPy's legacy global generator takes seeds below 2^32)."""


def check_whole(value: object, name: str, least: int = 0, most: int | None = None) -> None:
    """A front door's whole-number option (an ``int`` or NumPy integer, not a bool) in its range.

    Raises:
        InputError: naming ``name`` (source ``<options>``) and the range.
    """
    v = int(value) if isinstance(value, int | np.integer) and not isinstance(value, bool) else None
    if v is None or v < least or (most is not None and v > most):
        span = f"in {least}..{most}" if most is not None else f">= {least}"
        raise InputError([Problem("<options>", name, f"expected a whole number {span}, got {value!r}")])


def check_plain(r: FieldReader, v: Any, field: str) -> None:
    """Free-form data (``meta``): JSON values only, finite numbers (iterative)."""
    stack: list[tuple[Any, str]] = [(v, field)]
    while stack:
        x, f = stack.pop()
        if isinstance(x, Mapping):
            for k, y in x.items():
                if not isinstance(k, str):
                    r.bad(f, f"keys must be strings, got {_kind(k)}")
                else:
                    stack.append((y, f"{f}.{k}"))
        elif isinstance(x, list):
            stack.extend((y, f"{f}[{i}]") for i, y in enumerate(x))
        elif isinstance(x, float) and not math.isfinite(x):
            r.bad(f, f"must be finite, got {x}")
        elif x is not None and not isinstance(x, str | int | float | bool):
            r.bad(f, f"expected a JSON value (string, number, boolean, list, object), got "
                  f"{_kind(x)}")


def parse_sets(items: Sequence[str], option: str = "--set") -> dict[str, str]:
    """``NAME=VALUE`` items (a repeatable option) as ``{NAME: VALUE}`` texts, each name once.

    Raises:
        InputError: an item without ``=`` or a name, or a name given twice.
    """
    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        name = name.strip()
        if not eq or not name:
            raise InputError([Problem(option, escape_control(item)[:100], "expected NAME=VALUE")])
        if name in out:
            raise InputError([Problem(option, escape_control(name)[:100], "given twice")])
        out[name] = value.strip()
    return out


__all__: list[str] = ["MAX_SEED", "FieldReader", "check_plain", "check_whole", "other_vbp_kind", "parse_sets"]
