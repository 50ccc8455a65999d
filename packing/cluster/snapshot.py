"""A running Kubernetes cluster as plain data: nodes, the pods on them, PodDisruptionBudgets.

What ``kubectl get nodes,pods,pdb -A -o yaml`` prints, reduced to what placement needs
(:mod:`packing.loaders.snapshot` reads it). Every amount is exact, in the *base units* of its
resource, as the scheduler reads it (``Quantity.MilliValue`` for CPU, ``Quantity.Value`` for the
rest, both rounded up): CPU in millicores; memory, ``ephemeral-storage`` and ``hugepages-*`` in
bytes; ``pods`` in pods (each pod asks for 1, a node offers its allocatable ``pods``); GPU cards
(``nvidia.com/gpu`` or ``amd.com/gpu``, resource ``gpu``); any other extended resource in its
own whole units. :data:`UNIT` converts base units to vbp's units (cores, GiB, counts).

Resource names follow Kubernetes, except the GPU cards, which are ``gpu`` as in the manifest
reader (:mod:`packing.loaders.k8s`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from packing.model.quantity import GIB
from packing.model.selection import Labels, Requirement, Taint, Term, Toleration

BYTE_RESOURCES = ("memory", "ephemeral-storage")
"""Resources counted in bytes (besides every ``hugepages-<size>``)."""
BASE_RESOURCES = ("cpu", "memory", "pods")
"""The resources every snapshot has, first and in this order; others follow sorted."""
TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type",
               "vbp.io/host-type")
"""Node labels read, in order, for a node's type when no label is named (the last one is what
``vbp plan --k8s-out`` writes)."""


def unit(resource: str) -> Fraction:
    """Vbp's unit of one base unit of ``resource``: 1/1000 core, 1/2**30 GiB, or 1."""
    if resource == "cpu":
        return Fraction(1, 1000)
    if resource in BYTE_RESOURCES or resource.startswith("hugepages-"):
        return Fraction(1, GIB)
    return Fraction(1)


def to_units(resource: str, base: int) -> float:
    """A base-unit amount in vbp's units (cores, GiB, counts), as a float."""
    return float(base * unit(resource))


def show(resource: str, base: int) -> str:
    """A base-unit amount for people: ``1500m``, ``2Gi``, ``3``."""
    if resource == "cpu":
        return f"{base}m" if base % 1000 else f"{base // 1000}"
    if unit(resource) != 1:
        for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if base and base % size == 0:
                return f"{base // size}{suffix}"
    return str(base)


@dataclass(frozen=True)
class Node:
    """A node of the snapshot.

    Attributes:
        name: ``metadata.name``.
        type: its instance type (the type label's value; ``""`` when the node has none).
        allocatable: ``status.allocatable`` per resource, base units.
        labels: ``metadata.labels``.
        taints: ``spec.taints``.
        unschedulable: ``spec.unschedulable`` (cordoned): no new pod goes there.
        ready: its ``Ready`` condition is ``True``.
        source: the file it was read from.
    """

    name: str
    type: str
    allocatable: Mapping[str, int]
    labels: Labels = ()
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    ready: bool = True
    source: str = ""


class Namespaced:
    """An object of a namespace: its ``key`` is ``namespace/name``."""

    namespace: str
    name: str

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Pod(Namespaced):
    """A pod of the snapshot that holds (or will hold) resources: Running, Pending or Unknown.

    Attributes:
        namespace: ``metadata.namespace``.
        name: ``metadata.name``.
        node: ``spec.nodeName``, or ``None`` (Pending: demand to place).
        phase: ``status.phase``.
        ready: its ``Ready`` condition is ``True`` (counted healthy by disruption budgets).
        controller: its controller as ``Kind/namespace/name`` (a ReplicaSet's Deployment when the
            pod carries ``pod-template-hash``), or ``None``.
        daemon: a DaemonSet's pod (it stays with its node and goes with it).
        request: what the scheduler counts, base units per resource (``pods`` is 1).
        labels: ``metadata.labels``.
        node_selector: ``spec.nodeSelector``.
        node_affinity: required node affinity terms (``None``: none).
        tolerations: ``spec.tolerations``.
        anti: required pod anti-affinity terms ``(selector, namespaces, topology key, field)``
            (:data:`packing.loaders.k8s_pod.AntiTerm`).
        pinned: why the pod cannot move (``None``: it can).
        source: the file it was read from.
    """

    namespace: str
    name: str
    node: str | None
    phase: str
    ready: bool
    controller: str | None
    daemon: bool
    request: Mapping[str, int]
    labels: Labels = ()
    node_selector: Labels = ()
    node_affinity: tuple[Term, ...] | None = None
    tolerations: tuple[Toleration, ...] = ()
    anti: tuple[Any, ...] = ()
    pinned: str | None = None
    source: str = ""
    template: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """``{"metadata": {"labels", "annotations"}, "spec"}`` as read (``spec.nodeName`` dropped):
    the pod as ``vbp plan --k8s-out`` writes it back."""


@dataclass(frozen=True)
class Budget(Namespaced):
    """A PodDisruptionBudget.

    Attributes:
        namespace: ``metadata.namespace``.
        name: ``metadata.name``.
        selector: ``spec.selector`` as requirements (``None``: null, selecting no pod; ``()``:
            empty, selecting every pod of the namespace).
        min_available: ``spec.minAvailable`` (a number or ``"50%"``), or ``None``.
        max_unavailable: ``spec.maxUnavailable``, or ``None``.
        source: the file it was read from.
    """

    namespace: str
    name: str
    selector: tuple[Requirement, ...] | None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    source: str = ""


@dataclass(frozen=True)
class Snapshot:
    """A cluster as ``kubectl get nodes,pods,pdb -A`` shows it.

    Attributes:
        nodes: the nodes, in file order.
        pods: the pods that hold resources (Running, Pending, Unknown), in file order.
        budgets: the PodDisruptionBudgets.
        resources: the resources: :data:`BASE_RESOURCES`, then every other resource a pod asks
            for, sorted.
        finished: pods Succeeded or Failed (they hold nothing).
        kinds: objects read per kind.
        skipped: objects of other kinds, per kind (a Service, a Deployment, ...).
        ignored: what was read and is not modelled, one line each.
        sources: the files read.
        type_label: the node label read for the node types.
    """

    nodes: tuple[Node, ...]
    pods: tuple[Pod, ...]
    budgets: tuple[Budget, ...] = ()
    resources: tuple[str, ...] = BASE_RESOURCES
    finished: int = 0
    kinds: Mapping[str, int] = field(default_factory=dict)
    skipped: Mapping[str, int] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    type_label: str = TYPE_LABELS[0]

    def node_index(self) -> dict[str, int]:
        """Node name -> index in :attr:`nodes`."""
        return {n.name: i for i, n in enumerate(self.nodes)}


__all__ = ["BASE_RESOURCES", "BYTE_RESOURCES", "TYPE_LABELS", "Budget", "Namespaced", "Node", "Pod",
           "Snapshot", "show", "to_units", "unit"]
