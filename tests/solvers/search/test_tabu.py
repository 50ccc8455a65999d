"""Tabu search that frees hosts one at a time (``solvers.search.tabu``)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packing.feasibility.checker import check
from packing.generators.random import generate_random
from packing.io.builtin import builtin_instance
from packing.model.instance import App, HostType, Instance, Placement
from solvers.base import cheap_lower_bound
from solvers.search import tabu
from solvers.search.greedy import ffd
from solvers.search.tabu import applicable, tabu_pack

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data" / "caprara-toth-2d"

# sizes 5 5 4 4 3 3 3 3 (sum 30) in bins of 10: the optimum is 3 (5+5, 4+3+3, 4+3+3)
SIZES = (5.0, 5.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0)


def _bins() -> Instance:
    return Instance("bp", ("s",), (HostType("b", (10.0,), 8),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate(SIZES)))


def _hosts(host_of: np.ndarray) -> int:
    return len(np.unique(host_of))


def test_frees_hosts_down_to_the_optimum() -> None:
    inst = _bins()
    seen: list[int] = []
    out = tabu_pack(inst, np.arange(8), target=3, time_limit=120, seed=0, max_iters=100_000,
                    on_improve=seen.append)
    assert out is not None
    assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []
    assert _hosts(out) == 3
    assert seen == list(range(7, 2, -1))  # one host freed at a time


def test_never_goes_below_what_the_caps_allow() -> None:
    # c: 4 containers, at most 1 per host -> at least 4 hosts although the volume fits one
    inst = Instance("c", ("cpu", "mem"), (HostType("h", (10.0, 10.0), 6),),
                    (App("a", (1.0, 2.0), 4), App("c", (1.0, 1.0), 4, max_per_host=1)))
    out = tabu_pack(inst, np.array([0, 1, 2, 3, 4, 5, 0, 1]), target=1, time_limit=120,
                    max_iters=5_000)
    assert out is not None
    assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []
    assert _hosts(out) == 4


def test_keeps_rules_and_exclusions() -> None:
    inst = builtin_instance("sigma")  # caps, exclusions and <A, B, k> rules; optimum 15
    assert applicable(inst)
    g = ffd(inst, "hosts")
    out = tabu_pack(inst, g.host_of, target=15, time_limit=600, seed=0, max_iters=50_000)
    assert out is not None and 15 <= _hosts(out) < _hosts(g.host_of)
    assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []


def test_rule_forbids_the_volume_packing() -> None:
    # <a, b, 0> and <b, a, 0> (an exclusion): a and b never share a host although two of each
    # fit on one by volume -> a+a on one host, b+b on another
    inst = Instance("x", ("s",), (HostType("h", (10.0,), 4),),
                    (App("a", (2.0,), 2), App("b", (2.0,), 2)), exclusions=(("a", "b"),))
    out = tabu_pack(inst, np.arange(4), target=1, time_limit=120, max_iters=2_000)
    assert out is not None and _hosts(out) == 2
    assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []


def test_not_applicable_with_gpu_cards() -> None:
    inst = Instance("g", ("cpu",), (HostType("h", (10.0,), 4, gpus=2, gpu_capacity=(1.0,)),),
                    (App("a", (1.0,), 2, gpu_cards=1, gpu_per_card=(0.5,)),),
                    gpu_resources=("gpu",))
    assert not applicable(inst)
    assert tabu_pack(inst, np.arange(2), target=1, time_limit=1) is None


def test_same_seed_same_packing() -> None:
    inst = generate_random(20, 150, binding="two", seed=3)
    g = ffd(inst, "hosts")
    runs = [tabu_pack(inst, g.host_of, target=1, time_limit=600, seed=5, max_iters=300)
            for _ in range(2)]
    assert runs[0] is not None and runs[1] is not None
    assert np.array_equal(runs[0], runs[1])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), binding=st.sampled_from(["cpu", "two"]),
       caps=st.sampled_from([0.0, 0.5]))
def test_random_instances_stay_feasible_and_above_the_bound(seed: int, binding: str,
                                                            caps: float) -> None:
    inst = generate_random(8, 60, binding=binding, cap_fraction=caps, seed=seed)  # type: ignore[arg-type]
    g = ffd(inst, "hosts")
    lb, _ = cheap_lower_bound(inst, "hosts")
    out = tabu_pack(inst, g.host_of, target=int(lb), time_limit=600, seed=seed, max_iters=400)
    if out is None:
        return
    assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []
    assert lb <= _hosts(out) < _hosts(g.host_of)


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/data/caprara-toth-2d")
def test_caprara_toth_class_1_reaches_the_published_optimum() -> None:
    from packing.loaders import load_any

    inst = load_any(SHARED / "instances" / "CL_1_100_1.vbp")  # published optimum 25
    g = ffd(inst, "hosts")
    assert _hosts(g.host_of) > 25
    out = tabu_pack(inst, g.host_of, target=25, time_limit=120, seed=1, max_iters=200_000)
    assert out is not None and _hosts(out) == 25
    assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []


# Results of the dense-table search (commit 55b0e57: a tabu table containers x hosts and per-host
# app counts apps x hosts) on seeded instances with caps, exclusions and <A, B, k> rules, from
# first fit, seed 7, 1,500 iterations: (hosts, first 16 hex digits of the sha256 of host_of as
# int64). The sparse tables must make the same moves.
DENSE = {
    "sigma": (15, "f3d477744e0af561"),
    (1, 0.3, 0.1, 0.5): (21, "d821a4b49c12865b"),
    (3, 0.0, 0.0, 0.5): (12, "1144c2ecf1f2f30b"),
    (4, 0.2, 0.0, 0.0): (18, "74c57fe8d51090e2"),
    (5, 0.4, 0.1, 0.5): (21, "5fe1d7f495b8f3b2"),
    (6, 0.6, 0.0, 0.2): (17, "7ad88a1dfadbbc42"),
}


def _case(key: object) -> Instance:
    if key == "sigma":
        return builtin_instance("sigma")
    seed, rules, exclusions, caps = key  # type: ignore[misc]
    return generate_random(10, 80, binding="two", rule_density=rules,
                           exclusion_density=exclusions, cap_fraction=caps, seed=seed)


def _digest(host_of: np.ndarray) -> str:
    return hashlib.sha256(np.asarray(host_of, dtype=np.int64).tobytes()).hexdigest()[:16]


@pytest.mark.parametrize("slots", [tabu.SLOTS, 0])
def test_sparse_tables_make_the_dense_moves(slots: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # slots 0: the member rows start as long as the fullest host and grow during the search.
    # The dense tables stopped when the lightest host could not be emptied (DROP_TRIES 1); with
    # the next lightest tried as well the search may only end on as few hosts or fewer. The dense
    # tables had no ejection either (a container no host takes ends the search there).
    monkeypatch.setattr(tabu, "SLOTS", slots)
    monkeypatch.setattr(tabu, "EJECT", False)
    for key, (hosts, digest) in DENSE.items():
        inst = _case(key)
        g = ffd(inst, "hosts")
        lb, _ = cheap_lower_bound(inst, "hosts")
        monkeypatch.setattr(tabu, "DROP_TRIES", 1)
        out = tabu_pack(inst, g.host_of, target=int(lb), time_limit=600, seed=7,
                        max_iters=1_500)
        assert out is not None, key
        assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []
        assert (_hosts(out), _digest(out)) == (hosts, digest), key
        monkeypatch.setattr(tabu, "DROP_TRIES", 8)
        monkeypatch.setattr(tabu, "EJECT", True)
        more = tabu_pack(inst, g.host_of, target=int(lb), time_limit=600, seed=7,
                         max_iters=1_500)
        assert more is not None and check(inst, Placement.from_arrays(inst, more), require_all=True) == []
        assert _hosts(more) <= hosts, key
        monkeypatch.setattr(tabu, "EJECT", False)


def test_freeing_the_host_needs_a_swap() -> None:
    # bins of 10: {6, 3}, {5, 4}, {2}. The 2 fits on neither full host (11), and no single
    # container moves to make room for it; after it is dropped onto one, one exchange frees the
    # host: {6, 3, 2} {5, 4} -> swap 3 + 2 with 4, or {6, 3} {5, 4, 2} -> swap 4 with 3.
    sizes = (6.0, 3.0, 5.0, 4.0, 2.0)
    inst = Instance("swap", ("s",), (HostType("b", (10.0,), 3),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate(sizes)))
    start = np.array([0, 0, 1, 1, 2])
    for moved in range(5):  # no single shift of the start packing frees a host
        for h in range(3):
            trial = start.copy()
            trial[moved] = h
            if _hosts(trial) == 2:
                assert check(inst, Placement.from_arrays(inst, trial), require_all=True)
    for seed in range(4):
        out = tabu_pack(inst, start, target=2, time_limit=60, seed=seed, max_iters=1)
        assert out is not None and _hosts(out) == 2
        assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []
        loads = sorted(np.bincount(out, weights=np.array(sizes))[np.unique(out)])
        assert loads == [10.0, 10.0]


def test_a_sample_of_destinations_on_many_hosts() -> None:
    # 8 destinations per iteration out of about 25 hosts: still feasible, above the bound,
    # fewer hosts than first fit, the same for the same seed
    inst = generate_random(15, 120, binding="two", rule_density=0.3, cap_fraction=0.3, seed=11)
    g = ffd(inst, "hosts")
    lb, _ = cheap_lower_bound(inst, "hosts")
    runs = [tabu_pack(inst, g.host_of, target=int(lb), time_limit=600, seed=3, max_iters=2_000,
                      sample=8) for _ in range(2)]
    assert runs[0] is not None and runs[1] is not None
    assert np.array_equal(runs[0], runs[1])
    assert check(inst, Placement.from_arrays(inst, runs[0]), require_all=True) == []
    assert lb <= _hosts(runs[0]) < _hosts(g.host_of)
    full = tabu_pack(inst, g.host_of, target=int(lb), time_limit=600, seed=3, max_iters=2_000,
                     sample=0)
    assert full is not None and not np.array_equal(full, runs[0])  # the sample did change moves


def test_a_host_that_cannot_be_emptied_is_skipped_for_the_next_lightest() -> None:
    # A (1 core) never shares a host with C (3 cores); B has 4 cores; hosts of 10 cores. The optimum
    # is 2 hosts ({A,B,B}, {C,C}). From {C,B} {C,B} {A} the lightest host {A} cannot be emptied
    # (both others run C); emptying a {C,B} host (C onto the other, B beside A) can.
    inst = Instance("skip", ("cpu",), (HostType("h", (10.0,), 3),),
                    (App("a", (1.0,), 1), App("b", (4.0,), 2), App("c", (3.0,), 2)),
                    exclusions=(("a", "c"),))
    start = np.array([2, 0, 1, 0, 1])  # containers: a b b c c
    assert check(inst, Placement.from_arrays(inst, start)) == []
    out = tabu_pack(inst, start, target=2, time_limit=60, seed=0, max_iters=10_000)
    assert out is not None and _hosts(out) == 2
    assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []


def _blocked() -> Instance:
    """x on host 0, y on host 1, z excluded from both: z fits only after x joins y (one ejection)."""
    return Instance("ej", ("s",), (HostType("b", (10.0,), 3),),
                    (App("x", (1.0,), 1), App("y", (1.0,), 1), App("z", (1.0,), 1)),
                    exclusions=(("x", "z"), ("y", "z")))


def test_open_hosts_take_a_blocked_container_by_one_ejection(
        monkeypatch: pytest.MonkeyPatch) -> None:
    inst = _blocked()
    start = np.array([0, 1, -1])
    out = tabu_pack(inst, start, target=2, time_limit=60, seed=0, hosts=np.array([0, 1]),
                    max_iters=1_000)
    assert out is not None and set(out.tolist()) <= {0, 1}
    assert out[0] == out[1] != out[2]  # x joined y; z alone
    assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []
    monkeypatch.setattr(tabu, "EJECT", False)  # no host takes z as the hosts stand
    assert tabu_pack(inst, start, target=2, time_limit=60, seed=0, hosts=np.array([0, 1]),
                     max_iters=1_000) is None
    assert tabu_pack(inst, start, target=2, time_limit=60, seed=0) is None  # no open hosts


def test_emptying_a_host_ejects_a_blocking_container(monkeypatch: pytest.MonkeyPatch) -> None:
    # x (1) alone on host 0, y (5) on host 1, z (5) on host 2; x is excluded from y and z, so
    # emptying the lightest host 0 needs y to join z first (one ejection)
    inst = Instance("ej2", ("s",), (HostType("b", (10.0,), 3),),
                    (App("x", (1.0,), 1), App("y", (5.0,), 1), App("z", (5.0,), 1)),
                    exclusions=(("x", "y"), ("x", "z")))
    monkeypatch.setattr(tabu, "DROP_TRIES", 1)  # only the lightest host is tried
    out = tabu_pack(inst, np.array([0, 1, 2]), target=2, time_limit=60, seed=0, max_iters=1_000)
    assert out is not None and _hosts(out) == 2 and out[1] == out[2] != out[0]
    assert check(inst, Placement.from_arrays(inst, out), require_all=True) == []
    monkeypatch.setattr(tabu, "EJECT", False)
    assert tabu_pack(inst, np.array([0, 1, 2]), target=2, time_limit=60, seed=0,
                     max_iters=1_000) is None


def test_settling_with_focus_is_seeded_and_feasible() -> None:
    # half the containers unplaced on the hosts first fit decreasing needs: many overloaded hosts
    # at once, so every iteration moves from `focus` of them (shifts and one-for-one swaps)
    inst = generate_random(10, 80, binding="two", rule_density=0.2, cap_fraction=0.3, seed=11)
    g = ffd(inst, "hosts")
    hosts = np.unique(g.host_of)
    start = g.host_of.copy()
    start[::2] = -1
    runs = [tabu_pack(inst, start, target=len(hosts), time_limit=600, seed=3, hosts=hosts,
                      focus=1, max_iters=20_000) for _ in range(2)]
    assert runs[0] is not None and runs[1] is not None
    assert np.array_equal(runs[0], runs[1])
    assert set(np.unique(runs[0]).tolist()) <= set(hosts.tolist())
    assert check(inst, Placement.from_arrays(inst, runs[0]), require_all=True) == []


def test_focused_search_on_large_packings_is_seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    # a sample of 4 destinations makes the packing "large"; FOCUS_WORK 0 makes every iteration
    # with more than one overloaded host a focused one
    monkeypatch.setattr(tabu, "FOCUS_WORK", 0.0)
    inst = generate_random(12, 120, binding="two", rule_density=0.2, cap_fraction=0.3, seed=5)
    g = ffd(inst, "hosts")
    lb, _ = cheap_lower_bound(inst, "hosts")
    runs = [tabu_pack(inst, g.host_of, target=int(lb), time_limit=600, seed=2, sample=4,
                      focus=1, max_iters=3_000) for _ in range(2)]
    assert runs[0] is not None and runs[1] is not None
    assert np.array_equal(runs[0], runs[1]) and _hosts(runs[0]) < _hosts(g.host_of)
    assert check(inst, Placement.from_arrays(inst, runs[0]), require_all=True) == []
