from __future__ import annotations

from pathlib import Path

import pytest

from packing.errors import InputError
from packing.io import load_instance, save_instance
from packing.loaders import load_any, load_machine_meta, load_pai_machine_spec

DATA = Path(__file__).resolve().parents[2] / "data"


def test_machine_meta_fixture(tmp_path):
    inst = load_any(DATA / "alibaba_v2018_small")
    assert inst.resources == ("cpu", "mem") and inst.n_apps == 0
    (t,) = inst.host_types
    assert (t.capacity, t.count) == ((96.0, 100.0), 6)
    assert t.host_names is not None and t.host_names == ("m_1", "m_10", "m_100", "m_1000", "m_1001", "m_669")
    save_instance(inst, tmp_path / "m.json")
    assert load_instance(tmp_path / "m.json") == inst


def test_machine_meta_takes_latest_row(tmp_path):
    p = tmp_path / "machine_meta.csv"
    p.write_text("m_1,0,1,1,96,100,USING\nm_2,0,1,1,96,100,USING\nm_1,50,1,1,64,50,USING\n"
                 "m_1,30,1,1,32,10,USING\n")
    inst = load_machine_meta(p)
    caps = dict(zip(inst.host_names, inst.host_capacity.tolist(), strict=True))
    assert caps == {"m_1": [64.0, 50.0], "m_2": [96.0, 100.0]}


def test_machine_meta_bad_rows(tmp_path):
    p = tmp_path / "machine_meta.csv"
    p.write_text("m_1,0,1,1,96,100,USING\nm_2,0,1,1,ninety,100,USING\nm_3,0,1,1,96,150,USING\n"
                 "m_4,0,1,96,100,USING\n")
    with pytest.raises(InputError) as e:
        load_any(p)
    assert [x.field for x in e.value.problems] == [
        "line 2, column cpu_num", "line 3, column mem_size", "line 4"]


def test_pai_machine_spec_fixture(tmp_path):
    inst = load_any(DATA / "alibaba_gpu_v2020_small" / "pai_machine_spec.csv")
    assert (inst.n_hosts, len(inst.host_types), int(inst.host_gpus.sum())) == (14, 7, 72)
    assert inst.gpu_resources == ("gpu_milli",)
    by = {t.name: t for t in inst.host_types}
    t4 = by["T4x2-96c-512g"]
    assert (t4.capacity, t4.gpus, t4.gpu_capacity, t4.gpu_model) == ((96.0, 512.0), 2, (1000.0,),
                                                                     "T4")
    cpu = by["cpu-96c-512g"]
    assert (cpu.gpus, cpu.gpu_model, cpu.host_names) == (
        0, None, ("7399a758eb02bae1a3621236", "75c536d5ba60528b3ef3ae40"))
    assert by["V100x8-96c-384g"].count == 2 and by["V100x8-96c-512g"].count == 2
    save_instance(inst, tmp_path / "p.json")
    assert load_instance(tmp_path / "p.json") == inst


def test_pai_machine_spec_duplicate_and_negative(tmp_path):
    p = tmp_path / "pai_machine_spec.csv"
    p.write_text("a,T4,96,512,2\na,T4,96,512,2\nb,T4,96,512,-2\n")
    with pytest.raises(InputError) as e:
        load_pai_machine_spec(p)
    assert [(x.field, x.reason) for x in e.value.problems] == [
        ("line 2, column machine", "duplicate machine 'a'"),
        ("line 3, column cap_gpu", "must not be negative, got '-2'")]


@pytest.mark.shared_data
def test_full_tables(shared_data):
    v2018 = load_any(shared_data / "alibaba-v2018")
    assert v2018.n_hosts == 4034
    v2020 = load_any(shared_data / "alibaba-gpu-v2020")
    assert (v2020.n_hosts, int(v2020.host_gpus.sum())) == (1897, 6742)
    assert sorted(t.count for t in v2020.host_types) == [45, 59, 83, 135, 280, 497, 798]
