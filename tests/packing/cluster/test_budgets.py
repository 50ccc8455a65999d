"""PodDisruptionBudget arithmetic, by hand (the disruption controller's rules)."""

from __future__ import annotations

import pytest

from packing.cluster.budgets import budget_state, covers, scaled
from packing.cluster.snapshot import Budget, Pod
from packing.model.selection import Requirement


def pod(name: str, ready: bool = True, ns: str = "shop", app: str = "web",
        controller: str | None = "Deployment/shop/web") -> Pod:
    return Pod(ns, name, "n1", "Running", ready, controller, False, {"pods": 1},
               labels=(("app", app),))


WEB = (Requirement("app", "In", ("web",)),)


@pytest.mark.parametrize(("mina", "maxu", "ready", "desired", "allowed"), [
    (None, 1, 3, 2, 1),          # 3 expected, 1 may be down
    (None, 0, 3, 3, 0),          # maxUnavailable 0 forbids every eviction
    (1, None, 3, 1, 2),          # minAvailable as a number: desired is that number
    ("50%", None, 3, 2, 1),      # 50% of 3 = 1.5, rounded up to 2
    (None, "50%", 3, 1, 2),      # maxUnavailable 50% of 3 rounds up to 2: desired 1
    ("100%", None, 3, 3, 0),
    (None, 1, 2, 2, 0),          # one pod not ready already: nothing more may go
])
def test_allowed(mina, maxu, ready: int, desired: int, allowed: int) -> None:
    pods = [pod(f"w{i}", ready=i < ready) for i in range(3)]
    s = budget_state(Budget("shop", "web", WEB, mina, maxu), pods)
    assert (s.expected, s.healthy, s.desired, s.allowed) == (3, ready, desired, allowed)


def test_selectors() -> None:
    pods = [pod("a"), pod("b", app="api"), pod("c", ns="other")]
    assert [covers(Budget("shop", "x", WEB), p) for p in pods] == [True, False, False]
    assert [covers(Budget("shop", "x", ()), p) for p in pods] == [True, True, False]  # {}: the namespace
    assert [covers(Budget("shop", "x", None), p) for p in pods] == [False, False, False]  # null: none
    assert budget_state(Budget("shop", "x", None, None, 1), pods).allowed == 0


def test_expected_counts_pods_with_a_controller() -> None:
    pods = [pod("a"), pod("b"), pod("bare", controller=None)]
    s = budget_state(Budget("shop", "web", WEB, None, 1), pods)
    assert (s.expected, s.desired, s.allowed) == (2, 1, 2)
    assert scaled("34%", 3) == 2 and scaled(2, 10) == 2
