"""The swarm-tuned scoring policy: exact FF/BF, kernel == reference, training, persistence."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packing.errors import InputError
from packing.feasibility.checker import check
from packing.generators.random import generate_random
from packing.io.builtin import builtin_instance
from packing.model.instance import Instance, Request
from packing.sim.simulator import sample_orders, simulate
from policies.registry import get_policy
from policies.swarm.features import FEATURES, N_FEATURES
from policies.swarm.optimizer import PSOSettings
from policies.swarm.policy import SwarmPolicy, named_weights, project
from policies.swarm.train import TrainSettings, train_swarm


def batched(inst: Instance) -> Instance:
    """One request per app (its containers arrive together), so request orders matter."""
    return inst.replace(requests=tuple(Request(float(i), a.name, a.count)
                                       for i, a in enumerate(inst.apps)))


@pytest.fixture(scope="module")
def sigma() -> Instance:
    return builtin_instance("sigma")


@pytest.fixture(scope="module")
def tiny() -> Instance:
    return batched(generate_random(8, 60, exclusion_density=0.15, cap_fraction=0.5, tightness=0.9,
                                   seed=2))


@pytest.mark.parametrize(("weights", "baseline"), [
    (named_weights(best_fit=1.0), "bf"),
    (named_weights(first_fit=1.0), "ff"),
    (named_weights(dot=1.0), None),
])
@pytest.mark.parametrize("compiled", [False, True])
def test_hand_set_weights_reproduce_heuristics_exactly(sigma: Instance, weights: np.ndarray,
                                                       baseline: str | None, compiled: bool) -> None:
    base = get_policy(baseline) if baseline else get_policy("dot", open_first=False)
    for order in sample_orders(sigma, 4, seed=3):
        ours = simulate(sigma, SwarmPolicy(weights), order, compiled=compiled)
        ref = simulate(sigma, base, order, compiled=False)
        assert np.array_equal(ours.trajectory.host, ref.trajectory.host)
        assert ours.hosts == ref.hosts


def test_bf_on_sigma_own_order_is_twenty_and_swarm_bf_matches(sigma: Instance) -> None:
    assert simulate(sigma, SwarmPolicy(named_weights(best_fit=1.0))).hosts == \
        simulate(sigma, get_policy("bf")).hosts


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), wseed=st.integers(0, 10_000), types=st.integers(1, 2))
def test_compiled_kernel_equals_numpy_reference(seed: int, wseed: int, types: int) -> None:
    inst = batched(generate_random(6, 40, rule_density=0.1, exclusion_density=0.1, cap_fraction=0.5,
                                   n_host_types=types, seed=seed))
    w = np.random.default_rng(wseed).uniform(-1, 1, N_FEATURES)
    order = sample_orders(inst, 1, seed=seed, include_own=False)[0]
    a = simulate(inst, SwarmPolicy(w), order, compiled=False)
    b = simulate(inst, SwarmPolicy(w), order, compiled=True)
    assert b.compiled
    assert np.array_equal(a.trajectory.host, b.trajectory.host)
    assert not check(inst, b.placement)


def test_project_clips_and_scales() -> None:
    p = project(np.array([[3.0, -0.5, 0.0], [0.0, 0.0, 0.0]]))
    assert np.allclose(p[0], [1.0, -0.5, 0.0])
    assert np.allclose(p[1], 0.0)
    assert np.all(np.abs(project(np.random.default_rng(0).normal(size=(5, 4)) * 7)) <= 1.0)


def test_training_improves_on_the_initial_swarm_and_is_deterministic(tiny: Instance) -> None:
    pso = PSOSettings(n_particles=6, iters=6, seed=1, patience=0)
    ts = TrainSettings(samples=4, held_out=4, init=None)
    a = train_swarm(tiny, pso, ts, baselines=("bf",))
    assert a.best_cost < a.initial_cost
    assert [r.best_cost for r in a.history] == sorted((r.best_cost for r in a.history), reverse=True)
    b = train_swarm(tiny, pso, ts, baselines=("bf",))
    assert np.array_equal(a.policy.weights, b.policy.weights)
    assert np.array_equal(a.held_out[0].hosts, b.held_out[0].hosts)
    c = train_swarm(tiny, PSOSettings(n_particles=6, iters=6, seed=2, patience=0), ts, baselines=())
    assert not np.array_equal(a.policy.weights, c.policy.weights)


def test_process_backend_gives_the_same_result(tiny: Instance) -> None:
    pso = PSOSettings(n_particles=4, iters=3, seed=1, patience=0)
    local = train_swarm(tiny, pso, TrainSettings(samples=3, held_out=2, init=None), baselines=())
    procs = train_swarm(tiny, pso, TrainSettings(samples=3, held_out=2, init=None,
                                                 backend="process", workers=2), baselines=())
    assert np.array_equal(local.policy.weights, procs.policy.weights)
    assert local.best_cost == procs.best_cost


def test_trained_policy_placements_pass_the_checker(tiny: Instance) -> None:
    res = train_swarm(tiny, PSOSettings(n_particles=4, iters=3, seed=0), TrainSettings(
        samples=3, held_out=3), baselines=())
    for order in sample_orders(tiny, 5, seed=9):
        r = simulate(tiny, res.policy, order, check_result=False)
        assert not check(tiny, r.placement)
        assert r.placement.n_placed + r.n_rejected == tiny.n_containers


def test_held_out_orders_differ_from_training_orders(tiny: Instance) -> None:
    from policies.swarm.train import training_orders

    train, held = training_orders(tiny, TrainSettings(samples=4, held_out=6, seed=3))
    assert len(train) == 4 and len(held) == 6
    assert not any(np.array_equal(t, h) for t in train for h in held)


def test_json_round_trip_and_registry(tmp_path: Path, sigma: Instance) -> None:
    pol = SwarmPolicy(named_weights(best_fit=0.5, aa_slots=-0.25), name="tuned",
                      provenance={"seed": 3})
    path = tmp_path / "tuned.json"
    pol.save(path)
    back = SwarmPolicy.load(path)
    assert np.array_equal(back.weights, pol.weights) and back.provenance == {"seed": 3}
    via_registry = get_policy(str(path))
    assert isinstance(via_registry, SwarmPolicy)
    assert simulate(sigma, via_registry).hosts == simulate(sigma, pol).hosts


def test_bad_policy_file_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "vbp-policy/1", "kind": "swarm-linear",
                                "features": ["best_fit", "nonsense"], "weights": [1, 2]}))
    with pytest.raises(InputError) as e:
        SwarmPolicy.load(path)
    assert "features" in str(e.value) and "nonsense" in str(e.value)
    path.write_text(json.dumps({"format": "vbp-policy/1", "kind": "swarm-linear",
                                "features": list(FEATURES), "weights": ["x"] * N_FEATURES}))
    with pytest.raises(InputError, match="weights"):
        SwarmPolicy.load(path)


def test_another_vbp_file_as_policy_is_one_line(tmp_path: Path, sigma: Instance) -> None:
    """An instance (or placement) given as the policy: its format, what it is, nothing else."""
    from packing.io import save_instance

    save_instance(sigma, tmp_path / "sigma.json")
    with pytest.raises(InputError) as e:
        SwarmPolicy.load(tmp_path / "sigma.json")
    assert [(p.field, p.reason) for p in e.value.problems] == [
        ("format", "expected format 'vbp-policy/1' and kind 'swarm-linear', got 'vbp-instance/1' / "
                   "None (an instance file, not a policy)")]


@pytest.mark.slow
def test_ray_backend_gives_the_same_result(tiny: Instance) -> None:
    pytest.importorskip("ray")
    pso = PSOSettings(n_particles=4, iters=2, seed=1, patience=0)
    local = train_swarm(tiny, pso, TrainSettings(samples=2, held_out=2, init=None), baselines=())
    on_ray = train_swarm(tiny, pso, TrainSettings(samples=2, held_out=2, init=None,
                                                  backend="ray", workers=2), baselines=())
    assert np.array_equal(local.policy.weights, on_ray.policy.weights)
    assert local.best_cost == on_ray.best_cost


def test_the_cost_takes_its_numbers_from_packing_metrics(sigma: Instance) -> None:
    from packing.feasibility.metrics import compute_metrics
    from policies.swarm.train import run_cost

    pol = SwarmPolicy(named_weights(best_fit=1.0))
    for order in sample_orders(sigma, 3, seed=1):
        cost, hosts, alloc, rejected = run_cost(sigma, pol, order, 0, penalty=10.0, tie_break=0.5)
        m = compute_metrics(sigma, simulate(sigma, pol, order).placement)
        assert (hosts, alloc, rejected) == (m.hosts, m.allocation, 0)
        assert cost == hosts + 0.5 * (1.0 - alloc)


def test_training_on_a_given_executor_leaves_it_open(tiny: Instance) -> None:
    from packing.sim.evaluation import SerialExecutor

    pso = PSOSettings(n_particles=4, iters=2, seed=1, patience=0)
    ts = TrainSettings(samples=2, held_out=2, init=None)
    with SerialExecutor() as ex:
        a = train_swarm(tiny, pso, ts, baselines=("bf",), executor=ex)
        b = train_swarm(tiny, pso, ts, baselines=("bf",), executor=ex)
    assert np.array_equal(a.policy.weights, b.policy.weights)
    assert [h.policy for h in a.held_out] == ["swarm", "bf"]
    assert np.array_equal(a.held_out[1].hosts, b.held_out[1].hosts)


def test_the_docs_count_the_features() -> None:
    """docs/sigma-swarmrl.md names as many features as :data:`FEATURES` holds."""
    words = {9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}
    text = (Path(__file__).resolve().parents[3] / "docs" / "sigma-swarmrl.md").read_text()
    assert f"over {words[len(FEATURES)]} features" in text
