"""One options object for every method, and the bound named for the side it is on."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from packing.model.instance import App, HostType, Instance
from solvers import DEFAULT_OPTIONS, METHODS, SolveOptions, available, get_method, solve
from solvers.result import SolveResult


def _bins() -> Instance:
    """Sizes 5,5,4,4,3,3,3,3 in bins of 10: volume 30, so 3 bins (5+5, 4+3+3, 4+3+3) are optimal."""
    sizes = [5.0, 5.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0]
    return Instance("bp", ("s",), (HostType("b", (10.0,), 8),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate(sizes)))


def _crowded() -> Instance:
    """Four tasks of 6 on two hosts of 10: at most two deploy (one per host)."""
    return Instance("crowd", ("s",), (HostType("b", (10.0,), 2),),
                    tuple(App(f"t{k}", (6.0,), 1) for k in range(4)))


def test_options_are_frozen_and_default_like_solve() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_OPTIONS.time_limit = 1.0  # type: ignore[misc]
    params = inspect.signature(solve).parameters
    for f in dataclasses.fields(SolveOptions):
        assert f.name in params
        if f.name != "objective":
            assert params[f.name].default == getattr(DEFAULT_OPTIONS, f.name), f.name
    changed = DEFAULT_OPTIONS.replace(time_limit=5.0, seed=3)
    assert (changed.time_limit, changed.seed, changed.workers) == (5.0, 3, DEFAULT_OPTIONS.workers)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_takes_the_options(method: str) -> None:
    if not available(method):
        pytest.skip(f"{method} is not installed")
    seen: list[object] = []
    opts = SolveOptions(time_limit=10.0, workers=1, seed=0, objective="hosts", callback=seen.append)
    direct = get_method(method)(_bins(), opts)
    assert isinstance(direct, SolveResult)
    assert (direct.status, direct.objective, direct.bound) == ("optimal", 3.0, 3.0)
    front = solve(_bins(), method, time_limit=10.0, workers=1, seed=0, objective="hosts")
    assert (front.status, front.objective, front.bound) == ("optimal", 3.0, 3.0)


def test_minimising_bound_is_a_lower_bound() -> None:
    res = solve(_bins(), "cpsat", time_limit=10.0, workers=1)
    assert res.bound_kind == "lower" and res.bound == 3.0
    d = res.to_dict()
    assert d["bound"] == 3.0 and d["bound_kind"] == "lower" and "lower_bound" not in d


def test_lower_bound_is_a_deprecated_read_only_alias() -> None:
    res = solve(_bins(), "cpsat", time_limit=10.0, workers=1)
    with pytest.warns(DeprecationWarning, match="SolveResult.bound"):
        old = res.lower_bound
    assert old == res.bound == 3.0
    with pytest.raises(AttributeError):
        res.lower_bound = 2.0  # type: ignore[misc]


@pytest.mark.parametrize("method", ["cpsat", "pulp", "auto"])
def test_deployed_bound_is_an_upper_bound(method: str) -> None:
    if not available(method):
        pytest.skip(f"{method} is not installed")
    res = solve(_crowded(), method, time_limit=10.0, workers=1, objective="deployed")
    assert res.objective == 2.0 and res.status == "optimal"
    assert res.bound_kind == "upper" and res.bound == 2.0 >= res.objective
    d = res.to_dict()
    assert d["bound_kind"] == "upper" and d["bound"] == 2.0
