from __future__ import annotations

import math
from pathlib import Path

import pytest

from packing.errors import InputError
from packing.io import load_instance, save_instance
from packing.loaders import KnownOptimum, load_any, load_vbp, read_optimal_values

DATA = Path(__file__).resolve().parents[2] / "data" / "caprara_toth_small"


def test_load_vbp():
    inst = load_any(DATA / "instances" / "CL_1_25_1.vbp")
    assert inst.name == "CL_1_25_1"
    assert inst.resources == ("r0", "r1")
    (bins,) = inst.host_types
    assert (bins.capacity, bins.count) == ((1000.0, 1000.0), 25)
    assert inst.n_apps == inst.n_containers == 25
    assert inst.apps[0].demand == (113.0, 166.0) and inst.apps[0].count == 1


def test_known_optima():
    opt = read_optimal_values(DATA / "optimal_values.csv")
    assert opt["CL_1_25_1.vbp"] == KnownOptimum("CL_1_25_1.vbp", 25, 6, 6, 5.69, 1)
    assert opt["CL_6_25_1.vbp"].opt == 10 and opt["CL_6_25_1.vbp"].lp_bound == 9.33
    for name, k in opt.items():
        inst = load_vbp(DATA / "instances" / name)
        assert inst.n_containers == k.n_items
        # the ceiling of the volume bound, recomputed from the items
        vol = (inst.demand * inst.counts[:, None]).sum(axis=0) / inst.type_capacity[0]
        assert math.ceil(vol.max() - 1e-9) == k.volume_lb
        assert k.volume_lb <= k.opt <= inst.n_hosts


def test_demand_column_and_round_trip(tmp_path):
    p = tmp_path / "x.vbp"
    p.write_text("3\n10 10 5\n2\n1 2 3 4\n5 5 5 1\n")
    inst = load_vbp(p)
    assert [(a.demand, a.count) for a in inst.apps] == [((1.0, 2.0, 3.0), 4), ((5.0, 5.0, 5.0), 1)]
    assert inst.n_hosts == 5
    save_instance(inst, tmp_path / "x.json")
    assert load_instance(tmp_path / "x.json") == inst


@pytest.mark.parametrize("text, field, reason", [
    ("2\n100 100\n2\n3 40 1\n5 x 1\n", "line 5, item 2 weight 2", "expected a number, got 'x'"),
    ("2\n100 100\n2\n3 40 1\n5 -1 1\n", "line 5, item 2 weight 2", "must be at least 0"),
    ("2\n100 100\n2\n3 40 1\n", "end of file", "expected item 2 weight 1"),
    ("2\n100 100\n1\n3 40 1\n7\n", "line 5", "unexpected '7'"),
    ("2.5\n", "line 1, d (number of dimensions)", "expected a whole number"),
])
def test_bad_vbp(tmp_path, text, field, reason):
    p = tmp_path / "bad.vbp"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        load_vbp(p)
    assert e.value.problems[0].field == field
    assert reason in e.value.problems[0].reason
    assert e.value.problems[0].source == str(p)


def test_optimal_values_missing_opt_and_bad_rows(tmp_path):
    p = tmp_path / "opt.csv"
    p.write_text("instance,n_items,opt_bins,lp_bound_gilmore_gomory\nA.vbp,50,,12.5\n")
    (k,) = read_optimal_values(p).values()
    assert (k.opt, k.lp_bound, k.volume_lb, k.cls) == (None, 12.5, None, None)
    p.write_text("instance,n_items,opt_bins\nA.vbp,5x,3\nA.vbp,5,3\nA.vbp,5,3\n")
    with pytest.raises(InputError) as e:
        read_optimal_values(p)
    assert [x.field for x in e.value.problems] == ["line 2, column n_items",
                                                   "line 4, column instance"]
    p.write_text("instance,opt_bins\nA.vbp,3\n")
    with pytest.raises(InputError, match="line 1, column n_items: missing column"):
        read_optimal_values(p)


@pytest.mark.shared_data
def test_every_caprara_toth_file(shared_data):
    folder = shared_data / "caprara-toth-2d"
    opt = read_optimal_values(folder / "optimal_values.csv")
    files = sorted((folder / "instances").glob("*.vbp"))
    assert len(files) == 200 and len(opt) == 160
    for f in files:
        inst = load_vbp(f)
        assert inst.n_resources == 2
        if f.name in opt:
            assert inst.n_containers == opt[f.name].n_items, f.name
