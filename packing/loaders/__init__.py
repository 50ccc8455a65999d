"""Loaders: instance files, VPSolver ``.vbp`` files and the real data sets, behind one ``load_any``.

What :func:`load_any` accepts, and the loader it calls:

* ``*.json``, ``*.yaml``, ``*.yml``: :func:`packing.io.load_instance`, or, when the file holds
  Kubernetes objects (top-level ``apiVersion``/``kind``), :func:`packing.loaders.k8s.load_k8s`,
  options ``scale`` and ``ignore_topology``; also a folder of manifests.
* any other ``*.csv``: a deployments CSV (:func:`packing.loaders.deployments.load_deployments`).
* with ``hosts``, or several paths that add up: deployments CSVs, manifests, snapshots and
  instance files as ``vbp plan`` reads them, on those host types (:mod:`packing.loaders.front`).
* a cluster snapshot (``kubectl get nodes,pods,pdb -A -o yaml`` or ``-o json``: a file or folder
  with Node objects): :func:`packing.loaders.snapshot.load_snapshot`, option ``hosts`` (prices).
* ``*.vbp``: :func:`packing.loaders.vpsolver.load_vbp`.
* a Tianchi 2018 folder (``*app_resources*.csv`` and three more):
  :func:`packing.loaders.tianchi.load_tianchi`, option ``view``.
* an openb folder or its ``csv/`` subfolder, an ``openb_node_list_*.csv`` or an
  ``openb_pod_list_*.csv`` (Alibaba GPU v2023): :func:`packing.loaders.openb.load_openb`,
  options ``nodes`` and ``pods``.
* ``machine_meta*.csv`` (Alibaba v2018), or a folder holding ``machine_meta.csv``:
  :func:`packing.loaders.alibaba.load_machine_meta`.
* ``pai_machine_spec*.csv`` (Alibaba GPU v2020), or a folder holding ``pai_machine_spec.csv``:
  :func:`packing.loaders.alibaba.load_pai_machine_spec`.

May import: packing.errors, packing.model, packing.io, packing.plan, packing.cluster.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packing.errors import InputError, Problem, input_error
from packing.model.instance import Instance

if TYPE_CHECKING:
    from packing.loaders.alibaba import load_machine_meta, load_pai_machine_spec
    from packing.loaders.k8s import load_k8s, read_manifests
    from packing.loaders.openb import load_openb
    from packing.loaders.tianchi import load_tianchi
    from packing.loaders.vpsolver import KnownOptimum, load_vbp, read_optimal_values
    from packing.plan.model import HostOffer

# Each loader is imported when its kind of input is met (or its name is asked for here): a
# command reading a .vbp file does not pay for the Kubernetes, snapshot and data-set readers.
_NAMES = {
    "KnownOptimum": "packing.loaders.vpsolver", "load_vbp": "packing.loaders.vpsolver",
    "read_optimal_values": "packing.loaders.vpsolver", "load_k8s": "packing.loaders.k8s",
    "read_manifests": "packing.loaders.k8s", "load_openb": "packing.loaders.openb",
    "load_tianchi": "packing.loaders.tianchi", "load_machine_meta": "packing.loaders.alibaba",
    "load_pai_machine_spec": "packing.loaders.alibaba",
}


def __getattr__(name: str) -> Any:
    """The loaders' names, imported on first use."""
    if name not in _NAMES:
        raise AttributeError(f"module 'packing.loaders' has no attribute {name!r}")
    value = getattr(importlib.import_module(_NAMES[name]), name)
    globals()[name] = value
    return value

EXPECTED = (
    "an instance file (.json, .yaml, .yml), a deployments CSV, Kubernetes manifests (a file or "
    "folder), a cluster snapshot, a VPSolver "
    ".vbp file, a Tianchi 2018 folder, an openb folder (Alibaba GPU v2023) or node/pod list, "
    "machine_meta.csv (Alibaba v2018) or pai_machine_spec.csv (Alibaba GPU v2020), or a folder "
    "holding one of those"
)

OPTIONS = {"tianchi": ("view", "hosts", "rules", "round_up"), "openb": ("nodes", "pods"),
           "k8s": ("scale", "ignore_topology"), "snapshot": ("hosts",)}
"""The options each data-set kind takes."""


def detect(path: str | Path) -> tuple[str, Path] | None:
    """What kind of input ``path`` is: ``(kind, path to load)``, or ``None`` if unknown.

    Kinds: ``"instance"``, ``"k8s"``, ``"snapshot"``, ``"vbp"``, ``"tianchi"``, ``"openb"``, ``"v2018"``,
    ``"v2020"``.
    Folders are recognised by the files they hold.
    """
    p = Path(path)
    if p.is_file():
        name, suffix = p.name.lower(), p.suffix.lower()
        if suffix in (".json", ".yaml", ".yml"):
            from packing.loaders import k8s
            from packing.loaders.snapshot import looks_like_snapshot

            if looks_like_snapshot(p):
                return "snapshot", p
            return ("k8s" if k8s.looks_like_manifest(p) else "instance"), p
        if suffix == ".vbp":
            return "vbp", p
        if suffix == ".csv":
            if name.startswith("openb_node_list_") or name.startswith("openb_pod_list_"):
                return "openb", p
            if name.startswith("machine_meta"):
                return "v2018", p
            if name.startswith("pai_machine_spec"):
                return "v2020", p
            head = _first_line(p)
            if head.startswith("sn,") or head.startswith("name,cpu_milli"):
                return "openb", p
        return None
    if p.is_dir():
        from packing.loaders import k8s, openb, tianchi
        from packing.loaders.snapshot import looks_like_snapshot

        if tianchi.find_files(p) is not None:
            return "tianchi", p
        if openb.find_folder(p) is not None:
            return "openb", p
        for kind, pattern in (("v2018", "machine_meta.csv"), ("v2020", "pai_machine_spec.csv")):
            if (p / pattern).is_file():
                return kind, p / pattern
        if looks_like_snapshot(p):
            return "snapshot", p
        if any(k8s.looks_like_manifest(f) for f in k8s.manifest_files(p)):
            return "k8s", p
    return None


def _batch_dag(p: Path) -> bool:
    """Whether ``p`` is batch DAG jobs (:func:`packing.dag.loader.load_dag_folder`'s input)."""
    if p.is_dir():
        return any(p.glob("batch_task*.csv"))
    return p.name.lower().startswith("batch_task") and p.suffix.lower() == ".csv"


def _first_line(p: Path) -> str:
    try:
        with p.open(encoding="utf-8-sig") as f:
            return f.readline().strip()
    except (OSError, UnicodeDecodeError):
        return ""


LOADERS: dict[str, tuple[str, str]] = {
    "instance": ("packing.io.instance_file", "load_instance"),
    "k8s": ("packing.loaders.k8s", "load_k8s"),
    "snapshot": ("packing.loaders.snapshot", "load_snapshot"),
    "vbp": ("packing.loaders.vpsolver", "load_vbp"),
    "tianchi": ("packing.loaders.tianchi", "load_tianchi"),
    "openb": ("packing.loaders.openb", "load_openb"),
    "v2018": ("packing.loaders.alibaba", "load_machine_meta"),
    "v2020": ("packing.loaders.alibaba", "load_pai_machine_spec"),
}
"""Kind of input -> (module, function) of its loader, imported when the kind is met."""


def loader(kind: str) -> Callable[..., Instance]:
    """The loader of a kind of input (:data:`LOADERS`)."""
    module, name = LOADERS[kind]
    fn: Callable[..., Instance] = getattr(importlib.import_module(module), name)
    return fn


def load_any(path: str | Path | Sequence[str | Path], *,
             hosts: str | Sequence[str | Path | HostOffer] | None = None, pool: str = "describe",
             **options: Any) -> Instance:
    """Load an instance: a file or data-set folder, or DEMAND paths on ``hosts``.

    Every command reads its input here. A single path without ``hosts`` is loaded by its kind
    (the table in this module's docstring). A deployments CSV, several DEMAND paths (they add
    up), and manifests or an instance file with ``hosts`` go through :mod:`packing.loaders.front`,
    as ``vbp plan`` reads them (``hosts`` in the grammar and with the loader of
    :func:`packing.loaders.host_types.load_hosts`). ``hosts`` on a Tianchi folder is its uniform
    fleet (one spec), on a single cluster snapshot the prices of its node types.

    Args:
        path: the file or folder, or several DEMAND paths.
        hosts: host types, one spec or several (``None`` or empty: not given).
        pool: what the command needs of the hosts (:data:`packing.loaders.front.POOLS`):
            ``describe`` (none needed), ``open`` (hosts needed; uncounted types as many as
            needed) or ``fixed`` (hosts needed, every type counted).
        **options: passed to the data-set loader: ``view="reduced"|"full"`` for Tianchi,
            ``nodes="all"|"gpu"`` and ``pods="default"|...`` for openb, ``scale``
            and ``ignore_topology`` for Kubernetes manifests. Options set to ``None``
            are ignored; an option the kind does not take is an error.

    Raises:
        InputError: the path is missing, of an unknown kind, or its content is invalid; no
            hosts where ``pool`` needs them; an uncounted host type where it needs counts.
    """
    items = [Path(path)] if isinstance(path, str | Path) else [Path(p) for p in path]
    if not items:
        raise input_error("DEMAND", "", "expected at least one input")
    specs: list[Any] = []
    if hosts is not None:
        from packing.plan.model import HostOffer

        specs = [hosts] if isinstance(hosts, str | Path | HostOffer) else list(hosts)
    found = [_kind(p) for p in items]
    kinds = [k for k, _ in found]
    opts = {k: v for k, v in options.items() if v is not None and v is not False}
    if len(items) == 1 and kinds[0] != "deployments" and (not specs or kinds[0] in ("tianchi", "snapshot")):
        kind, target = found[0]
        if specs:
            if kind == "tianchi" and len(specs) > 1:
                raise input_error("--hosts", ", ".join(map(str, specs)), "a Tianchi folder takes one "
                                  "uniform fleet, <cores>c<GB>g[:count]")
            opts["hosts"] = specs[0] if kind == "tianchi" else tuple(specs)
        allowed = OPTIONS.get(kind, ())
        bad = [k for k in opts if k not in allowed]
        if bad:
            raise InputError([Problem(str(items[0]), k, f"option does not apply to this input "
                                      f"({kind}); it takes {', '.join(allowed) or 'no options'}")
                              for k in bad])
        inst = loader(kind)(target, **opts)
        if pool != "describe" and inst.apps and not inst.host_types:
            from packing.loaders.front import no_hosts

            raise no_hosts(kind, str(items[0]))
        return inst
    from packing.loaders.front import demand_instance, no_hosts, read_inputs

    other = [(p, k) for p, k in zip(items, kinds, strict=True) if k not in DEMAND_KINDS]
    if other:
        raise InputError([Problem(str(p), "", f"{k} data is read alone, without other paths or "
                                  "host types; DEMAND that adds up or takes --hosts is deployments "
                                  "CSVs, Kubernetes manifests, cluster snapshots and instance files")
                          for p, k in other])
    name = items[0].stem if len(items) == 1 else "demand"
    if not specs:
        if pool != "describe":
            raise no_hosts(kinds[0] if len(set(kinds)) == 1 else "", str(items[0]))
        from packing.loaders.deployments import load_demand

        return demand_instance(load_demand(items, **opts), (), "describe", name)
    dem, offers = read_inputs(items, specs, **opts)
    return demand_instance(dem, offers, pool, name)


DEMAND_KINDS = ("deployments", "k8s", "snapshot", "instance")
"""The kinds of input that are DEMAND (:func:`packing.loaders.deployments.load_demand`)."""


def _kind(p: Path) -> tuple[str, Path]:
    """:func:`detect`'s ``(kind, path to load)``, or ``("deployments", p)`` for a CSV of no data set.

    Raises:
        InputError: ``p`` is missing or of an unknown kind.
    """
    if not p.exists():
        raise input_error(str(p), "", "no such file or folder")
    if not p.is_file() and not p.is_dir():
        from packing.io.documents import read_bytes_limited

        read_bytes_limited(p)  # a FIFO, device or socket: refused at once, naming what it is
    found = detect(p)
    if found is None and _batch_dag(p):
        raise input_error(str(p), "", "Alibaba batch DAG jobs (batch_task*.csv), not containers to place: "
                          "`vbp jobs compare` and `vbp jobs partition` read them")
    if found is None and p.is_file() and p.suffix.lower() == ".csv":
        return "deployments", p
    if found is None:
        raise input_error(str(p), "", f"unknown kind of input; expected {EXPECTED}")
    return found


__all__ = [
    "KnownOptimum", "detect", "load_any", "load_k8s", "load_machine_meta", "load_openb",
    "load_pai_machine_spec", "load_tianchi", "load_vbp", "read_manifests", "read_optimal_values",
]
