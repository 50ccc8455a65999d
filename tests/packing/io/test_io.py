"""Instance and placement files: exact round trips, clear errors, atomic saves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from packing.errors import InputError
from packing.io import (
    instance_problems,
    load_instance,
    load_placement,
    save_instance,
    save_placement,
)
from packing.model.instance import App, HostType, Instance, Placement
from tests.packing.strategies import instance_and_placement, instances

GOOD = {
    "name": "g", "resources": ["cpu", "mem"],
    "host_types": [{"name": "h", "capacity": [8, 16], "count": 2}],
    "apps": [{"name": "a", "demand": [1, 2], "count": 2}, {"name": "b", "demand": [1, 1],
                                                          "count": 1}],
    "rules": [["a", "b", 0]],
}


def valid_requests(inst):
    """Drop the requests that would make more containers of an app alive at once than its count
    (the random strategy does not know that rule; loading rejects such streams)."""
    while True:
        bad = [p for p in instance_problems(inst, "x") if p.field.startswith("requests[")]
        if not bad:
            return inst
        i = int(bad[0].field[len("requests["):].split("]")[0])
        inst = inst.replace(requests=inst.requests[:i] + inst.requests[i + 1:])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(inst=instances(initial=True, requests=True))
def test_round_trip(tmp_path: Path, inst) -> None:
    inst = valid_requests(inst)
    assert instance_problems(inst, "x") == []
    for ext in ("json", "yaml"):
        path = tmp_path / f"i.{ext}"
        save_instance(inst, path)
        assert load_instance(path) == inst


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ip=instance_and_placement())
def test_placement_round_trip(tmp_path: Path, ip) -> None:
    inst, p = ip
    for ext in ("json", "yml"):
        path = tmp_path / f"p.{ext}"
        save_placement(p, inst, path)
        q = load_placement(path, inst)
        assert dict(q.hosts) == dict(p.hosts)
        assert {a: c for a, c in q.gpus.items() if c} == {a: c for a, c in p.gpus.items() if c}


def problems(path: Path) -> list:
    with pytest.raises(InputError) as e:
        load_instance(path)
    assert e.value.problems and all(p.source == str(path) for p in e.value.problems)
    return e.value.problems


def write(tmp_path: Path, name: str, doc) -> Path:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


def test_malformed_json(tmp_path: Path) -> None:
    (p,) = problems(write(tmp_path, "bad.json", '{"name": "x",\n "apps": [}'))
    assert "line 2" in p.field and "malformed JSON" in p.reason


def test_malformed_yaml(tmp_path: Path) -> None:
    (p,) = problems(write(tmp_path, "bad.yaml", "name: x\napps: [a, b\nfoo: : :\n"))
    assert "line" in p.field and "malformed YAML" in p.reason


def test_negative_demand(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(GOOD))
    doc["apps"][0]["demand"] = [1, -2]
    (p,) = problems(write(tmp_path, "neg.json", doc))
    assert p.field == "apps[0] (a).demand[1]" and "negative" in p.reason


def test_unknown_app_in_rule(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(GOOD))
    doc["rules"].append(["a", "zz", 1])
    (p,) = problems(write(tmp_path, "rule.json", doc))
    assert p.field == "rules[1].b" and "'zz'" in p.reason


def test_wrong_vector_length(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(GOOD))
    doc["host_types"][0]["capacity"] = [8]
    (p,) = problems(write(tmp_path, "len.json", doc))
    assert p.field == "host_types[0] (h).capacity" and "expected 2" in p.reason


def test_all_problems_are_reported(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(GOOD))
    doc["apps"][0]["demand"] = [1, -2]
    doc["rules"].append(["a", "zz", 1])
    assert len(problems(write(tmp_path, "two.json", doc))) == 2


def test_the_wrong_kind_of_file_is_one_line(tmp_path: Path) -> None:
    """A placement given as the instance (and the reverse): the format says it all, in one line."""
    inst = load_instance(write(tmp_path, "good.json", GOOD))
    save_placement(Placement.empty(inst), inst, tmp_path / "p.json")
    (p,) = problems(tmp_path / "p.json")
    assert (p.field, p.reason) == ("format", "expected 'vbp-instance/1', got 'vbp-placement/1' (a "
                                   "placement file, not an instance)")
    save_instance(inst, tmp_path / "i.json")
    with pytest.raises(InputError) as e:
        load_placement(tmp_path / "i.json", inst)
    assert [(q.field, q.reason) for q in e.value.problems] == [
        ("format", "expected 'vbp-placement/1', got 'vbp-instance/1' (an instance file, not a "
                   "placement)")]
    (p,) = problems(write(tmp_path, "v9.json", {**GOOD, "format": "vbp-instance/9", "x": 1}))
    assert (p.field, p.reason) == ("format", "expected 'vbp-instance/1', got 'vbp-instance/9'")


def test_good_file_loads(tmp_path: Path) -> None:
    inst = load_instance(write(tmp_path, "good.json", GOOD))
    assert (inst.n_apps, inst.n_containers, inst.n_hosts) == (2, 3, 2)


def test_failed_save_leaves_old_file(tmp_path: Path) -> None:
    path = write(tmp_path, "keep.json", GOOD)
    before = path.read_text()
    inst = load_instance(path)
    bad = inst.replace(meta={"x": object()})  # not a JSON value: the save is refused
    with pytest.raises(InputError, match="meta.x"):
        save_instance(bad, path)
    assert path.read_text() == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["keep.json"]  # no temp file left


def test_saved_files_get_the_usual_permissions(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import os

    from packing.io import save_instance
    from packing.io.builtin import builtin_instance

    umask = os.umask(0o022)
    try:
        save_instance(builtin_instance(), tmp_path / "s.json")
    finally:
        os.umask(umask)
    assert (tmp_path / "s.json").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("meta, field, reason", [
    ({"x": float("nan")}, "meta.x", "must be finite"),
    ({"x": {"y": object()}}, "meta.x.y", "expected a JSON value"),
    ({"x": {1: 2}}, "meta.x", "keys must be strings"),
])
def test_save_refuses_meta_the_loader_refuses(tmp_path, meta, field, reason):
    """Source: instances built here; nothing is written that load_instance would refuse."""
    from packing.io.instance_file import save_instance as save

    inst = Instance("m", ("cpu",), (HostType("h", (4.0,), 2),), (App("a", (1.0,), 1),), meta=meta)
    for suffix in (".json", ".yaml"):
        path = tmp_path / f"m{suffix}"
        with pytest.raises(InputError) as e:
            save(inst, path)
        (p,) = e.value.problems
        assert p.field == field and reason in p.reason and not path.exists()


def test_save_writes_numpy_meta_as_numbers(tmp_path):
    """Source: an instance built here with NumPy values in meta (generators put them there)."""
    from packing.io.instance_file import load_instance as load
    from packing.io.instance_file import save_instance as save

    inst = Instance("m", ("cpu",), (HostType("h", (4.0,), 2),), (App("a", (1.0,), 1),),
                    meta={"n": np.int64(3), "v": np.arange(2), "f": np.float32(0.5)})
    save(inst, tmp_path / "m.json")
    assert load(tmp_path / "m.json").meta == {"n": 3, "v": [0, 1], "f": 0.5}
