"""A cluster snapshot: ``kubectl get nodes,pods,pdb -A -o yaml`` (or ``-o json``) read as a ``Snapshot``.

Input: a ``v1 List`` (``kind: List`` with ``items``, as ``kubectl get`` prints it), multi-document
YAML of objects or Lists, JSON, or a folder of such files (``*.yaml``, ``*.yml``, ``*.json``, not
recursive). Objects other than Node, Pod and PodDisruptionBudget are counted and skipped. The
fields and their meaning are the Kubernetes API reference's (Node, Pod and PodDisruptionBudget
v1: https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/node-v1/,
.../workload-resources/pod-v1/, .../policy-resources/pod-disruption-budget-v1/).

Nodes
-----
A node's type is the value of its ``node.kubernetes.io/instance-type`` label (the kubelet's
well-known label; then ``beta.kubernetes.io/instance-type`` and ``vbp.io/host-type``, which
``vbp plan --k8s-out`` writes), or of ``type_label`` when one is named; ``""`` without one. Its
capacity is ``status.allocatable`` (cpu and memory are required; ``pods`` is 110, the kubelet's
default ``maxPods``, when absent, and that is listed as ignored); labels, ``spec.taints``,
``spec.unschedulable`` (cordoned) and the ``Ready`` condition are kept; the rest (capacity,
addresses, images, node info, managed fields) is not used.

Pods
----
* ``Succeeded`` and ``Failed`` pods hold nothing: counted, not kept.
* A pod with ``spec.nodeName`` runs there (that node must be in the snapshot); a pod without one
  is ``Pending``: demand to place.
* The controller is the owner reference with ``controller: true``; a ReplicaSet's pod carrying
  the label ``pod-template-hash`` belongs to the Deployment the ReplicaSet's name minus
  ``-<hash>`` names (how the Deployment controller names its ReplicaSets). A pod written by
  ``vbp plan --k8s-out`` (no owner, annotation ``vbp.io/workload``) belongs to that workload.
* DaemonSet pods stay with their node and go with it. The DaemonSet controller replaces a pod's
  node affinity by a ``matchFields`` term on the node's name; that term is dropped when read.
* The request is the scheduler's arithmetic, as for manifests (:func:`packing.loaders.k8s_pod.pod_request`:
  init containers, sidecars, overhead), for every resource: cpu, memory, ``ephemeral-storage``,
  ``hugepages-*``, GPU cards and any extended resource, plus 1 ``pods``.
* Node selector, required node affinity, tolerations and required pod anti-affinity on
  ``kubernetes.io/hostname`` are read as for manifests. Other required pod (anti-)affinity and
  ``DoNotSchedule`` spread constraints are listed as ignored: consolidation keeps per-node rules only.

A running pod is **pinned** (it stays where it runs, and its node stays) when it is a static
(mirror) pod, carries ``cluster-autoscaler.kubernetes.io/safe-to-evict: "false"`` or
``karpenter.sh/do-not-disrupt: "true"``, has no controller, or keeps data on the node (an
``emptyDir`` volume not in memory, or a ``hostPath`` volume), unless ``safe-to-evict: "true"``
(or ``safe-to-evict-local-volumes`` names every such volume): cluster-autoscaler's rules for pods
that block a node's removal (its FAQ, "What types of pods can prevent CA from removing a node?"),
with Karpenter's annotation.

PodDisruptionBudgets
--------------------
``spec.selector`` (null: no pods; ``{}``: every pod of the namespace), ``spec.minAvailable`` and
``spec.maxUnavailable`` (a whole number or a percentage such as ``"50%"``); their arithmetic is
:mod:`packing.cluster.budgets`.

Errors name the file, the object (``Kind/namespace/name``) and the field, one line each: a pod on
a node that is not in the snapshot, a node without ``status.allocatable`` cpu or memory, a document
that is no Kubernetes object or List, malformed or truncated YAML, a bad quantity.
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

from packing.cluster.snapshot import (
    BASE_RESOURCES,
    TYPE_LABELS,
    Budget,
    Node,
    Pod,
    Snapshot,
)
from packing.errors import InputError, Problem
from packing.io.documents import read_documents
from packing.loaders.k8s import flatten_objects, manifest_files
from packing.loaders.k8s_pod import (
    GPU_KEYS,
    HOSTNAME,
    ObjectReader,
    label_selector,
    pod_request,
    read_workload,
)
from packing.model.node_labels import well_known
from packing.model.quantity import parse_quantity, planning_unit
from packing.model.selection import Taint, taint_problem

KINDS = ("Node", "Pod", "PodDisruptionBudget")
"""The kinds a snapshot is made of."""
DEFAULT_MAX_PODS = 110
"""The kubelet's default ``maxPods``: a node's ``pods`` when its allocatable does not say."""
FINISHED = ("Succeeded", "Failed")
"""Pod phases that hold no resources."""
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_LOCAL = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
MIRROR = "kubernetes.io/config.mirror"
WORKLOAD = "vbp.io/workload"
"""The annotation ``vbp plan --k8s-out`` puts on the pods it writes: ``Kind/namespace/name``."""


def base_amount(resource: str, q: Fraction) -> int:
    """An exact quantity in base units, rounded up as the scheduler reads it."""
    return math.ceil(q * 1000) if resource == "cpu" else math.ceil(q)


def resource_name(key: str) -> str:
    """The snapshot's name of a Kubernetes resource: GPU cards are ``gpu``."""
    return "gpu" if key in GPU_KEYS else key


# ------------------------------------------------------------------------------------------------
# documents
def _objects(paths: Sequence[Path], problems: list[Problem]) -> list[tuple[str, Mapping[str, Any]]]:
    out: list[tuple[str, Mapping[str, Any]]] = []
    for f in paths:
        for i, doc in enumerate(read_documents(f)):
            flatten_objects(doc, str(f), f"document {i + 1}" if i else "", out, problems)
    return out


def _bad(problems: list[Problem], src: str, ident: str, fld: str, reason: str) -> None:
    problems.append(Problem(src, f"{ident}: {fld}", reason))


def _meta(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    m = doc.get("metadata")
    return m if isinstance(m, Mapping) else {}


def _ident(kind: str, doc: Mapping[str, Any], namespaced: bool = True) -> str:
    m = _meta(doc)
    name = m.get("name") if isinstance(m.get("name"), str) else "?"
    if not namespaced:
        return f"{kind}/{name}"
    ns = m.get("namespace") if isinstance(m.get("namespace"), str) and m.get("namespace") else "default"
    return f"{kind}/{ns}/{name}"


def _ready(status: Mapping[str, Any]) -> bool:
    conds = status.get("conditions")
    if not isinstance(conds, list):
        return False
    return any(isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True"
               for c in conds)


# ------------------------------------------------------------------------------------------------
# nodes
def _node(src: str, doc: Mapping[str, Any], type_label: str | None, problems: list[Problem],
          ignored: list[str]) -> Node | None:
    ident = _ident("Node", doc, namespaced=False)
    o = ObjectReader(src, doc, problems, [], True)
    n0 = len(problems)
    if not o.name:
        o.bad("metadata.name", "missing or not a string")
    labels = o.strings(_meta(doc).get("labels"), "metadata.labels")
    spec = o.mapping(doc.get("spec"), "spec")
    status = o.mapping(doc.get("status"), "status")
    alloc_raw = status.get("allocatable")
    if not isinstance(alloc_raw, Mapping) or not alloc_raw:
        _bad(problems, src, ident, "status.allocatable", "missing: a node needs its allocatable "
             "resources (kubectl get nodes -o yaml prints them)")
        return None
    alloc: dict[str, int] = {}
    for k, v in alloc_raw.items():
        try:
            q = parse_quantity(v)
        except ValueError as e:
            _bad(problems, src, ident, f"status.allocatable.{k}", str(e))
            continue
        if q < 0:
            _bad(problems, src, ident, f"status.allocatable.{k}", f"must not be negative, got {v!r}")
            continue
        alloc[resource_name(str(k))] = alloc.get(resource_name(str(k)), 0) + base_amount(str(k), q)
    for r in ("cpu", "memory"):
        if r not in alloc_raw:
            _bad(problems, src, ident, f"status.allocatable.{r}", "missing")
    if "pods" not in alloc:
        alloc["pods"] = DEFAULT_MAX_PODS
        ignored.append(f"{src}: {ident}: status.allocatable.pods: missing, read as "
                       f"{DEFAULT_MAX_PODS} (the kubelet's default maxPods)")
    taints = []
    for i, t in enumerate(o.seq(spec.get("taints"), "spec.taints")):
        t = o.mapping(t, f"spec.taints[{i}]")
        taint = Taint(str(t.get("key") or ""), str(t.get("value") or ""), str(t.get("effect") or ""))
        why = taint_problem(taint)
        if why is not None:
            o.bad(f"spec.taints[{i}]", why)
        taints.append(taint)
    if len(problems) > n0:
        return None
    keys = (type_label,) if type_label else TYPE_LABELS
    lab = dict(labels)
    node_type = next((lab[k] for k in keys if k in lab), "")
    return Node(o.name, node_type, alloc, labels, tuple(taints), spec.get("unschedulable") is True,
                _ready(status), src)


# ------------------------------------------------------------------------------------------------
# pods
def _controller(doc: Mapping[str, Any], labels: Mapping[str, str], ns: str) -> tuple[str | None, str]:
    """``(Kind/namespace/name of the controller or None, owner kind)``."""
    meta = _meta(doc)
    owners = meta.get("ownerReferences")
    ref = None
    if isinstance(owners, list):
        ref = next((r for r in owners if isinstance(r, Mapping) and r.get("controller") is True), None)
    if ref is None:
        ann = meta.get("annotations")
        w = ann.get(WORKLOAD) if isinstance(ann, Mapping) else None
        if isinstance(w, str) and w.count("/") == 2:
            return w, w.split("/")[0]
        return None, ""
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    if kind == "Node":  # a static pod's mirror
        return None, kind
    h = labels.get("pod-template-hash")
    if kind == "ReplicaSet" and h and name.endswith(f"-{h}"):
        return f"Deployment/{ns}/{name[: -len(h) - 1]}", kind
    return f"{kind}/{ns}/{name}", kind


def _local_volumes(spec: Mapping[str, Any]) -> list[str]:
    out = []
    vols = spec.get("volumes")
    for v in vols if isinstance(vols, list) else []:
        if not isinstance(v, Mapping):
            continue
        e = v.get("emptyDir")
        if "hostPath" in v or (isinstance(e, Mapping) and e.get("medium") != "Memory") or (
                "emptyDir" in v and e is None):
            out.append(str(v.get("name")))
    return out


def _pinned(doc: Mapping[str, Any], spec: Mapping[str, Any], controller: str | None,
            owner_kind: str) -> str | None:
    ann = _meta(doc).get("annotations")
    ann = ann if isinstance(ann, Mapping) else {}
    if MIRROR in ann or owner_kind == "Node":
        return "a static (mirror) pod"
    if str(ann.get(SAFE_TO_EVICT, "")).lower() == "false":
        return f"{SAFE_TO_EVICT}: \"false\""
    if str(ann.get(DO_NOT_DISRUPT, "")).lower() == "true":
        return f"{DO_NOT_DISRUPT}: \"true\""
    if str(ann.get(SAFE_TO_EVICT, "")).lower() == "true":
        return None
    if controller is None:
        return "no controller (a bare pod is not recreated elsewhere)"
    local = _local_volumes(spec)
    named = {s.strip() for s in str(ann.get(SAFE_LOCAL, "")).split(",") if s.strip()}
    if local and not set(local) <= named:
        return f"local storage (volume {', '.join(v for v in local if v not in named)})"
    return None


def _strip_daemon_affinity(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """The pod without the DaemonSet controller's ``matchFields`` node affinity term."""
    spec = doc.get("spec")
    aff = spec.get("affinity") if isinstance(spec, Mapping) else None
    na = aff.get("nodeAffinity") if isinstance(aff, Mapping) else None
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(na, Mapping) else None
    terms = req.get("nodeSelectorTerms") if isinstance(req, Mapping) else None
    if not isinstance(terms, list):
        return doc
    out = copy.deepcopy(dict(doc))
    kept = [t for t in terms if not (isinstance(t, Mapping) and t.get("matchFields"))]
    node_aff = out["spec"]["affinity"]["nodeAffinity"]
    if kept:
        node_aff["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] = kept
    else:
        del node_aff["requiredDuringSchedulingIgnoredDuringExecution"]
    return out


def _pod(src: str, doc: Mapping[str, Any], nodes: Mapping[str, Node], problems: list[Problem],
         ignored: list[str]) -> Pod | str | None:
    """The pod, its phase when it has finished, or ``None`` on a problem."""
    ident = _ident("Pod", doc)
    status: Mapping[str, Any] = doc["status"] if isinstance(doc.get("status"), Mapping) else {}
    spec: Mapping[str, Any] = doc["spec"] if isinstance(doc.get("spec"), Mapping) else {}
    node = spec.get("nodeName") or None
    phase = status.get("phase") or ("Running" if node else "Pending")
    if phase in FINISHED:
        return str(phase)
    if node is not None and (not isinstance(node, str) or node not in nodes):
        _bad(problems, src, ident, "spec.nodeName", f"node {node!r} is not in the snapshot "
             "(read the nodes with the pods: kubectl get nodes,pods,pdb -A -o yaml)")
        return None
    meta = _meta(doc)
    ns = str(meta.get("namespace") or "default")
    raw_labels = meta.get("labels")
    labels = {str(k): str(v) for k, v in raw_labels.items()} if isinstance(raw_labels, Mapping) else {}
    controller, owner_kind = _controller(doc, labels, ns)
    daemon = owner_kind == "DaemonSet"
    body = _strip_daemon_affinity(doc) if daemon else doc
    scratch: list[str] = []
    o = ObjectReader(src, body, problems, scratch, True)
    w = read_workload(o, Fraction(1))
    if w is None:
        return None
    total = pod_request(o, o.mapping(body.get("spec"), "spec"), "spec")
    request: dict[str, int] = {"pods": 1}
    for k, q in total.items():
        r = resource_name(k)
        amount = base_amount(k, q)
        if amount:
            request[r] = request.get(r, 0) + amount
    anti = tuple(t for t in w.anti if t[2] == HOSTNAME)
    for fld in [t[3] for t in w.anti if t[2] != HOSTNAME] + [t[3] for t in w.spreads]:
        ignored.append(f"{src}: {ident}: {fld}: not modelled in a snapshot (per-node rules only)")
    ignored.extend(line for line in scratch if line.endswith("(ignored)"))
    pinned = None if node is None or daemon else _pinned(doc, spec, controller, owner_kind)
    ann = meta.get("annotations")
    template = {"metadata": {"labels": dict(labels),
                             "annotations": dict(ann) if isinstance(ann, Mapping) else {}},
                "spec": {k: v for k, v in spec.items() if k != "nodeName"}}
    return Pod(ns, o.name, node, str(phase), _ready(status), controller, daemon, request,
               w.labels, w.node_selector, w.node_affinity, w.tolerations, anti, pinned, src,
               template)


# ------------------------------------------------------------------------------------------------
# budgets
def _budget(src: str, doc: Mapping[str, Any], problems: list[Problem]) -> Budget | None:
    ident = _ident("PodDisruptionBudget", doc)
    o = ObjectReader(src, doc, problems, [], True)
    n0 = len(problems)
    if not o.name:
        o.bad("metadata.name", "missing or not a string")
    spec = o.mapping(doc.get("spec"), "spec")
    sel = label_selector(o, spec.get("selector"), "spec.selector")
    values: list[int | str | None] = []
    for f in ("minAvailable", "maxUnavailable"):
        v = spec.get(f)
        if v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0) or (
                isinstance(v, str) and re.fullmatch(r"[0-9]+%", v.strip())):
            values.append(v.strip() if isinstance(v, str) else v)
        else:
            _bad(problems, src, ident, f"spec.{f}", f"expected a whole number >= 0 or a "
                 f"percentage such as \"50%\", got {v!r}")
            values.append(None)
    if values[0] is not None and values[1] is not None:
        _bad(problems, src, ident, "spec", "minAvailable and maxUnavailable exclude each other")
    if len(problems) > n0:
        return None
    return Budget(o.namespace, o.name, sel, values[0], values[1], src)


# ------------------------------------------------------------------------------------------------
def read_snapshot(path: str | Path | Sequence[str | Path], type_label: str | None = None) -> Snapshot:
    """Read a cluster snapshot (see the module docstring).

    Args:
        path: a file, a folder, or several of them.
        type_label: the node label that names a node's type (default: :data:`TYPE_LABELS`).

    Raises:
        InputError: one problem per line, naming the file, the object and the field.
    """
    paths = [path] if isinstance(path, str | Path) else list(path)
    files = [f for p in paths for f in manifest_files(p)]
    if not files:
        raise InputError([Problem(str(paths[0]) if paths else "<snapshot>", "",
                                  "no snapshot files (.yaml, .yml, .json)")])
    problems: list[Problem] = []
    objects = _objects(files, problems)
    if problems:
        raise InputError(problems)
    kinds: Counter[str] = Counter(str(d["kind"]) for _, d in objects)
    skipped = Counter({k: n for k, n in kinds.items() if k not in KINDS})
    ignored: list[str] = []
    nodes: dict[str, Node] = {}
    for src, doc in objects:
        if doc["kind"] == "Node":
            n = _node(src, doc, type_label, problems, ignored)
            if n is not None and n.name in nodes:
                _bad(problems, src, f"Node/{n.name}", "metadata.name", "appears twice")
            elif n is not None:
                nodes[n.name] = n
    if not nodes and not problems:
        raise InputError([Problem(str(files[0]), "", "no Node objects: a snapshot is what "
                                  "kubectl get nodes,pods,pdb -A -o yaml prints")])
    pods: list[Pod] = []
    budgets: list[Budget] = []
    finished = 0
    seen: set[str] = set()
    for src, doc in objects:
        if doc["kind"] == "Pod":
            p = _pod(src, doc, nodes, problems, ignored)
            if isinstance(p, str):
                finished += 1
            elif p is not None:
                if p.key in seen:
                    _bad(problems, src, f"Pod/{p.key}", "metadata.name", "appears twice")
                seen.add(p.key)
                pods.append(p)
        elif doc["kind"] == "PodDisruptionBudget":
            b = _budget(src, doc, problems)
            if b is not None:
                budgets.append(b)
    if problems:
        raise InputError(problems)
    extra = sorted({r for p in pods for r in p.request} - set(BASE_RESOURCES))
    return Snapshot(tuple(nodes.values()), tuple(pods), tuple(budgets), (*BASE_RESOURCES, *extra),
                    finished, dict(kinds), dict(skipped), tuple(ignored), tuple(map(str, files)),
                    type_label or TYPE_LABELS[0])


_NODE_YAML = re.compile(r"^\s*(?:-\s+)?kind\s*:\s*['\"]?Node['\"]?\s*$", re.MULTILINE)
_NODE_JSON = re.compile(r"\"kind\"\s*:\s*\"Node\"")


def looks_like_snapshot(path: str | Path) -> bool:
    """Whether a file (or a folder's files) holds a Node object: a snapshot, not manifests."""
    p = Path(path)
    for f in manifest_files(p) if p.is_dir() else [p]:
        try:
            with f.open(encoding="utf-8", errors="replace") as fh:
                head = fh.read(1 << 22)
        except OSError:
            continue
        if (_NODE_JSON if f.suffix.lower() == ".json" else _NODE_YAML).search(head):
            return True
    return False


__all__ = ["DEFAULT_MAX_PODS", "KINDS", "base_amount", "load_snapshot", "looks_like_snapshot",
           "read_snapshot", "resource_name", "snapshot_plan", "with_node_types"]


def snapshot_plan(path: str | Path, type_label: str | None = None) -> tuple[Any, Any]:
    """A snapshot as ``vbp plan``'s DEMAND and ``--current``: ``(Demand, per-app pods on nodes)``.

    The apps are the snapshot's (one per controller and pod shape, as
    :func:`packing.cluster.problem.build_problem` groups them; Pending pods count), with their
    cpu, memory, GPU cards and every other resource a pod requests (ephemeral storage,
    hugepages, extended resources; each pod takes a slot), per-node caps and exclusions, node
    selection of their first pod, and their pods as templates for ``--k8s-out``; the DaemonSets
    are per-host loads on the host types their pods' node selector and tolerations admit.

    Returns:
        ``(demand, running)``: the :class:`~packing.plan.model.Demand`, and per app the node of
        each of its pods (``None``: Pending), nodes as ``(type, index among the nodes of that
        type in file order)``.
    """
    from packing.cluster.problem import DAEMON_TOLERATIONS, build_problem
    from packing.model.instance import App
    from packing.plan.model import DaemonLoad, Demand

    snap = read_snapshot(path, type_label)
    P = build_problem(snap)
    res = list(P.resources)

    def base(request: Mapping[str, int]) -> tuple[int, int, int]:
        return (int(request.get("cpu", 0)), int(request.get("memory", 0)), int(request.get("gpu", 0)))

    core = ("cpu", "memory", "gpu", "pods")
    other = sorted({r for r in res if r not in core}
                   | {r for q in snap.pods if q.daemon for r, v in q.request.items() if v and r not in core})

    apps, pods, running = [], {}, {}
    of_type: dict[str, int] = {}
    slot: dict[str, tuple[str, int]] = {}
    for n in snap.nodes:
        slot[n.name] = (n.type, of_type.get(n.type, 0))
        of_type[n.type] = of_type.get(n.type, 0) + 1
    for a, g in enumerate(P.apps):
        p = snap.pods[g.pods[0]]
        d = {r: int(P.demand[a, res.index(r)]) if r in res else 0 for r in ("cpu", "memory", "gpu")}
        more = tuple(float(Fraction(int(P.demand[a, res.index(r)]) if r in res else 0) / planning_unit(r))
                     for r in other)
        apps.append(App(g.name, (d["cpu"] / 1000, d["memory"] / 2**30, float(d["gpu"]), *more), len(g.pods),
                        max_per_host=int(P.cap[a]) if P.cap[a] < len(g.pods) else None,
                        node_selector=p.node_selector, node_affinity=p.node_affinity,
                        tolerations=p.tolerations))
        kind, ns, name = (g.controller or f"Pod/{p.namespace}/{p.name}").split("/", 2)
        pods[g.name] = {"kind": kind, "namespace": ns, "name": name,
                        "gpu_key": GPU_KEYS[0] if d["gpu"] else None, "template": p.template}
        running[g.name] = tuple(None if snap.pods[i].node is None else slot[str(snap.pods[i].node)]
                                for i in g.pods)
    daemons = {q.controller: q for q in snap.pods if q.daemon and q.controller}
    loads = tuple(DaemonLoad(c, base(q.request), q.node_selector, q.node_affinity,
                             q.tolerations + DAEMON_TOLERATIONS,
                             other=tuple((r, int(q.request[r])) for r in other if q.request.get(r)))
                  for c, q in daemons.items())
    names = [g.name for g in P.apps]
    demand = Demand(tuple(apps), exclusions=tuple((names[a], names[b]) for a, b in P.exclusions),
                    sources={g.name: str(path) for g in P.apps}, pods=pods, daemons=loads,
                    resources=("cpu", "memory", "gpu", *other))
    return demand, running


def with_node_types(path: str | Path, offers: Sequence[Any]) -> tuple[Any, ...]:
    """Host offers that name a node type of the snapshot, as its nodes are.

    An offer whose type the cluster runs takes the capacity the scheduler sees on those nodes:
    per resource the least ``status.allocatable`` over its nodes (cpu, memory, GPU cards, pod
    slots and every other resource; a node's allocatable is what the kubelet leaves to pods
    after its own reserve, so a host list's ``2c8g`` becomes, e.g., ``1930m`` and 29 pods), so
    a plan never counts on more than the running nodes offer, and new nodes of that type are
    planned alike. An offer without labels and taints of its own (the kubelet's well-known ones
    aside, :func:`packing.model.node_labels.well_known`) also gets the labels (the hostname
    aside) and the taints that every node of that type carries, so the pods that run there (a
    node selector, a toleration) may run on more of them. Other offers stay as they are.

    Raises:
        InputError: a node whose type no offer names (one line per type).
    """
    import dataclasses

    snap = read_snapshot(path)
    names = {o.name for o in offers}
    missing = {n.type: n.name for n in snap.nodes if n.type not in names}
    if missing:
        raise InputError([Problem(str(path), f"Node/{node}", f"its type {t or '(no type label)'!r} is "
                                  f"no host type of HOSTS ({', '.join(sorted(names))})")
                          for t, node in missing.items()])
    out = []
    for o in offers:
        nodes = [n for n in snap.nodes if n.type == o.name]
        if not nodes:
            out.append(o)
            continue

        def least(r: str) -> int:
            return min(int(n.allocatable.get(r, 0)) for n in nodes)  # noqa: B023 (used at once)

        other = sorted({r for n in nodes for r in n.allocatable} - {"cpu", "memory", "gpu", "pods"})
        o = dataclasses.replace(o, cpu_milli=least("cpu"), memory_bytes=least("memory"),
                                gpus=least("gpu"), pods=least("pods"),
                                other=tuple((r, least(r)) for r in other))
        if tuple(o.labels) == well_known(o.name, ()) and not o.taints:
            shared = set(nodes[0].labels)
            for n in nodes[1:]:
                shared &= set(n.labels)
            labels = well_known(o.name, ((k, v) for k, v in shared if k != HOSTNAME))
            taints = tuple(t for t in nodes[0].taints if all(t in n.taints for n in nodes)
                           and t.key != "node.kubernetes.io/unschedulable")
            o = dataclasses.replace(o, labels=labels, taints=taints)
        out.append(o)
    return tuple(out)


def load_snapshot(path: str | Path, hosts: str | None = None, type_label: str | None = None) -> Any:
    """An instance from a snapshot (``load_any``'s loader): the nodes, the pods where they run.

    The instance is the consolidation problem's (:attr:`packing.cluster.problem.ClusterProblem.instance`:
    a host per node with its free capacity, an app per controller and pod shape, ``initial`` where
    the pods run, Pending pods unplaced); ``meta["snapshot"]`` holds what ``vbp info`` shows.

    Args:
        path: the snapshot.
        hosts: host types (``--hosts``) whose prices price the nodes by type.
        type_label: the node label naming node types.
    """
    from packing.cluster.describe import snapshot_facts
    from packing.cluster.problem import build_problem
    from packing.loaders.host_types import load_hosts

    snap = read_snapshot(path, type_label)
    problem = build_problem(snap, load_hosts(hosts) if hosts else ())
    inst = problem.instance
    return inst.replace(name=Path(path).stem or "snapshot",
                        meta={**inst.meta, "snapshot": snapshot_facts(problem)})
