"""Demand for ``vbp plan``: a CSV of deployments, an instance file, or Kubernetes manifests.

A deployments CSV has a header and one row per deployment::

    name,replicas,cpu,memory,gpu,max_per_host,growth
    web,12,500m,1Gi,,2,2
    db,3,2,8Gi,0,1,
    train,2,8,64Gi,4,,

``name``, ``replicas``, ``cpu`` and ``memory`` are required; ``gpu`` (whole cards),
``max_per_host`` (anti-affinity cap, empty: none) and ``growth`` (the app's own replica
multiplier in ``vbp plan``'s growth scenarios, empty: 1; :meth:`~packing.plan.model.Demand.scaled`)
are optional; columns named after a resource (``ephemeral-storage``, ``example.com/foo``) are its
requests; any other column is an error.
Quantities are Kubernetes quantities (:mod:`packing.model.quantity`): CPU ``500m`` or ``1.5`` cores,
memory with a unit (``4Gi``, ``512Mi``, ``2G``; a plain number would be bytes and is refused).

:func:`load_demand` reads one or several DEMAND paths and adds them up:

* ``*.csv``: :func:`load_deployments`;
* a ``.yaml``/``.yml`` file or a folder whose documents have ``kind:`` (Kubernetes manifests):
  the manifest reader :data:`K8S_READER` of :mod:`packing.loaders.k8s`; its DaemonSet load per
  host becomes :attr:`~packing.plan.model.Demand.overhead`, added to the plan's reserve;
* a cluster snapshot (``kubectl get nodes,pods,pdb -A -o yaml``): its apps, pods counted,
  Pending ones included (:func:`packing.loaders.snapshot.snapshot_plan`);
* anything else :func:`packing.loaders.load_any` reads (instance files): its apps, rules and
  exclusions (its host types are ignored: hosts come from the host list).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from packing.errors import InputError, Problem, input_error
from packing.io.documents import read_document
from packing.loaders.tables import CsvReader
from packing.model.instance import App, Instance
from packing.model.quantity import PODS, resource_name_problem
from packing.plan.model import PLAN_RESOURCES, DaemonLoad, Demand, base_to_units, to_base, unit_of

COLUMNS = ("name", "replicas", "cpu", "memory", "gpu", "max_per_host", "growth")
"""The columns of a deployments CSV (the last three optional)."""

K8S_READER = "packing.loaders.k8s:read_manifests"
"""``"module:function"`` of the Kubernetes manifest reader. Called with a path, it returns an
:class:`~packing.model.instance.Instance` (resources ``cpu``, ``memory`` and optionally ``gpu``), or an
object with ``resources``, ``apps`` (demand in ``resources`` order), ``exclusions`` and
optionally ``reserve`` (the DaemonSet load on every host, shape ``(n_resources,)``, added to
the plan's reserve)."""


def load_deployments(path: str | Path) -> Demand:
    """Read a deployments CSV (see the module docstring).

    Raises:
        InputError: a missing or unknown column, a bad quantity, a duplicate name, an empty file.
    """
    source = str(path)
    reader = CsvReader(path, COLUMNS, header=True, optional=("gpu", "max_per_host", "growth"))
    header = reader.header_fields()
    extra = sorted(c for c in header if c not in COLUMNS and resource_name_problem(c) is None
                   and c not in ("cpu", "memory"))
    unknown = [c for c in header if c not in COLUMNS and c not in extra]
    dup = sorted({c for c in header if header.count(c) > 1})
    if unknown or dup:
        raise InputError([Problem(source, f"line 1, column {c}",
                                  f"unknown column; the columns are {', '.join(COLUMNS)} and "
                                  "resources (ephemeral-storage, hugepages-<size>, "
                                  "example.com/foo)") for c in unknown]
                         + [Problem(source, f"line 1, column {c}", "the column is given twice")
                            for c in dup])
    resources = (*PLAN_RESOURCES, *extra)
    apps: list[App] = []
    growth: dict[str, float] = {}
    seen: dict[str, int] = {}
    for line, row in reader.rows():
        name = reader.name(line, "name", row["name"])
        replicas = reader.integer(line, "replicas", row["replicas"].strip())
        base: list[int] = []
        for r in resources:
            text = row.get(r, "").strip() or ("0" if r not in ("cpu", "memory") else "")
            if not text:
                reader.bad(line, r, "must not be empty")
                continue
            try:
                base.append(to_base(r, text, source, f"line {line}, column {r}"))
            except InputError as e:
                reader.bad(line, r, e.problems[0].reason)
        cap_text = row.get("max_per_host", "").strip()
        cap = reader.integer(line, "max_per_host", cap_text, minimum=1) if cap_text else None
        grow = _growth(reader, line, row.get("growth", "").strip())
        if name is not None and name in seen:
            reader.bad(line, "name", f"duplicate name {name!r} (also on line {seen[name]})")
            continue
        if name is None or replicas is None or len(base) != len(resources) or (
                cap_text and cap is None) or grow is None:
            continue
        seen[name] = line
        if grow != 1:
            growth[name] = grow
        demand = tuple(base_to_units(r, b) for r, b in zip(resources, base, strict=True))
        apps.append(App(name, demand, replicas, max_per_host=cap))
    reader.require_rows("one line per deployment: " + ",".join(COLUMNS))
    reader.raise_if_bad()
    return Demand(tuple(apps), sources={a.name: source for a in apps}, resources=resources,
                  growth_by=growth)


def _growth(reader: CsvReader, line: int, text: str) -> float | None:
    """A row's ``growth``: a finite positive number, 1 when empty (``None`` after a bad one)."""
    if not text:
        return 1.0
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not math.isfinite(v) or v <= 0:
        reader.bad(line, "growth", f"expected a multiplier greater than 0, got {text!r}")
        return None
    return v


ALIAS = {"cpu": "cpu", "memory": "memory", "mem": "memory", "gpu": "gpu"}
"""Resource names of an instance file read as the planning resources (case-insensitive)."""


def _plan_names(resources: Sequence[str], source: str) -> list[str]:
    """The planning name of each resource of an instance (``pods`` kept: one per container).

    Raises:
        InputError: a resource that cannot be planned (naming it).
    """
    out, problems = [], []
    for i, r in enumerate(resources):
        name = ALIAS.get(r.lower(), r)
        if name not in (*PLAN_RESOURCES, PODS) and resource_name_problem(name) is not None:
            problems.append(Problem(source, f"resources[{i}]", f"resource {r!r} cannot be planned; "
                                    "plan knows cpu (cores), memory or mem (GiB), gpu (cards), "
                                    "pods (one per container), ephemeral-storage and hugepages-* "
                                    "(GiB) and extended resources such as example.com/foo"))
        out.append(name)
    if problems:
        raise InputError(problems)
    return out


def demand_from_instance(inst: Instance, source: str) -> Demand:
    """The apps, rules and exclusions of an instance, on the planning resources.

    Resources are matched by name: ``cpu`` (cores), ``memory`` or ``mem`` (GiB), ``gpu``
    (cards), ``pods`` (a pod slot: every container takes exactly one, as in the plan), and the
    other resources a pod may request (``ephemeral-storage``, ``hugepages-*`` in GiB, extended
    resources in whole units). GPU apps of the card model must take whole cards
    (``gpu.whole``): they become ``cards`` of the ``gpu`` resource; shares of a card cannot be
    planned.

    Raises:
        InputError: another resource, a container taking other than one pod slot, or a GPU app
            taking shares of cards.
    """
    names = _plan_names(inst.resources, source)
    res = (*PLAN_RESOURCES, *sorted(set(names) - {*PLAN_RESOURCES, PODS}))
    problems = []
    for a in inst.apps:
        if a.gpu_cards and not a.gpu_whole:
            problems.append(Problem(source, f"apps ({a.name}).gpu", "shares of GPU cards cannot "
                                    "be planned; plan counts whole cards (gpu.whole: true)"))
        if PODS in names and a.demand[names.index(PODS)] != 1:
            problems.append(Problem(source, f"apps ({a.name}).pods", "a container takes one pod "
                                    f"slot, got {a.demand[names.index(PODS)]:g}"))
    if problems:
        raise InputError(problems)
    apps = []
    for a in inst.apps:
        d = dict.fromkeys(res, 0.0)
        for r, v in zip(names, a.demand, strict=True):
            if r != PODS:
                d[r] = float(v)
        d["gpu"] += a.gpu_cards
        # node selection and topology rules stay with the app; GPU cards become resource gpu
        apps.append(App(a.name, tuple(d.values()), a.count, max_per_host=a.max_per_host,
                        node_selector=a.node_selector, node_affinity=a.node_affinity,
                        tolerations=a.tolerations, domain_caps=a.domain_caps,
                        spreads=a.spreads))
    return Demand(tuple(apps), inst.rules, inst.exclusions, {a.name: source for a in apps},
                  resources=res)


def is_manifest(path: Path) -> bool:
    """Whether ``path`` is Kubernetes manifests: a folder, or a YAML file with ``kind:`` documents."""
    if path.is_dir():  # read recursively, as the manifest reader does
        return not any(path.glob("*.json")) and any(
            p.suffix.lower() in (".yaml", ".yml") for p in path.rglob("*") if p.is_file())
    if path.suffix.lower() not in (".yaml", ".yml"):
        return False
    try:
        doc = read_document(path)
    except InputError:
        return _mentions_kind(path)  # several documents: the strict single-document reader refuses
    return isinstance(doc, dict) and "kind" in doc and "format" not in doc


def _mentions_kind(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return False
    return any(line.startswith("kind:") for line in text.splitlines())


def _k8s_demand(path: Path, **options: Any) -> Demand:
    """Demand from Kubernetes manifests, through :data:`K8S_READER`.

    ``options`` are its keywords (``scale``, ``ignore_topology``); the reader's ``summary()``, if
    any, goes in :attr:`~packing.plan.model.Demand.meta` under ``k8s``.
    """
    mod, _, attr = K8S_READER.partition(":")
    try:
        fn = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError):
        raise input_error(str(path), "", "Kubernetes manifests cannot be read here (no manifest "
                          "reader installed); give a deployments CSV or an instance file") from None
    got: Any = fn(path, **options)
    if isinstance(got, Instance):
        return demand_from_instance(got, str(path))
    resources = tuple(got.resources)
    inst = Instance("k8s", resources, (), tuple(got.apps), (), tuple(got.exclusions))
    demand = demand_from_instance(inst, str(path))
    names = _plan_names(resources, str(path))

    def base(v: Sequence[float]) -> dict[str, int]:
        return {r: math.ceil(Fraction(str(float(x))) / unit_of(r))
                for r, x in zip(names, v, strict=True) if r != PODS}

    if hasattr(got, "daemons"):  # the manifest reader: each DaemonSet on the host types it admits
        over = (0, 0, 0)
        loads = [base(dem) for dem in got.daemon_demand]
        daemons = tuple(
            DaemonLoad(f"{d.kind}/{d.name}", (b.get("cpu", 0), b.get("memory", 0), b.get("gpu", 0)),
                       d.node_selector, d.node_affinity,
                       tuple(d.tolerations) + tuple(getattr(got, "daemon_tolerations", ())),
                       tuple((r, x) for r, x in sorted(b.items()) if r not in PLAN_RESOURCES))
            for d, b in zip(got.daemons, loads, strict=True))
    else:  # a reader that gives one load for every host
        b = base(getattr(got, "reserve", [0.0] * len(resources)))
        over = (b.get("cpu", 0), b.get("memory", 0), b.get("gpu", 0))
        daemons = ()
    pods = {a.name: {"kind": w.kind, "namespace": w.namespace, "name": w.name,
                     "gpu_key": w.gpu_key, "template": w.template}
            for a, w in zip(got.apps, getattr(got, "workloads", ()), strict=False)
            if getattr(w, "template", None) is not None}
    facts = {"k8s": got.summary()} if hasattr(got, "summary") else {}
    return dataclasses.replace(demand, overhead=over, pods=pods, daemons=daemons, meta=facts)


def load_demand(paths: str | Path | Sequence[str | Path], **options: Any) -> Demand:
    """Read and add up DEMAND paths (see the module docstring).

    Args:
        paths: one DEMAND path or several.
        **options: keywords of the manifest reader (``scale``, ``ignore_topology``), for
            manifests only; ``None`` values are ignored.

    Raises:
        InputError: a path that cannot be read, or app names that clash between files.
    """
    from packing.loaders import load_any
    from packing.loaders.snapshot import looks_like_snapshot, snapshot_plan

    opts = {k: v for k, v in options.items() if v is not None and v is not False}
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    if not items:
        raise input_error("DEMAND", "", "expected at least one demand file")
    parts = []
    for item in items:
        p = Path(item)
        if not p.exists():
            raise input_error(str(p), "", "no such file or folder")
        if p.is_file() and p.suffix.lower() == ".csv":
            parts.append(load_deployments(p))
        elif looks_like_snapshot(p):
            parts.append(snapshot_plan(p)[0])
        elif is_manifest(p):
            parts.append(_k8s_demand(p, **opts))
        else:
            parts.append(demand_from_instance(load_any(p), str(p)))
    if opts and not any(is_manifest(Path(p)) for p in items):
        raise InputError([Problem(str(items[0]), k, "option applies to Kubernetes manifests only")
                          for k in opts])
    return Demand.combine(parts)


__all__ = ["COLUMNS", "K8S_READER", "demand_from_instance", "is_manifest", "load_demand",
           "load_deployments"]
