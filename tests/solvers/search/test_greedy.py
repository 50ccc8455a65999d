"""First-fit decreasing: the compiled path makes exactly the numpy path's decisions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import solvers.search.greedy as greedy
from packing.feasibility.checker import check
from packing.generators.random import generate_random


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), types=st.integers(1, 3), measure=st.sampled_from(["max", "sum"]),
       kind=st.sampled_from(["hosts", "cost"]))
def test_compiled_first_fit_equals_numpy_first_fit(seed: int, types: int, measure: str,
                                                    kind: str) -> None:
    inst = generate_random(8, 60, rule_density=0.1, exclusion_density=0.1, cap_fraction=0.5,
                           n_host_types=types, tightness=0.9, seed=seed)
    apps = np.argsort(-greedy._app_sizes(inst, measure), kind="stable")
    fast = greedy._first_fit_compiled(inst, kind, measure, apps)  # type: ignore[arg-type]
    assert fast is not None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(greedy, "_first_fit_compiled", lambda *a: None)
        slow = greedy.first_fit(inst, kind, measure)  # type: ignore[arg-type]
    assert np.array_equal(fast.host_of, slow.host_of)
    assert fast.objective == slow.objective and fast.placed == slow.placed
    assert not check(inst, fast.placement(inst))
