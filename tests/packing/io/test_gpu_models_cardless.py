"""Apps without GPU cards restricted to GPU models: file round trip, checker, bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packing.errors import InputError
from packing.feasibility.checker import check
from packing.io import instance_from_dict, instance_to_dict, load_instance, save_instance
from packing.model.instance import App, HostType, Instance, Placement


def _instance() -> Instance:
    return Instance(
        "models", ("cpu",),
        (HostType("v100", (8.0,), 2, gpus=2, gpu_capacity=(1000.0,), gpu_model="V100"),
         HostType("t4", (8.0,), 2, gpus=1, gpu_capacity=(1000.0,), gpu_model="T4"),
         HostType("cpu", (8.0,), 2)),
        (App("prep", (4.0,), 3, gpu_models=("V100",)),            # no cards, V100 hosts only
         App("any", (2.0,), 2, gpu_models=("T4", "V100")),        # no cards, either model
         App("train", (2.0,), 1, gpu_cards=1, gpu_whole=True, gpu_models=("V100",)),
         App("web", (1.0,), 2)),
        gpu_resources=("gpu_milli",))


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_round_trip_keeps_models_of_cardless_apps(tmp_path: Path, suffix: str) -> None:
    inst = _instance()
    path = tmp_path / f"i{suffix}"
    save_instance(inst, path)
    back = load_instance(path)
    assert back == inst
    assert back.apps[0].gpu_models == ("V100",) and back.apps[0].gpu_cards == 0
    assert instance_to_dict(inst)["apps"][0]["gpu"] == {"cards": 0, "models": ["V100"]}
    assert "gpu" not in instance_to_dict(inst)["apps"][3]


def test_the_models_restrict_the_hosts() -> None:
    inst = _instance()
    # hosts: 0, 1 V100; 2, 3 T4; 4, 5 CPU only
    cards = {"train": ((0,),)}
    ok = Placement({"prep": (0, 0, 1), "any": (2, 1), "train": (1,), "web": (4, 5)}, cards)
    assert check(inst, ok, require_all=True) == []
    bad = Placement({"prep": (0, 0, 4), "any": (2, 5), "train": (1,), "web": (4, 5)}, cards)
    kinds = sorted((v.kind, v.app) for v in check(inst, bad, require_all=True))
    assert kinds == [("gpu_model", "any"), ("gpu_model", "prep")]


def _doc(gpu: object) -> dict[str, object]:
    return {"name": "x", "resources": ["cpu"], "gpu_resources": ["gpu_milli"],
            "host_types": [{"name": "h", "capacity": [4], "count": 1, "gpus": 1,
                            "gpu_capacity": [1000], "gpu_model": "T4"}],
            "apps": [{"name": "a", "demand": [1], "count": 1, "gpu": gpu}]}


@pytest.mark.parametrize(("gpu", "field", "why"), [
    ({"cards": 0}, "apps[0] (a).gpu.models", "is empty but gpu.cards is 0"),
    ({"cards": 0, "models": ["T4"], "per_card": [100]}, "apps[0] (a).gpu.per_card", "gpu.cards is 0"),
    ({"cards": 0, "models": ["T4"], "whole": True}, "apps[0] (a).gpu.whole", "gpu.cards is 0"),
    ({"cards": -1, "models": ["T4"]}, "apps[0] (a).gpu.cards", ""),
])
def test_bad_cardless_gpu_objects(gpu: object, field: str, why: str) -> None:
    with pytest.raises(InputError) as e:
        instance_from_dict(_doc(gpu), "f.json")
    assert any(p.field == field and why in p.reason for p in e.value.problems), e.value.problems


def test_cardless_models_need_no_gpu_resources() -> None:
    doc = json.loads(json.dumps(_doc({"cards": 0, "models": ["T4"]})))
    inst = instance_from_dict(doc, "f.json")
    assert inst.apps[0].gpu_cards == 0 and inst.apps[0].gpu_models == ("T4",)
    doc.pop("gpu_resources")
    doc["host_types"] = [{"name": "h", "capacity": [4], "count": 1, "gpu_model": "T4"}]
    assert instance_from_dict(doc, "f.json").apps[0].gpu_models == ("T4",)
