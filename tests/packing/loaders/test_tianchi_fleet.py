"""Tianchi loader options: a uniform fleet, rule sets and rounding up (fixture tests/data/tianchi_small)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from packing.errors import InputError
from packing.loaders.tianchi import load_tianchi, parse_fleet

DATA = Path(__file__).resolve().parents[2] / "data" / "tianchi_small"


def _demand(inst):  # noqa: ANN001, ANN202
    return np.array([a.demand for a in inst.apps])


def test_uniform_fleet_keeps_cpu_and_memory_only_with_the_given_count() -> None:
    contest = load_tianchi(DATA)
    inst = load_tianchi(DATA, hosts="64c128g:7")
    assert inst.resources == ("cpu", "mem")
    assert len(inst.host_types) == 1
    t = inst.host_types[0]
    assert t.capacity == (64.0, 128.0) and t.count == 7 and t.name == "uniform-64c128g"
    assert inst.initial is None
    assert np.array_equal(_demand(inst), _demand(contest)[:, :2])
    assert [a.count for a in inst.apps] == [a.count for a in contest.apps]
    assert inst.rules == contest.rules
    assert inst.name.endswith("-64c128g")


def test_automatic_fleet_size_is_twice_the_volume_bound() -> None:
    inst = load_tianchi(DATA, hosts="64c128g")
    d = _demand(inst)
    n = np.array([a.count for a in inst.apps])
    volume = max((d[:, 0] * n).sum() / 64, (d[:, 1] * n).sum() / 128)
    caps = {r.a: r.k for r in inst.rules if r.a == r.b and r.k > 0}
    most = max(math.ceil(a.count / caps.get(a.name, a.count)) for a in inst.apps if a.count)
    assert inst.host_types[0].count == max(2 * math.ceil(volume), most, 1)


def test_rule_sets() -> None:
    every = load_tianchi(DATA).rules
    cross = load_tianchi(DATA, rules="cross").rules
    assert cross == tuple(r for r in every if r.a != r.b)
    assert 0 < len(cross) < len(every)
    assert load_tianchi(DATA, rules="none").rules == ()


def test_round_up_ceils_peak_cpu_and_memory_only() -> None:
    exact = _demand(load_tianchi(DATA))
    up = _demand(load_tianchi(DATA, round_up=True))
    assert np.array_equal(up[:, :2], np.ceil(exact[:, :2]))
    assert np.array_equal(up[:, 2:], exact[:, 2:])
    assert (up[:, 0] != exact[:, 0]).any()


def test_full_view_fleet_has_the_time_points() -> None:
    inst = load_tianchi(DATA, view="full", hosts="32c64g:3")
    assert len(inst.resources) == 196
    assert inst.host_types[0].capacity == (32.0,) * 98 + (64.0,) * 98


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"hosts": "64x128"}, "hosts"), ({"hosts": "0c128g"}, "hosts"), ({"hosts": "64c128g:0"}, "hosts"),
    ({"rules": "some"}, "rules"), ({"view": "full", "round_up": True}, "round_up"),
])
def test_bad_options_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(InputError) as e:
        load_tianchi(DATA, **kwargs)
    assert e.value.problems[0].field == field


def test_parse_fleet() -> None:
    f = parse_fleet("92c288g:3000")
    assert (f.cpu, f.mem, f.count, f.spec) == (92.0, 288.0, 3000, "92c288g:3000")
    assert parse_fleet("64C128G").count is None
