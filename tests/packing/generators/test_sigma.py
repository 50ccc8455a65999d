"""The built-in Sigma-like instance: planted optimum 15, 1,360 cores, Best-Fit clearly worse."""

from __future__ import annotations

import numpy as np
import pytest

from packing.errors import InputError
from packing.feasibility.checker import check
from packing.generators.sigma import PLANTED_HOSTS, TARGET_BF, planted_placement
from packing.io.builtin import BUILTIN_NAMES, builtin_instance
from packing.model.instance import Instance
from packing.sim.simulator import simulate
from policies.heuristics import BestFit, FirstFit
from vbp.instances import generate_sigma


@pytest.fixture(scope="module")
def sigma() -> Instance:
    return builtin_instance("sigma")


def test_shape(sigma: Instance) -> None:
    assert sigma.n_apps == 30
    assert float((sigma.demand[:, 0] * sigma.counts).sum()) == 1360.0
    assert {tuple(d) for d in sigma.demand.tolist()} == {(4.0, 8.0), (8.0, 16.0)}
    assert {t.capacity for t in sigma.host_types} == {(96.0, 512.0)}
    assert sigma.n_hosts >= 30
    assert any(a.max_per_host is not None and a.max_per_host < a.count for a in sigma.apps)
    assert len(sigma.exclusions) >= 2
    # the cores bound alone proves 15 is optimal
    assert int(np.ceil(1360 / 96)) == PLANTED_HOSTS


def test_planted_optimum_is_feasible(sigma: Instance) -> None:
    plant = planted_placement(sigma)
    assert check(sigma, plant, require_all=True) == []
    assert len({h for hs in plant.hosts.values() for h in hs}) == PLANTED_HOSTS


def test_best_fit_needs_clearly_more_hosts(sigma: Instance) -> None:
    bf = simulate(sigma, BestFit())
    assert bf.hosts >= TARGET_BF
    assert bf.hosts == sigma.meta["best_fit_hosts"] == 20
    assert simulate(sigma, FirstFit()).hosts > PLANTED_HOSTS


def test_shipped_file_is_the_generator_output(sigma: Instance) -> None:
    assert generate_sigma(0) == sigma
    assert sigma.meta["seed"] == 0


def test_builtin_names() -> None:
    assert "sigma" in BUILTIN_NAMES
    with pytest.raises(InputError):
        builtin_instance("nope")


def test_other_seed_is_deterministic_and_different() -> None:
    a, b = generate_sigma(1), generate_sigma(1)
    assert a == b
    assert a != builtin_instance("sigma")
    assert simulate(a, BestFit()).hosts >= TARGET_BF
