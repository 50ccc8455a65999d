"""PodDisruptionBudgets: which pods a budget covers and how many it lets go at once.

The arithmetic is the disruption controller's (``pkg/controller/disruption/disruption.go`` in
kubernetes/kubernetes, ``getExpectedPodCount`` and ``updatePdbStatus``; the page
https://kubernetes.io/docs/tasks/run-application/configure-pdb/ describes the rounding):

* the budget covers the pods of its namespace its ``selector`` matches (a null selector matches
  none, an empty one every pod of the namespace: ``PodDisruptionBudgetSpec``, policy/v1);
* ``maxUnavailable`` (a number or a percentage of the expected pods, rounded up): the desired
  healthy pods are ``expected - maxUnavailable`` (at least 0);
* ``minAvailable`` as a number: that many pods desired healthy, the expected pods are the pods
  covered; as a percentage: that share of the expected pods, rounded up;
* the expected pods are the scale of the controllers of the covered pods; a snapshot has no
  controller objects, so vbp counts the covered pods that have a controller;
* healthy pods are the covered pods whose ``Ready`` condition is true; the disruptions allowed
  are ``healthy - desired``, and 0 when that is negative or nothing is expected.

An eviction is refused when it would take a budget below its desired healthy pods, so at most
:func:`allowed` covered pods may be down at once (:mod:`packing.cluster.waves`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from packing.cluster.snapshot import Budget, Pod
from packing.model.selection import requirement_holds


def covers(budget: Budget, pod: Pod) -> bool:
    """Whether ``budget`` covers ``pod``: same namespace, and its selector matches the pod's labels."""
    if budget.selector is None or pod.namespace != budget.namespace:
        return False
    labels = dict(pod.labels)
    return all(requirement_holds(r, labels) for r in budget.selector)


def scaled(value: int | str, expected: int) -> int:
    """An int-or-percentage of ``expected``, a percentage rounded up (``GetScaledValueFromIntOrPercent``)."""
    if isinstance(value, int):
        return value
    return math.ceil(Fraction(value.strip().removesuffix("%")) * expected / 100)


@dataclass(frozen=True)
class BudgetState:
    """A budget over the pods it covers.

    Attributes:
        budget: the budget.
        pods: indices (into the pods given) of the pods it covers.
        expected: the expected pods.
        healthy: covered pods that are ready.
        desired: the desired healthy pods.
        allowed: disruptions allowed now (``healthy - desired``, at least 0).
    """

    budget: Budget
    pods: tuple[int, ...]
    expected: int
    healthy: int
    desired: int
    allowed: int


def budget_state(budget: Budget, pods: Sequence[Pod]) -> BudgetState:
    """How many of its pods ``budget`` lets go at once (see the module docstring)."""
    mine = tuple(i for i, p in enumerate(pods) if covers(budget, p))
    with_controller = sum(1 for i in mine if pods[i].controller is not None)
    healthy = sum(1 for i in mine if pods[i].ready)
    if budget.max_unavailable is not None:
        expected = with_controller
        desired = max(0, expected - scaled(budget.max_unavailable, expected))
    elif isinstance(budget.min_available, int):
        expected = len(mine)
        desired = budget.min_available
    elif budget.min_available is not None:
        expected = with_controller
        desired = scaled(budget.min_available, expected)
    else:  # neither given: the API server refuses such a budget; nothing is allowed
        expected, desired = len(mine), len(mine)
    allowed = max(0, healthy - desired) if expected > 0 else 0
    return BudgetState(budget, mine, expected, healthy, desired, allowed)


def budget_states(budgets: Sequence[Budget], pods: Sequence[Pod]) -> tuple[BudgetState, ...]:
    """:func:`budget_state` of every budget."""
    return tuple(budget_state(b, pods) for b in budgets)


__all__ = ["BudgetState", "budget_state", "budget_states", "covers", "scaled"]
