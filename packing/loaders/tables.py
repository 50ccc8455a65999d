"""CSV tables for the loaders and the DAG traces: rows with line numbers, problems collected, not raised.

Every problem names the file, ``"line N, column NAME"`` and the reason. After
:data:`MAX_PROBLEMS` problems the reader stops the load with an :class:`InputError` holding them,
so a file that is wrong everywhere does not print thousands of lines.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from packing.errors import InputError, Problem
from packing.io.documents import read_text_limited
from packing.model.instance import HostType
from packing.model.validation import MAX_NUMBER, has_control

MAX_PROBLEMS = 20
"""How many problems are collected before a load stops."""


class CsvReader:
    """Reads one CSV file, collecting problems.

    Args:
        path: the file.
        columns: the expected column names, in order (for headerless files), or the columns that
            must be present (for files with a header).
        header: whether the first line is a header naming the columns.
        optional: columns a headed file may lack (their values read as ``""``).
    """

    def __init__(
        self,
        path: str | Path,
        columns: Sequence[str],
        *,
        header: bool = False,
        optional: Sequence[str] = (),
    ) -> None:
        self.path = Path(path)
        self.source = str(path)
        self.columns = tuple(columns)
        self.header = header
        self.optional = tuple(optional)
        self.problems: list[Problem] = []
        self.present: tuple[str, ...] = self.columns
        self.n_rows = 0
        """Data rows read so far (rows with the wrong number of fields included)."""

    # --------------------------------------------------------------------------------------------
    def bad(self, line: int, column: str | None, reason: str) -> None:
        """Record a problem at ``line`` (1-based) and ``column``; stop after too many."""
        where = f"line {line}" + (f", column {column}" if column else "")
        self.problems.append(Problem(self.source, where, reason))
        if len(self.problems) >= MAX_PROBLEMS:
            self.problems.append(Problem(self.source, "", f"stopped after {MAX_PROBLEMS} problems"))
            raise InputError(self.problems)

    def raise_if_bad(self) -> None:
        """Raise the collected problems, if any."""
        if self.problems:
            raise InputError(self.problems)

    def require_rows(self, what: str) -> None:
        """After :meth:`rows`: raise ``"file is empty"`` if it held no data row.

        Args:
            what: what a row describes, e.g. ``"one line per machine"``.
        """
        if self.n_rows == 0:
            kind = "no data rows after the header" if self.header else "file is empty"
            raise InputError([Problem(self.source, "", f"{kind}: expected {what}")])

    def _text(self) -> str:
        try:
            return read_text_limited(self.path, encoding="utf-8-sig")
        except InputError as e:  # name the source as the reader does
            raise InputError([Problem(self.source, p.field, p.reason) for p in e.problems]) from None

    def header_fields(self) -> list[str]:
        """The fields of the first line, stripped (empty for an empty file)."""
        first = next(csv.reader(self._text().splitlines()), None)
        return [c.strip() for c in first] if first else []

    def rows(self) -> Iterator[tuple[int, dict[str, str]]]:
        """Yield ``(line number, {column: value})`` for every non-empty data row.

        Rows with the wrong number of fields are reported and skipped. With a header, a missing
        required column stops the load at once (nothing else can be read reliably).
        """
        lines = self._text().splitlines()
        reader = csv.reader(lines)
        names = self.columns
        start = 1
        if self.header:
            first = next(reader, None)
            if first is None:
                raise InputError([Problem(self.source, "line 1", "empty file, expected a header "
                                          f"naming {', '.join(self.columns)}")])
            got = [c.strip() for c in first]
            missing = [c for c in self.columns if c not in got and c not in self.optional]
            if missing:
                raise InputError([Problem(self.source, f"line 1, column {c}",
                                          f"missing column (the header has {', '.join(got)})")
                                  for c in missing])
            names = tuple(got)
            self.present = tuple(c for c in self.columns if c in got)
            start = 2
        n = len(names)
        for i, fields in enumerate(reader, start=start):
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            self.n_rows += 1
            if len(fields) != n:
                self.bad(i, None, f"has {len(fields)} fields, expected {n} "
                         f"({', '.join(names)})")
                continue
            row = dict(zip(names, fields, strict=True))
            for c in self.optional:
                row.setdefault(c, "")
            yield i, row

    # --------------------------------------------------------------------------------------------
    def number(self, line: int, column: str, text: str, *, minimum: float | None = 0.0,
               integer: bool = False) -> float | None:
        """Parse a finite number (``None`` and a problem if it is not one)."""
        try:
            v = float(text)
        except ValueError:
            self.bad(line, column, f"expected a number, got {text!r}")
            return None
        if not math.isfinite(v):
            self.bad(line, column, f"must be finite, got {text!r}")
            return None
        if abs(v) > MAX_NUMBER:
            self.bad(line, column, f"is beyond the supported range (magnitude at most 2^53 = "
                     f"{MAX_NUMBER}), got {text[:30]!r}")
            return None
        if integer and not v.is_integer():
            self.bad(line, column, f"expected a whole number, got {text!r}")
            return None
        if minimum is not None and v < minimum:
            reason = "must not be negative" if minimum == 0 else f"must be at least {minimum:g}"
            self.bad(line, column, f"{reason}, got {text!r}")
            return None
        return v

    def integer(self, line: int, column: str, text: str, *, minimum: int | None = 0) -> int | None:
        """Parse a whole number (``None`` and a problem if it is not one)."""
        v = self.number(line, column, text, minimum=minimum, integer=True)
        return None if v is None else int(v)

    def name(self, line: int, column: str, text: str) -> str | None:
        """A non-empty identifier."""
        s = text.strip()
        if not s:
            self.bad(line, column, "must not be empty")
            return None
        if has_control(s):
            self.bad(line, column, f"must not contain control characters, got {s!r}")
            return None
        return s


def fmt_num(x: float) -> str:
    """A number for use in names: ``32`` rather than ``32.0``."""
    return f"{x:g}" if not float(x).is_integer() else str(int(x))


def group_hosts(
    hosts: Sequence[tuple[str, tuple[float, ...], int, str | None]],
    type_name: Callable[[tuple[float, ...], int, str | None], str],
    gpu_capacity: tuple[float, ...] = (),
) -> tuple[HostType, ...]:
    """Group individual hosts with identical capacity, GPU count and GPU model into host types.

    Types come in the order of their first host; each keeps the names of its hosts in file order,
    so a snapshot that names hosts maps exactly.

    Args:
        hosts: ``(host name, capacity of shape (n_resources,), gpu cards, gpu model)`` per host.
        type_name: builds a type name from ``(capacity, gpus, model)``; made unique here.
        gpu_capacity: per-card capacity of every card, shape ``(n_gpu_resources,)``.
    """
    groups: dict[tuple[tuple[float, ...], int, str | None], list[str]] = {}
    for name, cap, gpus, model in hosts:
        groups.setdefault((cap, gpus, model if gpus else None), []).append(name)
    out: list[HostType] = []
    used: set[str] = set()
    for (cap, gpus, model), names in groups.items():
        base = type_name(cap, gpus, model)
        tname, i = base, 2
        while tname in used:
            tname, i = f"{base}~{i}", i + 1
        used.add(tname)
        out.append(HostType(tname, cap, len(names), gpus=gpus,
                            gpu_capacity=gpu_capacity if gpus else (),
                            gpu_model=model if gpus else None, host_names=tuple(names)))
    return tuple(out)
