from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packing.errors import InputError
from packing.feasibility.checker import check
from packing.io import load_instance, save_instance
from packing.loaders import load_any, load_openb
from packing.model.instance import Placement, Request

DATA = Path(__file__).resolve().parents[2] / "data" / "openb_small"
CSV = DATA / "csv"


@pytest.fixture(scope="module")
def small():
    return load_openb(DATA)


def _app(inst, name):
    return inst.apps[inst.app_index[name]]


def test_counts(small):
    s = small.summary()
    assert (s["hosts"], s["host_types"], s["gpus"], s["containers"]) == (20, 10, 60, 51)
    assert s["requests"] == 51
    assert small.resources == ("cpu_milli", "memory_mib")
    assert small.gpu_resources == ("gpu_milli",)


def test_folder_csv_subfolder_and_gpu_nodes(small):
    assert load_any(CSV) == small
    gpu = load_any(DATA, nodes="gpu")
    assert gpu.n_hosts == 16 and int(gpu.host_gpus.sum()) == 60
    assert all(t.gpus > 0 for t in gpu.host_types)


def test_host_types(small):
    t = small.host_types[small.type_index["G2x8-96c-384g"]]
    assert (t.capacity, t.gpus, t.gpu_capacity, t.gpu_model, t.count) == (
        (96000.0, 393216.0), 8, (1000.0,), "G2", 2)
    assert t.host_names is not None and all(n.startswith("openb-node-") for n in t.host_names)
    cpu = small.host_types[small.type_index["cpu-32c-256g"]]
    assert (cpu.gpus, cpu.gpu_capacity, cpu.gpu_model) == (0, (), None)


def test_whole_share_multi_spec_and_cpu_pods(small):
    # openb-pod-0000 12000,16384,1,1000: one whole card; 4 pods of that shape without a spec
    whole = _app(small, "12000m-16384Mi-1gpu")
    assert (whole.gpu_cards, whole.gpu_whole, whole.gpu_per_card, whole.count) == (1, True, (), 4)
    # openb-pod-0001 6000,12288,1,460: a 460-milli share of one card (0001 and 0003)
    share = _app(small, "6000m-12288Mi-1x460mgpu")
    assert (share.gpu_cards, share.gpu_whole, share.gpu_per_card, share.count) == (
        1, False, (460.0,), 2)
    # openb-pod-0017 88000,327680,8,1000,G2: eight whole cards, G2 only
    multi = _app(small, "88000m-327680Mi-8gpu-G2")
    assert (multi.gpu_cards, multi.gpu_whole, multi.gpu_models) == (8, True, ("G2",))
    # openb-pod-0021 ... 1,440,G2|P100|T4|V100M16|V100M32
    spec = _app(small, "8000m-30517Mi-1x440mgpu-G2|P100|T4|V100M16|V100M32")
    assert spec.gpu_models == ("G2", "P100", "T4", "V100M16", "V100M32")
    assert spec.gpu_per_card == (440.0,)
    cpu = _app(small, "8000m-30517Mi")
    assert (cpu.gpu_cards, cpu.demand, cpu.count) == (0, (8000.0, 30517.0), 6)


def test_request_stream(small):
    reqs = small.requests
    assert reqs[0] == Request(0.0, "12000m-16384Mi-1gpu", 1, 12537496.0)
    assert reqs[1] == Request(427061.0, "6000m-12288Mi-1x460mgpu", 1, 12902960.0)
    assert reqs[-1] == Request(12549519.0, "32000m-131072Mi-4gpu", 1, 12593778.0)
    times = [q.time for q in reqs]
    assert times == sorted(times)
    assert all(q.end is not None and q.end >= q.time for q in reqs)
    # per app, the number of requests equals the container count
    for a in small.apps:
        assert sum(q.app == a.name for q in reqs) == a.count


def test_stable_order_for_equal_times(tmp_path):
    head = (CSV / "openb_pod_list_default.csv").read_text().splitlines()[0]
    (tmp_path / "openb_node_list_all_node.csv").write_text(
        (CSV / "openb_node_list_all_node.csv").read_text())
    (tmp_path / "openb_pod_list_t.csv").write_text("\n".join([
        head,
        "p0,2000,10,0,0,,LS,Running,5,,",
        "p1,1000,10,0,0,,LS,Running,5,9,",
        "p2,3000,10,0,0,,LS,Running,1,9,",
    ]) + "\n")
    inst = load_openb(tmp_path, pods="t")
    assert [(q.time, q.app, q.end) for q in inst.requests] == [
        (1.0, "3000m-10Mi", 9.0), (5.0, "2000m-10Mi", None), (5.0, "1000m-10Mi", 9.0)]


def test_multigpu_lists_lack_times(small):
    inst = load_any(DATA, pods="multigpu20")
    assert inst.n_containers == 10
    assert [q.time for q in inst.requests] == [float(i) for i in range(10)]
    assert all(q.end is None for q in inst.requests)
    assert all(not a.gpu_models for a in inst.apps)
    # a pod list given directly takes the nodes beside it
    direct = load_any(CSV / "openb_pod_list_multigpu20.csv")
    assert direct.n_hosts == 20 and direct.n_containers == 10


def test_node_list_alone():
    inst = load_any(CSV / "openb_node_list_gpu_node.csv")
    assert (inst.n_hosts, inst.n_apps, int(inst.host_gpus.sum())) == (16, 0, 60)


def test_round_trip(small, tmp_path):
    save_instance(small, tmp_path / "o.json")
    assert load_instance(tmp_path / "o.json") == small


def test_gpu_model_is_enforced_by_checker(small):
    # the G2-only 8-card pod on a V100M32 8-card node is a gpu_model violation
    app = "88000m-327680Mi-8gpu-G2"
    i = small.app_index[app]
    v100 = small.host_index[small.host_types[small.type_index["V100M32x8-96c-768g"]].host_names[0]]
    g2 = small.host_index[small.host_types[small.type_index["G2x8-96c-384g"]].host_names[0]]
    cards = tuple(range(8))
    for host, ok in ((g2, True), (v100, False)):
        pl = Placement({app: (host,) + (-1,) * (small.apps[i].count - 1)},
                       {app: (cards,) + ((),) * (small.apps[i].count - 1)})
        kinds = [x.kind for x in check(small, pl)]
        assert (kinds == []) is ok, kinds


# ------------------------------------------------------------------------------------------------
def _copy(tmp_path: Path, edit_nodes=None, edit_pods=None) -> Path:
    for name, edit in (("openb_node_list_all_node.csv", edit_nodes),
                       ("openb_pod_list_default.csv", edit_pods)):
        lines = (CSV / name).read_text().splitlines()
        (tmp_path / name).write_text("\n".join(edit(lines) if edit else lines) + "\n")
    return tmp_path


def test_missing_column(tmp_path):
    d = _copy(tmp_path, edit_nodes=lambda ls: [",".join(x.split(",")[:3] + x.split(",")[4:])
                                               for x in ls])
    with pytest.raises(InputError) as e:
        load_openb(d)
    (p,) = e.value.problems
    assert p.field == "line 1, column gpu" and "missing column" in p.reason
    assert p.source.endswith("openb_node_list_all_node.csv")


def test_bad_pod_values(tmp_path):
    def edit(ls):
        ls[1] = ls[1].replace(",12000,", ",12k,", 1)
        ls[2] = ls[2].replace(",1,460,", ",1,1460,", 1)
        ls[3] = ls[3].replace(",1558381,12902960,", ",1558381,5,", 1)
        ls[4] = ls[4].replace(",2690044,", ",-1,", 1).replace(",12288,", ",-5,", 1)
        return ls

    d = _copy(tmp_path, edit_pods=edit)
    with pytest.raises(InputError) as e:
        load_openb(d)
    assert [p.field for p in e.value.problems] == [
        "line 2, column cpu_milli", "line 3, column gpu_milli", "line 4, column deletion_time",
        "line 5, column memory_mib"]


def test_unknown_pod_list(tmp_path):
    with pytest.raises(InputError, match="no pod list 'nope'; available: default, multigpu20"):
        load_openb(DATA, pods="nope")


@pytest.mark.shared_data
def test_full_data_set(shared_data):
    inst = load_any(shared_data / "alibaba-gpu-v2023")
    s = inst.summary()
    assert (s["hosts"], s["gpus"], s["containers"], s["requests"]) == (1523, 6212, 8152, 8152)
    gpu = load_any(shared_data / "alibaba-gpu-v2023" / "csv", nodes="gpu", pods="multigpu50")
    assert (gpu.n_hosts, gpu.n_containers) == (1213, 9061)


# ------------------------------------------------------------------------------------------------
_pod = st.tuples(
    st.sampled_from([1000, 4000, 8000]), st.sampled_from([2048, 16384]),
    st.sampled_from([(0, 0), (1, 250), (1, 500), (1, 1000), (2, 1000), (8, 1000)]),
    st.sampled_from(["", "T4", "G2|T4"]), st.integers(0, 5), st.one_of(st.none(), st.integers(5, 9)),
)


@settings(max_examples=40, deadline=None)
@given(pods=st.lists(_pod, min_size=1, max_size=25))
def test_pods_random(tmp_path_factory, pods):
    d = tmp_path_factory.mktemp("openb")
    (d / "openb_node_list_all_node.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\n"
                                                    "n0,96000,393216,8,G2\n")
    rows = [f"p{i},{c},{m},{ng},{gm if ng else 0},{spec if ng else ''},LS,Running,{t},"
            f"{'' if e is None else e},"
            for i, (c, m, (ng, gm), spec, t, e) in enumerate(pods)]
    (d / "openb_pod_list_r.csv").write_text(",".join(
        ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
         "pod_phase", "creation_time", "deletion_time", "scheduled_time"]) + "\n"
        + "\n".join(rows) + "\n")
    inst = load_openb(d, pods="r")
    assert inst.n_containers == len(pods) == len(inst.requests)
    # requests are the pods in stable creation order, each mapped to an app of its exact shape
    order = sorted(range(len(pods)), key=lambda i: pods[i][4])
    for q, i in zip(inst.requests, order, strict=True):
        c, m, (ng, gm), spec, t, e = pods[i]
        a = _app(inst, q.app)
        assert (q.time, q.end) == (t, e)
        assert a.demand == (c, m) and a.gpu_cards == ng
        if ng:
            assert a.gpu_whole == (gm == 1000)
            assert a.gpu_per_card == (() if gm == 1000 else (gm,))
            assert a.gpu_models == tuple(s for s in spec.split("|") if s)
    # one app per distinct shape
    shapes = {(c, m, ng, gm, spec if ng else "") for c, m, (ng, gm), spec, _, _ in pods}
    assert inst.n_apps == len(shapes)
