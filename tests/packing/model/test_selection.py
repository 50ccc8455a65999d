"""Node selection semantics by hand (the scheduler's rules, packing/model/selection.py), file format."""

from __future__ import annotations

import json

import pytest

from packing.errors import InputError
from packing.io import instance_from_dict, instance_to_dict
from packing.model.instance import App, HostType, Instance
from packing.model.selection import (
    Requirement,
    Taint,
    Toleration,
    allowed,
    node_selection_holds,
    reasons,
    requirement_holds,
    tolerates,
)

NODE = {"zone": "a", "gen": "5", "disk": "ssd", "note": "x7"}


@pytest.mark.parametrize("op, values, expected", [
    ("In", ("a", "b"), True), ("In", ("b",), False),
    ("NotIn", ("b",), True), ("NotIn", ("a",), False),
    ("Exists", (), True), ("DoesNotExist", (), False),
])
def test_operators_on_a_present_label(op, values, expected):
    assert requirement_holds(Requirement("zone", op, values), NODE) is expected


@pytest.mark.parametrize("op, expected", [("In", False), ("NotIn", True), ("Exists", False),
                                          ("DoesNotExist", True), ("Gt", False), ("Lt", False)])
def test_operators_on_an_absent_label(op, expected):
    values = ("1",) if op in ("Gt", "Lt", "In", "NotIn") else ()
    assert requirement_holds(Requirement("rack", op, values), NODE) is expected


def test_gt_lt_are_integer_comparisons():
    assert requirement_holds(Requirement("gen", "Gt", ("4",)), NODE)
    assert not requirement_holds(Requirement("gen", "Gt", ("5",)), NODE)
    assert requirement_holds(Requirement("gen", "Lt", ("10",)), NODE)  # 5 < 10, not "5" < "10"
    assert not requirement_holds(Requirement("note", "Gt", ("1",)), NODE)  # not an integer


def test_terms_or_expressions_and_empty_terms():
    gen = Requirement("gen", "Gt", ("4",))
    zone_b = Requirement("zone", "In", ("b",))
    assert not node_selection_holds((), ((gen, zone_b),), NODE)  # ANDed
    assert node_selection_holds((), ((zone_b,), (gen,)), NODE)  # ORed
    assert not node_selection_holds((), ((),), NODE)  # an empty term matches nothing
    assert not node_selection_holds((), (), NODE)  # no terms: nothing
    assert node_selection_holds((), None, NODE)  # no affinity: everything
    assert not node_selection_holds((("zone", "b"),), None, NODE)


def test_tolerations():
    t = Taint("dedicated", "gpu", "NoSchedule")
    assert tolerates(Toleration("dedicated", "Equal", "gpu"), t)
    assert not tolerates(Toleration("dedicated", "Equal", "cpu"), t)
    assert tolerates(Toleration("dedicated", "Exists"), t)
    assert tolerates(Toleration("", "Exists"), t)
    assert not tolerates(Toleration("dedicated", "Exists", "", "NoExecute"), t)
    assert allowed((), None, (), (), (Taint("x", "", "PreferNoSchedule"),))
    assert not allowed((), None, (), (), (t,))
    assert reasons((("zone", "b"),), None, (), tuple(NODE.items()), (t,)) == [
        "node selector zone=b not matched", "taint dedicated=gpu:NoSchedule not tolerated"]


def instance() -> Instance:
    types = (HostType("ssd", (4.0,), 2, labels=(("disk", "ssd"), ("zone", "a")),
                      taints=(Taint("dedicated", "db", "NoSchedule"),)),
             HostType("hdd", (4.0,), 2, labels=(("disk", "hdd"),)))
    apps = (App("db", (1.5,), 2, node_selector=(("disk", "ssd"),),
                tolerations=(Toleration("dedicated", "Equal", "db", "NoSchedule"),)),
            App("web", (0.25,), 3, node_affinity=((Requirement("zone", "DoesNotExist"),),
                                                  (Requirement("disk", "In", ("ssd",)),))),
            App("free", (1.0,), 1))
    return Instance("sel", ("cpu",), types, apps)


def test_file_round_trip_and_matrix():
    inst = instance()
    doc = json.loads(json.dumps(instance_to_dict(inst)))
    assert doc["host_types"][0]["labels"] == {"disk": "ssd", "zone": "a"}
    assert doc["apps"][1]["node_affinity"] == [
        [{"key": "zone", "operator": "DoesNotExist", "values": []}],
        [{"key": "disk", "operator": "In", "values": ["ssd"]}]]
    back = instance_from_dict(doc)
    assert back == inst
    # db: ssd only and tolerates its taint; web: hdd (no zone label), not ssd (tainted)
    assert back.type_allowed.tolist() == [[True, False], [False, True], [False, True]]


@pytest.mark.parametrize("where, value, field, reason", [
    ("host", {"labels": {"gen": 5}}, "host_types[0] (h).labels.gen", "quote numbers"),
    ("host", {"taints": [{"key": "k", "effect": "Sometimes"}]}, "host_types[0] (h).taints[0]",
     "effect must be one of"),
    ("app", {"tolerations": [{"operator": "Equal", "value": "x"}]}, "apps[0] (a).tolerations[0]",
     "an empty key needs operator Exists"),
    ("app", {"node_affinity": [[{"key": "gen", "operator": "Gt", "values": ["high"]}]]},
     "apps[0] (a).node_affinity[0][0]", "one integer value"),
    ("app", {"node_selector": ["disk"]}, "apps[0] (a).node_selector", "expected an object"),
])
def test_bad_fields(where, value, field, reason):
    doc = {"resources": ["cpu"], "host_types": [{"name": "h", "capacity": [1], "count": 1}],
           "apps": [{"name": "a", "demand": [1], "count": 1}]}
    (doc["host_types"][0] if where == "host" else doc["apps"][0]).update(value)
    with pytest.raises(InputError) as e:
        instance_from_dict(doc, "s.json")
    (p,) = e.value.problems
    assert p.field == field and reason in p.reason
