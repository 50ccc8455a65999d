"""The shared contract every solver method passes (parametrised over ``solvers.METHODS``).

Optima are computed by hand in the comments. Methods whose module is missing are skipped; a
method that does not support an objective must say so with ``InputError``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packing.errors import InputError
from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance, Rule
from solvers import METHODS, AutoSettings, available, solve
from solvers.result import SolveResult
from solvers.search.greedy import ffd
from tests.solvers.warm import warm_search

SEARCH = "auto-search"
"""``auto`` with its tabu search and exact cover at any time limit (normally they need 20 s)."""
METHOD_NAMES = [*sorted(METHODS), SEARCH]
LIMIT = 10.0


def run(inst: Instance, method: str, **kw: object) -> SolveResult:
    name = "auto" if method == SEARCH else method
    if not available(name):
        pytest.skip(f"method {name} not importable")
    if method == SEARCH:
        warm_search()
        kw["settings"] = AutoSettings(search_min_left=0.0)
    kw.setdefault("time_limit", LIMIT)
    try:
        return solve(inst, name, **kw)  # type: ignore[arg-type]
    except InputError as e:
        if "objective" in str(e):
            pytest.skip(f"{method}: {e}")
        raise


def assert_valid(inst: Instance, res: SolveResult, *, require_all: bool = True) -> None:
    assert res.placement is not None
    assert check(inst, res.placement, require_all=require_all) == []
    assert res.objective is not None
    if res.objective_kind == "deployed":
        assert res.bound >= res.objective - 1e-9
    else:
        assert res.bound <= res.objective + 1e-9


def one_type(cap: tuple[float, ...], count: int, *apps: App, **kw: object) -> Instance:
    return Instance("t", tuple(f"r{i}" for i in range(len(cap))), (HostType("h", cap, count),),
                    apps, **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------
# hand-computed optima
def _anti_affinity() -> tuple[Instance, float]:
    # 7 tiny containers, at most 2 per host: ceil(7/2) = 4 hosts although volume says 1
    return one_type((100.0,), 10, App("a", (1.0,), 7, max_per_host=2)), 4


def _exclusion() -> tuple[Instance, float]:
    # a and b exclude each other; each fits on one host (volume 1, but 2 needed); c fits with
    # either: 2 hosts
    inst = one_type((10.0,), 5, App("a", (3.0,), 2), App("b", (3.0,), 2), App("c", (2.0,), 1),
                    exclusions=(("a", "b"),))
    return inst, 2


def _rule() -> tuple[Instance, float]:
    # <a, b, 1>: a host running a takes at most 1 b. a: 2 x 1, b: 6 x 1, cap 10.
    # volume: 8 -> 1 host; with the rule: a host with a holds <= 1 b, so b needs a host without a
    # (5 b there is fine): host 1 = a, a, b; host 2 = 5 b -> 2 hosts
    inst = one_type((10.0,), 5, App("a", (1.0,), 2), App("b", (1.0,), 6),
                    rules=(Rule("a", "b", 1),))
    return inst, 2


def _rule_tight() -> tuple[Instance, float]:
    # <a, b, 0> one way only and a cap on b of 2: b (5 containers) needs 3 hosts without a;
    # a (3 x 4 on capacity 10) needs 2 hosts (2 per host) -> 5 hosts
    inst = one_type((10.0,), 8, App("a", (4.0,), 3), App("b", (1.0,), 5, max_per_host=2),
                    rules=(Rule("a", "b", 0),))
    return inst, 5


def _two_resources() -> tuple[Instance, float]:
    # (6, 1) x 2 and (1, 6) x 2 on (10, 10): pair one of each per host -> 2 hosts
    inst = one_type((10.0, 10.0), 4, App("cpu", (6.0, 1.0), 2), App("mem", (1.0, 6.0), 2))
    return inst, 2


def _ffd_not_optimal() -> tuple[Instance, float]:
    # sizes 5 5 4 4 3 3 3 3 (sum 30) on capacity 10: first fit decreasing 5+5 | 4+4 | 3+3+3 | 3
    # -> 4 hosts; the optimum is 3 (5+5, 4+3+3, 4+3+3), the volume bound
    inst = one_type((10.0,), 8, *(App(f"i{k}", (s,), 1)
                                  for k, s in enumerate((5.0, 5.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0))))
    return inst, 3


def _volume_too_low() -> tuple[Instance, float]:
    # total (20, 20) on (10, 10): 2 hosts would have to be filled exactly, and no subset of
    # (6,2) (2,6) (6,2) (2,6) (4,4) sums to (10, 10) -> 3 hosts, e.g. (6,2)+(2,6) twice, (4,4)
    inst = one_type((10.0, 10.0), 6, App("x", (6.0, 2.0), 2), App("y", (2.0, 6.0), 2),
                    App("z", (4.0, 4.0), 1))
    return inst, 3


CASES = {"anti_affinity": _anti_affinity, "exclusion": _exclusion, "rule": _rule,
         "rule_tight": _rule_tight, "two_resources": _two_resources,
         "ffd_not_optimal": _ffd_not_optimal, "volume_too_low": _volume_too_low}


@pytest.mark.parametrize("method", METHOD_NAMES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_hand_optimum(method: str, case: str) -> None:
    inst, opt = CASES[case]()
    res = run(inst, method)
    assert_valid(inst, res)
    assert res.status == "optimal"
    assert res.objective == opt
    assert res.bound == pytest.approx(opt)
    assert res.hosts == opt
    assert res.gap == 0


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_costs_prefer_cheaper_mixed_types(method: str) -> None:
    # 8 containers of 5. big (20, cost 3) holds 4, small (10, cost 1) holds 2.
    # all big: 2 x 3 = 6; all small: 4 x 1 = 4; only 3 small exist: 3 small + 1 big = 6;
    # best: 3 small (6 containers) + ... 2 left need a big (3) = 6, or 2 big = 6, or
    # 1 big (4) + 2 small (4) = 5  -> optimum 5
    inst = Instance("c", ("cpu",), (HostType("big", (20.0,), 3, cost=3.0),
                                     HostType("small", (10.0,), 3, cost=1.0)),
                    (App("a", (5.0,), 8),))
    res = run(inst, method)
    assert_valid(inst, res)
    assert res.objective_kind == "cost"
    assert res.status == "optimal"
    assert res.objective == pytest.approx(5.0)
    assert res.hosts == 3


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_gpu_shares_and_whole_cards(method: str) -> None:
    # hosts with 2 cards of 1000. w: 2 containers x 1 whole card; s: 3 x 600 share; t: 2 x
    # (2 cards x 400). Card loads: whole cards 2, shares 600 each can pair with 400s only.
    # 7 cards' worth of usage at least (2 whole + 3 cards for 600s + t's 400s fit beside
    # the 600s: 2 x 2 x 400 on 4 cards) -> 2 whole + 3 (600) + 1 more card for the 4th 400
    # => >= 6 cards -> 3 hosts; 3 hosts suffice (hand placement checked by the solvers).
    inst = Instance("g", ("cpu",), (HostType("g", (100.0,), 5, gpus=2, gpu_capacity=(1000.0,)),),
                    (App("w", (1.0,), 2, gpu_cards=1, gpu_whole=True),
                     App("s", (1.0,), 3, gpu_cards=1, gpu_per_card=(600.0,)),
                     App("t", (1.0,), 2, gpu_cards=2, gpu_per_card=(400.0,))),
                    gpu_resources=("gpu_milli",))
    res = run(inst, method)
    assert_valid(inst, res)
    assert res.status == "optimal"
    assert res.objective == 3


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_gpu_model_restriction(method: str) -> None:
    # a wants A100 cards: only the 2 a100 hosts, 1 card each whole -> 2 hosts, although the
    # v100 hosts are plentiful
    inst = Instance("m", ("cpu",), (HostType("v100", (10.0,), 4, gpus=1, gpu_capacity=(1.0,),
                                             gpu_model="V100"),
                                    HostType("a100", (10.0,), 2, gpus=1, gpu_capacity=(1.0,),
                                             gpu_model="A100")),
                    (App("a", (1.0,), 2, gpu_cards=1, gpu_whole=True, gpu_models=("A100",)),),
                    gpu_resources=("gpu",))
    res = run(inst, method)
    assert_valid(inst, res)
    assert res.objective == 2
    assert set(res.placement.hosts["a"]) == {4, 5}  # type: ignore[union-attr]


# ------------------------------------------------------------------------------------------------
# infeasible instances
@pytest.mark.parametrize("method", METHOD_NAMES)
def test_infeasible_cap_names_the_app(method: str) -> None:
    inst = one_type((100.0,), 2, App("lonely", (1.0,), 3, max_per_host=1))
    res = run(inst, method)
    assert res.status == "infeasible"
    assert res.placement is None and res.objective is None
    assert res.reason is not None and "lonely" in res.reason
    assert res.bound == math.inf  # proven infeasible (SolveResult.bound; null in --json)


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_infeasible_too_big(method: str) -> None:
    inst = one_type((4.0, 4.0), 3, App("fat", (2.0, 5.0), 1), App("ok", (1.0, 1.0), 2))
    res = run(inst, method)
    assert res.status == "infeasible"
    assert res.reason is not None and "fat" in res.reason
    assert res.bound == math.inf


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_no_host_types(method: str) -> None:
    """Apps and no host types (manifests without --hosts): infeasible, or 0 deployed; no crash."""
    inst = Instance("t", ("cpu",), (), (App("a", (1.0,), 2),))
    res = run(inst, method)
    assert res.status == "infeasible" and res.placement is None and res.bound == math.inf
    assert res.reason == "app 'a': the instance has no host types"
    res = run(inst, method, objective="deployed")
    assert (res.status, res.objective, res.bound) == ("optimal", 0, 0)


# ------------------------------------------------------------------------------------------------
# time limits, deployed
def _medium(seed: int = 3) -> Instance:
    rng = np.random.default_rng(seed)
    apps = tuple(App(f"a{i}", (float(rng.integers(5, 40)), float(rng.integers(5, 40))),
                     int(rng.integers(1, 6))) for i in range(40))
    return Instance("m", ("cpu", "mem"), (HostType("h", (100.0, 100.0), 200),), apps)


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_tiny_time_limit_still_feasible(method: str) -> None:
    inst = _medium()
    res = run(inst, method, time_limit=0.05)
    assert res.status in ("optimal", "feasible")
    assert_valid(inst, res)
    assert res.seconds < 5.0
    assert res.objective <= ffd(inst).objective  # type: ignore[operator]


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_deployed_on_too_few_hosts(method: str) -> None:
    # 2 hosts of 10; 5 containers of 4 (2 per host) and 4 of 2 (0 space left... 2 per host
    # beside two 4s): best is 2 x (4, 4, 2) = 6 containers; or 2 x (4, 2, 2, 2)... a host holds
    # 10: (4,2,2,2) = 4 containers; 2 hosts x 4 = 8 (uses 2 x 4 and 6 of... only 4 x 2 exist):
    # host1 4+2+2+2 (4 ctrs), host2 4+4+2 (3 ctrs) -> 7; (2,2,2,2) + (4,4) = 6. Optimum 7.
    inst = one_type((10.0,), 2, App("big", (4.0,), 5), App("small", (2.0,), 4))
    res = run(inst, method, objective="deployed")
    assert res.objective_kind == "deployed"
    assert_valid(inst, res, require_all=False)
    assert res.objective == 7
    assert res.status == "optimal"
    assert res.bound == 7  # the proven upper bound for a maximisation


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_progress_callback(method: str) -> None:
    events = []
    inst = _medium(5)
    res = run(inst, method, time_limit=2.0, callback=events.append)
    assert_valid(inst, res)
    assert events, "no progress reported"
    assert all(e.seconds >= 0 for e in events)
    assert [e.seconds for e in events] == sorted(e.seconds for e in events)


# ------------------------------------------------------------------------------------------------
# random instances: every method agrees where it proves optimality; bound <= opt <= FFD
@st.composite
def small_instances(draw: st.DrawFn) -> Instance:
    n_apps = draw(st.integers(1, 5))
    apps = []
    for i in range(n_apps):
        d = (float(draw(st.integers(1, 10))), float(draw(st.integers(1, 10))))
        cap = draw(st.one_of(st.none(), st.integers(1, 3)))
        apps.append(App(f"a{i}", d, draw(st.integers(1, 5)), max_per_host=cap))
    names = [a.name for a in apps]
    rules = []
    if n_apps >= 2 and draw(st.booleans()):
        a, b = draw(st.permutations(names))[:2]
        rules.append(Rule(a, b, draw(st.integers(0, 2))))
    return Instance("h", ("r0", "r1"), (HostType("h", (10.0, 10.0), 25),), tuple(apps),
                    rules=tuple(rules))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances())
def test_methods_agree(inst: Instance) -> None:
    upper = ffd(inst)
    results = {}
    for method in METHOD_NAMES:
        if not available("auto" if method == SEARCH else method):
            continue
        res = run(inst, method, time_limit=5.0)
        assert_valid(inst, res)
        assert res.objective <= upper.objective  # type: ignore[operator]
        results[method] = res
    optima = {m: r.objective for m, r in results.items() if r.status == "optimal"}
    assert len(set(optima.values())) <= 1, optima
    if optima:
        opt = next(iter(optima.values()))
        for m, r in results.items():  # no bound above a proven optimum, no objective below it
            assert r.bound <= opt + 1e-9, (m, r.bound, opt)
            assert r.objective >= opt - 1e-9, (m, r.objective, opt)  # type: ignore[operator]
