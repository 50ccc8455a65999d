"""The held-out comparison every trainer ends with: hand-computed means, the deciding metric, the warning."""

from __future__ import annotations

import pytest

from policies.agents.heldout import HeldOut

RL = (("deployed", "max"), ("hosts", "min"))


def test_means_and_priority() -> None:
    cmp = HeldOut.of_runs("orders", "agent", "bf", RL, {"deployed": [10, 12], "hosts": [3, 5]},
                          {"deployed": [11, 11], "hosts": [2, 2]})
    assert (cmp.n_runs, cmp.policy_mean, cmp.baseline_mean) == (2, {"deployed": 11.0, "hosts": 4.0},
                                                              {"deployed": 11.0, "hosts": 2.0})
    assert cmp.worse and cmp.deciding == "hosts"  # as many deployed, on more hosts
    assert cmp.line() == ("held-out orders (2): agent 11.00 deployed, 4.00 hosts; "
                          "bf 11.00 deployed, 2.00 hosts")
    warning = cmp.warning("keep Best-Fit")
    assert warning is not None and warning.startswith("warning: on the 2 held-out orders")
    assert "more hosts: 4.00 against 2.00" in warning and warning.endswith("; keep Best-Fit")
    assert cmp.to_dict()["worse"] is True


@pytest.mark.parametrize(("mine", "base", "worse"), [
    ((12, 9), (11, 2), False),   # more deployed wins whatever the hosts
    ((10, 1), (11, 9), True),    # fewer deployed loses whatever the hosts
    ((11, 2), (11, 2), False),   # a tie is not worse
])
def test_first_differing_metric_decides(mine: tuple[int, int], base: tuple[int, int], worse: bool) -> None:
    cmp = HeldOut.of_runs("orders", "a", "bf", RL, {"deployed": [mine[0]], "hosts": [mine[1]]},
                          {"deployed": [base[0]], "hosts": [base[1]]})
    assert cmp.worse == worse and (cmp.warning("x") is None) == (not worse)


def test_lower_jct_is_better() -> None:
    cmp = HeldOut.of_runs("job samples", "jobfusion", "sjf", (("mean_jct", "min"),),
                          {"mean_jct": [100.0, 140.0]}, {"mean_jct": [110.0, 120.0]})
    assert cmp.worse and "more seconds of mean JCT: 120.00 against 115.00" in str(cmp.warning("x"))


def test_bad_runs() -> None:
    with pytest.raises(ValueError, match="equally many"):
        HeldOut.of_runs("orders", "a", "b", RL, {"deployed": [1], "hosts": [1, 2]},
                        {"deployed": [1], "hosts": [1]})
    with pytest.raises(ValueError, match="at least one metric"):
        HeldOut.of_runs("orders", "a", "b", (), {}, {})
