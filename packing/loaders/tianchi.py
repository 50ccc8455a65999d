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

Fleets (``hosts=``): by default the contest's 6,000 machines (two types). ``hosts="64c128g"``
(or ``"64c128g:8000"`` for an explicit count) replaces them by a uniform fleet of that many
cores and GB and keeps only CPU and memory (``disk, P, M, PM`` are dropped), as published work on
this data set does (the 2-D form ``TClab_dataset_2D.csv`` of "Affinity-Aware Resource Provisioning
for Long-Running Applications in Shared Clusters"). Without a count the fleet has twice the
volume bound, or more if an app's per-host cap needs more hosts, which is never the binding limit
in practice; a solver that needs more says the instance is infeasible *for that
fleet*. The initial deployment names contest machines, so a uniform fleet has none.
``round_up=True`` rounds each app's peak CPU and memory up to whole units, as that 2-D form does
(reduced view only); vbp keeps the exact peaks otherwise.

Rules (``rules=``): ``"all"`` (default) keeps every row; ``"cross"`` keeps the cross-app rows
``<A, B, k>`` with ``A != B`` and drops the self rows (per-app caps), as that 2-D form does;
``"none"`` drops every rule.

Machines with identical capacities form one host type that keeps the machine ids as
``host_names``; apps count the instances of the deploy file; ``Instance.initial`` is the deployment
(in deploy-file order within each app).

Rules. A row ``<A, B, k>`` with ``A != B`` becomes ``Rule(A, B, k)``: a machine running A runs at
most ``k`` instances of B. For a self row ``<A, A, k>`` the official evaluator
(``AlibabaSchedulerEvaluatorRun.java``, "self-interference +1 here") allows ``k + 1`` instances of
A per machine, while vbp keeps the literal meaning of every rule (see :mod:`packing.model.instance`). So the
loader turns self rows into ``Rule(A, A, k + 1)``, and ``Instance.cap`` of A is ``k + 1`` (or A's
count if smaller). Every row is kept as one rule, so ``summary()["rules"]`` equals the row count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from packing.errors import InputError, Problem
from packing.loaders.tables import CsvReader, fmt_num, group_hosts
from packing.model.host_spec import parse_host_spec
from packing.model.instance import App, HostType, Instance, Placement, Rule
from packing.model.validation import reported_as

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


def load_tianchi(folder: str | Path, view: str = "reduced", name: str | None = None,
                 hosts: str | None = None, rules: str = "all", round_up: bool = False) -> Instance:
    """Load a Tianchi 2018 data set folder.

    Args:
        folder: the folder with the four CSV files.
        view: ``"reduced"`` (peak cpu and mem, 6 resources) or ``"full"`` (200 resources).
        name: instance name (default ``"tianchi-<folder name>"``, with the fleet and rule options
            appended when given).
        hosts: ``None`` (the contest's machines) or a uniform fleet ``"<cores>c<GB>g[:count]"``,
            e.g. ``"64c128g"`` (CPU and memory only; see the module docstring).
        rules: ``"all"``, ``"cross"`` (no self rows) or ``"none"``.
        round_up: round each app's peak CPU and memory up to whole units (reduced view only).

    Returns:
        The instance, with the initial deployment as ``initial`` (contest machines only).

    Raises:
        InputError: a file is missing or malformed, or names an unknown app or machine; an
            option is malformed.
    """
    folder = Path(folder)
    if view not in ("reduced", "full"):
        raise InputError([Problem(str(folder), "view",
                                  f"expected 'reduced' or 'full', got {view!r}")])
    if rules not in RULE_SETS:
        raise InputError([Problem(str(folder), "rules",
                                  f"expected one of {', '.join(RULE_SETS)}, got {rules!r}")])
    if round_up and view != "reduced":
        raise InputError([Problem(str(folder), "round_up",
                                  "rounding up applies to the reduced view (peaks) only")])
    fleet = parse_fleet(hosts, str(folder)) if hosts is not None else None
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
    rule_list = _read_rules(files["rules"], app_idx)
    if rules == "cross":
        rule_list = tuple(r for r in rule_list if r.a != r.b)
    elif rules == "none":
        rule_list = ()
    if round_up:
        demand[:, :2] = np.ceil(demand[:, :2])
    counts = [len(per_app[i]) for i in range(len(app_names))]
    names = resource_names(view)
    initial: Placement | None = Placement({a: tuple(per_app[i]) for i, a in enumerate(app_names)})
    meta: dict[str, object] = {"source": "tianchi-2018", "view": view,
                               "files": {k: v.name for k, v in files.items()}}
    if fleet is not None:
        keep = [j for j, r in enumerate(names) if r.startswith(("cpu", "mem"))]
        demand = demand[:, keep]
        names = tuple(names[j] for j in keep)
        host_types = (_uniform_fleet(fleet, names, app_names, demand, counts, rule_list),)
        initial = None
        meta["fleet"] = fleet.spec
    if rules != "all":
        meta["rules"] = rules
    if round_up:
        meta["round_up"] = True
    apps = tuple(App(a, tuple(demand[i].tolist()), counts[i]) for i, a in enumerate(app_names))
    with reported_as(str(folder)):
        return Instance(name or _default_name(folder, fleet, rules, round_up), names, host_types,
                        apps, rules=rule_list, initial=initial, meta=meta)


RULE_SETS = ("all", "cross", "none")
"""The ``rules=`` choices."""


@dataclass(frozen=True)
class Fleet:
    """A uniform fleet: ``cpu`` cores and ``mem`` GB per host, ``count`` hosts (``None``: automatic)."""

    cpu: float
    mem: float
    count: int | None

    @property
    def spec(self) -> str:
        """The fleet as written on the command line, e.g. ``"64c128g"``."""
        base = f"{fmt_num(self.cpu)}c{fmt_num(self.mem)}g"
        return base if self.count is None else f"{base}:{self.count}"


def parse_fleet(text: str, source: str = "") -> Fleet:
    """Parse ``"<cores>c<GB>g[:count]"`` (e.g. ``"64c128g"``, ``"92c288g:3000"``).

    The grammar of :mod:`packing.model.host_spec` without a name, cards or a price
    (``"92c288g:count=3000"`` too).

    Raises:
        InputError: naming the bad part and what was expected.
    """
    spec = parse_host_spec(text, source, allow=("count",), field="hosts")
    if spec.count == 0:
        raise InputError([Problem(source, "hosts", f"{spec.text!r}: count must be at least 1")])
    return Fleet(float(spec.cores), float(spec.memory), spec.count)


def _uniform_fleet(fleet: Fleet, names: tuple[str, ...], apps: list[str], demand: np.ndarray,
                   counts: list[int], rules: tuple[Rule, ...]) -> HostType:
    """The one host type of a uniform fleet over the CPU and memory resources ``names``.

    Args:
        fleet: the fleet's cores, GB and count.
        names: the resources kept (CPU and memory ones).
        apps: app names, length ``n_apps``.
        demand: per-app demand over ``names``, shape ``(n_apps, len(names))``.
        counts: containers per app, length ``n_apps``.
        rules: the rules kept (self rules cap an app per host, which sets a least host count).
    """
    cap = np.array([fleet.cpu if r.startswith("cpu") else fleet.mem for r in names])
    if fleet.count is not None:
        n = fleet.count
    else:
        n_arr = np.asarray(counts, dtype=np.float64)
        volume = float(np.max((demand * n_arr[:, None]).sum(axis=0) / cap)) if len(counts) else 0.0
        caps = {r.a: r.k for r in rules if r.a == r.b and r.k > 0}
        most = max((math.ceil(c / caps.get(a, c)) for a, c in zip(apps, counts, strict=True) if c),
                   default=0)
        n = max(2 * math.ceil(volume - 1e-9), most, 1)
    return HostType(f"uniform-{fleet.spec.split(':')[0]}", tuple(cap.tolist()), n)


# ------------------------------------------------------------------------------------------------
def _default_name(folder: Path, fleet: Fleet | None = None, rules: str = "all",
                  round_up: bool = False) -> str:
    stem = folder.resolve().name
    base = stem if "tianchi" in stem.lower() else f"tianchi-{stem}"
    parts = [base] + ([fleet.spec.split(":")[0]] if fleet else []) + \
        ([f"{rules}-rules"] if rules != "all" else []) + (["ceil"] if round_up else [])
    return "-".join(parts)


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
