"""The policy registry: stable names, parameters, loaders for tuned-policy files."""

from __future__ import annotations

from pathlib import Path

import pytest

from packing.errors import InputError
from policies.base import Policy
from policies.heuristics import BestFit, WorstFit
from policies.registry import DEFAULT_COMPARE, POLICIES, get_policy, parse_policy_list, register_loader

STABLE = ["ff", "bf", "bf-bottleneck", "wf", "ffd", "bfd", "dot", "l2", "k8s-least", "k8s-most",
          "k8s-balanced", "k8s-rtcr", "greedy", "random", "alignment"]


def test_stable_names() -> None:
    assert set(STABLE) <= set(POLICIES)
    assert list(DEFAULT_COMPARE) == STABLE
    for n in STABLE:
        p = get_policy(n)
        assert isinstance(p, Policy)
        assert p.name == n


def test_parameters_and_errors() -> None:
    assert get_policy("wf", open_first=False).open_first is False
    with pytest.raises(InputError, match="unknown policy"):
        get_policy("best")
    with pytest.raises(InputError, match="bad parameters"):
        get_policy("bf", colour="red")
    with pytest.raises(InputError, match="no loader"):
        get_policy("tuned.xyz")
    with pytest.raises(InputError) as e:
        parse_policy_list("ff,nope,bf,zz")
    assert "nope" in str(e.value) and "zz" in str(e.value)
    assert parse_policy_list(" ff, bf ,") == ["ff", "bf"]


def test_register_loader(tmp_path: Path) -> None:
    f = tmp_path / "tuned.polx"
    f.write_text("{}")
    register_loader("polx", lambda p: BestFit() if p.read_text() == "{}" else WorstFit())
    assert isinstance(get_policy(str(f)), BestFit)
    assert parse_policy_list(f"ff,{f}") == ["ff", str(f)]
    with pytest.raises(InputError, match="no such policy file"):
        get_policy(str(tmp_path / "missing.polx"))
