"""An independent replay of the Kubernetes objects ``vbp plan --k8s-out`` writes.

Written from the upstream documentation of the kube-scheduler's filters, not from vbp's code
(nothing of ``packing``, ``solvers`` or ``vbp`` is imported). Every Pod is bound to its
``spec.nodeName`` one at a time, as the scheduler binds pods, and each binding must pass every
filter against the Nodes and the pods bound before it:

* **NodeResourcesFit** (https://kubernetes.io/docs/concepts/scheduling-eviction/kube-scheduler/
  #kube-scheduler-implementation, https://kubernetes.io/docs/reference/scheduling/config/
  #scheduling-plugins): for every resource the pod requests, the requests of the node's pods
  plus this pod's stay within ``status.allocatable``; a resource the node does not list has none.
  The node's pod count stays within ``allocatable.pods``. A pod's request
  (https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/,
  https://kubernetes.io/docs/concepts/workloads/pods/init-containers/#resource-sharing-within-containers,
  https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/
  #resource-sharing-within-containers, https://kubernetes.io/docs/concepts/scheduling-eviction/
  pod-overhead/): a container's limit stands for its request when only the limit is set; the
  app containers and sidecars (init containers with ``restartPolicy: Always``) add up; a plain
  init container needs its request beside the sidecars declared before it; the pod needs the
  larger; pod-level ``resources.requests`` replace cpu and memory; ``overhead`` is added.
* **NodePorts** (https://kubernetes.io/docs/concepts/services-networking/service/ and the
  plugin list above: "Checks if a node has free ports for the requested Pod ports"): two pods on
  one node never take the same ``hostPort`` with the same protocol (TCP unless given) on the same
  ``hostIP`` (``0.0.0.0``, every address, unless given; it clashes with any address).
* **NodeAffinity** and ``nodeSelector``
  (https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/): every
  ``nodeSelector`` pair is a node label; the ``nodeSelectorTerms`` of required node affinity are
  ORed, the expressions of a term ANDed (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``,
  ``Lt``; ``NotIn`` and ``DoesNotExist`` hold without the label).
* **TaintToleration** (https://kubernetes.io/docs/concepts/scheduling-eviction/
  taint-and-toleration/): every ``NoSchedule`` and ``NoExecute`` taint of the node is tolerated
  (``Exists`` with no key tolerates everything; an empty effect matches every effect).
* **PodTopologySpread** (https://kubernetes.io/docs/concepts/scheduling-eviction/
  topology-spread-constraints/): for every ``DoNotSchedule`` constraint, with the pods of the
  pod's namespace that its ``labelSelector`` matches counted per value of ``topologyKey`` over the
  nodes that carry the key and pass the pod's node affinity and selector (the default
  ``nodeAffinityPolicy: Honor``, ``nodeTaintsPolicy: Ignore``), placing the pod may leave its
  domain at most ``maxSkew`` above the smallest count ("global minimum").
* **InterPodAffinity** (https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
  #inter-pod-affinity-and-anti-affinity), required terms only: no pod the pod's anti-affinity
  term matches (in the term's namespaces: ``namespaces``, else the pod's own; an empty
  ``namespaceSelector`` means all) runs in the node's domain of the term's ``topologyKey``, and
  no pod already bound has an anti-affinity term matching this pod there; an affinity term needs
  a matching pod in the domain (or, when no pod matches anywhere, the pod itself matching).

The order: the scheduler places pods one by one and a spread is checked against the pods bound
so far, so the replay repeatedly binds, among the pods not bound yet whose binding passes every
filter now, one whose topology domains hold the fewest pods its spreads count; it fails when
pods are left and none of them can be bound.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
           "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_QTY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?")


def quantity(v: Any) -> Fraction:
    """A Kubernetes quantity (https://kubernetes.io/docs/reference/kubernetes-api/
    common-definitions/quantity/) as an exact number."""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return Fraction(str(v))
    m = _QTY.fullmatch(str(v).strip())
    assert m, f"not a quantity: {v!r}"
    base = Fraction(m.group(1))
    if m.group(3) is not None:
        return base * Fraction(10) ** int(m.group(3))
    return base * _SUFFIX[m.group(2) or ""]


def _scheduled(r: str, q: Fraction) -> Fraction:
    """What the scheduler reads: CPU in whole millicores, the rest in whole units, rounded up."""
    step = Fraction(1, 1000) if r == "cpu" else Fraction(1)
    return -((-q) // step) * step


def _container(c: Mapping[str, Any]) -> dict[str, Fraction]:
    res = c.get("resources") or {}
    limits = {k: quantity(v) for k, v in (res.get("limits") or {}).items()}
    requests = {k: quantity(v) for k, v in (res.get("requests") or {}).items()}
    return {**limits, **requests}


def _add(a: dict[str, Fraction], b: Mapping[str, Fraction]) -> dict[str, Fraction]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, Fraction(0)) + v
    return out


def pod_request(spec: Mapping[str, Any]) -> dict[str, Fraction]:
    """A pod's effective request per resource (see the module docstring)."""
    total: dict[str, Fraction] = {}
    for c in spec.get("containers") or []:
        total = _add(total, _container(c))
    sidecars: dict[str, Fraction] = {}
    need: dict[str, Fraction] = {}
    for c in spec.get("initContainers") or []:
        r = _container(c)
        if c.get("restartPolicy") == "Always":
            total, sidecars = _add(total, r), _add(sidecars, r)
            here = sidecars
        else:
            here = _add(r, sidecars)
        need = {k: max(need.get(k, Fraction(0)), here.get(k, Fraction(0)))
                for k in {*need, *here}}
    total = {k: max(total.get(k, Fraction(0)), need.get(k, Fraction(0))) for k in {*total, *need}}
    pod_level = ((spec.get("resources") or {}).get("requests")) or {}
    for k in ("cpu", "memory"):
        if k in pod_level:
            total[k] = quantity(pod_level[k])
    total = _add(total, {k: quantity(v) for k, v in (spec.get("overhead") or {}).items()})
    return {k: _scheduled(k, v) for k, v in total.items() if v > 0}


def _expression(e: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    k, op, vals = e["key"], e["operator"], list(e.get("values") or [])
    if op == "In":
        return k in labels and labels[k] in vals
    if op == "NotIn":
        return k not in labels or labels[k] not in vals
    if op == "Exists":
        return k in labels
    if op == "DoesNotExist":
        return k not in labels
    if k not in labels:
        return False
    return int(labels[k]) > int(vals[0]) if op == "Gt" else int(labels[k]) < int(vals[0])


def affinity_admits(spec: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """NodeAffinity and ``nodeSelector``: whether the node's labels admit the pod."""
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    req = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if req is None:
        return True
    return any(bool(t.get("matchExpressions")) and all(_expression(e, labels)
                                                       for e in t["matchExpressions"])
               for t in req.get("nodeSelectorTerms") or [])


def _tolerates(taint: Mapping[str, str], tols: Sequence[Mapping[str, str]]) -> bool:
    for t in tols:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        op = t.get("operator") or "Equal"
        if op == "Exists" and (not t.get("key") or t["key"] == taint["key"]):
            return True
        if op == "Equal" and t.get("key") == taint["key"] and (t.get("value") or "") == (
                taint.get("value") or ""):
            return True
    return False


def taints_admit(spec: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """TaintToleration: every NoSchedule/NoExecute taint of the node is tolerated."""
    tols = spec.get("tolerations") or []
    return all(_tolerates(t, tols) for t in (node.get("spec") or {}).get("taints") or []
               if t["effect"] in ("NoSchedule", "NoExecute"))


def host_ports(spec: Mapping[str, Any]) -> list[tuple[str, str, int]]:
    """``(hostIP, protocol, hostPort)`` of the pod's containers (hostNetwork: every port)."""
    out = []
    for c in spec.get("containers") or []:
        for p in c.get("ports") or []:
            port = p.get("hostPort") or (p.get("containerPort") if spec.get("hostNetwork") else 0)
            if port:
                out.append((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", int(port)))
    return out


def _ports_clash(a: tuple[str, str, int], b: tuple[str, str, int]) -> bool:
    return a[1:] == b[1:] and (a[0] == b[0] or "0.0.0.0" in (a[0], b[0]))


def _selects(sel: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A label selector (matchLabels ANDed with matchExpressions); a null one selects nothing."""
    if sel is None:
        return False
    if any(labels.get(k) != v for k, v in (sel.get("matchLabels") or {}).items()):
        return False
    return all(_expression(e, labels) for e in sel.get("matchExpressions") or [])


class Replay:
    """The cluster the replay builds: Nodes and the pods bound so far."""

    def __init__(self, nodes: Iterable[Mapping[str, Any]]) -> None:
        self.nodes = {n["metadata"]["name"]: n for n in nodes}
        self.bound: dict[str, list[Mapping[str, Any]]] = {n: [] for n in self.nodes}
        self.used: dict[str, Counter[str]] = {n: Counter() for n in self.nodes}

    def labels(self, node: str) -> Mapping[str, str]:
        return self.nodes[node]["metadata"].get("labels") or {}

    def _domain(self, node: str, key: str) -> str | None:
        return self.labels(node).get(key)

    def _in(self, pod: Mapping[str, Any], term: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
        """Whether pod ``other`` is in the namespaces of ``pod``'s term and matches its selector."""
        ns = term.get("namespaces") or [pod["metadata"].get("namespace", "default")]
        if term.get("namespaceSelector") == {}:
            ns = None
        return (ns is None or other["metadata"].get("namespace", "default") in ns) and _selects(
            term.get("labelSelector"), other["metadata"].get("labels") or {})

    def _pods_in(self, node: str, key: str) -> list[Mapping[str, Any]]:
        d = self._domain(node, key)
        if d is None:
            return []
        return [p for n, ps in self.bound.items() if self._domain(n, key) == d for p in ps]

    def failures(self, pod: Mapping[str, Any]) -> list[str]:
        """The filters binding ``pod`` to its node now fails (empty: it binds)."""
        spec, name = pod["spec"], pod["metadata"]["name"]
        node = spec.get("nodeName")
        if node not in self.nodes:
            return [f"{name}: bound to {node!r}, which is no Node written"]
        n = self.nodes[node]
        out = []
        alloc = {k: quantity(v) for k, v in (n.get("status") or {}).get("allocatable", {}).items()}
        for r, q in pod_request(spec).items():
            if self.used[node][r] + q > alloc.get(r, Fraction(0)):
                out.append(f"NodeResourcesFit: {name} on {node}: {r} {self.used[node][r] + q} > "
                           f"allocatable {alloc.get(r, 0)}")
        if len(self.bound[node]) + 1 > alloc.get("pods", Fraction(0)):
            out.append(f"NodeResourcesFit: {name} on {node}: pod {len(self.bound[node]) + 1} > "
                       f"allocatable pods {alloc.get('pods', 0)}")
        mine = host_ports(spec)
        for other in self.bound[node]:
            if any(_ports_clash(a, b) for a in mine for b in host_ports(other["spec"])):
                out.append(f"NodePorts: {name} and {other['metadata']['name']} on {node} take the "
                           "same host port")
        if not affinity_admits(spec, self.labels(node)):
            out.append(f"NodeAffinity: {node} does not match {name}'s node selection")
        if not taints_admit(spec, n):
            out.append(f"TaintToleration: {name} does not tolerate a taint of {node}")
        out += self._spread(pod, node)
        out += self._inter_pod(pod, node)
        return out

    def _spread(self, pod: Mapping[str, Any], node: str) -> list[str]:
        out = []
        spec = pod["spec"]
        for c in spec.get("topologySpreadConstraints") or []:
            if (c.get("whenUnsatisfiable") or "DoNotSchedule") != "DoNotSchedule":
                continue
            key, skew = c["topologyKey"], int(c["maxSkew"])
            if self._domain(node, key) is None:
                out.append(f"PodTopologySpread: {node} has no label {key}")
                continue
            counts: Counter[str] = Counter()
            for n in self.nodes:
                d = self._domain(n, key)
                if d is None or not affinity_admits(spec, self.labels(n)):
                    continue
                counts[d] += sum(1 for p in self.bound[n] if self._same_ns(p, pod) and _selects(
                    c.get("labelSelector"), p["metadata"].get("labels") or {}))
            mine = self._domain(node, key)
            self_match = _selects(c.get("labelSelector"), pod["metadata"].get("labels") or {})
            if counts[mine] + int(self_match) - min(counts.values()) > skew:
                out.append(f"PodTopologySpread: {pod['metadata']['name']} on {node}: {key}={mine} "
                           f"would have {counts[mine] + 1}, the minimum is {min(counts.values())}, "
                           f"maxSkew {skew}")
        return out

    @staticmethod
    def _same_ns(p: Mapping[str, Any], q: Mapping[str, Any]) -> bool:
        return p["metadata"].get("namespace", "default") == q["metadata"].get("namespace", "default")

    def _inter_pod(self, pod: Mapping[str, Any], node: str) -> list[str]:
        out = []
        aff = pod["spec"].get("affinity") or {}
        name = pod["metadata"]["name"]
        for t in ((aff.get("podAntiAffinity") or {})
                  .get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            hit = [p for p in self._pods_in(node, t["topologyKey"]) if self._in(pod, t, p)]
            if hit:
                out.append(f"InterPodAffinity: {name} on {node}: anti-affinity with "
                           f"{hit[0]['metadata']['name']} in {t['topologyKey']}")
        for t in ((aff.get("podAffinity") or {})
                  .get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            near = [p for p in self._pods_in(node, t["topologyKey"]) if self._in(pod, t, p)]
            anywhere = [p for ps in self.bound.values() for p in ps if self._in(pod, t, p)]
            if not near and (anywhere or not self._in(pod, t, pod)):
                out.append(f"InterPodAffinity: {name} on {node}: no pod its affinity needs in "
                           f"{t['topologyKey']}")
        for n, ps in self.bound.items():  # the anti-affinity of pods already bound
            for p in ps:
                for t in (((p["spec"].get("affinity") or {}).get("podAntiAffinity") or {})
                          .get("requiredDuringSchedulingIgnoredDuringExecution") or []):
                    d = self._domain(node, t["topologyKey"])
                    if d is not None and self._domain(n, t["topologyKey"]) == d and self._in(
                            p, t, pod):
                        out.append(f"InterPodAffinity: {name} on {node}: {p['metadata']['name']}"
                                   f"'s anti-affinity in {t['topologyKey']}")
        return out

    def bind(self, pod: Mapping[str, Any]) -> None:
        node = pod["spec"]["nodeName"]
        self.bound[node].append(pod)
        for r, q in pod_request(pod["spec"]).items():
            self.used[node][r] += q

    def load(self, pod: Mapping[str, Any]) -> int:
        """Pods the pod's spreads count in its node's domains now (the replay binds low first)."""
        node = pod["spec"]["nodeName"]
        total = 0
        for c in pod["spec"].get("topologySpreadConstraints") or []:
            total += sum(1 for p in self._pods_in(node, c["topologyKey"]) if self._same_ns(p, pod)
                         and _selects(c.get("labelSelector"), p["metadata"].get("labels") or {}))
        return total


def replay(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    """Bind every Pod of ``objects`` to its node through the filters; the failures (empty: all bound).

    Args:
        objects: Namespaces, Nodes and Pods, as written by ``--k8s-out``.
    """
    nodes = [o for o in objects if o["kind"] == "Node"]
    pods = [o for o in objects if o["kind"] == "Pod"]
    spaces = {o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"} | {"default"}
    out = [f"{p['metadata']['name']}: namespace {p['metadata'].get('namespace')} is not written"
           for p in pods if p["metadata"].get("namespace", "default") not in spaces]
    names = Counter((p["metadata"].get("namespace", "default"), p["metadata"]["name"]) for p in pods)
    out += [f"pod {k} is written {v} times" for k, v in names.items() if v > 1]
    cluster = Replay(nodes)
    left = list(pods)
    while left:
        left.sort(key=cluster.load)  # stable: the written order among equals
        for i, p in enumerate(left):
            if not cluster.failures(p):
                cluster.bind(p)
                del left[i]
                break
        else:
            return out + cluster.failures(left[0])
    return out


__all__ = ["affinity_admits", "pod_request", "quantity", "replay", "taints_admit"]
