from __future__ import annotations

from pathlib import Path

import pytest

from packing.errors import InputError
from packing.io import save_instance
from packing.loaders import detect, load_any

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.parametrize("rel, kind", [
    ("tianchi_small", "tianchi"),
    ("openb_small", "openb"),
    ("openb_small/csv", "openb"),
    ("openb_small/csv/openb_node_list_all_node.csv", "openb"),
    ("caprara_toth_small/instances/CL_1_25_1.vbp", "vbp"),
    ("alibaba_v2018_small", "v2018"),
    ("alibaba_gpu_v2020_small/pai_machine_spec.csv", "v2020"),
])
def test_detect(rel, kind):
    found = detect(DATA / rel)
    assert found is not None and found[0] == kind


def test_instance_files_and_renamed_openb_csv(tmp_path):
    inst = load_any(DATA / "caprara_toth_small" / "instances" / "CL_1_25_1.vbp")
    for ext in ("json", "yaml", "yml"):
        save_instance(inst, tmp_path / f"i.{ext}")
        assert load_any(tmp_path / f"i.{ext}") == inst
    # an openb node list under another name is recognised by its header
    p = tmp_path / "nodes.csv"
    p.write_text((DATA / "openb_small" / "csv" / "openb_node_list_all_node.csv").read_text())
    assert load_any(p).n_hosts == 20


def test_unknown_missing_and_misapplied(tmp_path):
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(InputError, match="unknown kind of input; expected an instance file"):
        load_any(tmp_path / "x.txt")
    with pytest.raises(InputError, match="unknown kind of input"):
        load_any(tmp_path)
    with pytest.raises(InputError, match="no such file or folder"):
        load_any(tmp_path / "nope")
    with pytest.raises(InputError) as e:
        load_any(DATA / "openb_small", view="full")
    assert e.value.problems[0].field == "view"
    assert "takes nodes, pods" in e.value.problems[0].reason
    # None means "not given"
    assert load_any(DATA / "tianchi_small", view=None, pods=None).n_resources == 6
    with pytest.raises(InputError, match="expected 'reduced' or 'full'"):
        load_any(DATA / "tianchi_small", view="peak")
