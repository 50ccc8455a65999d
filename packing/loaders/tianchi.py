"""Alibaba Tianchi 2018 scheduling contest, preliminary data set B (and files named like it).

A folder holds four headerless CSV files (the names contain these parts)::

    *app_resources*.csv      app_id, cpu_curve, mem_curve, disk, P, M, PM
                             (curves: 98 values joined by "|")
    *machine_resources*.csv  machine_id, cpu, mem, disk, P, M, PM
    *instance_deploy*.csv    inst_id, app_id, machine_id   (empty machine_id: not placed yet)
    *app_interference*.csv   app_a, app_b, k

Views (``view=``):

* ``"reduced"`` (default): resources ``cpu, mem, disk, P, M, PM``; an app's cpu and mem are the
  peaks of its curves. Packing on peaks is safe (never overloads a time point) but pessimistic.
* ``"full"``: every time point is a resource: ``cpu_t00 .. cpu_t97, mem_t00 .. mem_t97`` then
  ``disk, P, M, PM`` (200 resources); a machine's cpu and mem capacity repeat at every point.
  This is exactly the contest's feasibility.

Machines with identical capacities form one host type that keeps the machine ids as
``host_names``; apps count the instances of the deploy file; ``Instance.initial`` is the deployment
(in deploy-file order within each app).

Rules. A row ``<A, B, k>`` with ``A != B`` becomes ``Rule(A, B, k)``: a machine running A runs at
most ``k`` instances of B. For a self row ``<A, A, k>`` the official evaluator
(``AlibabaSchedulerEvaluatorRun.java``, "self-interference +1 here") allows ``k + 1`` instances of
A per machine, while vbp keeps the literal meaning of every rule (see :mod:`packing.model`). So the
loader turns self rows into ``Rule(A, A, k + 1)``, and ``Instance.cap`` of A is ``k + 1`` (or A's
count if smaller). Every row is kept as one rule, so ``summary()["rules"]`` equals the row count.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from packing.errors import InputError, Problem
from packing.io import check_instance
from packing.loaders._csv import CsvReader, fmt_num, group_hosts
from packing.model import App, HostType, Instance, Placement, Rule

T = 98
"""Time points of a cpu or mem curve."""

FILES = {
    "apps": "app_resources",
    "machines": "machine_resources",
    "deploy": "instance_deploy",
    "rules": "app_interference",
}
"""The four files of a data set, by a part of their name."""

SCALARS = ("disk", "P", "M", "PM")


def find_files(folder: str | Path) -> dict[str, Path] | None:
    """The four files of a Tianchi folder, or ``None`` if ``folder`` does not hold all of them.

    Raises:
        InputError: a part matches more than one file.
    """
    p = Path(folder)
    found: dict[str, Path] = {}
    for key, part in FILES.items():
        hits = sorted(p.glob(f"*{part}*.csv"))
        if len(hits) > 1:
            raise InputError([Problem(str(p), "", f"several *{part}*.csv files: "
                                      f"{', '.join(h.name for h in hits)}; keep one")])
        if hits:
            found[key] = hits[0]
    return found if len(found) == len(FILES) else None


def resource_names(view: str = "reduced") -> tuple[str, ...]:
    """Resource names of a view (``"reduced"``: 6, ``"full"``: 200)."""
    if view == "full":
        return (tuple(f"cpu_t{t:02d}" for t in range(T)) + tuple(f"mem_t{t:02d}" for t in range(T))
                + SCALARS)
    return ("cpu", "mem") + SCALARS


def load_tianchi(folder: str | Path, view: str = "reduced", name: str | None = None) -> Instance:
    """Load a Tianchi 2018 data set folder.

    Args:
        folder: the folder with the four CSV files.
        view: ``"reduced"`` (peak cpu and mem, 6 resources) or ``"full"`` (200 resources).
        name: instance name (default ``"tianchi-<folder name>"``).

    Returns:
        The instance, with the initial deployment as ``initial``.

    Raises:
        InputError: a file is missing or malformed, or names an unknown app or machine.
    """
    folder = Path(folder)
    if view not in ("reduced", "full"):
        raise InputError([Problem(str(folder), "view",
                                  f"expected 'reduced' or 'full', got {view!r}")])
    files = find_files(folder)
    if files is None:
        missing = [f"*{part}*.csv" for part in FILES.values() if not any(folder.glob(f"*{part}*.csv"))]
        raise InputError([Problem(str(folder), "", f"not a Tianchi folder: missing "
                                  f"{', '.join(missing)}")])
    app_names, demand = _read_apps(files["apps"], view)
    host_types = _read_machines(files["machines"], view)
    app_idx = {a: i for i, a in enumerate(app_names)}
    host_idx: dict[str, int] = {}
    for t in host_types:
        for h in t.host_names or ():
            host_idx[h] = len(host_idx)
    per_app = _read_deploy(files["deploy"], app_idx, host_idx)
    rules = _read_rules(files["rules"], app_idx)
    apps = tuple(App(a, tuple(demand[i].tolist()), len(per_app[i]))
                 for i, a in enumerate(app_names))
    initial = Placement({a: tuple(per_app[i]) for i, a in enumerate(app_names)})
    return check_instance(Instance(
        name or _default_name(folder), resource_names(view), host_types, apps,
        rules=rules, initial=initial,
        meta={"source": "tianchi-2018", "view": view,
              "files": {k: v.name for k, v in files.items()}},
    ), str(folder))


# ------------------------------------------------------------------------------------------------
def _default_name(folder: Path) -> str:
    stem = folder.resolve().name
    return stem if "tianchi" in stem.lower() else f"tianchi-{stem}"


def _read_apps(path: Path, view: str) -> tuple[list[str], np.ndarray]:
    """App ids and demand, shape ``(n_apps, n_resources of the view)``."""
    cols = ("app_id", "cpu_curve", "mem_curve") + SCALARS
    rd = CsvReader(path, cols)
    names: list[str] = []
    lines: list[int] = []
    curves: list[str] = []
    scalars: list[list[float]] = []
    seen: set[str] = set()
    for line, row in rd.rows():
        a = rd.name(line, "app_id", row["app_id"])
        vals = [rd.number(line, c, row[c]) for c in SCALARS]
        ok = a is not None and None not in vals
        for c in ("cpu_curve", "mem_curve"):
            n = row[c].count("|") + 1
            if n != T:
                rd.bad(line, c, f"has {n} values, expected {T} joined by '|'")
                ok = False
        if a is not None and a in seen:
            rd.bad(line, "app_id", f"duplicate app {a!r}")
            ok = False
        if not ok or a is None:
            continue
        seen.add(a)
        names.append(a)
        lines.append(line)
        curves.append(row["cpu_curve"])
        curves.append(row["mem_curve"])
        scalars.append([v for v in vals if v is not None])
    rd.require_rows("one line per app: " + ", ".join(cols))
    n = len(names)  # rows with problems are left out; their problems are raised below
    try:
        cm = np.array("|".join(curves).split("|"), dtype=np.float64).reshape(n, 2, T)
    except ValueError:
        cm = _curves_slow(rd, lines, curves)
    bad = ~np.isfinite(cm) | (cm < 0)
    for i, c, t in zip(*np.nonzero(bad), strict=True):
        col = ("cpu_curve", "mem_curve")[c]
        rd.bad(lines[i], col, f"value {t + 1} must be a non-negative number, got {cm[i, c, t]:g}")
    rd.raise_if_bad()
    sc = np.array(scalars, dtype=np.float64).reshape(n, len(SCALARS))
    if view == "full":
        demand = np.concatenate([cm[:, 0, :], cm[:, 1, :], sc], axis=1)
    else:
        demand = np.concatenate([cm.max(axis=2), sc], axis=1)
    return names, demand


def _curves_slow(rd: CsvReader, lines: list[int], curves: list[str]) -> np.ndarray:
    """Parse the curves value by value, reporting which are not numbers."""
    out = np.zeros((len(lines), 2, T))
    for j, text in enumerate(curves):
        i, c = divmod(j, 2)
        col = ("cpu_curve", "mem_curve")[c]
        for t, v in enumerate(text.split("|")):
            try:
                out[i, c, t] = float(v)
            except ValueError:
                rd.bad(lines[i], col, f"value {t + 1} is not a number: {v!r}")
    rd.raise_if_bad()
    return out


def _read_machines(path: Path, view: str) -> tuple[HostType, ...]:
    rd = CsvReader(path, ("machine_id", "cpu", "mem") + SCALARS)
    hosts: list[tuple[str, tuple[float, ...], int, str | None]] = []
    seen: set[str] = set()
    for line, row in rd.rows():
        m = rd.name(line, "machine_id", row["machine_id"])
        vals = [rd.number(line, c, row[c]) for c in ("cpu", "mem") + SCALARS]
        if m is not None and m in seen:
            rd.bad(line, "machine_id", f"duplicate machine {m!r}")
            continue
        if m is None or None in vals:
            continue
        seen.add(m)
        v = [float(x) for x in vals if x is not None]
        cap = tuple([v[0]] * T + [v[1]] * T + v[2:]) if view == "full" else tuple(v)
        hosts.append((m, cap, 0, None))
    rd.require_rows("one line per machine: machine_id, cpu, mem, " + ", ".join(SCALARS))
    rd.raise_if_bad()

    def type_name(cap: tuple[float, ...], gpus: int, model: str | None) -> str:
        cpu, mem = (cap[0], cap[T]) if view == "full" else (cap[0], cap[1])
        disk, p, m_, pm = cap[-4:]
        return (f"c{fmt_num(cpu)}-m{fmt_num(mem)}-d{fmt_num(disk)}-"
                f"P{fmt_num(p)}-M{fmt_num(m_)}-PM{fmt_num(pm)}")

    return group_hosts(hosts, type_name)


def _read_deploy(path: Path, app_idx: dict[str, int],
                 host_idx: dict[str, int]) -> list[list[int]]:
    """Host index per instance, per app (in file order); -1 for unplaced instances."""
    rd = CsvReader(path, ("inst_id", "app_id", "machine_id"))
    per_app: list[list[int]] = [[] for _ in app_idx]
    seen: set[str] = set()
    for line, row in rd.rows():
        inst = rd.name(line, "inst_id", row["inst_id"])
        a = row["app_id"].strip()
        m = row["machine_id"].strip()
        if inst is not None:
            if inst in seen:
                rd.bad(line, "inst_id", f"duplicate instance {inst!r}")
            seen.add(inst)
        if a not in app_idx:
            rd.bad(line, "app_id", f"unknown app {a!r}" if a else "must not be empty")
            continue
        if m and m not in host_idx:
            rd.bad(line, "machine_id", f"unknown machine {m!r}")
            continue
        per_app[app_idx[a]].append(host_idx[m] if m else -1)
    rd.raise_if_bad()
    return per_app


def _read_rules(path: Path, app_idx: dict[str, int]) -> tuple[Rule, ...]:
    rd = CsvReader(path, ("app_a", "app_b", "k"))
    rules: list[Rule] = []
    for line, row in rd.rows():
        a, b = row["app_a"].strip(), row["app_b"].strip()
        k = rd.integer(line, "k", row["k"])
        ok = k is not None
        for col, x in (("app_a", a), ("app_b", b)):
            if x not in app_idx:
                rd.bad(line, col, f"unknown app {x!r}" if x else "must not be empty")
                ok = False
        if ok and k is not None:
            rules.append(Rule(a, b, k + 1 if a == b else k))
    rd.raise_if_bad()
    return tuple(rules)
