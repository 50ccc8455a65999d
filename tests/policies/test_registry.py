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


def test_shipped_swarm_policy_is_reproduced_by_its_command_and_beats_best_fit(tmp_path) -> None:
    import json
    import shlex

    from packing.io.builtin import builtin_instance
    from packing.sim.simulator import evaluate, sample_orders
    from policies.registry import SHIPPED, default_policies, get_policy, shipped_path
    from vbp.cli import main

    assert "swarm-sigma" in SHIPPED and "swarm-sigma" in default_policies("sigma")
    assert "swarm-sigma" not in default_policies("other")
    doc = json.loads(shipped_path("swarm-sigma").read_text())
    args = shlex.split(doc["training"]["command"])[1:]
    out = tmp_path / "again.json"
    args[args.index("--out") + 1] = str(out)
    try:
        main(args)
    except SystemExit as e:
        assert e.code in (0, None)
    assert json.loads(out.read_text())["weights"] == doc["weights"]
    inst = builtin_instance("sigma")
    orders = sample_orders(inst, 8, seed=0)  # the main job's orders
    swarm = evaluate(get_policy("swarm-sigma"), inst, orders)
    bf = evaluate(get_policy("bf"), inst, orders)
    assert 15 <= swarm.min and swarm.mean < bf.mean - 2
