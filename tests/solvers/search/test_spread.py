"""Large-scale construction (``solvers.search.spread``), repacking (``.repack``) and auto's stage 0b."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.generators.random import generate_random
from packing.model.instance import App, HostType, Instance, Placement, Rule
from solvers.base import SolveOptions, StopFlag, cheap_lower_bound
from solvers.exact.auto import AutoSettings, solve_auto
from solvers.search.greedy import ffd
from solvers.search.repack import repack
from solvers.search.spread import URGENCY, applicable, cap_float, fill, surrogate
from tests.packing.brute import brute_force
from tests.packing.strategies import instances, tiny_instances
from tests.solvers.warm import warm_search

LARGE = AutoSettings(spread_min_work=0)
"""Settings that send every instance to the large-scale path."""


def _hosts(host_of: np.ndarray) -> int:
    return int(len(np.unique(host_of[host_of >= 0])))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(gpus=False, max_apps=5, max_count=4), st.integers(0, 3))
def test_fill_keeps_every_rule(inst: Instance, mode: int) -> None:
    """Every placement the fillings make passes the checker (caps, exclusions, rules)."""
    if not applicable(inst):
        return
    outs = [fill(inst, mode=mode), fill(inst, mode=mode, urgency=URGENCY, urgency_threshold=0.1)]
    for h in outs:
        assert h is not None
        assert check(inst, Placement.from_arrays(inst, h, None), require_all=False) == []
        # a container is left out only when no host at all takes it in the final state
        state = ClusterState.from_placement(inst, h)
        for a in np.unique(inst.container_app[h < 0]):
            assert not state.mask(int(a)).any()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(gpus=False))
def test_fill_never_beats_brute_force(inst: Instance) -> None:
    """A complete filling uses at least the optimal number of hosts (and is feasible)."""
    if not applicable(inst):
        return
    h = fill(inst)
    assert h is not None
    best, _, _ = brute_force(inst)
    if (h >= 0).all():
        assert best <= _hosts(h)


def test_shaped_fill_hand_case() -> None:
    """Two CPU-heavy and two memory-heavy containers: shaped filling pairs them on two hosts.

    Capacity (10 cpu, 10 mem); containers (6, 2) x2 and (2, 6) x2. Largest-first filling puts
    both of one kind together only if they fit (6 + 6 > 10, so they do not); the shaped filling
    pairs a CPU-heavy with a memory-heavy container: 2 hosts, the optimum (volume 16 / 10).
    """
    inst = Instance("pair", ("cpu", "mem"), (HostType("h", (10.0, 10.0), 4),),
                    (App("c", (6.0, 2.0), 2), App("m", (2.0, 6.0), 2)))
    h = fill(inst)
    assert h is not None and _hosts(h) == 2
    assert check(inst, Placement.from_arrays(inst, h, None)) == []


def test_fill_respects_an_exclusion() -> None:
    """An exclusion keeps two small apps apart even though capacity would let them share."""
    inst = Instance("excl", ("cpu",), (HostType("h", (10.0,), 3),),
                    (App("a", (1.0,), 2), App("b", (1.0,), 2)), (Rule("a", "b", 0),))
    h = fill(inst)
    assert h is not None and _hosts(h) == 2
    assert check(inst, Placement.from_arrays(inst, h, None)) == []


def test_surrogate_groups_time_points() -> None:
    """``cpu_t00, cpu_t01`` become one resource with the peak demand and the least capacity."""
    inst = Instance("t", ("cpu_t00", "cpu_t01", "disk"),
                    (HostType("h", (10.0, 10.0, 5.0), 3),),
                    (App("a", (6.0, 1.0, 1.0), 1), App("b", (1.0, 6.0, 1.0), 1)))
    sur = surrogate(inst)
    assert sur is not None
    d, c = sur
    assert d.tolist() == [[6.0, 1.0], [6.0, 1.0]]
    assert c.tolist() == [[10.0, 5.0]] * 3
    # on peaks a and b do not share; on the real time points they do (6 + 1 <= 10)
    h = fill(inst)
    assert h is not None and _hosts(h) == 2
    assert check(inst, Placement.from_arrays(inst, h, None)) == []
    assert surrogate(Instance("n", ("cpu",), (HostType("h", (1.0,), 1),), ())) is None


def _mid(seed: int = 3, n: int = 600) -> Instance:
    """A random instance with rules, caps and exclusions, with twice the generated hosts."""
    inst = generate_random(60, n, n_resources=2, binding="two", rule_density=0.05,
                           exclusion_density=0.03, cap_fraction=0.2, seed=seed)
    types = tuple(dataclasses.replace(t, count=2 * t.count, host_names=None)
                  for t in inst.host_types)
    return inst.replace(host_types=types)


def test_repack_keeps_rules_and_frees_hosts() -> None:
    """From first fit on a mid-size instance with rules, repacking frees hosts, feasibly."""
    inst = _mid()
    g = ffd(inst)
    assert g.complete
    out = repack(inst, g.host_of, time_limit=20.0, max_iters=20_000, seed=1)
    if out is not None:
        assert check(inst, Placement.from_arrays(inst, out, None)) == []
        assert _hosts(out) < _hosts(g.host_of)


def test_repack_is_seeded() -> None:
    """The same seed and iteration budget give the same packing."""
    inst = _mid(seed=5)
    g = ffd(inst)
    a = repack(inst, g.host_of, time_limit=60.0, max_iters=3_000, seed=7)
    b = repack(inst, g.host_of, time_limit=60.0, max_iters=3_000, seed=7)
    assert (a is None) == (b is None)
    if a is not None and b is not None:
        assert np.array_equal(a, b)


def test_fill_is_deterministic() -> None:
    inst = _mid(seed=2)
    a, b = fill(inst), fill(inst)
    assert a is not None and b is not None and np.array_equal(a, b)


def test_auto_large_path_time_limit_and_checker() -> None:
    """Stage 0b on a mid-size instance: within the time limit, checked, never above first fit."""
    inst = _mid(seed=11, n=3000)
    warm_search()
    fill(_mid(seed=1, n=100))  # compile (or load) the kernels first: the limit is for solving
    repack(_mid(seed=1, n=100), ffd(_mid(seed=1, n=100)).host_of, time_limit=0.5)
    cheap_lower_bound(inst, "hosts")  # the bounds' first call loads their code
    t = time.perf_counter()
    r = solve_auto(inst, SolveOptions(time_limit=3.0), settings=LARGE)
    took = time.perf_counter() - t
    assert took < 3.0 + 3.0, (took, r.history)
    assert r.placement is not None and r.objective is not None
    assert check(inst, r.placement) == []
    assert r.proofs["solution"] in ("spread", "tabu", "rule-lns", "repack")
    assert r.objective >= r.bound - 1e-9
    assert r.objective <= ffd(inst).objective + 0.05 * r.objective + 1


def test_auto_large_path_runs_the_tabu_search_on_one_host_type() -> None:
    """One host type: one filling, then the (sparse) tabu search frees hosts towards the bound."""
    warm_search()  # with less than 20 s to go, auto runs only a compiled tabu search
    inst = _mid(seed=3)
    r = solve_auto(inst, SolveOptions(time_limit=10.0), settings=LARGE)
    assert r.placement is not None and r.objective is not None
    assert check(inst, r.placement) == []
    spreads = [p.objective for p in r.history if p.method == "spread"]
    assert len(spreads) == 1 and spreads[0] is not None  # one filling only
    assert any(p.method == "tabu" for p in r.history)
    assert r.bound - 1e-9 <= r.objective < spreads[0]
    off = solve_auto(inst, SolveOptions(time_limit=3.0),
                     settings=dataclasses.replace(LARGE, spread_tabu=False))
    assert not any(p.method == "tabu" for p in off.history)


def test_auto_large_path_honours_stop() -> None:
    """A stop set before the solve: the large path returns at once (first fit's result)."""
    inst = _mid(seed=4)
    flag = StopFlag()
    flag.set()
    t = time.perf_counter()
    r = solve_auto(inst, SolveOptions(time_limit=30.0, stop=flag), settings=LARGE)
    assert time.perf_counter() - t < 10.0
    assert r.interrupted
    if r.placement is not None:
        assert check(inst, r.placement) == []


@pytest.mark.parametrize("kind", ["hosts", "cost"])
def test_auto_small_instances_skip_the_large_path(kind: str) -> None:
    """With the default settings small instances never reach stage 0b."""
    inst = _mid(seed=6, n=120)
    r = solve_auto(inst, SolveOptions(time_limit=2.0, objective=kind))
    assert r.proofs.get("solution") not in ("spread", "repack")


def test_urgency_spreads_a_capped_app() -> None:
    """A capped app left to the end ends alone on many hosts; urgency spreads it first.

    Capacity 10 (one resource); f: 8 x4, c: 2 x4 at most one per host, s: 1 x8 (volume 48). At
    shape 0.9 the filling aims at 9: f, then s (closest to the 1 left of the aim), then s again
    (c no longer fits), four times; the four c then need four hosts of their own: 8 hosts. With
    urgency, c needs 4 hosts of the about 4.8 left (48 / 10), so it goes first: f + c on four
    hosts, the eight s on a fifth: 5 hosts, the optimum (volume 48 / 10 rounds up to 5).
    """
    inst = Instance("u", ("cpu",), (HostType("h", (10.0,), 10),),
                    (App("f", (8.0,), 4), App("c", (2.0,), 4, max_per_host=1),
                     App("s", (1.0,), 8)))
    plain = fill(inst, shape_scale=0.9)
    urgent = fill(inst, shape_scale=0.9, urgency=URGENCY, urgency_threshold=0.1)
    assert plain is not None and urgent is not None
    assert _hosts(plain) == 8 and _hosts(urgent) == 5
    for h in (plain, urgent):
        assert check(inst, Placement.from_arrays(inst, h, None)) == []
    assert cap_float(inst).tolist() == [np.inf, 1.0, np.inf]


def _two_types(seed: int, n: int = 600) -> Instance:
    """``_mid`` with a second host type of half the capacity (the fleet of several types)."""
    inst = _mid(seed, n)
    t = inst.host_types[0]
    half = dataclasses.replace(t, name="half", capacity=tuple(c / 2 for c in t.capacity),
                               host_names=None)
    return inst.replace(host_types=(t, half))


def test_urgent_fill_is_deterministic_and_checked() -> None:
    inst = _two_types(seed=8)
    a = fill(inst, urgency=URGENCY, urgency_threshold=0.1)
    b = fill(inst, urgency=URGENCY, urgency_threshold=0.1)
    assert a is not None and b is not None and np.array_equal(a, b)
    assert check(inst, Placement.from_arrays(inst, a, None)) == []


def test_auto_large_path_uses_urgency_on_several_types() -> None:
    """On a fleet of two host types the first filling of stage 0b is the urgent one."""
    inst = _two_types(seed=9)
    r = solve_auto(inst, SolveOptions(time_limit=5.0), settings=LARGE)
    assert r.placement is not None and check(inst, r.placement) == []
    spreads = [p.message for p in r.history if p.method == "spread"]
    assert spreads and "urgency" in spreads[0]
