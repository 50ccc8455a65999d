"""The configuration LP bound on allocated GPU (solvers.bounds.gpu_config) against brute force, hand cases."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.model.instance import App, HostType, Instance, Placement
from solvers.bounds.gpu_config import ConfigBound, gpu_value, price


def _random_instance(rng: np.random.Generator) -> Instance:
    """1-2 host types (1-3 cards, models A/B, non-integer CPU and memory), 2-4 apps, at most 5 pods.

    Apps: CPU-only, whole-card (1-2 cards), sharing (one card, various shares), sharing on two cards;
    some restricted to model A.
    """
    types = []
    for t in range(int(rng.integers(1, 3))):
        cap = (float(rng.choice([3.0, 4.5, 6.0, 7.25])), float(rng.integers(4, 13)) + 0.5)
        types.append(HostType(f"t{t}", cap, int(rng.integers(1, 3)), gpus=int(rng.integers(1, 4)),
                              gpu_capacity=(1000.0,), gpu_model="AB"[t]))
    apps = []
    n_pods = 0
    for a in range(int(rng.integers(2, 5))):
        kind = int(rng.integers(5))
        cnt = min(int(rng.integers(1, 3)), 5 - n_pods)
        if cnt <= 0:
            break
        n_pods += cnt
        dem = (float(rng.choice([0.5, 1.25, 2.0, 2.5, 3.75])), float(rng.choice([1.0, 2.5, 4.0, 6.5])))
        models = ("A",) if rng.random() < 0.25 else ()
        if kind == 0:
            apps.append(App(f"c{a}", dem, cnt))
        elif kind == 1:
            apps.append(App(f"w{a}", dem, cnt, gpu_cards=int(rng.integers(1, 3)), gpu_whole=True,
                            gpu_models=models))
        elif kind == 2:
            apps.append(App(f"d{a}", dem, cnt, gpu_cards=2,
                            gpu_per_card=(float(rng.choice([300.0, 450.0, 600.0])),), gpu_models=models))
        else:
            apps.append(App(f"s{a}", dem, cnt, gpu_cards=1,
                            gpu_per_card=(float(rng.choice([200, 250, 450, 500, 550, 700, 900])),),
                            gpu_models=models))
    return Instance("tiny", ("cpu", "mem"), tuple(types), tuple(apps), gpu_resources=("gpu_milli",))


def _exact(inst: Instance) -> tuple[float, Placement]:
    """The most GPU any placement allocates: depth-first over pods, hosts and card subsets.

    Uses the one feasibility (:class:`packing.feasibility.predicates.ClusterState`); the best placement found
    is
    returned too (the caller runs it through the checker).
    """
    q = gpu_value(inst)
    pods = [a for a, app in enumerate(inst.apps) for _ in range(app.count)]
    st = ClusterState(inst)
    host_of = np.full(len(pods), -1, dtype=np.int64)
    cards_of: list[tuple[int, ...]] = [()] * len(pods)
    best = [-1.0, host_of.copy(), list(cards_of)]
    types = inst.host_type_of

    def dfs(i: int, val: float) -> None:
        if i == len(pods):
            if val > best[0]:
                best[0], best[1], best[2] = val, host_of.copy(), list(cards_of)
            return
        a = pods[i]
        mask = st.mask(a)
        k = int(inst.gpu_cards[a])
        for h in np.flatnonzero(mask).tolist():
            subsets = itertools.combinations(st.cards_fitting(a, h).tolist(), k) if k else [()]
            for cards in subsets:
                st.place(a, h, cards)
                host_of[i], cards_of[i] = h, tuple(cards)
                dfs(i + 1, val + float(q[a, types[h]]))
                st.remove(a, h, cards)
                host_of[i], cards_of[i] = -1, ()
        dfs(i + 1, val)

    dfs(0, 0.0)
    return float(best[0]), Placement.from_arrays(inst, best[1], best[2])


@pytest.mark.parametrize("seed", range(30))
def test_bound_is_at_least_the_brute_force_optimum(seed: int) -> None:
    inst = _random_instance(np.random.default_rng(seed))
    exact, placement = _exact(inst)
    assert check(inst, placement) == []  # the brute force's optimum is a real placement
    res = ConfigBound(inst).solve(inst.counts, time_limit=20)
    assert res.bound >= exact - 1e-9
    assert res.bound <= res.trivial * (1 + 1e-9) + 1e-6
    assert res.exact  # decimal data: the integer rows are the checker's


@pytest.mark.parametrize("seed", range(30, 40))
def test_bound_stays_valid_when_stopped_at_once(seed: int) -> None:
    inst = _random_instance(np.random.default_rng(seed))
    exact, _ = _exact(inst)
    res = ConfigBound(inst).solve(inst.counts, time_limit=0.0, pricing_limit=0.0, fast_limit=0.0)
    assert res.bound >= exact - 1e-9


def _one(cpu: float, gpus: int, count: int = 1, model: str | None = None) -> tuple[HostType, ...]:
    return (HostType("h", (cpu, 64.0), count, gpus=gpus, gpu_capacity=(1000.0,), gpu_model=model),)


def test_cpu_per_host_binds_where_the_aggregate_does_not() -> None:
    # two hosts of 8 CPU and 2 cards; four whole-card pods of 5 CPU: 3.2 pods fit in aggregate, but
    # one per host really
    apps = (App("w", (5.0, 1.0), 4, gpu_cards=1, gpu_whole=True),)
    inst = Instance("c", ("cpu", "mem"), _one(8.0, 2, 2), apps, gpu_resources=("gpu_milli",))
    res = ConfigBound(inst).solve(inst.counts)
    assert res.bound == pytest.approx(2000.0, abs=1e-3)
    assert res.converged and res.exact


def test_shares_must_pack_into_single_cards() -> None:
    # one host, two cards: shares 600, 600, 450, 450, 300 (2400 in total, 2000 of card capacity); the
    # best is 600+300 and 600 + ... : cards hold {600, 300} and {450, 450} = 1800, or {600} {600} ...
    apps = (App("a", (0.5, 1.0), 2, gpu_cards=1, gpu_per_card=(600.0,)),
            App("b", (0.5, 1.0), 2, gpu_cards=1, gpu_per_card=(450.0,)),
            App("c", (0.5, 1.0), 1, gpu_cards=1, gpu_per_card=(300.0,)))
    inst = Instance("s", ("cpu", "mem"), _one(8.0, 2), apps, gpu_resources=("gpu_milli",))
    exact, _ = _exact(inst)
    assert exact == pytest.approx(1800.0)
    assert ConfigBound(inst).solve(inst.counts).bound == pytest.approx(1800.0, abs=1e-3)


def test_whole_cards_and_models() -> None:
    # a 2-card pod needs both cards of a host; a model-B pod cannot go on model A
    apps = (App("w2", (1.0, 1.0), 1, gpu_cards=2, gpu_whole=True),
            App("s", (1.0, 1.0), 3, gpu_cards=1, gpu_per_card=(500.0,)),
            App("b", (1.0, 1.0), 2, gpu_cards=1, gpu_whole=True, gpu_models=("B",)))
    inst = Instance("w", ("cpu", "mem"), _one(8.0, 2, 2, model="A"), apps, gpu_resources=("gpu_milli",))
    exact, _ = _exact(inst)
    assert exact == pytest.approx(3500.0)  # one host: both cards whole (2000); the other: 3 x 500
    assert ConfigBound(inst).solve(inst.counts).bound == pytest.approx(3500.0, abs=1e-3)


def test_checker_tolerance_is_kept_for_decimal_data() -> None:
    # 0.1 + 0.2 CPU on a 0.3 CPU host: the checker accepts it (float sum within its tolerance)
    apps = (App("a", (0.1, 1.0), 1, gpu_cards=1, gpu_per_card=(300.0,)),
            App("b", (0.2, 1.0), 1, gpu_cards=1, gpu_per_card=(300.0,)))
    host = (HostType("h", (0.3, 2.0), 1, gpus=1, gpu_capacity=(1000.0,)),)
    inst = Instance("t", ("cpu", "mem"), host, apps, gpu_resources=("gpu_milli",))
    exact, placement = _exact(inst)
    assert exact == pytest.approx(600.0) and check(inst, placement) == []
    assert ConfigBound(inst).solve(inst.counts).bound >= 600.0 - 1e-9


def test_pricing_matches_enumeration() -> None:
    rng = np.random.default_rng(7)
    for _ in range(8):
        inst = _random_instance(rng)
        cb = ConfigBound(inst)
        for td in cb.types:
            v = td.value - rng.random(len(td.apps)) * 800.0
            n = inst.counts[td.apps]
            pr = price(td, v, n)
            # enumerate count vectors on one host of the type and keep those the state accepts
            one = inst.replace(host_types=(inst.host_types[td.t].__class__(
                "h", inst.host_types[td.t].capacity, 1, gpus=td.gpus, gpu_capacity=(1000.0,),
                gpu_model=inst.host_types[td.t].gpu_model),))
            best = 0.0
            for x in itertools.product(*[range(int(c) + 1) for c in n]):
                if float(v @ np.array(x)) <= best:
                    continue
                if _fits_one(one, td.apps, x):
                    best = float(v @ np.array(x))
            assert pr.upper >= best - 1e-9
            assert pr.found <= best + 1e-9
            if pr.optimal:
                assert pr.found == pytest.approx(best, abs=1e-6 * max(1.0, best))


def _fits_one(one: Instance, apps: np.ndarray, x: tuple[int, ...]) -> bool:
    """Whether the pods ``x`` (counts over ``apps``) fit one host, cards tried by depth-first search."""
    pods = [int(a) for a, c in zip(apps, x, strict=True) for _ in range(c)]
    st = ClusterState(one)

    def dfs(i: int) -> bool:
        if i == len(pods):
            return True
        a = pods[i]
        if not st.mask(a)[0]:
            return False
        k = int(one.gpu_cards[a])
        for cards in itertools.combinations(st.cards_fitting(a, 0).tolist(), k) if k else [()]:
            st.place(a, 0, cards)
            ok = dfs(i + 1)
            st.remove(a, 0, cards)
            if ok:
                return True
        return False

    return dfs(0)
