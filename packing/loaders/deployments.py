"""Demand for ``vbp plan``: a CSV of deployments, an instance file, or Kubernetes manifests.

A deployments CSV has a header and one row per deployment::

    name,replicas,cpu,memory,gpu,max_per_host
    web,12,500m,1Gi,,2
    db,3,2,8Gi,0,1
    train,2,8,64Gi,4,

``name``, ``replicas``, ``cpu`` and ``memory`` are required; ``gpu`` (whole cards) and
``max_per_host`` (anti-affinity cap, empty: none) are optional; any other column is an error.
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

import csv
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
from packing.plan.model import BASE_UNIT, PLAN_RESOURCES, DaemonLoad, Demand, base_to_units, to_base

COLUMNS = ("name", "replicas", "cpu", "memory", "gpu", "max_per_host")
"""The columns of a deployments CSV (the last two optional)."""

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
    reader = CsvReader(path, COLUMNS, header=True, optional=("gpu", "max_per_host"))
    header = _header(reader)
    unknown = [c for c in header if c not in COLUMNS]
    if unknown:
        raise InputError([Problem(source, f"line 1, column {c}",
                                  f"unknown column; the columns are {', '.join(COLUMNS)}")
                          for c in unknown])
    apps: list[App] = []
    seen: dict[str, int] = {}
    for line, row in reader.rows():
        name = reader.name(line, "name", row["name"])
        replicas = reader.integer(line, "replicas", row["replicas"].strip())
        base: list[int] = []
        for r in PLAN_RESOURCES:
            text = row.get(r, "").strip() or ("0" if r == "gpu" else "")
            if not text:
                reader.bad(line, r, "must not be empty")
                continue
            try:
                base.append(to_base(r, text, source, f"line {line}, column {r}"))
            except InputError as e:
                reader.bad(line, r, e.problems[0].reason)
        cap_text = row.get("max_per_host", "").strip()
        cap = reader.integer(line, "max_per_host", cap_text, minimum=1) if cap_text else None
        if name is not None and name in seen:
            reader.bad(line, "name", f"duplicate name {name!r} (also on line {seen[name]})")
            continue
        if name is None or replicas is None or len(base) != 3 or (cap_text and cap is None):
            continue
        seen[name] = line
        demand = tuple(base_to_units(r, b) for r, b in zip(PLAN_RESOURCES, base, strict=True))
        apps.append(App(name, demand, replicas, max_per_host=cap))
    reader.require_rows("one line per deployment: " + ",".join(COLUMNS))
    reader.raise_if_bad()
    return Demand(tuple(apps), sources={a.name: source for a in apps})


def _header(reader: CsvReader) -> list[str]:
    try:
        text = reader.path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise input_error(reader.source, "", "no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise input_error(reader.source, "", f"cannot read: {e}") from None
    first = next(csv.reader(text.splitlines()), None)
    return [c.strip() for c in first] if first else []


def demand_from_instance(inst: Instance, source: str) -> Demand:
    """The apps, rules and exclusions of an instance, on the planning resources.

    Resources are matched by name: ``cpu`` (cores), ``memory`` or ``mem`` (GiB), ``gpu``
    (cards). GPU apps of the card model must take whole cards (``gpu.whole``): they become
    ``cards`` of the ``gpu`` resource; shares of a card cannot be planned.

    Raises:
        InputError: another resource, or a GPU app taking shares of cards.
    """
    alias = {"cpu": 0, "memory": 1, "mem": 1, "gpu": 2}
    idx = []
    problems = []
    for i, r in enumerate(inst.resources):
        if r.lower() not in alias:
            problems.append(Problem(source, f"resources[{i}]", f"resource {r!r} cannot be planned; "
                                    "plan knows cpu (cores), memory or mem (GiB) and gpu (cards)"))
        else:
            idx.append(alias[r.lower()])
    apps = []
    for a in inst.apps:
        if a.gpu_cards and not a.gpu_whole:
            problems.append(Problem(source, f"apps ({a.name}).gpu", "shares of GPU cards cannot "
                                    "be planned; plan counts whole cards (gpu.whole: true)"))
    if problems:
        raise InputError(problems)
    for a in inst.apps:
        d = [0.0, 0.0, 0.0]
        for j, v in zip(idx, a.demand, strict=True):
            d[j] = float(v)
        d[2] += a.gpu_cards
        # node selection and topology rules stay with the app; GPU cards become resource gpu
        apps.append(App(a.name, tuple(d), a.count, max_per_host=a.max_per_host,
                        node_selector=a.node_selector, node_affinity=a.node_affinity,
                        tolerations=a.tolerations, domain_caps=a.domain_caps,
                        spreads=a.spreads))
    return Demand(tuple(apps), inst.rules, inst.exclusions, {a.name: source for a in apps})


def is_manifest(path: Path) -> bool:
    """Whether ``path`` is Kubernetes manifests: a folder, or a YAML file with ``kind:`` documents."""
    if path.is_dir():
        return not any(path.glob("*.json")) and any(
            p.suffix.lower() in (".yaml", ".yml") for p in path.iterdir())
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


def _k8s_demand(path: Path) -> Demand:
    """Demand from Kubernetes manifests, through :data:`K8S_READER`."""
    mod, _, attr = K8S_READER.partition(":")
    try:
        fn = getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError):
        raise input_error(str(path), "", "Kubernetes manifests cannot be read here (no manifest "
                          "reader installed); give a deployments CSV or an instance file") from None
    got: Any = fn(path)
    if isinstance(got, Instance):
        return demand_from_instance(got, str(path))
    resources = tuple(got.resources)
    inst = Instance("k8s", resources, (), tuple(got.apps), (), tuple(got.exclusions))
    demand = demand_from_instance(inst, str(path))
    alias = {"cpu": 0, "memory": 1, "mem": 1, "gpu": 2}

    def base(v: Sequence[float]) -> tuple[int, int, int]:
        out = [0, 0, 0]
        for r, x in zip(resources, v, strict=True):
            j = alias[r.lower()]
            out[j] = math.ceil(Fraction(str(float(x))) / BASE_UNIT[PLAN_RESOURCES[j]])
        return (out[0], out[1], out[2])

    if hasattr(got, "daemons"):  # the manifest reader: each DaemonSet on the host types it admits
        over = (0, 0, 0)
        daemons = tuple(
            DaemonLoad(f"{d.kind}/{d.name}", base(dem), d.node_selector, d.node_affinity,
                       tuple(d.tolerations) + tuple(getattr(got, "daemon_tolerations", ())))
            for d, dem in zip(got.daemons, got.daemon_demand, strict=True))
    else:  # a reader that gives one load for every host
        over = base(getattr(got, "reserve", [0.0] * len(resources)))
        daemons = ()
    pods = {a.name: {"kind": w.kind, "namespace": w.namespace, "name": w.name,
                     "gpu_key": w.gpu_key, "template": w.template}
            for a, w in zip(got.apps, getattr(got, "workloads", ()), strict=False)
            if getattr(w, "template", None) is not None}
    return dataclasses.replace(demand, overhead=over, pods=pods, daemons=daemons)


def load_demand(paths: str | Path | Sequence[str | Path]) -> Demand:
    """Read and add up DEMAND paths (see the module docstring).

    Raises:
        InputError: a path that cannot be read, or app names that clash between files.
    """
    from packing.loaders import load_any
    from packing.loaders.snapshot import looks_like_snapshot, snapshot_plan

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
            parts.append(_k8s_demand(p))
        else:
            parts.append(demand_from_instance(load_any(p), str(p)))
    return Demand.combine(parts)


__all__ = ["COLUMNS", "K8S_READER", "demand_from_instance", "is_manifest", "load_demand",
           "load_deployments"]
