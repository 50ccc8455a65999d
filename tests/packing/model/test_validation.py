"""Instances built in Python are checked like files: every defect is named, nothing invalid exists.

The property test injects one or several defects into a valid random instance and asserts that
building it raises one :class:`InputError` naming each defect (field and reason), the same
through the constructor, ``dataclasses.replace`` and the :meth:`Instance.replace` fast path.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packing.errors import InputError
from packing.io import load_instance, save_instance
from packing.model.instance import App, HostType, Instance, Placement, Request, Rule
from packing.model.selection import Requirement, Taint, Toleration
from packing.model.validation import CONTROL_CATEGORIES, MAX_CONTAINERS, has_control
from tests.packing.strategies import instances


def small(**kw: Any) -> Instance:
    fields: dict[str, Any] = {
        "name": "demo", "resources": ("cpu", "mem"),
        "host_types": (HostType("h", (8.0, 16.0), 2),),
        "apps": (App("db", (2.0, 4.0), 1), App("cache", (1.0, 1.0), 2)),
    }
    fields.update(kw)
    return Instance(**fields)


def problems_of(fn: Any) -> list[tuple[str, str, str]]:
    with pytest.raises(InputError) as e:
        fn()
    return [(p.source, p.field, p.reason) for p in e.value.problems]


# ------------------------------------------------------------------------------------------------
# the examples a new user meets
def test_a_typo_in_an_exclusion_is_named() -> None:
    probs = problems_of(lambda: small(exclusions=(("db", "cahce"),)))
    assert probs == [("demo", "exclusions[0][1]", "unknown app 'cahce'")]


def test_negative_demand_and_duplicate_apps_are_refused() -> None:
    probs = problems_of(lambda: small(apps=(App("db", (-2.0, 4.0), 1), App("db", (1.0, 1.0), 1))))
    assert ("demo", "apps[0] (db).demand[0]", "must not be negative, got -2") in probs
    assert ("demo", "apps[1].name", "duplicate app 'db'") in probs


@pytest.mark.parametrize("count, reason", [
    (None, "expected a whole number, got None"),
    (2.0, "expected a whole number (an int), got a float (2.0)"),
    (-1, "must not be negative, got -1"),
    ("2", "expected a whole number, got a string ('2')"),
    (True, "expected a whole number, got a boolean (True)"),
])
def test_a_host_count_of_the_wrong_type_is_an_input_error(count: Any, reason: str) -> None:
    probs = problems_of(lambda: small(host_types=(HostType("h", (8.0, 16.0), count),)))
    assert probs == [("demo", "host_types[0] (h).count", reason)]


@pytest.mark.parametrize("value, reason", [
    (math.nan, "expected a finite number, got nan"),
    (math.inf, "expected a finite number, got inf"),
    (2.0**60, "is beyond the supported range"),
    (None, "expected a finite number, got None"),
])
def test_numbers_must_be_finite_and_in_range(value: Any, reason: str) -> None:
    probs = problems_of(lambda: small(apps=(App("db", (1.0, value), 1),)))
    assert len(probs) == 1 and probs[0][1] == "apps[0] (db).demand[1]"
    assert probs[0][2].startswith(reason)


def test_vectors_by_resource_name() -> None:
    inst = small(host_types=(HostType("h", {"cpu": 8, "mem": 16}, 2),),
                 apps=(App("db", {"cpu": 2, "mem": 4}, 1), App("cache", {"cpu": 1}, 2)))
    assert inst.host_types[0].capacity == (8.0, 16.0)
    assert inst.apps[0].demand == (2.0, 4.0) and inst.apps[1].demand == (1.0, 0.0)
    assert inst == small(apps=(App("db", (2.0, 4.0), 1), App("cache", (1.0, 0.0), 2)))
    assert inst.demand.tolist() == [[2.0, 4.0], [1.0, 0.0]]
    probs = problems_of(lambda: small(apps=(App("db", {"cpu": 1, "gpu": 1}, 1),)))
    assert probs == [("demo", "apps[0] (db).demand.gpu",
                      "unknown resource 'gpu'; resources are ['cpu', 'mem']")]


def test_gpu_vectors_by_name() -> None:
    inst = small(gpu_resources=("gpu_milli", "gpu_mem"),
                 host_types=(HostType("g", (8.0, 16.0), 1, gpus=2,
                                      gpu_capacity={"gpu_milli": 1000, "gpu_mem": 16}),),
                 apps=(App("t", (1.0, 1.0), 1, gpu_cards=1, gpu_per_card={"gpu_milli": 500}),))
    assert inst.host_types[0].gpu_capacity == (1000.0, 16.0)
    assert inst.apps[0].gpu_per_card == (500.0, 0.0)
    probs = problems_of(lambda: small(
        gpu_resources=("gpu_milli",),
        apps=(App("t", (1.0, 1.0), 1, gpu_cards=1, gpu_per_card={"milli": 5}),)))
    assert ("demo", "apps[0] (t).gpu.per_card.milli",
            "unknown resource 'milli'; resources are ['gpu_milli']") in probs


def test_lists_and_numpy_numbers_become_canonical() -> None:
    inst = Instance("demo", ["cpu"], [HostType("h", [np.float64(4.0)], np.int64(2))],
                    [App("a", [np.int64(1)], np.int64(3), max_per_host=np.int32(2))],
                    exclusions=[], rules=[Rule("a", "a", np.int64(1))])
    assert type(inst.resources) is tuple and type(inst.apps) is tuple
    assert type(inst.apps[0].count) is int and type(inst.apps[0].demand[0]) is int
    assert type(inst.host_types[0].count) is int and type(inst.rules[0].k) is int
    assert type(inst.apps[0].max_per_host) is int
    assert hash(inst.apps[0]) == hash(App("a", (1,), 3, 2))


def test_replace_checks_too() -> None:
    inst = small()
    with pytest.raises(InputError, match="cahce"):
        inst.replace(exclusions=(("db", "cahce"),))
    with pytest.raises(InputError, match="cahce"):
        dataclasses.replace(inst, exclusions=(("db", "cahce"),))
    with pytest.raises(InputError, match=r"apps\[0\] \(db\).count"):
        inst.replace(apps=(dataclasses.replace(inst.apps[0], count=None), inst.apps[1]))
    with pytest.raises(TypeError, match="colour"):
        inst.replace(colour="red")
    # resources shrink: the vectors no longer fit, though the apps themselves did not change
    with pytest.raises(InputError, match="has 2 values, expected 1"):
        inst.replace(resources=("cpu",))
    assert inst.replace(name="other").name == "other"


def test_the_source_is_the_name_or_a_placeholder() -> None:
    (src, _, _), *_ = problems_of(lambda: small(exclusions=(("db", "x"),)))
    assert src == "demo"
    probs = problems_of(lambda: small(name="", exclusions=(("db", "x"),)))
    assert {p[0] for p in probs} == {"<instance>"}
    assert ("<instance>", "name", "expected a non-empty string, got a string ('')") in probs


def test_limits_come_first() -> None:
    probs = problems_of(lambda: small(apps=(App("db", (1.0, -1.0), MAX_CONTAINERS + 1),)))
    assert len(probs) == 1 and probs[0][1] == "apps" and "at most" in probs[0][2]


def test_initial_and_requests_are_checked() -> None:
    probs = problems_of(lambda: small(initial=Placement({"db": (5,)})))
    assert probs == [("demo", "initial.hosts.db[0]", "host index 5 is out of range (0..1)")]
    probs = problems_of(lambda: small(requests=(Request(0.0, "db", 2),)))
    assert probs[0][1] == "requests[0].count" and "more than its count 1" in probs[0][2]
    probs = problems_of(lambda: small(requests=(Request(-1.0, "dbb"),)))
    assert ("demo", "requests[0].app", "unknown app 'dbb'") in probs
    assert any(f == "requests[0].time" for _, f, _ in probs)


def test_gpu_fields_a_file_could_not_hold_are_refused() -> None:
    probs = problems_of(lambda: small(apps=(App("a", (1.0, 1.0), 1, gpu_per_card=(5.0,)),)))
    assert probs == [("demo", "apps[0] (a).gpu.per_card",
                      "is given but the app asks for no GPU cards (gpu_cards is 0)")]
    probs = problems_of(lambda: small(apps=(App("a", (1.0, 1.0), 1, gpu_cards=1),)))
    assert probs == [("demo", "apps[0] (a).gpu",
                      "app asks for GPU cards but the instance names no gpu_resources")]


@pytest.mark.parametrize("app_kw, host_kw, field, reason", [
    ({"node_selector": (("disk", 1),)}, {}, "apps[0] (a).node_selector.disk",
     "expected a string, got an int (1) (quote numbers and booleans)"),
    ({"node_selector": (("disk", "ssd"), ("disk", "hdd"))}, {}, "apps[0] (a).node_selector.disk",
     "names key 'disk' twice"),
    ({"node_affinity": ((Requirement("disk", "Is", ("ssd",)),),)}, {},
     "apps[0] (a).node_affinity[0][0]",
     "operator must be one of In, NotIn, Exists, DoesNotExist, Gt, Lt, got 'Is'"),
    ({"node_affinity": (({"key": "disk", "operator": "In", "values": ["ssd"]},),)}, {},
     "apps[0] (a).node_affinity[0][0]", "expected a Requirement, got a dict"),
    ({"tolerations": (Toleration("dedicated", "Equals", "db"),)}, {}, "apps[0] (a).tolerations[0]",
     "operator must be Equal or Exists, got 'Equals'"),
    ({}, {"labels": (("zone", None),)}, "host_types[0] (h).labels.zone",
     "expected a string, got None (quote numbers and booleans)"),
    ({}, {"taints": (Taint("dedicated", "db", "NoSchedul"),)}, "host_types[0] (h).taints[0]",
     "effect must be one of NoSchedule, PreferNoSchedule, NoExecute, got 'NoSchedul'"),
    ({}, {"taints": ({"key": "dedicated", "effect": "NoSchedule"},)}, "host_types[0] (h).taints[0]",
     "expected a Taint, got a dict"),
])
def test_node_selection_is_checked_as_in_a_file(app_kw: dict[str, Any], host_kw: dict[str, Any],
                                                field: str, reason: str) -> None:
    """Labels, taints, selectors, affinity and tolerations: what a file refuses, Python does too."""
    probs = problems_of(lambda: small(host_types=(HostType("h", (8.0, 16.0), 2, **host_kw),),
                                      apps=(App("a", (1.0, 1.0), 1, **app_kw),)))
    assert probs == [("demo", field, reason)]


def test_replace_checks_a_changed_node_selection() -> None:
    """The replace fast path (an app differing by its count) does not skip a new selector."""
    inst = small()
    bad: Any = (("disk", 1),)
    app = dataclasses.replace(inst.apps[0], node_selector=bad)
    probs = problems_of(lambda: inst.replace(apps=(app, inst.apps[1])))
    assert probs == [("demo", "apps[0] (db).node_selector.disk",
                      "expected a string, got an int (1) (quote numbers and booleans)")]


def test_node_selection_becomes_canonical() -> None:
    """Label maps become sorted pairs and lists tuples, as a file's are; the matrix follows them."""
    ssd: Any = {"labels": {"zone": "a", "disk": "ssd"}, "taints": [Taint("dedicated", "db")]}
    hdd: Any = {"labels": {"disk": "hdd"}}
    db: Any = {"node_selector": {"disk": "ssd"}, "tolerations": [Toleration("dedicated", "Exists")]}
    web: Any = {"node_affinity": [[Requirement("disk", "In", ["hdd"])]]}  # type: ignore[arg-type]
    inst = small(host_types=(HostType("ssd", (8.0, 16.0), 1, **ssd),
                             HostType("hdd", (8.0, 16.0), 1, **hdd)),
                 apps=(App("db", (1.0, 1.0), 1, **db), App("web", (1.0, 1.0), 1, **web)))
    assert inst.host_types[0].labels == (("disk", "ssd"), ("zone", "a"))
    assert inst.host_types[0].taints == (Taint("dedicated", "db"),)
    assert inst.apps[0].node_selector == (("disk", "ssd"),)
    assert inst.apps[1].node_affinity == ((Requirement("disk", "In", ("hdd",)),),)
    allowed = inst.type_allowed
    assert allowed is not None and allowed.tolist() == [[True, False], [False, True]]
    assert hash(inst.host_types[0])  # canonical fields are hashable
    assert inst == Instance(**{f.name: getattr(inst, f.name) for f in dataclasses.fields(inst)})


def test_wrong_containers_are_named() -> None:
    probs = problems_of(lambda: small(apps=None))
    assert probs == [("demo", "apps", "expected a tuple or a list, got None")]
    probs = problems_of(lambda: small(apps=(App("db", (1.0, 1.0), 1), "cache")))
    assert probs == [("demo", "apps[1]", "expected an App, got a string ('cache')")]
    probs = problems_of(lambda: small(exclusions=("db",)))
    assert probs == [("demo", "exclusions[0]", "expected a pair of app names, got a string ('db')")]


def test_the_control_character_pattern_matches_unicodedata() -> None:
    chars = [chr(i) for i in range(sys.maxunicode + 1)]
    want = {c for c in chars if unicodedata.category(c) in CONTROL_CATEGORIES}
    assert {c for c in chars if has_control(c)} == want


# ------------------------------------------------------------------------------------------------
# the property: inject defects, each is named
DEFECTS = ("rule_unknown", "exclusion_unknown", "request_unknown", "request_time", "dup_app",
           "neg_demand", "nan_capacity", "inf_demand", "short_vector", "count_none",
           "count_float", "host_count_none", "unknown_resource", "rule_negative_k",
           "self_exclusion", "control_name", "dup_host_type", "max_per_host_negative")


def inject(inst: Instance, defects: list[str]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The changed fields that carry ``defects``, and per defect ``(field, reason part)``."""
    apps, types = list(inst.apps), list(inst.host_types)
    rules, excl, reqs = list(inst.rules), list(inst.exclusions), list(inst.requests)
    n_r = inst.n_resources
    a0 = inst.apps[0].name
    want: list[tuple[str, str]] = []

    def new_app(k: int, **kw: Any) -> tuple[int, str]:
        name = kw.pop("name", f"v{k}")
        apps.append(App(name, kw.pop("demand", (1.0,) * n_r), kw.pop("count", 0), **kw))
        return len(apps) - 1, name

    def new_type(k: int, **kw: Any) -> tuple[int, str]:
        name = kw.pop("name", f"hv{k}")
        types.append(HostType(name, kw.pop("capacity", (1.0,) * n_r), kw.pop("count", 0)))
        return len(types) - 1, name

    for k, d in enumerate(defects):
        if d == "rule_unknown":
            rules.append(Rule(a0, f"ghost{k}", 0))
            want.append((f"rules[{len(rules) - 1}].b", f"unknown app 'ghost{k}'"))
        elif d == "exclusion_unknown":
            excl.append((a0, f"cahce{k}"))
            want.append((f"exclusions[{len(excl) - 1}][1]", f"unknown app 'cahce{k}'"))
        elif d == "request_unknown":
            reqs.append(Request(0.0, f"ghost{k}"))
            want.append((f"requests[{len(reqs) - 1}].app", f"unknown app 'ghost{k}'"))
        elif d == "request_time":
            reqs.append(Request(-1.0, a0))
            want.append((f"requests[{len(reqs) - 1}].time", "not negative"))
        elif d == "dup_app":
            i, _ = new_app(k, name=a0)
            want.append((f"apps[{i}].name", f"duplicate app '{a0}'"))
        elif d in ("neg_demand", "inf_demand"):
            bad = -1.0 if d == "neg_demand" else math.inf
            i, name = new_app(k, demand=(*(1.0,) * (n_r - 1), bad))
            want.append((f"apps[{i}] ({name}).demand[{n_r - 1}]",
                         "must not be negative" if bad < 0 else "finite"))
        elif d == "nan_capacity":
            i, name = new_type(k, capacity=(math.nan, *(1.0,) * (n_r - 1)))
            want.append((f"host_types[{i}] ({name}).capacity[0]", "finite"))
        elif d == "short_vector":
            i, name = new_app(k, demand=(1.0,) * (n_r + 1))
            want.append((f"apps[{i}] ({name}).demand", f"has {n_r + 1} values, expected {n_r}"))
        elif d in ("count_none", "count_float"):
            i, name = new_app(k, count=None if d == "count_none" else 1.0)
            want.append((f"apps[{i}] ({name}).count", "expected a whole number"))
        elif d == "host_count_none":
            i, name = new_type(k, count=None)
            want.append((f"host_types[{i}] ({name}).count", "expected a whole number"))
        elif d == "unknown_resource":
            i, name = new_app(k, demand={"nope": 1.0})
            want.append((f"apps[{i}] ({name}).demand.nope", "unknown resource 'nope'"))
        elif d == "rule_negative_k":
            rules.append(Rule(a0, a0, -1))
            want.append((f"rules[{len(rules) - 1}].k", "must not be negative"))
        elif d == "self_exclusion":
            excl.append((a0, a0))
            want.append((f"exclusions[{len(excl) - 1}]", "cannot exclude itself"))
        elif d == "control_name":
            i, _ = new_app(k, name=f"v{k}\nforged")
            want.append((f"apps[{i}].name", "control characters"))
        elif d == "dup_host_type":
            name = inst.host_types[0].name
            i, _ = new_type(k, name=name)
            want.append((f"host_types[{i}].name", f"duplicate host type '{name}'"))
        elif d == "max_per_host_negative":
            i, name = new_app(k, max_per_host=-2)
            want.append((f"apps[{i}] ({name}).max_per_host", "must not be negative"))
    changes = {"apps": tuple(apps), "host_types": tuple(types), "rules": tuple(rules),
               "exclusions": tuple(excl), "requests": tuple(reqs)}
    return changes, want


@settings(max_examples=100, deadline=None)
@given(inst=instances(initial=True, requests=True),
       defects=st.lists(st.sampled_from(DEFECTS), min_size=1, max_size=4))
def test_every_injected_defect_is_named(inst: Instance, defects: list[str]) -> None:
    changes, want = inject(inst, defects)
    fields = {f.name: getattr(inst, f.name) for f in dataclasses.fields(inst)}
    fields.update(changes)
    routes = {
        "constructor": lambda: Instance(**fields),
        "dataclasses.replace": lambda: dataclasses.replace(inst, **changes),
        "Instance.replace": lambda: inst.replace(**changes),
    }
    got = {k: problems_of(fn) for k, fn in routes.items()}
    assert got["constructor"] == got["dataclasses.replace"] == got["Instance.replace"]
    probs = got["constructor"]
    assert {src for src, _, _ in probs} == {inst.name}
    for field, reason in want:
        assert any(f == field and reason in r for _, f, r in probs), (field, reason, probs)


@settings(max_examples=100, deadline=None)
@given(inst=instances(initial=True, requests=True).filter(lambda i: bool(i.requests)),
       data=st.data())
def test_replace_fast_path_agrees_with_a_full_check(inst: Instance, data: st.DataObject) -> None:
    """Sub-instances as solvers derive them (other counts, fewer apps, fewer hosts) are checked
    by Instance.replace exactly as by a full check."""
    counts = data.draw(st.lists(st.one_of(st.integers(0, 3), st.just(-1)), min_size=inst.n_apps,
                                max_size=inst.n_apps))
    apps = tuple(dataclasses.replace(a, count=c) for a, c in zip(inst.apps, counts, strict=True))
    keep = data.draw(st.lists(st.booleans(), min_size=inst.n_apps, max_size=inst.n_apps))
    if data.draw(st.booleans()):
        apps = tuple(a for a, k in zip(apps, keep, strict=True) if k)
    elif len(apps) >= 2 and data.draw(st.integers(0, 3)) == 0:
        apps = (apps[-1], *apps[1:])  # the same length, a duplicate name, one app missing
    types = tuple(dataclasses.replace(t, count=max(0, t.count - 1)) for t in inst.host_types)
    changes: dict[str, Any] = {"apps": apps, "host_types": types}
    if data.draw(st.integers(0, 3)) == 0:
        changes.update(initial=None, requests=())

    def outcome(fn: Any) -> Any:
        try:
            return fn()
        except InputError as e:
            return [(p.field, p.reason) for p in e.problems]

    fast = outcome(lambda: inst.replace(**changes))
    full = outcome(lambda: dataclasses.replace(inst, **changes))
    assert fast == full


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(inst=instances(initial=True, requests=True))
def test_valid_instances_build_and_round_trip(tmp_path: Path, inst: Instance) -> None:
    by_name = Instance(
        inst.name, list(inst.resources),
        [dataclasses.replace(t, capacity=dict(zip(inst.resources, t.capacity, strict=True)))
         for t in inst.host_types],
        [dataclasses.replace(a, demand=dict(zip(inst.resources, a.demand, strict=True)))
         for a in inst.apps],
        list(inst.rules), [list(e) for e in inst.exclusions], list(inst.gpu_resources),
        inst.initial, list(inst.requests), dict(inst.meta))
    assert by_name == inst
    for ext in ("json", "yaml"):
        path = tmp_path / f"i.{ext}"
        save_instance(by_name, path)
        assert load_instance(path) == inst


def test_the_documented_python_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    doc = (Path(__file__).resolve().parents[3] / "docs" / "file-format.md").read_text("utf-8")
    (code,) = re.findall(r"```python\n(.*?)```", doc, re.S)
    exec(compile(code, "file-format.md", "exec"), {})  # noqa: S102 - the repository's own docs
    assert capsys.readouterr().out == "demo: exclusions[0][1]: unknown app 'cahce'\n"
