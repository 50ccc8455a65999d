"""Node selection: host labels and taints, app node selectors, node affinity and tolerations.

The rules follow the Kubernetes scheduler's filters (reference pages: "Assigning Pods to Nodes",
https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/, and "Taints and
Tolerations", https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/;
sources: ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go``,
``k8s.io/apimachinery/pkg/labels/selector.go``, ``k8s.io/api/core/v1/toleration.go`` and
``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go``):

* ``node_selector`` (``spec.nodeSelector``): every ``key: value`` must be a label of the host.
* ``node_affinity`` (``requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms``): the
  terms are ORed, the expressions of one term ANDed. An empty term, or an empty list of terms,
  matches no host ("nil or empty term matches no objects", ``nodeaffinity.go``). ``None`` means
  no required node affinity. Operators: ``In``, ``NotIn`` (also true when the label is absent),
  ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt`` (the label value and the one given value are read as
  integers; a label that is absent or not an integer does not match).
* Both the selector and the affinity must hold.
* Taints with effect ``NoSchedule`` or ``NoExecute`` keep an app off a host unless one of its
  tolerations tolerates them; ``PreferNoSchedule`` is a preference and never forbids.
  A toleration tolerates a taint when its effect is empty or equal to the taint's, and either its
  operator is ``Exists`` and its key is empty (every taint) or equal to the taint's key, or its
  operator is ``Equal`` and key and value are equal to the taint's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
"""Operators of a node selector requirement."""
LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
"""Operators of a label selector requirement (pod selectors)."""
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
"""Taint effects; only ``NoSchedule`` and ``NoExecute`` forbid placement."""
BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")
"""The taint effects that keep an untolerating app off a host."""
TOLERATION_OPERATORS = ("Equal", "Exists")
"""Operators of a toleration."""

_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class Requirement:
    """One expression: ``key operator values`` (``values`` empty for Exists/DoesNotExist)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Taint:
    """A host taint ``key=value:effect``."""

    key: str
    value: str = ""
    effect: str = "NoSchedule"


@dataclass(frozen=True)
class Toleration:
    """An app toleration.

    An empty ``key`` with ``Exists`` tolerates every taint; an empty ``effect`` every effect.
    """

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""


Labels = tuple[tuple[str, str], ...]
"""A label map as sorted ``(key, value)`` pairs (hashable, immutable)."""
Term = tuple[Requirement, ...]
"""A node selector term: requirements that must all hold."""


def labels_of(mapping: Mapping[str, str] | Iterable[tuple[str, str]] | None) -> Labels:
    """A label map as sorted pairs (the form host types and apps store)."""
    if mapping is None:
        return ()
    items = mapping.items() if isinstance(mapping, Mapping) else mapping
    return tuple(sorted((str(k), str(v)) for k, v in items))


def requirement_holds(req: Requirement, labels: Mapping[str, str]) -> bool:
    """Whether one requirement holds for a label map (node or pod labels)."""
    present = req.key in labels
    op = req.operator
    if op == "In":
        return present and labels[req.key] in req.values
    if op == "NotIn":
        return not present or labels[req.key] not in req.values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(req.values) != 1:
            return False
        have, want = labels[req.key], req.values[0]
        if not _INTEGER.fullmatch(have) or not _INTEGER.fullmatch(want):
            return False
        return int(have) > int(want) if op == "Gt" else int(have) < int(want)
    raise ValueError(f"unknown operator {op!r}")


def term_holds(term: Term, labels: Mapping[str, str]) -> bool:
    """Whether a node selector term holds: every requirement holds; an empty term never does."""
    return bool(term) and all(requirement_holds(r, labels) for r in term)


def node_selection_holds(node_selector: Labels, node_affinity: tuple[Term, ...] | None,
                         labels: Mapping[str, str]) -> bool:
    """Whether a host with ``labels`` passes a node selector and the required node affinity."""
    if any(labels.get(k) != v for k, v in node_selector):
        return False
    return node_affinity is None or any(term_holds(t, labels) for t in node_affinity)


def tolerates(tol: Toleration, taint: Taint) -> bool:
    """Whether one toleration tolerates one taint."""
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.operator == "Exists":
        return not tol.key or tol.key == taint.key
    return tol.key == taint.key and tol.value == taint.value


def taints_tolerated(taints: Iterable[Taint], tolerations: Iterable[Toleration]) -> bool:
    """Whether every blocking taint (NoSchedule/NoExecute) is tolerated by some toleration."""
    tols = tuple(tolerations)
    return all(any(tolerates(t, x) for t in tols) for x in taints if x.effect in BLOCKING_EFFECTS)


def allowed(node_selector: Labels, node_affinity: tuple[Term, ...] | None,
            tolerations: Iterable[Toleration], labels: Labels, taints: Iterable[Taint]) -> bool:
    """Whether an app (selector, affinity, tolerations) may run on a host type (labels, taints)."""
    return (node_selection_holds(node_selector, node_affinity, dict(labels))
            and taints_tolerated(taints, tolerations))


def requirement_problem(operator: str, values: tuple[str, ...],
                        operators: tuple[str, ...] = NODE_OPERATORS) -> str | None:
    """Why ``operator values`` is not a valid requirement (``None``: it is)."""
    if operator not in operators:
        return f"operator must be one of {', '.join(operators)}, got {operator!r}"
    if operator in ("In", "NotIn") and not values:
        return f"{operator} needs at least one value"
    if operator in ("Exists", "DoesNotExist") and values:
        return f"{operator} takes no values"
    if operator in ("Gt", "Lt") and (len(values) != 1 or not _INTEGER.fullmatch(values[0])):
        return f"{operator} takes one integer value"
    return None


def toleration_problem(tol: Toleration) -> str | None:
    """Why a toleration is invalid (``None``: it is valid)."""
    if tol.operator not in TOLERATION_OPERATORS:
        return f"operator must be Equal or Exists, got {tol.operator!r}"
    if tol.effect and tol.effect not in TAINT_EFFECTS:
        return f"effect must be empty or one of {', '.join(TAINT_EFFECTS)}, got {tol.effect!r}"
    if not tol.key and tol.operator != "Exists":
        return "an empty key needs operator Exists"
    if tol.operator == "Exists" and tol.value:
        return "operator Exists takes no value"
    return None


def taint_problem(taint: Taint) -> str | None:
    """Why a taint is invalid (``None``: it is valid)."""
    if not taint.key:
        return "a taint needs a key"
    if taint.effect not in TAINT_EFFECTS:
        return f"effect must be one of {', '.join(TAINT_EFFECTS)}, got {taint.effect!r}"
    return None


def reasons(node_selector: Labels, node_affinity: tuple[Term, ...] | None,
            tolerations: Iterable[Toleration], labels: Labels,
            taints: Iterable[Taint]) -> list[str]:
    """Why an app may not run on a host type, one phrase per cause (empty: it may)."""
    lab = dict(labels)
    out = [f"node selector {k}={v} not matched" for k, v in node_selector if lab.get(k) != v]
    if node_affinity is not None and not any(term_holds(t, lab) for t in node_affinity):
        out.append("no required node affinity term matches")
    tols = tuple(tolerations)
    out += [f"taint {x.key}={x.value}:{x.effect} not tolerated" for x in taints
            if x.effect in BLOCKING_EFFECTS and not any(tolerates(t, x) for t in tols)]
    return out


__all__ = [
    "BLOCKING_EFFECTS", "LABEL_OPERATORS", "NODE_OPERATORS", "TAINT_EFFECTS",
    "TOLERATION_OPERATORS", "Labels", "Requirement", "Taint", "Term", "Toleration", "allowed",
    "labels_of", "node_selection_holds", "reasons", "requirement_holds", "requirement_problem",
    "taint_problem", "taints_tolerated", "term_holds", "toleration_problem",
    "tolerates",
]
