"""A plan as Kubernetes objects: the Nodes to create and every Pod bound to one of them.

:func:`plan_objects` turns a planning instance (:func:`packing.plan.model.build_instance`), a checked
placement of it and the host offers into plain ``v1`` objects that ``kubectl apply`` or a
scheduler simulator (kube-scheduler-simulator, KWOK) replays:

* one ``Node`` per host the placement uses (and per N+1 spare host), named ``<type>-<k>``
  (``k`` counts the written hosts of the type from 0; the name is lowercased, characters other
  than ``a-z0-9.-`` become ``-``), with
  the type's labels plus ``kubernetes.io/hostname`` and ``vbp.io/host-type``, the type's taints,
  ``status.capacity`` (the host type's CPU in millicores, memory, GPU cards, pod slots and every
  other resource the plan uses that the type has) and ``status.allocatable`` = capacity minus
  the reserve (``--reserve`` plus the DaemonSets' load, their pod slots included).
  The headroom is a planning target, not part of allocatable. The annotation ``vbp.io/host``
  names the host in the placement (``<type>#<i>``).
* one ``Pod`` per container, ``<workload>-<i>`` in the workload's namespace with the labels,
  annotations and spec of its pod template and ``spec.nodeName`` set; the annotation
  ``vbp.io/workload`` names the object (``<kind>/<namespace>/<name>``). Apps not read from
  manifests (a deployments CSV, an instance file) become a pod of one ``pause`` container that
  requests the app's demand (extended resources and huge pages with an equal limit, as the API
  server requires), in namespace ``default``, labelled ``app: <name>``.

* one ``Namespace`` per namespace of the pods other than ``default``, first, so that ``kubectl
  apply`` finds it.

DaemonSets are not written: their load is already taken off allocatable. Objects come in a stable
order (Namespaces by name, Nodes by host type and index, then Pods by app and index) and
:func:`dump_yaml` sorts keys, so the same plan gives the same bytes.
"""

from __future__ import annotations

import copy
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from packing.io.atomic import write_text
from packing.model.instance import UNPLACED, Instance, Placement
from packing.model.quantity import PODS, is_byte_resource
from packing.plan.model import PLAN_RESOURCES, HostOffer, unit_of

HOST_TYPE_LABEL = "vbp.io/host-type"
"""The node label naming a Node's host type (its pool)."""
HOST_ANNOTATION = "vbp.io/host"
"""The node annotation naming the host in the placement (``<type>#<i>``)."""
WORKLOAD_ANNOTATION = "vbp.io/workload"
"""The pod annotation naming the workload (``<kind>/<namespace>/<name>``)."""
ALWAYS = ("cpu", "memory", PODS)
"""Resources every Node lists, even at 0."""
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
"""The image of the pods of apps that have no pod template."""
GPU_KEY = "nvidia.com/gpu"
"""The GPU resource name when no manifest names one."""


def dns_name(text: str, fallback: str = "x") -> str:
    """``text`` as a DNS-1123 name: lowercase, ``a-z0-9.-``, starting and ending alphanumeric."""
    s = re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-.")
    return s[:253].strip("-.") or fallback


def memory_quantity(n: int) -> str:
    """Bytes as a quantity in the largest exact binary unit: ``62Gi``, ``512Mi``, ``1000``."""
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if n and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def quantity(resource: str, base: int) -> str:
    """A base-unit amount (millicores, bytes, units) as a quantity: ``1500m``, ``4Gi``, ``2``."""
    if resource == "cpu":
        return f"{base}m"
    return memory_quantity(base) if is_byte_resource(resource) else str(base)


def _resource_list(amounts: Mapping[str, int], gpu_key: str, keep: Sequence[str] = ()
                   ) -> dict[str, str]:
    """A ``ResourceList``: each resource's amount as a quantity (zeros left out but ``keep``)."""
    return {(gpu_key if r == "gpu" else r): quantity(r, v) for r, v in amounts.items()
            if v or r in keep}


def _node_names(instance: Instance, used: Sequence[int]) -> dict[int, str]:
    """Global host index -> Node name, for the used hosts (``<type>-<k>``, unique)."""
    types = instance.host_type_of
    prefixes: dict[int, str] = {}
    taken: set[str] = set()
    for t, ht in enumerate(instance.host_types):
        p = dns_name(ht.name, "host")
        prefixes[t] = p if p not in taken else f"{p}-t{t}"
        taken.add(prefixes[t])
    seen: Counter[int] = Counter()
    out: dict[int, str] = {}
    for h in sorted(used):
        t = int(types[h])
        out[h] = f"{prefixes[t]}-{seen[t]}"
        seen[t] += 1
    return out


def plan_objects(instance: Instance, placement: Placement, offers: Sequence[HostOffer],
                 reserve: Sequence[int] | Mapping[str, Mapping[str, int]] = (0, 0, 0),
                 pods: Mapping[str, Mapping[str, Any]] | None = None,
                 spares: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The Nodes and Pods of a plan (see the module docstring).

    Args:
        instance: the planning instance (hosts ``<type>#<i>``, types in ``offers`` order).
        placement: where every container goes (checked; every container placed).
        offers: the host types offered, one per ``instance.host_types``.
        reserve: per host type (by name), the amount taken off capacity for allocatable, per
            resource in base units (millicores, bytes, cards, pod slots; :func:`packing.plan.
            model.reserved`: the DaemonSets a type runs differ); or one amount for every type
            in :data:`packing.plan.model.PLAN_RESOURCES` order.
        pods: per app name, ``{"kind", "namespace", "name", "gpu_key", "template"}``
            (:attr:`packing.plan.model.Demand.pods`); apps without an entry get a ``pause`` pod.
        spares: hosts (``<type>#<i>``) written as Nodes even when empty (the N+1 spares).

    Returns:
        Namespaces, Nodes, then Pods, as plain mappings.

    Raises:
        ValueError: a container is unplaced, the offers do not match the instance's types, or a
            spare is not a host of the instance.
    """
    pods = pods or {}
    by_name = {o.name: o for o in offers}
    if any(t.name not in by_name for t in instance.host_types):
        raise ValueError("the offers do not match the instance's host types")
    gpu_key = next((str(p["gpu_key"]) for p in pods.values() if p.get("gpu_key")), GPU_KEY)
    assign: dict[str, tuple[int, ...]] = {}
    for a in instance.apps:
        hosts = tuple(int(h) for h in placement.hosts.get(a.name, (UNPLACED,) * a.count))
        if len(hosts) != a.count or any(h == UNPLACED for h in hosts):
            raise ValueError(f"app {a.name!r} has unplaced containers; only a complete "
                             "placement can be written as Kubernetes objects")
        assign[a.name] = hosts
    index = instance.host_index
    if any(h not in index for h in spares):
        raise ValueError(f"spare hosts {[h for h in spares if h not in index]} are not hosts of "
                         "the plan")
    used = sorted({h for hs in assign.values() for h in hs} | {index[h] for h in spares})
    names = _node_names(instance, used)
    host_names = instance.host_names
    types = instance.host_type_of
    objects: list[dict[str, Any]] = []
    for h in used:
        ht = instance.host_types[int(types[h])]
        o = by_name[ht.name]
        labels = {**dict(o.labels), "kubernetes.io/hostname": names[h], HOST_TYPE_LABEL: ht.name}
        cap = {r: o.capacity(r) for r in (*instance.resources, PODS)}
        off = reserve[ht.name] if isinstance(reserve, Mapping) else dict(
            zip(PLAN_RESOURCES, reserve, strict=False))
        left = {r: max(0, c - int(off.get(r, 0))) if c else 0 for r, c in cap.items()}
        node: dict[str, Any] = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": names[h], "labels": labels,
                         "annotations": {HOST_ANNOTATION: host_names[h]}},
            "spec": {},
            "status": {"capacity": _resource_list(cap, gpu_key, ALWAYS),
                       "allocatable": _resource_list(left, gpu_key, ALWAYS)},
        }
        if o.taints:
            node["spec"]["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect}
                                      if t.value else {"key": t.key, "effect": t.effect}
                                      for t in o.taints]
        objects.append(node)
    pod_objects: list[dict[str, Any]] = []
    pod_names: Counter[tuple[str, str]] = Counter()
    for a in instance.apps:
        info = pods.get(a.name)
        ns = str(info["namespace"]) if info else "default"
        pod_names[(ns, str(info["name"]) if info else dns_name(a.name, "app"))] += 1
    for a in instance.apps:
        info = pods.get(a.name)
        if info is not None:
            ns, base = str(info["namespace"]), str(info["name"])
            if pod_names[(ns, base)] > 1:
                base = f"{base}-{dns_name(str(info['kind']))}"
            tmpl = info["template"]
            meta = tmpl.get("metadata") or {}
            spec = copy.deepcopy(dict(tmpl.get("spec") or {}))
            labels = dict(meta.get("labels") or {})
            notes = {**dict(meta.get("annotations") or {}),
                     WORKLOAD_ANNOTATION: f"{info['kind']}/{ns}/{info['name']}"}
        else:
            ns, base = "default", dns_name(a.name, "app")
            amounts = {r: _ceil(float(Fraction(d) / unit_of(r))) for r, d in
                       zip(instance.resources, a.demand, strict=True) if r != PODS}
            req = _resource_list(amounts, gpu_key)
            lim = {k: v for k, v in req.items() if k not in ("cpu", "memory", "ephemeral-storage")}
            spec = {"containers": [{"name": "app", "image": PAUSE_IMAGE,
                                    "resources": {"requests": req, **({"limits": lim} if lim
                                                                       else {})}}]}
            labels = {"app": base[:63].strip("-.")}
            notes = {WORKLOAD_ANNOTATION: a.name}
        for i, h in enumerate(assign[a.name]):
            s = copy.deepcopy(spec)
            s["nodeName"] = names[h]
            pod_objects.append({"apiVersion": "v1", "kind": "Pod",
                                "metadata": {"name": f"{base}-{i}", "namespace": ns,
                                             "labels": dict(labels),
                                             "annotations": dict(notes)},
                                "spec": s})
    spaces = sorted({p["metadata"]["namespace"] for p in pod_objects} - {"default"})
    return [*({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}} for ns in spaces),
            *objects, *pod_objects]


def _ceil(x: float) -> int:
    """Round up, treating values within 1e-6 of a whole number as that number."""
    r = round(x)
    return int(r) if abs(x - r) < 1e-6 else math.ceil(x)


def dump_yaml(objects: Sequence[Mapping[str, Any]]) -> str:
    """Multi-document YAML, keys sorted, one document per object."""
    return yaml.safe_dump_all([_plain(o) for o in objects], sort_keys=True,
                              default_flow_style=False, explicit_start=True)


def _plain(v: Any) -> Any:
    """Mappings and sequences as dicts and lists (what ``safe_dump`` writes)."""
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    return v


def write_objects(path: str | Path, objects: Sequence[Mapping[str, Any]]) -> Path:
    """Write ``objects`` to ``path`` as multi-document YAML, atomically (see :func:`dump_yaml`)."""
    return write_text(path, dump_yaml(objects))


def summary(objects: Sequence[Mapping[str, Any]]) -> str:
    """``"3 Nodes (std x2, gpu x1), 17 Pods"``: what ``objects`` holds."""
    pools = Counter(o["metadata"]["labels"][HOST_TYPE_LABEL] for o in objects
                    if o["kind"] == "Node")
    n_pods = sum(1 for o in objects if o["kind"] == "Pod")
    pool = ", ".join(f"{k} x{v}" for k, v in pools.items())
    n = sum(pools.values())
    return f"{n} Node{'' if n == 1 else 's'} ({pool}), {n_pods} Pod{'' if n_pods == 1 else 's'}"


__all__ = ["HOST_ANNOTATION", "HOST_TYPE_LABEL", "WORKLOAD_ANNOTATION", "dns_name", "dump_yaml",
           "memory_quantity", "plan_objects", "summary", "write_objects"]
