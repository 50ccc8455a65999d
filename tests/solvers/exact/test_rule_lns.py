"""Rule-aware LNS: feasibility, never worse, a hand-made rule-bound case, determinism, executors."""

from __future__ import annotations

import numpy as np
import pytest

from packing.errors import InputError
from packing.feasibility.checker import check
from packing.generators.random import generate_random
from packing.model.instance import App, HostType, Instance, Placement
from solvers.base import objective_value
from solvers.exact.lns import sub_instance
from solvers.exact.rule_lns import improve
from solvers.search.greedy import ffd

N_DECOYS = 6


def _rule_bound() -> tuple[Instance, np.ndarray]:
    """Capacity 10 (1-D). Host 0: A (5), the emptiest. Hosts 1..6 (decoys): one E (5.8) each.
    Host 7: B (1) + F (5). A and B exclude each other.

    A fits on no decoy (5 + 5.8 > 10) and is barred from host 7 by B; two E never share a host.
    Freeing a host needs the rule partner moved: B to a decoy (5.8 + 1), A next to F (5 + 5), so
    the optimum is 7 hosts (6 hosts for the E's, which A cannot join, plus A + F) from 8. The
    roomiest hosts (the decoys, room 4.2 against host 7's 4) cannot do it with host 0: A + E,
    E + E and A + E + E never fit. A rule-aware neighbourhood of 3 hosts takes host 0, host 7
    (it holds B, A's rule partner, and is among the roomy hosts) and a decoy.
    """
    apps = (App("A", (5.0,), 1), App("B", (1.0,), 1), App("E", (5.8,), N_DECOYS),
            App("F", (5.0,), 1))
    inst = Instance("rule-bound", ("s",), (HostType("h", (10.0,), N_DECOYS + 2),), apps,
                    exclusions=(("A", "B"),))
    # containers app by app: A, B, E x 6, F
    host_of = np.array([0, N_DECOYS + 1, *range(1, N_DECOYS + 1), N_DECOYS + 1])
    return inst, host_of


def _hosts(inst: Instance, host_of: np.ndarray) -> float:
    return objective_value(inst, host_of, "hosts")


def test_hand_made_instance_needs_the_rule_partner_moved() -> None:
    inst, start = _rule_bound()
    assert check(inst, Placement.from_arrays(inst, start), require_all=True) == []
    assert _hosts(inst, start) == 8
    out = improve(inst, start, time_limit=60, size=3, max_rounds=1, seed=0)
    assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []
    assert _hosts(inst, out) == 7  # the optimum, computed in the docstring
    assert out[0] == out[-1] and out[1] != out[0]  # A moved next to F, B away from A
    plain = improve(inst, start, time_limit=60, size=3, max_rounds=1, seed=0,
                    neighbourhood="emptiest")
    assert _hosts(inst, plain) == 8  # the roomiest hosts alone cannot free one


def _random(seed: int) -> Instance:
    """Small random instance with rules, exclusions, caps and decimal demands."""
    inst = generate_random(8, 50, binding="two", rule_density=0.15, exclusion_density=0.05,
                           cap_fraction=0.5, host_capacity=(10.0, 16.0), seed=seed)
    assert not np.allclose(inst.demand, np.round(inst.demand))  # non-integer data
    return inst


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_instances_stay_feasible_and_never_worse(seed: int) -> None:
    inst = _random(seed)
    start = ffd(inst, "hosts").host_of
    seen: list[float] = []
    out = improve(inst, start, time_limit=20, size=5, step_seconds=1.0, max_rounds=4,
                  seed=seed, neighbourhood="mixed", callback=seen.append)
    assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []
    assert _hosts(inst, out) <= _hosts(inst, start)
    assert seen == sorted(seen, reverse=True)
    assert not seen or seen[-1] == _hosts(inst, out)


def test_compact_sub_instance_keeps_only_present_apps_and_their_rules() -> None:
    inst, host_of = _rule_bound()
    sub, hosts, members = sub_instance(inst, np.array([N_DECOYS + 1, 0]), host_of, compact=True)
    assert hosts.tolist() == [0, N_DECOYS + 1] and members.tolist() == [0, 1, N_DECOYS + 2]
    assert [a.name for a in sub.apps] == ["A", "B", "F"] and sub.exclusions == (("A", "B"),)
    sub2, _, _ = sub_instance(inst, np.array([1, 2]), host_of, compact=True)
    assert [a.name for a in sub2.apps] == ["E"] and sub2.exclusions == ()


def test_same_seed_same_packing_and_processes_match_serial() -> None:
    inst = _random(5)
    start = ffd(inst, "hosts").host_of
    kw = dict(time_limit=60, size=4, step_seconds=20.0, max_rounds=3, seed=7, workers=2)
    a = improve(inst, start, executor="serial", **kw)  # type: ignore[arg-type]
    b = improve(inst, start, executor="serial", **kw)  # type: ignore[arg-type]
    c = improve(inst, start, executor="process", **kw)  # type: ignore[arg-type]
    assert np.array_equal(a, b) and np.array_equal(a, c)
    assert check(inst, Placement.from_arrays(inst, a), require_all=True) == []


def test_bad_arguments_and_untouched_cases() -> None:
    inst, start = _rule_bound()
    with pytest.raises(InputError):
        improve(inst, start, time_limit=1, neighbourhood="nearest")
    with pytest.raises(InputError):
        improve(inst, start, time_limit=1, workers=0)
    assert improve(inst, start, time_limit=1, kind="deployed") is start


def test_a_stop_request_ends_the_search_after_the_round() -> None:
    from solvers.base import StopFlag

    inst, start = _rule_bound()
    flag = StopFlag()
    seen: list[float] = []

    def on_improve(value: float) -> None:
        seen.append(value)
        flag.set()

    out = improve(inst, start, time_limit=60, size=3, seed=0, callback=on_improve, stop=flag)
    assert seen == [7.0] and _hosts(inst, out) == 7
    flag2 = StopFlag()
    flag2.set()
    assert np.array_equal(improve(inst, start, time_limit=60, stop=flag2), start)
