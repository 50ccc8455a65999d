"""Kubernetes manifests: workloads become apps, DaemonSets a per-host overhead.

:func:`read_manifests` reads a manifest file (multi-document YAML or JSON), a ``List`` object
(``kind: List`` or any ``*List`` with ``items``, as ``kubectl get -o yaml`` prints) or a folder of
``*.yaml``/``*.yml``/``*.json`` files, read recursively (as ``kubectl apply -R -f DIR``). YAML is parsed
with the strict loader of :mod:`packing.io` (no aliases, no duplicate keys).

Objects
-------
* Deployment, StatefulSet, ReplicaSet, ReplicationController: an app of ``spec.replicas`` pods
  (1 when absent: the API server's default, ``pkg/apis/apps/v1/defaults.go``,
  ``pkg/apis/core/v1/defaults.go``).
* Job: ``spec.parallelism`` pods (default 1), at most ``spec.completions`` when that is set: "the
  actual number of pods running in parallel will not exceed the number of remaining completions"
  (https://kubernetes.io/docs/concepts/workloads/controllers/job/#controlling-parallelism).
* Pod: one pod.
* DaemonSet: one pod on every host its node selection admits, a per-host overhead
  (:meth:`Manifests.overhead`) that :meth:`Manifests.instance` takes off every host's capacity. The
  DaemonSet controller adds tolerations for the node-condition taints (``node.kubernetes.io/
  not-ready``, ``unreachable``, ``disk-pressure``, ``memory-pressure``, ``pid-pressure``,
  ``unschedulable``; https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/
  #taints-and-tolerations), and so does vbp.
* Every other kind (Service, ConfigMap, CronJob, ...) is skipped and counted per kind.

A pod's request
---------------
As ``PodRequests`` in ``k8s.io/component-helpers/resource/helpers.go`` computes it (the sidecar
rule is KEP-753, "Resources calculation for scheduling and pod admission"), per resource:

* a container's request is ``resources.requests[r]``, or ``resources.limits[r]`` when only the limit
  is set (the API server copies the limit, ``SetDefaults_Pod`` in ``pkg/apis/core/v1/defaults.go``;
  https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/), else 0;
* ``sum`` = the app containers plus every sidecar (an init container with
  ``restartPolicy: Always``);
* init container ``i`` needs its own request plus the sidecars declared before it; a sidecar ``i``
  needs the sidecars up to and including it; the pod's request is ``max(sum, every init need)``;
* pod-level ``spec.resources.requests`` for ``cpu``/``memory`` (PodLevelResources) replace the
  container total of that resource (``applyPodLevelResources``);
* ``spec.overhead`` (RuntimeClass) is added; a ``runtimeClassName`` without ``spec.overhead`` is
  listed as ignored (the RuntimeClass object's overhead is not read).

Values are summed exactly (:func:`packing.model.quantity.parse_quantity`), and the pod's total is rounded
up as the scheduler reads it (``MilliValue`` for CPU, ``Value`` for memory): CPU in cores, memory in
GiB. ``nvidia.com/gpu`` and ``amd.com/gpu`` become whole-card GPU demand, resource ``gpu``
(present only when some pod asks for GPUs; the two vendors cannot be mixed). Other resources
(``ephemeral-storage``, hugepages, other extended resources) are listed as ignored. As the API
server does, vbp refuses a ``resources`` field other than ``limits``, ``requests`` and ``claims``
(a misspelt ``request:`` would otherwise read as no request), a fractional GPU count and a request
above its limit.

Rules
-----
Required pod anti-affinity on ``kubernetes.io/hostname``
(https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#inter-pod-affinity-and-anti-affinity):
its ``labelSelector`` is matched against every workload's pod template labels in the term's
namespaces (``namespaces``, else the pod's own; ``namespaceSelector: {}`` means all). A match with
the workload's own pods gives ``max_per_host = 1``; a match with another workload's pods an
exclusion (anti-affinity is symmetric in the scheduler). A null ``labelSelector`` matches nothing.

Not modelled, refused (one line naming the object and the field) unless ``ignore_topology=True``,
which lists them as ignored instead: anti-affinity on any other topology key, required pod
affinity, ``topologySpreadConstraints`` with ``whenUnsatisfiable: DoNotSchedule`` (the skew is
relative to other domains, not a per-host cap), ``namespaceSelector`` with labels,
``matchLabelKeys``/``mismatchLabelKeys``, node affinity ``matchFields``. Preferred (soft) terms and
``ScheduleAnyway`` spread constraints are never rules and are always listed as ignored.

Node selection: ``nodeSelector``, required ``nodeAffinity`` and ``tolerations`` are read into the
apps (:mod:`packing.model.selection`); host types with labels and taints decide where each app may run.

Names
-----
An app is called by its ``metadata.name`` when no other workload has that name, else
``<namespace>/<name>`` when that is unique, else ``<kind>/<namespace>/<name>`` (the namespace is
``default`` when absent). Two objects of the same kind, namespace and name are an error.
DaemonSets are listed as ``DaemonSet/<namespace>/<name>``.

Hosts
-----
Manifests carry no hosts. :meth:`Manifests.instance` takes host types; :func:`load_k8s` (``load_any``
without ``hosts``) gives none. With ``--hosts`` the manifests are a demand read through
:mod:`packing.loaders.front` (host types of :func:`packing.loaders.host_types.load_hosts`), as
``vbp plan`` and every other command read them.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from packing.errors import InputError, Problem
from packing.io.documents import read_documents
from packing.loaders.k8s_pod import (
    GPU_KEYS,
    HOSTNAME,
    WORKLOADS,
    ObjectReader,
    Workload,
    ports_conflict,
    read_workload,
)
from packing.model.instance import App, HostType, Instance
from packing.model.quantity import DEFAULT_PODS, PODS, planning_unit
from packing.model.selection import Toleration, allowed, requirement_holds
from packing.model.validation import check_instance

SUFFIXES = (".yaml", ".yml", ".json")
"""Manifest file endings read in a folder."""
DAEMON_TOLERATIONS = tuple(
    Toleration(f"node.kubernetes.io/{k}", "Exists", "", e) for k, e in (
        ("not-ready", "NoExecute"), ("unreachable", "NoExecute"), ("disk-pressure", "NoSchedule"),
        ("memory-pressure", "NoSchedule"), ("pid-pressure", "NoSchedule"),
        ("unschedulable", "NoSchedule")))
"""Tolerations the DaemonSet controller adds to every daemon pod."""


@dataclass(frozen=True)
class Manifests:
    """What a set of manifests asks of a cluster.

    Attributes:
        resources: ``("cpu", "memory")``, plus ``"gpu"`` when a pod asks for GPU cards, then
            ``"pods"`` (every pod takes one slot), then every other resource some pod requests
            (``ephemeral-storage``, ``hugepages-*`` in GiB, extended resources in units), sorted.
        apps: one app per workload (not DaemonSets); demand in ``resources`` order.
        exclusions: pairs of apps that may not share a host (pod anti-affinity).
        daemons: the DaemonSets, one pod per admitted host each.
        daemon_demand: per-pod demand of each DaemonSet, shape ``(n_daemons, n_resources)``.
        kinds: objects read per kind (all kinds).
        skipped: objects skipped per kind (kinds that give no pods).
        ignored: soft terms and, with ``ignore_topology``, rules not modelled, one line each.
        sources: the files read.
        workloads: the workload objects, in the order of ``apps``.
    """

    resources: tuple[str, ...]
    apps: tuple[App, ...]
    exclusions: tuple[tuple[str, str], ...]
    daemons: tuple[Workload, ...]
    daemon_demand: np.ndarray
    kinds: Mapping[str, int]
    skipped: Mapping[str, int]
    ignored: tuple[str, ...]
    sources: tuple[str, ...]
    workloads: tuple[Workload, ...] = field(default=())
    daemon_tolerations: tuple[Toleration, ...] = DAEMON_TOLERATIONS
    """Tolerations the DaemonSet controller adds to every daemon pod (:data:`DAEMON_TOLERATIONS`)."""
    best_effort: tuple[str, ...] = ()
    """Apps whose pods request nothing (QoS class BestEffort): they take only a pod slot."""

    def overhead(self, host_types: Sequence[HostType]) -> np.ndarray:
        """DaemonSet load per host of each type, shape ``(n_types, n_resources)``.

        A DaemonSet counts on a host type when its node selection admits the type's labels and
        taints (the DaemonSet controller's tolerations included).
        """
        out = np.zeros((len(host_types), len(self.resources)), dtype=np.float64)
        for d, dem in zip(self.daemons, self.daemon_demand, strict=True):
            for t, ht in enumerate(host_types):
                if allowed(d.node_selector, d.node_affinity, d.tolerations + DAEMON_TOLERATIONS,
                           ht.labels, ht.taints):
                    out[t] += dem
        return out

    @property
    def reserve(self) -> np.ndarray:
        """DaemonSet load on a host without labels or taints, shape ``(n_resources,)``."""
        bare = HostType("bare", (0.0,) * len(self.resources), 1)
        return self.overhead([bare])[0]

    def instance(self, host_types: Sequence[HostType] = (), name: str = "k8s",
                 source: str = "<manifests>") -> Instance:
        """The instance: these apps on ``host_types``, each host's capacity less its overhead.

        Args:
            host_types: capacities in :attr:`resources` order (cores, GiB, cards, pod slots,
                ...); a capacity of only the resources before ``pods`` gets 110 pod slots and
                none of the others.
            name: the instance name.
            source: named in errors.

        Raises:
            InputError: a host type has the wrong number of capacities, or its DaemonSets need
                more than it has.
        """
        problems: list[Problem] = []
        host_types = [self._padded(ht) for ht in host_types]
        over = self.overhead(host_types)
        types: list[HostType] = []
        for t, ht in enumerate(host_types):
            if len(ht.capacity) != len(self.resources):
                problems.append(Problem(source, f"hosts {ht.name}", f"has {len(ht.capacity)} "
                                        f"capacities, expected {len(self.resources)} "
                                        f"({', '.join(self.resources)})"))
                continue
            left = np.asarray(ht.capacity, dtype=np.float64) - over[t]
            short = [r for r, x in zip(self.resources, left.tolist(), strict=True) if x < -1e-9]
            if short:
                problems.append(Problem(source, f"hosts {ht.name}", "its DaemonSets need more "
                                        f"{', '.join(short)} than the host has"))
                continue
            types.append(_replace_capacity(ht, tuple(max(0.0, x) for x in left.tolist())))
        if problems:
            raise InputError(problems)
        meta = {"source": "kubernetes manifests", "k8s": self.summary(host_types)}
        inst = Instance(name, self.resources, tuple(types), self.apps, (), self.exclusions,
                        meta=meta)
        return check_instance(inst, source)

    def _padded(self, ht: HostType) -> HostType:
        """``ht`` padded with 110 pod slots and none of the other resources.

        Only when its capacity gives just the resources before ``pods`` (``cpu``, ``memory``,
        ``gpu``).
        """
        core = self.resources.index(PODS)
        if len(ht.capacity) != core:
            return ht
        pad = tuple(float(DEFAULT_PODS) if r == PODS else 0.0 for r in self.resources[core:])
        return dataclasses.replace(ht, capacity=(*ht.capacity, *pad))

    def summary(self, host_types: Sequence[HostType] = ()) -> dict[str, Any]:
        """Plain facts for ``vbp info`` and ``Instance.meta``."""
        over = self.overhead([self._padded(ht) for ht in host_types])
        return {
            "objects": dict(sorted(self.kinds.items())),
            "skipped": dict(sorted(self.skipped.items())),
            "ignored": list(self.ignored),
            "daemonsets": [d.key for d in self.daemons],
            "best_effort": list(self.best_effort),
            "reserve": [float(x) for x in self.reserve],
            "overhead": {ht.name: [float(x) for x in row] for ht, row in zip(host_types, over,
                                                                          strict=True)},
            "files": list(self.sources),
        }


def _replace_capacity(ht: HostType, capacity: tuple[float, ...]) -> HostType:
    return dataclasses.replace(ht, capacity=capacity)


# ------------------------------------------------------------------------------------------------
# reading documents
def manifest_files(path: str | Path) -> list[Path]:
    """The files a path names: itself, or a folder's manifest files, read recursively.

    As ``kubectl apply -R -f DIR``: every ``*.yaml``, ``*.yml`` and ``*.json`` file in the folder
    and its subfolders (one folder per service, as many applications ship), sorted by path;
    hidden files and folders (``.git``) are skipped.
    """
    p = Path(path)
    if p.is_dir():
        return sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() in SUFFIXES
                      and not any(part.startswith(".") for part in q.relative_to(p).parts))
    return [p]


def _read_objects(p: Path) -> list[Any]:
    """Every top-level document of a manifest file (empty documents dropped)."""
    return read_documents(p)


def flatten_objects(doc: Any, src: str, where: str, out: list[tuple[str, Any]],
                    problems: list[Problem]) -> None:
    """Append the objects of one document to ``out`` as ``(src, object)``, ``List`` objects expanded.

    The reading of every Kubernetes document (manifests and cluster snapshots alike).

    Args:
        doc: the parsed document.
        src: the file it came from.
        where: where in the file (``"document 2"``; empty for the first), for the messages.
        out: receives the objects.
        problems: receives one problem per document or item that is no object.
    """
    at = f"{where}: " if where else ""
    if isinstance(doc, Mapping) and "items" in doc and not doc.get("kind"):
        problems.append(Problem(src, where or "document", "items without kind: List (kubectl prints "
                                "kind after items: is the file cut short?)"))
        return
    if not isinstance(doc, Mapping):
        problems.append(Problem(src, where or "document", "expected a Kubernetes List or object "
                                "(a mapping with apiVersion and kind), as kubectl get -o yaml prints"))
        return
    kind = doc.get("kind")
    if not isinstance(kind, str) or not kind:
        problems.append(Problem(src, f"{at}kind", "missing or not a string"))
        return
    if kind.endswith("List"):
        items = doc.get("items")
        if items is None:  # an empty List
            return
        if not isinstance(items, list):
            problems.append(Problem(src, f"{at}{kind}.items", "expected a list of objects"))
            return
        for j, item in enumerate(items):
            flatten_objects(item, src, f"{at}{kind}.items[{j}]", out, problems)
        return
    out.append((src, doc))


def _names(ws: Sequence[Workload]) -> list[str]:
    """Short unique names: ``name``, else ``namespace/name``, else ``kind/namespace/name``."""
    by_name = Counter(w.name for w in ws)
    by_ns = Counter(f"{w.namespace}/{w.name}" for w in ws)
    out = []
    for w in ws:
        ns = f"{w.namespace}/{w.name}"
        out.append(w.name if by_name[w.name] == 1 else ns if by_ns[ns] == 1 else w.key)
    return out


def read_manifests(path: str | Path | Sequence[str | Path], scale: float = 1.0,
                   ignore_topology: bool = False) -> Manifests:
    """Read Kubernetes manifests into apps, per-host DaemonSet overhead and counts.

    Args:
        path: a manifest file, a folder of them, or several such paths.
        scale: multiply every workload's pods by this (rounded up); DaemonSets stay per host.
        ignore_topology: list rules vbp does not model as ignored instead of refusing them.

    Raises:
        InputError: a file cannot be parsed, or an object has a bad field (one line each:
            file, ``kind/name`` and field, reason).
    """
    paths = [path] if isinstance(path, str | Path) else list(path)
    problems: list[Problem] = []
    if not (isinstance(scale, int | float) and not isinstance(scale, bool)
            and math.isfinite(scale) and scale > 0):
        raise InputError([Problem("<options>", "scale", f"expected a number > 0, got {scale!r}")])
    k = Fraction(str(scale))
    files = [f for p in paths for f in manifest_files(p)]
    if not files:
        raise InputError([Problem(str(paths[0]) if paths else "<manifests>", "",
                                  f"no manifest files ({', '.join(SUFFIXES)})")])
    objects: list[tuple[str, Any]] = []
    for f in files:
        for i, doc in enumerate(_read_objects(f)):
            flatten_objects(doc, str(f), f"document {i + 1}" if i else "", objects, problems)
    kinds: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    ignored: list[str] = []
    workloads: list[Workload] = []
    seen: dict[str, str] = {}
    for src, doc in objects:
        o = ObjectReader(src, doc, problems, ignored, ignore_topology)
        kinds[o.kind] += 1
        if o.kind not in WORKLOADS:
            skipped[o.kind] += 1
            continue
        w = read_workload(o, k)
        if w is None:
            continue
        if w.key in seen:
            o.bad("metadata.name", f"{w.key} is defined twice (also in {seen[w.key]})")
            continue
        seen[w.key] = src
        workloads.append(w)
    gpu_keys = {w.gpu_key for w in workloads if w.gpu_key is not None}
    if len(gpu_keys) > 1:
        problems.append(Problem(str(files[0]), "", "the manifests ask for both nvidia.com/gpu and "
                                "amd.com/gpu; vbp models one kind of GPU card"))
    if problems:
        raise InputError(problems)
    m = _build(workloads, kinds, skipped, ignored, [str(f) for f in files], problems,
               ignore_topology)
    if problems:
        raise InputError(problems)
    return m


def _build(workloads: list[Workload], kinds: Counter[str], skipped: Counter[str],
           ignored: list[str], files: list[str], problems: list[Problem] | None = None,
           ignore_topology: bool = False) -> Manifests:
    apps_w = [w for w in workloads if w.kind != "DaemonSet"]
    daemons = [w for w in workloads if w.kind == "DaemonSet"]
    gpu = any(w.request[2] for w in workloads)
    other = sorted({r for w in workloads for r, _ in w.other})
    resources = (*(("cpu", "memory", "gpu") if gpu else ("cpu", "memory")), PODS, *other)
    names = _names(apps_w)
    problems = [] if problems is None else problems

    def unsupported(w: Workload, fld: str, what: str) -> None:
        ident = f"{w.kind}/{w.name}"
        if ignore_topology:
            ignored.append(f"{w.source}: {ident}: {fld}: {what} (ignored)")
        else:
            problems.append(Problem(w.source, f"{ident}: {fld}", f"{what} is not supported "
                                    "(pass --ignore-topology to plan without it)"))

    cap1: set[int] = set()
    excl: set[tuple[str, str]] = set()
    caps: list[dict[str, int]] = [{} for _ in apps_w]
    spreads: list[dict[str, int]] = [{} for _ in apps_w]
    for i, w in enumerate(apps_w):
        for sel, nss, key, fld in w.anti:
            for j, v in enumerate(apps_w):
                if (nss is None or v.namespace in nss) and all(
                        requirement_holds(r, dict(v.labels)) for r in sel):
                    if i == j and key == HOSTNAME:
                        cap1.add(i)
                    elif i == j:
                        caps[i][key] = 1
                    elif key == HOSTNAME:
                        a, b = sorted((names[i], names[j]))
                        excl.add((a, b))
                    else:
                        unsupported(w, f"{fld}.topologyKey", f"pod anti-affinity on {key!r} "
                                    f"against another workload's pods ({names[j]})")
        for key, skew, spread_sel, fld in w.spreads:
            if spread_sel is None:
                ignored.append(f"{w.source}: {w.kind}/{w.name}: {fld}: a null labelSelector "
                               "selects no pods (no constraint)")
                continue
            matched = [j for j, v in enumerate(apps_w) if v.namespace == w.namespace and all(
                requirement_holds(r, dict(v.labels)) for r in spread_sel)]
            if i not in matched:
                unsupported(w, f"{fld}.labelSelector", "a topology spread constraint that does "
                            "not select the workload's own pods")
            elif len(matched) > 1:
                others = ", ".join(names[j] for j in matched if j != i)
                unsupported(w, f"{fld}.labelSelector", "a topology spread constraint that also "
                            f"selects other workloads' pods ({others})")
            else:
                spreads[i][key] = min(spreads[i].get(key, skew), skew)
    _port_rules(apps_w, daemons, names, cap1, excl, unsupported)
    apps = tuple(
        App(n, _vector(w, resources), w.pods,
            max_per_host=1 if i in cap1 else None, node_selector=w.node_selector,
            node_affinity=w.node_affinity, tolerations=w.tolerations,
            domain_caps=tuple(sorted(caps[i].items())),
            spreads=tuple(sorted(spreads[i].items())))
        for i, (n, w) in enumerate(zip(names, apps_w, strict=True)))
    n_r = len(resources)
    dd = np.array([_vector(d, resources) for d in daemons], dtype=np.float64).reshape(
        len(daemons), n_r)
    dd.setflags(write=False)
    best_effort = tuple(n for n, w in zip(names, apps_w, strict=True) if w.best_effort)
    return Manifests(resources, apps, tuple(sorted(excl)), tuple(daemons), dd, dict(kinds),
                     dict(skipped), tuple(ignored), tuple(files), tuple(apps_w), best_effort=best_effort)


def _vector(w: Workload, resources: Sequence[str]) -> tuple[float, ...]:
    """One pod of ``w`` over ``resources``: cores, GiB, cards, one pod slot, then the others."""
    core = dict(zip(("cpu", "memory", "gpu"), w.request, strict=True))
    other = dict(w.other)
    return tuple(float(core[r]) if r in core else 1.0 if r == PODS
                 else float(Fraction(other.get(r, 0)) / planning_unit(r)) for r in resources)


def _port_rules(apps: Sequence[Workload], daemons: Sequence[Workload], names: Sequence[str],
                cap1: set[int], excl: set[tuple[str, str]],
                unsupported: Callable[[Workload, str, str], None]) -> None:
    """Host ports as rules: two pods that take the same host port never share a node.

    Pods of one workload with a host port: at most one per host (``cap1``); two workloads whose
    host ports conflict (:func:`packing.loaders.k8s_pod.ports_conflict`): an exclusion. A
    workload whose host port conflicts with a DaemonSet's is refused (it could run only where
    that DaemonSet does not), as not modelled.
    """
    for i, w in enumerate(apps):
        if not w.ports:
            continue
        if w.pods > 1:
            cap1.add(i)
        for j in range(i + 1, len(apps)):
            if any(ports_conflict(a, b) for a in w.ports for b in apps[j].ports):
                a_, b_ = sorted((names[i], names[j]))
                excl.add((a_, b_))
        for d in daemons:
            hit = next((a for a in w.ports for b in d.ports if ports_conflict(a, b)), None)
            if hit is not None:
                unsupported(w, "spec.template.spec.containers.ports", f"host port {hit[2]}/{hit[1]} "
                            f"also taken by DaemonSet {d.name}")


# ------------------------------------------------------------------------------------------------
# load_any
def load_k8s(path: str | Path, scale: float | None = None, ignore_topology: bool = False) -> Instance:
    """An instance from manifests without hosts (``load_any``'s loader): the apps, to describe.

    Placed on host types (``--hosts``), manifests are read through
    :mod:`packing.loaders.front` as every other demand is.

    Args:
        path: a manifest file or folder.
        scale: multiply replicas by this (rounded up); ``None`` is 1.
        ignore_topology: list rules vbp does not model as ignored instead of refusing them.
    """
    m = read_manifests(path, scale=1.0 if scale is None else scale,
                       ignore_topology=ignore_topology)
    inst = m.instance((), name=Path(path).stem or "k8s", source=str(path))
    meta = dict(inst.meta)
    meta["k8s"] = dict(meta["k8s"], hosts=None, scale=1.0 if scale is None else scale)
    return inst.replace(meta=meta)


_K8S_YAML = re.compile(r"^(?:apiVersion|kind)\s*:", re.MULTILINE)
_K8S_JSON = re.compile(r"\"apiVersion\"\s*:")
_VBP_JSON = re.compile(r"\"format\"\s*:\s*\"vbp-")


def looks_like_manifest(p: Path) -> bool:
    """Whether a ``.yaml``/``.yml``/``.json`` file holds Kubernetes objects.

    YAML: a top-level ``apiVersion`` or ``kind`` key (an instance file has neither). JSON: an
    ``apiVersion`` key, and no ``"format": "vbp-..."`` (read from the first MiB).
    """
    try:
        with p.open(encoding="utf-8", errors="replace") as f:
            head = f.read(1 << 20)
    except OSError:
        return False
    if p.suffix.lower() == ".json":
        return bool(_K8S_JSON.search(head)) and not _VBP_JSON.search(head)
    return bool(_K8S_YAML.search(head))


__all__ = [
    "DAEMON_TOLERATIONS", "GPU_KEYS", "HOSTNAME", "Manifests", "Workload", "load_k8s",
    "flatten_objects", "looks_like_manifest", "manifest_files", "read_manifests",
]
