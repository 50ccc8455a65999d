"""VPSolver ``.vbp`` vector packing files (e.g. the Caprara-Toth 2-D benchmark).

The format is whitespace separated::

    d
    c_1 ... c_d          (bin capacities)
    m                    (number of item types)
    w_1 ... w_d b        (m lines: the item's weights and its demand b, i.e. how many copies)

Each item type becomes one app (``count`` = demand, no cap, no rules) named ``item<i>``; the
bins become one host type ``bin`` with as many hosts as there are items, a valid upper bound on
the bins an optimal packing needs. Resources are ``r0 .. r<d-1>``.

:func:`read_optimal_values` reads the benchmark's ``optimal_values.csv``
(``instance,cls,n_items,opt_bins,ceil_volume_lb,lp_bound_gilmore_gomory``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from packing.errors import InputError, Problem
from packing.io.documents import read_text_limited
from packing.loaders.tables import CsvReader
from packing.model.instance import App, HostType, Instance
from packing.model.validation import (
    MAX_CONTAINERS,
    MAX_NUMBER,
    MAX_RESOURCES,
    escape_control,
    reported_as,
)


@dataclass(frozen=True)
class KnownOptimum:
    """What is known about the optimum of one benchmark instance.

    Attributes:
        instance: file name of the instance, e.g. ``"CL_1_25_1.vbp"``.
        n_items: number of items in it.
        opt: proven optimal number of bins, or ``None`` when not known.
        volume_lb: ceiling of the volume bound.
        lp_bound: the Gilmore-Gomory LP bound (``None`` when not given).
        cls: the benchmark class.
    """

    instance: str
    n_items: int
    opt: int | None
    volume_lb: int | None
    lp_bound: float | None
    cls: int | None = None


def load_vbp(path: str | Path, name: str | None = None) -> Instance:
    """Load a VPSolver ``.vbp`` file.

    Args:
        path: the file.
        name: instance name (default: the file name without extension).

    Returns:
        An instance with ``d`` resources, one host type and one app per item type.

    Raises:
        InputError: the file is missing or malformed (naming the line and the reason).
    """
    p = Path(path)
    src = str(p)
    text = read_text_limited(p)
    # tokens with their line numbers
    toks: list[tuple[int, str]] = [
        (i, t) for i, line in enumerate(text.splitlines(), start=1) for t in line.split()
    ]
    pos = 0
    problems: list[Problem] = []

    def take(what: str, minimum: float) -> float:
        nonlocal pos
        if pos >= len(toks):
            raise InputError(problems + [Problem(src, "end of file", f"expected {what}")])
        line, t = toks[pos]
        pos += 1
        try:
            v = float(t)
        except ValueError:
            problems.append(Problem(src, f"line {line}, {what}",
                                    f"expected a number, got {escape_control(t[:30])!r}"))
            return math.nan
        if math.isfinite(v) and abs(v) > MAX_NUMBER:
            problems.append(Problem(src, f"line {line}, {what}", f"is beyond the supported range "
                                    f"(magnitude at most 2^53 = {MAX_NUMBER}), got {t[:30]!r}"))
            return math.nan
        if not math.isfinite(v) or v < minimum:
            problems.append(Problem(src, f"line {line}, {what}",
                                    f"must be at least {minimum:g}, got {t!r}"))
            return math.nan
        return v

    def whole(what: str, minimum: int) -> int:
        v = take(what, minimum)
        if math.isnan(v) or not v.is_integer():
            if not math.isnan(v):
                problems.append(Problem(src, f"line {toks[pos - 1][0]}, {what}",
                                        f"expected a whole number, got {toks[pos - 1][1]!r}"))
            raise InputError(problems)
        return int(v)

    d = whole("d (number of dimensions)", 1)
    if d > MAX_RESOURCES:
        raise InputError([Problem(src, f"line {toks[pos - 1][0]}, d (number of dimensions)",
                                  f"at most {MAX_RESOURCES:,} dimensions are supported, got {d:,}")])
    cap = tuple(take(f"capacity {j + 1}", 0) for j in range(d))
    m = whole("m (number of item types)", 0)
    apps: list[App] = []
    n_items = 0
    for i in range(m):
        w = tuple(take(f"item {i + 1} weight {j + 1}", 0) for j in range(d))
        b = take(f"item {i + 1} demand", 0)
        if not math.isnan(b) and not b.is_integer():
            problems.append(Problem(src, f"line {toks[pos - 1][0]}, item {i + 1} demand",
                                    f"expected a whole number, got {toks[pos - 1][1]!r}"))
        elif not math.isnan(b):
            n_items += int(b)
            if n_items > MAX_CONTAINERS:
                problems.append(Problem(src, f"line {toks[pos - 1][0]}, item {i + 1} demand",
                                        f"{n_items:,} items in all; at most {MAX_CONTAINERS:,} "
                                        "are supported"))
                break
        apps.append(App(f"item{i}", w, 0 if math.isnan(b) or not b.is_integer() else int(b)))
        if len(problems) >= 20:
            break
    if pos < len(toks) and not problems:
        line, t = toks[pos]
        problems.append(Problem(src, f"line {line}", f"unexpected {t!r} after the {m} item types"))
    if problems:
        raise InputError(problems)
    n_items = sum(a.count for a in apps)
    resources = tuple(f"r{j}" for j in range(d))
    host = HostType("bin", cap, max(n_items, 1))
    with reported_as(src):
        return Instance(name or p.stem, resources, (host,), tuple(apps),
                        meta={"source": "vpsolver", "path": p.name})


def read_optimal_values(csv_path: str | Path) -> dict[str, KnownOptimum]:
    """Read a benchmark's ``optimal_values.csv``, keyed by instance file name.

    Columns: ``instance, n_items, opt_bins`` (empty when not known), and optionally ``cls``,
    ``ceil_volume_lb``, ``lp_bound_gilmore_gomory``.

    Raises:
        InputError: a missing column, a non-number, or a duplicate instance.
    """
    rd = CsvReader(csv_path, ("instance", "cls", "n_items", "opt_bins", "ceil_volume_lb",
                              "lp_bound_gilmore_gomory"), header=True,
                   optional=("cls", "ceil_volume_lb", "lp_bound_gilmore_gomory"))
    out: dict[str, KnownOptimum] = {}

    def opt_int(line: int, col: str, text: str) -> int | None:
        return rd.integer(line, col, text) if text.strip() else None

    for line, row in rd.rows():
        name = rd.name(line, "instance", row["instance"])
        n = rd.integer(line, "n_items", row["n_items"])
        opt = opt_int(line, "opt_bins", row["opt_bins"])
        vol = opt_int(line, "ceil_volume_lb", row["ceil_volume_lb"])
        cls = opt_int(line, "cls", row["cls"])
        lp_t = row["lp_bound_gilmore_gomory"]
        lp = rd.number(line, "lp_bound_gilmore_gomory", lp_t) if lp_t.strip() else None
        if name is None or n is None:
            continue
        if name in out:
            rd.bad(line, "instance", f"duplicate instance {name!r}")
        out[name] = KnownOptimum(name, n, opt, vol, lp, cls)
    rd.raise_if_bad()
    return out
