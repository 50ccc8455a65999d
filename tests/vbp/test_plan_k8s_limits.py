"""``vbp plan`` where what binds is what the kube-scheduler enforces beyond CPU and memory.

Sources: tests/data/k8s/limits/*.yaml and shapes/ (see tests/data/k8s/SOURCE.txt), each with its
hand-computed optimum in the file's comment. Every plan is proven by ``vbp plan`` and its
``--k8s-out`` replayed by the independent replay of ``tests/k8s_replay.py`` without a violation.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.k8s_replay import replay
from vbp import plan
from vbp.cli import main

K8S = Path(__file__).resolve().parents[1] / "data" / "k8s"
LIMITS = K8S / "limits"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


def planned(capsys: pytest.CaptureFixture[str], tmp_path: Path, demand: Path, *hosts: str,
            extra: tuple[str, ...] = ()) -> tuple[str, list[dict]]:
    """Plan with --k8s-out; the text and the objects written (replayed without a violation)."""
    out = tmp_path / "nodes.yaml"
    args = [a for h in hosts for a in ("--hosts", h)]
    code, text, err = run(capsys, "plan", str(demand), *args, "--k8s-out", str(out),
                          "--time-limit", "30", *extra)
    assert code == 0, err
    objs = list(yaml.safe_load_all(out.read_text()))
    assert replay(objs) == []
    return text, objs


def nodes_of(objs: list[dict]) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == "Node"}


def test_pod_slots_bind_with_daemonset_slots(capsys, tmp_path):
    """many-pods.yaml: 330 tiny pods, one DaemonSet slot per host: 4 hosts of 109 free slots."""
    (s,) = plan(LIMITS / "many-pods.yaml", ["std=16c64g"], time_limit=30).scenarios
    assert (s.status, s.hosts, s.bound) == ("optimal", 4, 4)
    (t,) = s.per_type
    assert t.bottleneck == "pods" and t.capacity["pods"] == 109
    _, objs = planned(capsys, tmp_path, LIMITS / "many-pods.yaml", "std=16c64g")
    per_node = [sum(1 for p in objs if p["kind"] == "Pod" and p["spec"]["nodeName"] == n)
                for n in nodes_of(objs)]
    assert sorted(per_node, reverse=True)[0] <= 109 and sum(per_node) == 330
    assert all(n["status"]["capacity"]["pods"] == "110" and n["status"]["allocatable"]["pods"]
               == "109" for n in nodes_of(objs).values())
    # 250 slots per host (249 after the DaemonSet): 2 hosts
    (s,) = plan(LIMITS / "many-pods.yaml", ["std=16c64g:pods=250"], time_limit=30).scenarios
    assert (s.status, s.hosts) == ("optimal", 2)


def test_host_ports_bind(capsys, tmp_path):
    """host-ports.yaml: web (3, port 80) and edge (2, 10.0.0.1:80) never share: 5 hosts."""
    (s,) = plan(LIMITS / "host-ports.yaml", ["h=4c8g"], time_limit=30).scenarios
    assert (s.status, s.hosts, s.bound) == ("optimal", 5, 5)
    inst = s.instance
    assert inst is not None
    caps = {a.name: a.max_per_host for a in inst.apps}
    assert caps == {"web": 1, "edge": 1, "dns": 1, "dns-tcp": 1, "metrics": None}
    assert inst.exclusions == (("edge", "web"),)
    planned(capsys, tmp_path, LIMITS / "host-ports.yaml", "h=4c8g")


def test_ephemeral_storage_binds(capsys, tmp_path):
    """ephemeral.yaml on hosts of 50Gi ephemeral storage: five 10Gi pods per host, 3 hosts."""
    hosts = str(LIMITS / "hosts-ephemeral.csv")
    (s,) = plan(LIMITS / "ephemeral.yaml", [hosts], time_limit=30).scenarios
    assert (s.status, s.hosts, s.cost) == ("optimal", 3, 3.0)
    (t,) = s.per_type
    assert t.bottleneck == "ephemeral-storage" and t.host_capacity["ephemeral-storage"] == 50.0
    _, objs = planned(capsys, tmp_path, LIMITS / "ephemeral.yaml", hosts)
    assert {n["status"]["allocatable"]["ephemeral-storage"] for n in nodes_of(objs).values()} \
        == {"50Gi"}
    # inline, and a request no host type offers: one line, exit 2
    (s,) = plan(LIMITS / "ephemeral.yaml", ["std=16c64g:ephemeral-storage=50Gi"],
                time_limit=30).scenarios
    assert s.hosts == 3
    code, out, err = run(capsys, "plan", str(LIMITS / "ephemeral.yaml"), "--hosts", "std=16c64g")
    assert code == 2 and out == ""
    assert err.splitlines() == [f"error: {LIMITS / 'ephemeral.yaml'}: cache: requests "
                                "ephemeral-storage 10Gi, which no host type offers; state it on "
                                "the host types: a 'ephemeral-storage' column, ephemeral-storage= "
                                "inline or ephemeral-storage: in a YAML host list"]


def test_extended_resource_binds(capsys, tmp_path):
    """extended.yaml: 5 pods of one example.com/fpga on hosts with 2: 3 hosts."""
    (s,) = plan(LIMITS / "extended.yaml", ["fpga=8c32g:example.com/fpga=2"], time_limit=30).scenarios
    assert (s.status, s.hosts) == ("optimal", 3)
    assert s.per_type[0].bottleneck == "example.com/fpga"
    _, objs = planned(capsys, tmp_path, LIMITS / "extended.yaml", "fpga=8c32g:example.com/fpga=2")
    assert {n["status"]["capacity"]["example.com/fpga"] for n in nodes_of(objs).values()} == {"2"}


def test_well_known_labels_select(capsys, tmp_path):
    """os-selector.yaml: beta.kubernetes.io/os and kubernetes.io/arch selectors on host types that
    give no labels: 3 small hosts; with an arm64 type, batch takes the x86 one: cost 5."""
    (s,) = plan(LIMITS / "os-selector.yaml", ["small=2c4g"], time_limit=30).scenarios
    assert (s.status, s.hosts) == ("optimal", 3)
    (s,) = plan(LIMITS / "os-selector.yaml", ["cheap=2c4g:price=1:kubernetes.io/arch=arm64",
                                              "x86=2c4g:price=3"], time_limit=30).scenarios
    assert (s.status, s.cost, s.bound) == ("optimal", 5.0, 5.0)
    assert {t.type: t.hosts for t in s.per_type} == {"cheap": 2, "x86": 1}
    _, objs = planned(capsys, tmp_path, LIMITS / "os-selector.yaml", "small=2c4g")
    labels = next(iter(nodes_of(objs).values()))["metadata"]["labels"]
    assert {k: labels[k] for k in ("kubernetes.io/os", "beta.kubernetes.io/os", "kubernetes.io/arch",
                                   "node.kubernetes.io/instance-type")} == {
        "kubernetes.io/os": "linux", "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "small"}


def test_sock_shop_shape_plans_with_inline_hosts(capsys, tmp_path):
    """shapes/sock-shop-like.yaml selects beta.kubernetes.io/os: one small host, no labels given."""
    text, objs = planned(capsys, tmp_path, K8S / "shapes" / "sock-shop-like.yaml", "small=2c4g")
    assert "optimal  1 " in text
    assert {o["metadata"]["name"] for o in objs if o["kind"] == "Namespace"} == {"sock-shop"}


def test_online_boutique_with_inline_hosts(capsys, tmp_path, shared_data):
    """The shared Online Boutique manifests, inline hosts, no label written by hand."""
    path = shared_data / "k8s-manifests" / "online-boutique"
    text, objs = planned(capsys, tmp_path, path, "small=2c4g")
    assert sum(1 for o in objs if o["kind"] == "Pod") == 12


def test_folders_are_read_recursively(capsys, tmp_path):
    """shapes/hotel: one subfolder per service: frontend 1 core, geo 2 x 500m, mongodb-geo 1 core."""
    (s,) = plan(K8S / "shapes" / "hotel", ["h=2c4g"], time_limit=30).scenarios
    assert s.instance is not None
    assert sorted(a.name for a in s.instance.apps) == ["frontend", "geo", "mongodb-geo"]
    assert (s.status, s.hosts) == ("optimal", 2)
    code, out, _ = run(capsys, "info", str(K8S / "shapes" / "hotel"))
    assert code == 0 and "3 Deployment" in out


def test_zone_of_a_type_no_pod_fits_counts(capsys):
    """zone-spread.yaml: a zone whose type takes no pod still counts: proven infeasible (exit 3),
    as vbp solve on the same fleet says."""
    hosts = ["a=4c16g:zone=z1", "b=0.5c16g:zone=z2"]
    (s,) = plan(LIMITS / "zone-spread.yaml", hosts, time_limit=30).scenarios
    assert s.status == "infeasible"
    code, _, _ = run(capsys, "plan", str(LIMITS / "zone-spread.yaml"), "--hosts", hosts[0],
                     "--hosts", hosts[1], "--time-limit", "30")
    assert code == 3
    code, out, _ = run(capsys, "solve", str(LIMITS / "zone-spread.yaml"), "--hosts",
                       "a=4c16g:zone=z1:count=4,b=0.5c16g:zone=z2:count=1", "--time-limit", "30")
    assert code == 3 and "infeasible" in out


def test_zones_option_and_column(tmp_path):
    """--zones makes one type per zone: rules/spread-zones.yaml on 8c16g ssd types in three zones
    is the plan of rules/zones.csv written by hand (4 hosts; test_plan_topology)."""
    rules = K8S / "rules"
    by_hand = plan(rules / "spread-zones.yaml", [str(rules / "zones.csv")], time_limit=30)
    csv = tmp_path / "h.csv"
    csv.write_text("name,cpu,memory,count,zones,disk\nssd,8,16Gi,4,eu-1a;eu-1b,ssd\n"
                   "hdd,8,16Gi,4,eu-1c,hdd\n")
    by_column = plan(rules / "spread-zones.yaml", [str(csv)], time_limit=30)
    assert [t.name for t in by_column.host_types] == ["ssd-eu-1a", "ssd-eu-1b", "hdd-eu-1c"]
    assert by_column.scenarios[0].hosts == by_hand.scenarios[0].hosts == 4
    opt = plan(rules / "spread-zones.yaml", ["t=8c16g:count=4:disk=ssd"], zones=("a", "b", "c"),
               time_limit=30)
    assert [t.name for t in opt.host_types] == ["t-a", "t-b", "t-c"]
    assert opt.scenarios[0].status == "optimal"


@pytest.mark.parametrize(("demand", "plan_hosts", "fleet", "extra"), [
    (K8S / "rules" / "combined.yaml", str(K8S / "rules" / "zones.csv"),
     "ssd-a=8c16g:count=4:zone=eu-1a:disk=ssd,ssd-b=8c16g:count=4:zone=eu-1b:disk=ssd,"
     "hdd-c=8c16g:count=4:zone=eu-1c:disk=hdd", ()),
    (LIMITS / "host-ports.yaml", "h=4c8g", "h=4c8g:count=9", ("--n-plus-one",)),
    (LIMITS / "many-pods.yaml", "std=16c64g", "std=16c64g:count=6", ("--growth", "1,1.5")),
])
def test_a_plans_placement_passes_validate_on_the_fleet(capsys, tmp_path, demand, plan_hosts,
                                                        fleet, extra):
    """One truth: the placement of every scenario (N+1 spares included) passes ``vbp validate``
    of the same manifests on the fleet with any counts (the zones of the types it leaves unused
    included)."""
    out = tmp_path / "p.json"
    code, _, err = run(capsys, "plan", str(demand), "--hosts", plan_hosts, "--out", str(out),
                       "--time-limit", "30", *extra)
    assert code == 0, err
    files = sorted(tmp_path.glob("p*.json"))
    assert files
    for f in files:
        growth = f.stem.split("-x")[1] if "-x" in f.stem else "1"  # p-x1.5.json: --scale 1.5
        code, text, err = run(capsys, "validate", str(demand), "--hosts", fleet, "--placement",
                              str(f), "--require-all", "--scale", growth)
        assert code == 0, (f, text, err)


def test_policies_and_the_simulator_keep_pod_slots() -> None:
    """many-pods.yaml on 5 hosts of 16c64g: every online policy (the simulator's mask, the
    compiled kernels) needs 4 hosts, as the pod slots do; the checker accepts their placements."""
    from packing.feasibility.checker import check
    from packing.loaders import load_any
    from packing.sim.simulator import evaluate, sample_orders
    from policies.registry import get_policy

    inst = load_any(LIMITS / "many-pods.yaml", hosts="16c64g:5")
    assert inst.resources == ("cpu", "memory", "pods")
    orders = sample_orders(inst, 2, seed=0)
    for name in ("ff", "bf", "wf", "dot"):
        s = evaluate(get_policy(name), inst, orders)
        assert s.min >= 4, name  # 330 pods, 109 slots per host
        for r in s.results:
            assert check(inst, r.placement) == [], name
