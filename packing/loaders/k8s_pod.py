"""One Kubernetes object into a :class:`Workload`: the pod's request, node selection and rules.

The rules, and where each comes from, are in :mod:`packing.loaders.k8s`'s docstring. Every
problem names the file, the object (``kind/name``) and the field.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from packing.errors import Problem
from packing.model.quantity import GIB, parse_quantity, resource_name_problem, unit_problem
from packing.model.selection import (
    NODE_OPERATORS,
    Labels,
    Requirement,
    Term,
    Toleration,
    labels_of,
    requirement_problem,
    toleration_problem,
)

HOSTNAME = "kubernetes.io/hostname"
"""The topology key of a per-host rule."""
REPLICATED = ("Deployment", "StatefulSet", "ReplicaSet", "ReplicationController")
"""Kinds whose pod count is ``spec.replicas``."""
WORKLOADS = (*REPLICATED, "Job", "Pod", "DaemonSet")
"""Kinds that give pods."""
GPU_KEYS = ("nvidia.com/gpu", "amd.com/gpu")
"""Extended resources read as whole GPU cards."""


AntiTerm = tuple[tuple[Requirement, ...], tuple[str, ...] | None, str, str]
"""A required pod anti-affinity term: ``(selector, namespaces, topology key, field)``."""
SpreadTerm = tuple[str, int, tuple[Requirement, ...] | None, str]
"""A ``DoNotSchedule`` spread constraint: ``(topology key, maxSkew, selector, field)``."""
HostPort = tuple[str, str, int]
"""A host port a pod takes: ``(hostIP, protocol, port)``, ``0.0.0.0`` and ``TCP`` when not given."""


def ports_conflict(a: HostPort, b: HostPort) -> bool:
    """Whether two host ports cannot be on one node (the NodePorts filter).

    The same protocol and port, and the same host IP or either of them ``0.0.0.0`` (every
    address): ``HostPortInfo.CheckConflict`` in ``pkg/scheduler/framework/types.go``
    (https://kubernetes.io/docs/concepts/scheduling-eviction/kube-scheduler/, filter NodePorts).
    """
    return a[1:] == b[1:] and (a[0] == b[0] or "0.0.0.0" in (a[0], b[0]))


@dataclass(frozen=True)
class Workload:
    """One workload object read from a manifest.

    Attributes:
        kind: ``Deployment``, ``Pod``, ``DaemonSet``, ...
        namespace: ``metadata.namespace`` (``default`` when absent).
        name: ``metadata.name``.
        source: the file it came from.
        pods: pods it runs (after ``scale``; 1 for a DaemonSet, per host).
        request: the pod's request ``(cpu cores, memory GiB, gpu cards)``.
        labels: the pod labels.
        node_selector: ``nodeSelector`` as sorted pairs.
        node_affinity: required node affinity terms (``None``: none).
        tolerations: the pod's tolerations.
        anti: required anti-affinity terms ``(selector, namespaces, topology key, field)``, where
            the selector is a tuple of requirements and namespaces ``None`` means every namespace.
        spreads: ``topologySpreadConstraints`` with ``DoNotSchedule``:
            ``(topology key, maxSkew, selector, field)`` (selector ``None``: null, matching no pod).
        gpu_key: the GPU resource the pod asks for (``nvidia.com/gpu``, ...), or ``None``.
        template: the pod template as read: ``{"metadata": ..., "spec": ...}`` (a Pod's own
            metadata and spec), for writing the pods back out (:mod:`packing.plan.k8s_out`).
        other: the pod's request of every other resource (``ephemeral-storage``,
            ``hugepages-*`` in bytes, extended resources in units), rounded up, sorted pairs.
        ports: the host ports the pod takes (:data:`HostPort`).
    """

    kind: str
    namespace: str
    name: str
    source: str
    pods: int
    request: tuple[float, float, int]
    labels: Labels = ()
    node_selector: Labels = ()
    node_affinity: tuple[Term, ...] | None = None
    tolerations: tuple[Toleration, ...] = ()
    anti: tuple[AntiTerm, ...] = ()
    gpu_key: str | None = None
    spreads: tuple[SpreadTerm, ...] = ()
    template: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    other: tuple[tuple[str, int], ...] = ()
    ports: tuple[HostPort, ...] = ()

    @property
    def best_effort(self) -> bool:
        """Whether the pod requests nothing (QoS class BestEffort): it takes only a pod slot."""
        return not any(self.request) and not any(v for _, v in self.other)

    @property
    def key(self) -> str:
        """``<kind>/<namespace>/<name>``, unique among the objects read."""
        return f"{self.kind}/{self.namespace}/{self.name}"


# ------------------------------------------------------------------------------------------------
# one object
class ObjectReader:
    """Reads the fields of one object, naming ``kind/name`` and the field in every problem."""

    def __init__(self, src: str, doc: Mapping[str, Any], problems: list[Problem],
                 ignored: list[str], ignore_topology: bool) -> None:
        self.src = src
        self.doc = doc
        self.kind = str(doc.get("kind"))
        meta = doc.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        name = meta.get("name")
        self.name: str = name if isinstance(name, str) else ""
        ns = meta.get("namespace")
        self.namespace = ns if isinstance(ns, str) and ns else "default"
        self.problems = problems
        self.ignored = ignored
        self.ignore_topology = ignore_topology
        self.n_problems = len(problems)

    @property
    def ident(self) -> str:
        """``kind/name`` of the object."""
        return f"{self.kind}/{self.name or '?'}"

    def bad(self, fld: str, reason: str) -> None:
        """Record a problem in field ``fld``."""
        self.problems.append(Problem(self.src, f"{self.ident}: {fld}", reason))

    @property
    def failed(self) -> bool:
        """Whether a problem was recorded for this object."""
        return len(self.problems) > self.n_problems

    def unsupported(self, fld: str, what: str) -> None:
        """A rule vbp does not model: refused, or listed as ignored with ``ignore_topology``."""
        if self.ignore_topology:
            self.ignored.append(f"{self.src}: {self.ident}: {fld}: {what} (ignored)")
        else:
            self.bad(fld, f"{what} is not supported (pass --ignore-topology to plan without it)")

    def soft(self, fld: str, what: str) -> None:
        """List a soft term (a preference) as ignored."""
        self.ignored.append(f"{self.src}: {self.ident}: {fld}: {what}")

    def mapping(self, v: Any, fld: str) -> Mapping[str, Any]:
        """``v`` as a mapping (``{}`` when null; a problem when not a mapping)."""
        if v is None:
            return {}
        if not isinstance(v, Mapping):
            self.bad(fld, f"expected a mapping, got {type(v).__name__}")
            return {}
        return v

    def seq(self, v: Any, fld: str) -> list[Any]:
        """``v`` as a list (``[]`` when null; a problem when not a list)."""
        if v is None:
            return []
        if not isinstance(v, list):
            self.bad(fld, f"expected a list, got {type(v).__name__}")
            return []
        return v

    def count(self, v: Any, fld: str, default: int) -> int:
        """A whole number >= 0, ``default`` when null."""
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            self.bad(fld, f"expected a whole number >= 0, got {v!r}")
            return 0
        return v

    def strings(self, v: Any, fld: str) -> Labels:
        """A string-to-string map (labels, a node selector) as sorted pairs."""
        m = self.mapping(v, fld)
        for k, x in m.items():
            if not isinstance(k, str) or not isinstance(x, str):
                self.bad(f"{fld}.{k}", "labels and selectors map strings to strings (quote "
                         "numbers and booleans)")
                return ()
        return labels_of(m)


# ------------------------------------------------------------------------------------------------
# requests
RESOURCE_FIELDS = ("limits", "requests", "claims")
"""The fields of a ``resources`` block (``ResourceRequirements`` of ``k8s.io/api/core/v1``)."""


def _resources(o: ObjectReader, v: Any, fld: str) -> Mapping[str, Any]:
    """A ``resources`` block; a field it cannot have (``request:``) is a problem, not a zero."""
    res = o.mapping(v, fld)
    for k in res:
        if k not in RESOURCE_FIELDS:
            o.bad(f"{fld}.{k}", "unknown field; resources has limits, requests and claims")
    return res


CONTAINER_FIELDS = frozenset((
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources",
    "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices",
    "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
    "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"))
"""The fields of a ``Container`` (``k8s.io/api/core/v1``); an unknown one that is close to a field vbp
reads (``resource:``, ``Resources:``) is refused, as ``kubectl apply`` refuses unknown fields
(server-side field validation, KEP-2885, strict by default); others may be newer API fields."""

READ_FIELDS = ("resources", "restartPolicy")
"""The container fields vbp reads."""


def _misspelt(o: ObjectReader, c: Mapping[str, Any], fld: str) -> None:
    """A container key that is no field of a container but close to one vbp reads is a problem."""
    for k in c:
        if k in RESOURCE_FIELDS:
            o.bad(f"{fld}.{k}", f"unknown field; {k} belongs under resources ({fld}.resources.{k})")
        elif isinstance(k, str) and k not in CONTAINER_FIELDS:
            near = difflib.get_close_matches(k, READ_FIELDS, n=1, cutoff=0.75) \
                or [f for f in READ_FIELDS if f.lower() == k.lower()]
            if near:
                o.bad(f"{fld}.{k}", f"unknown field; did you mean {near[0]!r}? (a container's requests are "
                      "read from resources)")


def _container_requests(o: ObjectReader, c: Any, fld: str) -> dict[str, Fraction]:
    """One container's requests per resource (requests, or the limit when only that is set).

    As the API server validates a container: resource names are standard or domain-qualified
    (:func:`packing.model.quantity.resource_name_problem`: ``CPU`` or ``cpus`` are refused, not
    read as zero), GPU cards and extended resources are whole, and no request is above its limit;
    a misspelt ``resources`` is refused (:data:`CONTAINER_FIELDS`). A quantity in another
    resource's unit (``cpu: 1Gi``) is refused too.
    """
    c = o.mapping(c, fld)
    _misspelt(o, c, fld)
    res = _resources(o, c.get("resources"), f"{fld}.resources")
    parts: dict[str, dict[str, Fraction]] = {}
    for part in ("limits", "requests"):
        values = o.mapping(res.get(part), f"{fld}.resources.{part}")
        got = parts[part] = {}
        for r, v in values.items():
            f = f"{fld}.resources.{part}.{r}"
            why = resource_name_problem(r)
            if why is not None:
                o.bad(f, why)
                continue
            q = _quantity(o, v, f, str(r))
            if q is not None and r in GPU_KEYS and q.denominator != 1:
                o.bad(f, f"GPU cards are whole, got {v!r}")
            elif q is not None:
                got[str(r)] = q
    for r, q in parts["requests"].items():
        limit = parts["limits"].get(r)
        if limit is not None and q > limit:
            o.bad(f"{fld}.resources.requests.{r}", f"{res['requests'][r]!r} is above the limit "
                  f"{res['limits'][r]!r} (the API server refuses such a container)")
    return {**parts["limits"], **parts["requests"]}  # requests win over limits


def _quantity(o: ObjectReader, v: Any, fld: str, resource: str | None = None) -> Fraction | None:
    try:
        q = parse_quantity(v)
    except ValueError as e:
        o.bad(fld, str(e))
        return None
    if q < 0:
        o.bad(fld, f"must not be negative, got {v!r}")
        return None
    why = unit_problem(resource, v) if resource is not None else None
    if why is not None:
        o.bad(fld, why)
        return None
    return q


def _add(a: dict[str, Fraction], b: Mapping[str, Fraction]) -> dict[str, Fraction]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, Fraction(0)) + v
    return out


def _max(a: dict[str, Fraction], b: Mapping[str, Fraction]) -> dict[str, Fraction]:
    out = dict(a)
    for k, v in b.items():
        out[k] = max(out.get(k, Fraction(0)), v)
    return out


def pod_request(o: ObjectReader, spec: Mapping[str, Any], fld: str) -> dict[str, Fraction]:
    """The pod's effective request per resource name (exact; see the module docstring).

    Args:
        o: the object being read (problems are recorded on it).
        spec: the pod spec.
        fld: the spec's field path (for problems), e.g. ``spec.template.spec``.

    Returns:
        Every resource the pod requests (``cpu``, ``memory``, ``ephemeral-storage``,
        ``nvidia.com/gpu``, ...), as the quantity's exact value (cores, bytes, units).
    """
    containers = o.seq(spec.get("containers"), f"{fld}.containers")
    if not containers and not o.failed:
        o.bad(f"{fld}.containers", "a workload needs at least one container")
    total: dict[str, Fraction] = {}
    for i, c in enumerate(containers):
        total = _add(total, _container_requests(o, c, f"{fld}.containers[{i}]"))
    sidecars: dict[str, Fraction] = {}
    init_need: dict[str, Fraction] = {}
    for i, c in enumerate(o.seq(spec.get("initContainers"), f"{fld}.initContainers")):
        f = f"{fld}.initContainers[{i}]"
        r = _container_requests(o, c, f)
        policy = c.get("restartPolicy") if isinstance(c, Mapping) else None
        if policy == "Always":
            total = _add(total, r)
            sidecars = _add(sidecars, r)
            init_need = _max(init_need, sidecars)
        elif policy is None:
            init_need = _max(init_need, _add(r, sidecars))
        else:
            o.bad(f"{f}.restartPolicy", f"an init container's restartPolicy is Always or absent, "
                  f"got {policy!r}")
    total = _max(total, init_need)
    pod_res = _resources(o, spec.get("resources"), f"{fld}.resources")
    if pod_res:
        preq = o.mapping(pod_res.get("requests"), f"{fld}.resources.requests")
        plim = o.mapping(pod_res.get("limits"), f"{fld}.resources.limits")
        for name in ("cpu", "memory"):
            if name in preq:
                q = _quantity(o, preq[name], f"{fld}.resources.requests.{name}", name)
                if q is not None:
                    total[name] = q
            elif name in plim:
                o.unsupported(f"{fld}.resources.limits.{name}", "a pod-level limit without a "
                              "pod-level request")
    for key, v in o.mapping(spec.get("overhead"), f"{fld}.overhead").items():
        why = resource_name_problem(key)
        if why is not None:
            o.bad(f"{fld}.overhead.{key}", why)
            continue
        q = _quantity(o, v, f"{fld}.overhead.{key}", str(key))
        if q is not None:
            total[str(key)] = total.get(str(key), Fraction(0)) + q
    return total


def _request_vector(total: Mapping[str, Fraction]) -> tuple[float, float, int]:
    """``(cpu cores, memory GiB, gpu cards)``, rounded up as the scheduler reads them."""
    cpu = math.ceil(total.get("cpu", Fraction(0)) * 1000) / 1000
    mem = math.ceil(total.get("memory", Fraction(0))) / GIB
    gpu = sum(math.ceil(total.get(k, Fraction(0))) for k in GPU_KEYS)
    return cpu, mem, gpu


def _other(total: Mapping[str, Fraction]) -> tuple[tuple[str, int], ...]:
    """Every other resource of a request (bytes, units), rounded up as the scheduler reads it."""
    return tuple(sorted((r, math.ceil(q)) for r, q in total.items()
                        if r not in ("cpu", "memory") and r not in GPU_KEYS and q > 0))


PROTOCOLS = ("TCP", "UDP", "SCTP")
"""A container port's protocols (``Protocol`` in ``k8s.io/api/core/v1``)."""


def host_ports(o: ObjectReader, spec: Mapping[str, Any], fld: str) -> tuple[HostPort, ...]:
    """The host ports of a pod's app containers, as the NodePorts filter reads them.

    A container port with ``hostPort`` > 0 (``getContainerPorts`` of
    ``pkg/scheduler/framework/plugins/nodeports/node_ports.go`` reads ``spec.containers``, not
    init containers); with ``hostNetwork: true`` every container port is also a host port (the
    API server defaults ``hostPort`` to ``containerPort``, ``SetDefaults_Pod`` in
    ``pkg/apis/core/v1/defaults.go``). ``protocol`` defaults to TCP, ``hostIP`` to ``0.0.0.0``.
    """
    net = spec.get("hostNetwork") is True
    out: list[HostPort] = []
    for i, c in enumerate(o.seq(spec.get("containers"), f"{fld}.containers")):
        if not isinstance(c, Mapping):
            continue
        for j, p in enumerate(o.seq(c.get("ports"), f"{fld}.containers[{i}].ports")):
            f = f"{fld}.containers[{i}].ports[{j}]"
            p = o.mapping(p, f)
            port = p.get("hostPort", p.get("containerPort") if net else None)
            if port is None or port == 0:
                continue
            proto, ip = p.get("protocol") or "TCP", p.get("hostIP") or "0.0.0.0"
            if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
                o.bad(f"{f}.hostPort", f"expected a port number 1-65535, got {port!r}")
            elif proto not in PROTOCOLS:
                o.bad(f"{f}.protocol", f"expected TCP, UDP or SCTP, got {proto!r}")
            elif not isinstance(ip, str):
                o.bad(f"{f}.hostIP", f"expected an IP address, got {ip!r}")
            elif (ip, proto, port) not in out:
                out.append((ip, proto, port))
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# selection and affinity
def _label_selector(o: ObjectReader, sel: Any, fld: str) -> tuple[Requirement, ...] | None:
    """A pod label selector as requirements (``None``: the selector is null, matching nothing)."""
    if sel is None:
        return None
    s = o.mapping(sel, fld)
    out = [Requirement(k, "In", (v,)) for k, v in o.strings(s.get("matchLabels"),
                                                              f"{fld}.matchLabels")]
    for i, e in enumerate(o.seq(s.get("matchExpressions"), f"{fld}.matchExpressions")):
        r = _requirement(o, e, f"{fld}.matchExpressions[{i}]", ("In", "NotIn", "Exists",
                                                                  "DoesNotExist"))
        if r is not None:
            out.append(r)
    return tuple(out)


def _requirement(o: ObjectReader, e: Any, fld: str, ops: tuple[str, ...]) -> Requirement | None:
    e = o.mapping(e, fld)
    key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
    if not isinstance(key, str) or not key:
        o.bad(f"{fld}.key", "missing or not a string")
        return None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        o.bad(f"{fld}.values", "expected a list of strings (quote numbers)")
        return None
    why = requirement_problem(str(op), tuple(values), tuple(ops))
    if why is not None:
        o.bad(f"{fld}.operator" if "operator must" in why else f"{fld}.values", why)
        return None
    return Requirement(key, op, tuple(values))


def _node_affinity(o: ObjectReader, na: Any, fld: str) -> tuple[Term, ...] | None:
    na = o.mapping(na, fld)
    if na.get("preferredDuringSchedulingIgnoredDuringExecution"):
        o.soft(f"{fld}.preferredDuringSchedulingIgnoredDuringExecution", "a preference")
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is None:
        return None
    f = f"{fld}.requiredDuringSchedulingIgnoredDuringExecution"
    terms: list[Term] = []
    for i, t in enumerate(o.seq(o.mapping(req, f).get("nodeSelectorTerms"),
                                f"{f}.nodeSelectorTerms")):
        tf = f"{f}.nodeSelectorTerms[{i}]"
        t = o.mapping(t, tf)
        if t.get("matchFields"):
            o.unsupported(f"{tf}.matchFields", "node affinity on node fields")
        exprs: list[Requirement] = []
        for j, e in enumerate(o.seq(t.get("matchExpressions"), f"{tf}.matchExpressions")):
            r = _requirement(o, e, f"{tf}.matchExpressions[{j}]", NODE_OPERATORS)
            if r is not None:
                exprs.append(r)
        terms.append(tuple(exprs))
    return tuple(terms)


def _tolerations(o: ObjectReader, v: Any, fld: str) -> tuple[Toleration, ...]:
    out: list[Toleration] = []
    for i, t in enumerate(o.seq(v, fld)):
        f = f"{fld}[{i}]"
        t = o.mapping(t, f)
        key, op = t.get("key") or "", t.get("operator") or "Equal"
        value, effect = t.get("value") or "", t.get("effect") or ""
        if not all(isinstance(x, str) for x in (key, op, value, effect)):
            o.bad(f, "key, operator, value and effect are strings")
            continue
        tol = Toleration(key, op, value, effect)
        why = toleration_problem(tol)
        if why is not None:
            o.bad(f, why)
        else:
            out.append(tol)
    return tuple(out)


def _pod_affinity(o: ObjectReader, aff: Mapping[str, Any], fld: str) -> tuple[AntiTerm, ...]:
    """Required anti-affinity terms; refuses or lists what is not modelled."""
    pa = o.mapping(aff.get("podAffinity"), f"{fld}.podAffinity")
    if pa.get("requiredDuringSchedulingIgnoredDuringExecution"):
        o.unsupported(f"{fld}.podAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                      "required pod affinity")
    if pa.get("preferredDuringSchedulingIgnoredDuringExecution"):
        o.soft(f"{fld}.podAffinity.preferredDuringSchedulingIgnoredDuringExecution",
               "a preference")
    paa = o.mapping(aff.get("podAntiAffinity"), f"{fld}.podAntiAffinity")
    if paa.get("preferredDuringSchedulingIgnoredDuringExecution"):
        o.soft(f"{fld}.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution",
               "a preference")
    out = []
    f = f"{fld}.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    for i, t in enumerate(o.seq(paa.get("requiredDuringSchedulingIgnoredDuringExecution"), f)):
        tf = f"{f}[{i}]"
        t = o.mapping(t, tf)
        key = t.get("topologyKey")
        if not isinstance(key, str) or not key:
            o.bad(f"{tf}.topologyKey", "missing or not a string")
            continue
        if t.get("matchLabelKeys") or t.get("mismatchLabelKeys"):
            o.unsupported(f"{tf}.matchLabelKeys", "matchLabelKeys/mismatchLabelKeys")
            continue
        namespaces: tuple[str, ...] | None = tuple(str(x) for x in o.seq(t.get("namespaces"),
                                                                          f"{tf}.namespaces"))
        nsel = t.get("namespaceSelector")
        if nsel is not None:
            if o.mapping(nsel, f"{tf}.namespaceSelector"):
                o.unsupported(f"{tf}.namespaceSelector", "a namespace selector with labels")
                continue
            namespaces = None
        elif not namespaces:
            namespaces = (o.namespace,)
        sel = _label_selector(o, t.get("labelSelector"), f"{tf}.labelSelector")
        if sel is not None:
            out.append((sel, namespaces, key, tf))
    return tuple(out)


def _spread(o: ObjectReader, spec: Mapping[str, Any], fld: str) -> tuple[SpreadTerm, ...]:
    """``DoNotSchedule`` spread constraints; refuses or lists what is not modelled.

    Supported: ``maxSkew`` >= 1, any ``topologyKey``, a ``labelSelector``, and the defaults of
    ``minDomains`` (1), ``nodeAffinityPolicy`` (``Honor``) and ``nodeTaintsPolicy`` (``Ignore``).
    """
    f = f"{fld}.topologySpreadConstraints"
    out = []
    for i, c in enumerate(o.seq(spec.get("topologySpreadConstraints"), f)):
        cf = f"{f}[{i}]"
        c = o.mapping(c, cf)
        when = c.get("whenUnsatisfiable", "DoNotSchedule")
        if when == "ScheduleAnyway":
            o.soft(cf, "ScheduleAnyway is a preference")
            continue
        if when != "DoNotSchedule":
            o.bad(f"{cf}.whenUnsatisfiable", f"expected DoNotSchedule or ScheduleAnyway, "
                  f"got {when!r}")
            continue
        key = c.get("topologyKey")
        if not isinstance(key, str) or not key:
            o.bad(f"{cf}.topologyKey", "missing or not a string")
            continue
        skew = c.get("maxSkew")
        if isinstance(skew, bool) or not isinstance(skew, int) or skew < 1:
            o.bad(f"{cf}.maxSkew", f"expected a whole number of at least 1, got {skew!r}")
            continue
        refused = [(name, what) for name, default, what in (
            ("minDomains", 1, "minDomains above 1"),
            ("nodeAffinityPolicy", "Honor", "nodeAffinityPolicy other than Honor"),
            ("nodeTaintsPolicy", "Ignore", "nodeTaintsPolicy other than Ignore"))
            if c.get(name) is not None and c.get(name) != default]
        if c.get("matchLabelKeys"):
            refused.append(("matchLabelKeys", "matchLabelKeys"))
        for name, what in refused:
            o.unsupported(f"{cf}.{name}", f"a topology spread constraint with {what}")
        if refused:
            continue
        out.append((key, int(skew), _label_selector(o, c.get("labelSelector"),
                                                    f"{cf}.labelSelector"), cf))
    return tuple(out)


# ------------------------------------------------------------------------------------------------
def read_workload(o: ObjectReader, scale: Fraction) -> Workload | None:
    """Read one workload object (or ``None`` when it has problems)."""
    doc = o.doc
    if not o.name:
        o.bad("metadata.name", "missing or not a string")
    spec = o.mapping(doc.get("spec"), "spec")
    if o.kind == "Pod":
        pod_meta = o.mapping(doc.get("metadata"), "metadata")
        pod_spec, fld, pods = spec, "spec", 1
    else:
        tmpl = o.mapping(spec.get("template"), "spec.template")
        pod_meta = o.mapping(tmpl.get("metadata"), "spec.template.metadata")
        pod_spec = o.mapping(tmpl.get("spec"), "spec.template.spec")
        fld = "spec.template.spec"
        if o.kind == "Job":
            pods = o.count(spec.get("parallelism"), "spec.parallelism", 1)
            if spec.get("completions") is not None:
                pods = min(pods, o.count(spec.get("completions"), "spec.completions", 1))
        elif o.kind == "DaemonSet":
            pods = 1
        else:
            pods = o.count(spec.get("replicas"), "spec.replicas", 1)
    if o.kind != "DaemonSet":
        pods = math.ceil(pods * scale)
    total = pod_request(o, pod_spec, fld)
    labels = o.strings(pod_meta.get("labels"), "metadata.labels" if o.kind == "Pod"
                       else "spec.template.metadata.labels")
    node_selector = o.strings(pod_spec.get("nodeSelector"), f"{fld}.nodeSelector")
    aff = o.mapping(pod_spec.get("affinity"), f"{fld}.affinity")
    node_aff = _node_affinity(o, aff.get("nodeAffinity"), f"{fld}.affinity.nodeAffinity")
    anti = _pod_affinity(o, aff, f"{fld}.affinity")
    spreads = _spread(o, pod_spec, fld)
    if pod_spec.get("runtimeClassName") and not pod_spec.get("overhead"):
        o.soft(f"{fld}.runtimeClassName", "the RuntimeClass's pod overhead is unknown here "
               "(write it as spec.overhead to plan for it)")
    if pod_spec.get("nodeName"):
        o.soft(f"{fld}.nodeName", "a pod bound to a named node (planned as any other pod)")
    tols = _tolerations(o, pod_spec.get("tolerations"), f"{fld}.tolerations")
    ports = host_ports(o, pod_spec, fld)
    if o.failed:
        return None
    keys = [k for k in GPU_KEYS if total.get(k)]
    if len(keys) > 1:
        o.bad(fld, "asks for both nvidia.com/gpu and amd.com/gpu; vbp models one kind of GPU card")
        return None
    cpu, mem, gpu = _request_vector(total)
    return Workload(o.kind, o.namespace, o.name, o.src, pods, (cpu, mem, gpu), labels,
                    node_selector, node_aff, tols, anti, keys[0] if keys else None, spreads,
                    {"metadata": dict(pod_meta), "spec": dict(pod_spec)}, _other(total), ports)


label_selector = _label_selector
"""A pod label selector as requirements (``None``: a null selector); public for the snapshot reader."""
