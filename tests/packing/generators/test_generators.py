"""The random generator: seeds, planted optima, shapes, and the known packing is feasible."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packing.feasibility.bounds import lower_bounds
from packing.feasibility.checker import check
from packing.generators import generate_random, generate_random_packed
from packing.io import instance_from_dict, instance_to_dict


def test_same_seed_same_instance_different_seed_different() -> None:
    kw = dict(rule_density=0.1, exclusion_density=0.1, cap_fraction=0.3, n_host_types=2)
    assert generate_random(8, 60, seed=5, **kw) == generate_random(8, 60, seed=5, **kw)
    assert generate_random(8, 60, seed=5, **kw) != generate_random(8, 60, seed=6, **kw)
    inst = generate_random(8, 60, seed=5, **kw)
    assert inst.meta["seed"] == 5 and inst.meta["params"]["rule_density"] == 0.1
    assert instance_from_dict(instance_to_dict(inst)) == inst


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 12), st.integers(0, 60), st.sampled_from(["cpu", "two"]),
       st.floats(0, 0.3), st.floats(0, 0.5), st.floats(0, 1), st.integers(0, 10**6))
def test_planted_optimum(n_apps, extra, binding, rules, excl, caps, seed) -> None:
    inst, packing = generate_random_packed(
        n_apps, n_apps + extra, binding=binding, rule_density=rules, exclusion_density=excl,
        cap_fraction=caps, planted=True, seed=seed)
    k = inst.meta["planted_optimum"]
    assert check(inst, packing, require_all=True) == []
    assert len({h for hs in packing.hosts.values() for h in hs}) == k
    # the planted packing fills the binding resources exactly: the volume bound proves k
    assert lower_bounds(inst).volume == k
    assert inst.n_containers >= n_apps + extra and inst.n_apps == n_apps


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 10), st.integers(0, 50), st.sampled_from(["cpu", "two", "none"]),
       st.integers(1, 4), st.integers(1, 3), st.floats(0.3, 1), st.integers(0, 10**6))
def test_reference_packing_is_feasible(n_apps, extra, binding, n_res, n_types, tight, seed) -> None:
    if binding == "two" and n_res < 2:
        n_res = 2
    inst, packing = generate_random_packed(
        n_apps, n_apps + extra, n_resources=n_res, binding=binding, rule_density=0.2,
        exclusion_density=0.2, cap_fraction=0.5, n_host_types=n_types, tightness=tight,
        seed=seed)
    assert check(inst, packing, require_all=True) == []
    assert inst.n_containers == n_apps + extra and len(inst.host_types) == n_types
    assert inst.host_types[0].count >= inst.meta["reference_hosts"] / tight - 1e-9


def test_binding_shapes() -> None:
    cpu = generate_random(40, 400, binding="cpu", seed=1)
    assert all(a.demand[1] < a.demand[0] for a in cpu.apps)  # memory has slack
    two = generate_random(40, 400, binding="two", planted=True, seed=1)
    total = [sum(a.count * a.demand[r] for a in two.apps) for r in range(2)]
    assert total[0] == pytest.approx(total[1])  # both resources bind equally


def test_bad_parameters() -> None:
    with pytest.raises(ValueError):
        generate_random(5, 3)
    with pytest.raises(ValueError):
        generate_random(5, 10, binding="two", n_resources=1)
    with pytest.raises(ValueError):
        generate_random(5, 10, planted=True, binding="none")
    with pytest.raises(ValueError):
        generate_random(5, 10, tightness=0)
