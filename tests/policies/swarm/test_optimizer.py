"""The optimiser wrappers: seeded determinism, isolation from the global RNG, resume, early stop."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from policies.swarm.optimizer import (
    PSO,
    DESettings,
    DifferentialEvolution,
    IterationRecord,
    PSOSettings,
)

BOUNDS = (np.full(3, -1.0), np.full(3, 1.0))


def sphere(x: np.ndarray) -> np.ndarray:
    return ((x - 0.3) ** 2).sum(axis=1)


def test_pso_same_seed_same_run_whatever_the_global_rng() -> None:
    s = PSOSettings(n_particles=8, iters=12, seed=5, patience=0)
    np.random.seed(1)
    a = PSO(s).minimize(sphere, 3, BOUNDS)
    np.random.seed(2)
    np.random.rand(17)
    b = PSO(s).minimize(sphere, 3, BOUNDS)
    assert a.best_cost == b.best_cost
    assert np.array_equal(a.best_position, b.best_position)
    assert [r.best_cost for r in a.history] == [r.best_cost for r in b.history]


def test_pso_does_not_touch_the_callers_global_rng() -> None:
    np.random.seed(123)
    expected = np.random.rand(3)
    np.random.seed(123)
    PSO(PSOSettings(n_particles=4, iters=3)).minimize(sphere, 3, BOUNDS)
    assert np.array_equal(np.random.rand(3), expected)


def test_pso_different_seeds_differ_and_it_improves() -> None:
    a = PSO(PSOSettings(n_particles=8, iters=15, seed=1, patience=0)).minimize(sphere, 3, BOUNDS)
    b = PSO(PSOSettings(n_particles=8, iters=15, seed=2, patience=0)).minimize(sphere, 3, BOUNDS)
    assert not np.array_equal(a.best_position, b.best_position)
    assert a.history[-1].best_cost < a.history[0].best_cost
    assert a.best_cost < 0.05
    assert np.all(a.best_position >= -1) and np.all(a.best_position <= 1)


def test_pso_resume_from_checkpoint_is_exact(tmp_path: Path) -> None:
    ck = tmp_path / "ck.pkl"
    full = PSO(PSOSettings(n_particles=6, iters=10, seed=3, patience=0)).minimize(
        sphere, 3, BOUNDS)
    PSO(PSOSettings(n_particles=6, iters=4, seed=3, patience=0), checkpoint_path=ck).minimize(
        sphere, 3, BOUNDS)
    rest = PSO(PSOSettings(n_particles=6, iters=10, seed=3, patience=0), checkpoint_path=ck,
               resume=True).minimize(sphere, 3, BOUNDS)
    assert rest.best_cost == full.best_cost
    assert np.array_equal(rest.best_position, full.best_position)
    assert len(rest.history) == 10


def test_pso_early_stopping_and_callback() -> None:
    flat = PSO(PSOSettings(n_particles=4, iters=50, patience=3)).minimize(
        lambda x: np.zeros(len(x)), 3, BOUNDS)
    assert flat.stopped_early and len(flat.history) == 4  # first improves on inf, then 3 stale
    seen: list[IterationRecord] = []

    def stop_at_two(rec: IterationRecord) -> bool:
        seen.append(rec)
        return rec.iteration < 1

    r = PSO(PSOSettings(n_particles=4, iters=50, patience=0)).minimize(
        sphere, 3, BOUNDS, callback=stop_at_two)
    assert r.stopped_early and len(seen) == 2


def test_pso_init_particle_zero_is_the_given_point() -> None:
    init = np.array([0.3, 0.3, 0.3])
    r = PSO(PSOSettings(n_particles=5, iters=1, patience=0)).minimize(sphere, 3, BOUNDS, init=init)
    assert r.best_cost == pytest.approx(0.0)


def test_objective_shape_is_checked() -> None:
    with pytest.raises(ValueError, match="shape"):
        PSO(PSOSettings(n_particles=4, iters=2)).minimize(lambda x: np.zeros(3), 3, BOUNDS)


def test_differential_evolution_same_interface() -> None:
    a = DifferentialEvolution(DESettings(iters=15, seed=4)).minimize(sphere, 3, BOUNDS)
    b = DifferentialEvolution(DESettings(iters=15, seed=4)).minimize(sphere, 3, BOUNDS)
    assert a.best_cost == b.best_cost and a.best_cost < 1e-3


def test_pso_leaves_logging_and_the_working_directory_alone(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    monkeypatch.chdir(tmp_path)
    root = logging.getLogger()
    handlers = list(root.handlers)
    PSO(PSOSettings(n_particles=4, iters=2)).minimize(sphere, 3, BOUNDS)
    assert list(tmp_path.iterdir()) == []
    assert root.handlers == handlers
