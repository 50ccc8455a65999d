from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from packing.errors import InputError
from packing.feasibility.checker import check
from packing.io import load_instance, save_instance
from packing.loaders import load_any, load_tianchi
from packing.loaders.tianchi import resource_names
from packing.model.instance import Rule

DATA = Path(__file__).resolve().parents[2] / "data" / "tianchi_small"
RULES = "scheduling_preliminary_b_app_interference_20180726.csv"
DEPLOY = "scheduling_preliminary_b_instance_deploy_20180726.csv"
MACHINES = "scheduling_preliminary_b_machine_resources_20180726.csv"
APPS = "scheduling_preliminary_b_app_resources_20180726.csv"


@pytest.fixture(scope="module")
def small():
    return load_tianchi(DATA)


def test_counts_and_resources(small):
    s = small.summary()
    assert (s["apps"], s["containers"], s["hosts"], s["host_types"]) == (26, 84, 20, 2)
    assert s["rules"] == 34  # one rule per row of the interference file
    assert s["initially_placed"] == 84 - 45  # 45 deploy rows have an empty machine_id
    assert small.resources == ("cpu", "mem", "disk", "P", "M", "PM")


def test_app_demand_is_peak_of_curves(small):
    # app_4026: cpu curve peaks at 2.263465, mem curve at 8, disk 60, P/M/PM 0 (read off the file)
    a = small.apps[small.app_index["app_4026"]]
    assert a.demand == (2.263465, 8.0, 60.0, 0.0, 0.0, 0.0)
    assert a.count == 11


def test_host_types_keep_machine_names(small):
    t0, t1 = small.host_types
    assert t0.capacity == (32.0, 64.0, 1440.0, 7.0, 3.0, 7.0)
    assert t1.capacity == (92.0, 288.0, 2457.0, 7.0, 7.0, 9.0)
    assert t0.count == t1.count == 10
    assert t0.host_names is not None and t0.host_names[0] == "machine_40"
    assert len(set(small.host_names)) == 20


def test_self_rows_get_plus_one(small):
    rules = set(small.rules)
    # file rows: app_6184,app_6184,0 / app_4502,app_4502,1 / app_4026,app_4026,2
    assert Rule("app_6184", "app_6184", 1) in rules
    assert Rule("app_4502", "app_4502", 2) in rules
    assert Rule("app_4026", "app_4026", 3) in rules
    cap = dict(zip([a.name for a in small.apps], small.cap.tolist(), strict=True))
    assert cap["app_6184"] == 1
    assert cap["app_4502"] == 2
    assert cap["app_4026"] == 3
    # cross rows are kept literally
    assert Rule("app_4026", "app_1384", 1) in rules
    assert Rule("app_2533", "app_875", 0) in rules


def test_initial_deployment_maps_machines_and_binds_rules(small):
    init = small.initial
    names = [small.host_names[h] for h in init.hosts["app_4026"] if h >= 0]
    assert names == ["machine_40", "machine_2836", "machine_5688", "machine_4215"]
    assert sum(h < 0 for h in init.hosts["app_4026"]) == 7
    assert check(small, init) == []
    # <app_4026, app_1384, 1> is tight on machine_5688: with k = 0 it is broken there
    h = small.host_index["machine_5688"]
    assert init.hosts["app_1384"] == (h,)
    tighter = small.replace(rules=tuple(
        Rule(r.a, r.b, 0) if (r.a, r.b) == ("app_4026", "app_1384") else r for r in small.rules))
    v = check(tighter, init)
    assert [(x.kind, x.host, x.app, x.other) for x in v] == [("rule", h, "app_4026", "app_1384")]


def test_full_view(small):
    full = load_any(DATA, view="full")
    assert full.n_resources == 200
    assert full.resources == resource_names("full")
    assert full.resources[:2] == ("cpu_t00", "cpu_t01") and full.resources[-5:] == (
        "mem_t97", "disk", "P", "M", "PM")
    d = full.demand
    i = full.app_index["app_4026"]
    assert d[i, 0] == 1.096 and d[i, 97] == 1.007  # first and last cpu points in the file
    # the reduced view is the peak of the full curves, for every app
    np.testing.assert_array_equal(small.demand[:, 0], d[:, :98].max(axis=1))
    np.testing.assert_array_equal(small.demand[:, 1], d[:, 98:196].max(axis=1))
    np.testing.assert_array_equal(small.demand[:, 2:], d[:, 196:])
    assert full.type_capacity[0, :98].tolist() == [32.0] * 98
    assert check(full, full.initial) == []


@pytest.mark.parametrize("view", ["reduced", "full"])
def test_round_trip(tmp_path, view):
    inst = load_tianchi(DATA, view=view)
    save_instance(inst, tmp_path / "t.json")
    assert load_instance(tmp_path / "t.json") == inst


# ------------------------------------------------------------------------------------------------
def _broken(tmp_path: Path, fname: str, edit) -> Path:
    d = tmp_path / "tc"
    shutil.copytree(DATA, d)
    p = d / fname
    lines = p.read_text().splitlines()
    p.write_text("\n".join(edit(lines)) + "\n")
    return d


def _fields(e: InputError) -> list[str]:
    return [p.field for p in e.problems]


def test_unknown_app_in_rule(tmp_path):
    d = _broken(tmp_path, RULES, lambda ls: ls + ["app_4026,app_nope,1"])
    with pytest.raises(InputError) as e:
        load_tianchi(d)
    assert _fields(e.value) == ["line 35, column app_b"]
    assert "unknown app 'app_nope'" in e.value.problems[0].reason
    assert e.value.problems[0].source.endswith(RULES)


def test_unknown_app_and_machine_in_deploy(tmp_path):
    d = _broken(tmp_path, DEPLOY, lambda ls: ls + ["inst_x,app_zz,", "inst_y,app_70,machine_9"])
    with pytest.raises(InputError) as e:
        load_tianchi(d)
    assert _fields(e.value) == ["line 85, column app_id", "line 86, column machine_id"]


def test_non_number_negative_and_wrong_field_count(tmp_path):
    def edit(ls):
        ls[0] = ls[0].replace(",32,", ",lots,")
        ls[1] = ls[1].rsplit(",", 1)[0] + ",-7"
        ls[2] = ls[2] + ",1"
        return ls

    d = _broken(tmp_path, MACHINES, edit)
    with pytest.raises(InputError) as e:
        load_tianchi(d)
    probs = e.value.problems
    assert _fields(e.value) == ["line 1, column cpu", "line 2, column PM", "line 3"]
    assert "expected a number" in probs[0].reason
    assert "must not be negative" in probs[1].reason
    assert "has 8 fields, expected 7" in probs[2].reason


def test_bad_curve(tmp_path):
    def edit(ls):
        ls[3] = ls[3].replace("|", "|x", 1)
        ls[4] = ls[4].replace("|", "", 1)  # 97 values
        return ls

    d = _broken(tmp_path, APPS, edit)
    with pytest.raises(InputError) as e:
        load_tianchi(d)
    assert _fields(e.value) == ["line 5, column cpu_curve", "line 4, column cpu_curve"]
    assert "has 97 values" in e.value.problems[0].reason
    assert "value 2 is not a number" in e.value.problems[1].reason


def test_problems_are_capped(tmp_path):
    d = _broken(tmp_path, DEPLOY, lambda ls: [f"i{j},nope,".format() for j in range(100)])
    with pytest.raises(InputError) as e:
        load_tianchi(d)
    assert len(e.value.problems) == 21
    assert "stopped after 20 problems" in e.value.problems[-1].reason


def test_missing_file_is_not_tianchi(tmp_path):
    d = _broken(tmp_path, RULES, lambda ls: ls)
    (d / RULES).unlink()
    with pytest.raises(InputError, match="unknown kind of input"):
        load_any(d)
    with pytest.raises(InputError, match="app_interference"):
        load_tianchi(d)


@pytest.mark.shared_data
def test_full_data_set(shared_data):
    inst = load_any(shared_data / "alibaba-tianchi-2018")
    s = inst.summary()
    assert (s["apps"], s["containers"], s["hosts"], s["rules"]) == (9338, 68224, 6000, 33416)
    assert s["initially_placed"] == 61254
    assert s["cross_rules"] == 24078
    assert [t.count for t in inst.host_types] == [3000, 3000]
