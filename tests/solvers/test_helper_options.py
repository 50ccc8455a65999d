"""tabu_pack and lns.improve take SolveOptions: the same run as with the separate keywords."""

from __future__ import annotations

import numpy as np
import pytest

from packing.feasibility.checker import check
from packing.generators.random import generate_random
from solvers.base import SolveOptions
from solvers.exact.lns import improve
from solvers.search.greedy import ffd
from solvers.search.tabu import tabu_pack


def test_tabu_options_give_the_keyword_run() -> None:
    inst = generate_random(20, 150, binding="two", seed=3)
    g = ffd(inst, "hosts")
    by_keywords = tabu_pack(inst, g.host_of, target=1, time_limit=600, seed=5, max_iters=300)
    by_options = tabu_pack(inst, g.host_of, target=1, max_iters=300,
                           options=SolveOptions(time_limit=600, seed=5))
    other_seed = tabu_pack(inst, g.host_of, target=1, max_iters=300,
                           options=SolveOptions(time_limit=600, seed=6))
    assert by_keywords is not None and by_options is not None and other_seed is not None
    assert np.array_equal(by_keywords, by_options)
    with pytest.raises(TypeError):
        tabu_pack(inst, g.host_of, target=1)


def test_lns_options_are_used() -> None:
    inst = generate_random(6, 40, binding="cpu", seed=2)
    g = ffd(inst, "hosts")
    start = g.placement(inst)
    pl = improve(inst, start, kind="hosts", options=SolveOptions(time_limit=2.0, seed=1, workers=1))
    assert check(inst, pl, require_all=True) == []
    assert len(np.unique(pl.host_array(inst))) <= len(np.unique(g.host_of))
    with pytest.raises(TypeError):
        improve(inst, start, kind="hosts")
