"""Kubernetes manifests: every rule against a request computed by hand in the manifest's comment.

Sources: ``tests/data/k8s/rules/*.yaml`` (written for these tests; the expected values are in each
file's header comment) and ``tests/data/k8s/online-boutique-small.yaml`` (cut from Online
Boutique, see ``tests/data/k8s/SOURCE.txt``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packing.errors import InputError
from packing.loaders import detect, load_any
from packing.loaders.k8s import read_manifests
from packing.model.instance import HostType
from packing.model.selection import Taint

K8S = Path(__file__).resolve().parents[2] / "data" / "k8s"
RULES = K8S / "rules"
MI = 1 / 1024
"""One MiB in GiB."""


def demand(m, name):
    """An app's demand without its pod slot (every pod takes exactly one)."""
    a = {a.name: a for a in m.apps}[name]
    by = dict(zip(m.resources, a.demand, strict=True))
    assert by.pop("pods") == 1.0
    return tuple(by.values())


def count(m, name):
    return {a.name: a for a in m.apps}[name].count


def test_online_boutique_small():
    """Source: online-boutique-small.yaml (requests copied from the upstream file)."""
    m = read_manifests(K8S / "online-boutique-small.yaml")
    assert m.resources == ("cpu", "memory", "pods")
    assert [a.name for a in m.apps] == ["frontend", "redis-cart", "loadgenerator"]
    # frontend 100m/64Mi; redis-cart lists limits (125m/256Mi) before requests (70m/200Mi);
    # loadgenerator's init container asks for nothing, its main container 300m/256Mi
    assert demand(m, "frontend") == (0.1, 64 * MI)
    assert demand(m, "redis-cart") == (0.07, 200 * MI)
    assert demand(m, "loadgenerator") == (0.3, 256 * MI)
    assert [a.count for a in m.apps] == [1, 1, 1]
    assert m.skipped == {"Service": 1, "ServiceAccount": 1}
    assert m.kinds == {"Deployment": 3, "Service": 1, "ServiceAccount": 1}


BOUTIQUE = {  # Deployment: (cpu millicores, memory MiB), read by hand from the manifest
    "frontend": (100, 64), "adservice": (200, 180), "currencyservice": (100, 64),
    "cartservice": (200, 64), "redis-cart": (70, 200), "loadgenerator": (300, 256),
    "recommendationservice": (100, 220), "checkoutservice": (100, 64), "emailservice": (100, 64),
    "paymentservice": (100, 64), "shippingservice": (100, 64),
    "productcatalogservice": (100, 64),
}


def test_online_boutique_full(shared_data):
    """Source: shared k8s-manifests/online-boutique: the 12 Deployments' requests by hand."""
    m = read_manifests(shared_data / "k8s-manifests" / "online-boutique")
    got = {a.name: (round(a.demand[0] * 1000), round(a.demand[1] * 1024)) for a in m.apps}
    assert got == BOUTIQUE
    assert sum(v[0] for v in BOUTIQUE.values()) == 1570
    assert m.skipped == {"Service": 12, "ServiceAccount": 11}


def test_init_containers():
    """Source: rules/init.yaml."""
    m = read_manifests(RULES / "init.yaml")
    assert demand(m, "init-demo") == (0.5, 0.25)
    assert count(m, "init-demo") == 1


def test_sidecars_started_before_an_init_container_count():
    """Source: rules/sidecar.yaml (the KEP-753 rule; the naive max would give 1.0 cores)."""
    m = read_manifests(RULES / "sidecar.yaml")
    assert demand(m, "sidecar-demo") == (1.1, 1.0)
    assert count(m, "sidecar-demo") == 2


def test_overhead():
    """Source: rules/overhead.yaml."""
    assert demand(read_manifests(RULES / "overhead.yaml"), "kata-demo") == (0.5, 220 * MI)


def test_limits_only():
    """Source: rules/limits-only.yaml."""
    m = read_manifests(RULES / "limits-only.yaml")
    assert demand(m, "limits-demo") == (2.1, 1.0)
    assert count(m, "limits-demo") == 1


def test_gpu_and_job():
    """Source: rules/gpu.yaml."""
    m = read_manifests(RULES / "gpu.yaml")
    assert m.resources == ("cpu", "memory", "gpu", "pods")
    assert demand(m, "train") == (4.0, 16.0, 2)
    assert count(m, "train") == 2
    assert demand(m, "infer") == (1.5, 4.0, 1)
    assert count(m, "infer") == 1


def test_daemonset_overhead():
    """Source: rules/daemonset.yaml."""
    m = read_manifests(RULES / "daemonset.yaml")
    assert [a.name for a in m.apps] == ["web"]
    assert [d.key for d in m.daemons] == ["DaemonSet/monitoring/node-exporter",
                                          "DaemonSet/kube-system/gpu-plugin"]
    assert m.reserve.tolist() == [0.1, 50 * MI, 1]  # node-exporter: 100m, 50Mi, one pod slot
    inst = m.instance([HostType("h", (4.0, 8.0, 110), 2)])
    assert inst.host_types[0].capacity == (4.0 - 0.1, 8.0 - 50 * MI, 109)
    with pytest.raises(InputError, match="DaemonSets need more cpu"):
        m.instance([HostType("tiny", (0.05, 8.0, 110), 1)])
    with pytest.raises(InputError, match="DaemonSets need more pods"):
        m.instance([HostType("full", (4.0, 8.0, 0), 1)])


def test_lists_and_skipped_kinds():
    """Source: rules/list.yaml."""
    m = read_manifests(RULES / "list.yaml")
    assert [(a.name, a.count, a.demand) for a in m.apps] == [
        ("a", 1, (0.5, 0.5, 1)), ("b", 1, (0.25, 0.25, 1)), ("d", 3, (1.0, 1.0, 1))]
    assert m.skipped == {"ConfigMap": 1, "Service": 1}


def test_list_in_json(tmp_path):
    """Source: a List written here as JSON (kubectl get -o json), one Pod of 1 core."""
    p = tmp_path / "pods.json"
    p.write_text('{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", '
                 '"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": '
                 '"c", "resources": {"requests": {"cpu": "1"}}}]}}]}')
    assert detect(p) == ("k8s", p)
    assert demand(read_manifests(p), "p") == (1.0, 0.0)


def test_anti_affinity():
    """Source: rules/anti-affinity.yaml."""
    m = read_manifests(RULES / "anti-affinity.yaml")
    caps = {a.name: a.max_per_host for a in m.apps}
    assert caps == {"web": 1, "cache": None, "db": None, "api": None}
    assert m.exclusions == (("cache", "db"),)
    assert len(m.ignored) == 1 and "preferredDuringScheduling" in m.ignored[0]


@pytest.mark.parametrize("name, field", [
    ("pod-affinity.yaml", "podAffinity.requiredDuringSchedulingIgnoredDuringExecution"),
])
def test_unmodelled_rules_are_refused_or_ignored(name, field):
    """Source: rules/pod-affinity.yaml."""
    with pytest.raises(InputError) as e:
        read_manifests(RULES / name)
    assert len(e.value.problems) == 1
    msg = str(e.value)
    assert name in msg and field in msg and "not supported" in msg and "\n" not in msg
    m = read_manifests(RULES / name, ignore_topology=True)
    assert any(field in x and "(ignored)" in x for x in m.ignored)
    assert all(a.max_per_host is None for a in m.apps) and not m.exclusions


def test_zone_anti_affinity_is_a_zone_cap():
    """Source: rules/zone-anti-affinity.yaml."""
    m = read_manifests(RULES / "zone-anti-affinity.yaml")
    (a,) = m.apps
    assert (a.name, a.max_per_host, a.domain_caps, a.spreads) == (
        "zonal", None, (("topology.kubernetes.io/zone", 1),), ())


def test_spread_constraints_are_spread_rules():
    """Sources: rules/spread.yaml, rules/spread-zones.yaml (expected rules in their comments)."""
    (a,) = read_manifests(RULES / "spread.yaml").apps
    assert a.spreads == (("kubernetes.io/hostname", 1),) and a.domain_caps == ()
    got = {a.name: (a.max_per_host, a.domain_caps, a.spreads, a.node_selector)
           for a in read_manifests(RULES / "spread-zones.yaml").apps}
    zone, host = "topology.kubernetes.io/zone", "kubernetes.io/hostname"
    assert got == {
        "web": (None, (), ((zone, 1),), (("disk", "ssd"),)),
        "api": (None, (), ((host, 2), (zone, 2)), ()),
        "quorum": (1, ((zone, 1),), (), ()),
    }


def test_unmodelled_spread_is_refused_or_ignored():
    """Source: rules/spread-refused.yaml: minDomains, nodeTaintsPolicy (read per object), a
    selector over two workloads and zone anti-affinity against another workload (read across)."""
    with pytest.raises(InputError) as e:
        read_manifests(RULES / "spread-refused.yaml")
    lines = str(e.value).splitlines()
    assert len(lines) == 2 and "minDomains" in lines[0] and "nodeTaintsPolicy" in lines[1]
    assert all("not supported" in x for x in lines)
    m = read_manifests(RULES / "spread-refused.yaml", ignore_topology=True)
    assert len([x for x in m.ignored if "(ignored)" in x]) == 4
    assert any("Deployment/c" in x and "other workloads' pods (d)" in x for x in m.ignored)
    assert any("Deployment/d" in x and "another workload's pods (c)" in x for x in m.ignored)
    assert all(not a.spreads and not a.domain_caps for a in m.apps)


def test_cross_workload_zone_rule_refused(tmp_path):
    """Zone anti-affinity against another workload is refused (one line) without the flag."""
    text = (RULES / "spread-refused.yaml").read_text()
    docs = text.split("---")
    p = tmp_path / "cd.yaml"
    p.write_text("---".join(docs[2:]))
    with pytest.raises(InputError) as e:
        read_manifests(p)
    lines = str(e.value).splitlines()
    assert len(lines) == 2 and "Deployment/c" in lines[0] and "Deployment/d" in lines[1]


def test_spread_schedule_anyway_is_always_ignored():
    """Source: rules/spread.yaml (second constraint)."""
    m = read_manifests(RULES / "spread.yaml", ignore_topology=True)
    assert any("topologySpreadConstraints[1]" in x and "ScheduleAnyway" in x for x in m.ignored)


def test_names():
    """Source: rules/names.yaml."""
    m = read_manifests(RULES / "names.yaml")
    assert [a.name for a in m.apps] == ["Deployment/a/web", "StatefulSet/a/web", "b/web", "solo"]
    # 1G = 10**9 bytes, in GiB
    assert demand(m, "solo") == (0.0, 10**9 / 2**30)


def test_scale_rounds_up():
    """Source: rules/list.yaml (d has 3 replicas) and rules/daemonset.yaml (per host)."""
    m = read_manifests(RULES / "list.yaml", scale=1.5)
    assert [a.count for a in m.apps] == [2, 2, 5]  # ceil(1.5), ceil(1.5), ceil(4.5)
    m = read_manifests(RULES / "daemonset.yaml", scale=0.3)
    assert [a.count for a in m.apps] == [2]  # ceil(1.2)
    assert m.reserve.tolist() == [0.1, 50 * MI, 1]
    with pytest.raises(InputError, match="scale"):
        read_manifests(RULES / "list.yaml", scale=0)


POD = """apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers:
  - name: c
    resources:
      requests: {{{req}}}
"""


@pytest.mark.parametrize("req, field, reason", [
    ("cpu: 1x", "Pod/p: spec.containers[0].resources.requests.cpu", "unknown unit 'x'"),
    ("memory: -1Gi", "Pod/p: spec.containers[0].resources.requests.memory", "negative"),
])
def test_bad_quantities(tmp_path, req, field, reason):
    """Sources: pods written here with a bad quantity; one line: file, object, field, reason."""
    p = tmp_path / "bad.yaml"
    p.write_text(POD.format(req=req))
    with pytest.raises(InputError) as e:
        read_manifests(p)
    (problem,) = e.value.problems
    assert problem.source == str(p) and problem.field == field and reason in problem.reason


POD_RESOURCES = POD.format(req="").split("      requests")[0]
"""A pod up to its container's ``resources:`` line."""

POD_CONTAINER = POD.format(req="").split("    resources:")[0]
"""A pod up to its container's fields after ``name``."""

MISSPELT = "unknown field; did you mean 'resources'? (a container's requests are read from resources)"


@pytest.mark.parametrize("container, field, reason", [
    ("resources:\n      request: {cpu: 500m}", "Pod/p: spec.containers[0].resources.request",
     "unknown field; resources has limits, requests and claims"),
    ("resources:\n      requests: {nvidia.com/gpu: 0.5}",
     "Pod/p: spec.containers[0].resources.requests.nvidia.com/gpu", "GPU cards are whole, got 0.5"),
    ("resources:\n      requests: {cpu: 2}\n      limits: {cpu: 1500m}",
     "Pod/p: spec.containers[0].resources.requests.cpu",
     "2 is above the limit '1500m' (the API server refuses such a container)"),
    ("resource: {requests: {cpu: 500m}}", "Pod/p: spec.containers[0].resource", MISSPELT),
    ("Resources: {requests: {cpu: 500m}}", "Pod/p: spec.containers[0].Resources", MISSPELT),
    ("requests: {cpu: 500m}", "Pod/p: spec.containers[0].requests",
     "unknown field; requests belongs under resources (spec.containers[0].resources.requests)"),
])
def test_fields_the_api_server_refuses(tmp_path, container, field, reason):
    """Sources: pods written here; a misspelt field is refused, not read as a zero request."""
    p = tmp_path / "bad.yaml"
    p.write_text(POD_CONTAINER + f"    {container}\n")
    with pytest.raises(InputError) as e:
        read_manifests(p)
    assert [(x.source, x.field, x.reason) for x in e.value.problems] == [(str(p), field, reason)]


def test_a_request_at_its_limit_is_fine(tmp_path):
    """Source: a pod written here; requests equal to the limits, whole GPU cards, claims."""
    p = tmp_path / "ok.yaml"
    p.write_text(POD_RESOURCES + "      requests: {cpu: 1500m, "
                 "nvidia.com/gpu: 2}\n      limits: {cpu: '1.5', nvidia.com/gpu: 2}\n"
                 "      claims: [{name: gpu}]\n")
    assert demand(read_manifests(p), "p") == (1.5, 0.0, 2)


def test_workload_without_containers(tmp_path):
    """Source: a Deployment written here with an empty container list."""
    p = tmp_path / "empty.yaml"
    p.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: e}\nspec:\n  template:\n"
                 "    spec:\n      containers: []\n")
    with pytest.raises(InputError) as e:
        read_manifests(p)
    assert str(e.value) == (f"{p}: Deployment/e: spec.template.spec.containers: a workload needs "
                            "at least one container")


@pytest.mark.parametrize("text, reason", [
    ("a: &x {kind: Pod}\nb: *x\n", "aliases"),
    ("apiVersion: v1\nkind: Pod\nkind: Service\n", "appears twice"),
])
def test_strict_yaml(tmp_path, text, reason):
    """Sources: documents written here; the strict loader of packing.io refuses them."""
    p = tmp_path / "m.yaml"
    p.write_text(text)
    with pytest.raises(InputError, match=reason):
        read_manifests(p)


def test_duplicate_objects(tmp_path):
    """Source: rules/init.yaml copied twice into one folder."""
    for n in ("a.yaml", "b.yaml"):
        (tmp_path / n).write_text((RULES / "init.yaml").read_text())
    with pytest.raises(InputError, match="defined twice"):
        read_manifests(tmp_path)


def test_detect_and_load_any(tmp_path):
    """Sources: rules/daemonset.yaml and rules/list.yaml; hosts from a spec."""
    assert detect(RULES / "init.yaml") == ("k8s", RULES / "init.yaml")
    assert detect(K8S) == ("k8s", K8S)
    inst = load_any(RULES / "daemonset.yaml", hosts="4c8g:3")
    assert inst.n_hosts == 3 and inst.host_types[0].capacity == (3.9, 8 - 50 * MI, 109)
    assert inst.meta["k8s"]["skipped"] == {}
    inst = load_any(RULES / "daemonset.yaml")
    assert inst.n_hosts == 0
    # automatic count: volume bound ceil(4 / 3.9) = 2 on cpu -> 4 hosts
    assert load_any(RULES / "daemonset.yaml", hosts="4c8g").n_hosts == 4
    with pytest.raises(InputError, match="does not apply"):
        load_any(RULES / "daemonset.yaml", pods="x")
    assert load_any(RULES / "list.yaml", scale=2).n_containers == 10


def test_instance_has_exact_volume(tmp_path):
    """Source: rules/sidecar.yaml on 2 hosts of 2 cores: 2 pods of 1.1 cores need both hosts."""
    m = read_manifests(RULES / "sidecar.yaml")
    inst = m.instance([HostType("h", (2.0, 4.0), 2)])
    assert np.allclose(inst.demand, [[1.1, 1.0, 1]])
    assert inst.host_types[0].capacity == (2.0, 4.0, 110)  # pods: the kubelet's default


def test_saved_instance_is_not_a_manifest(tmp_path):
    """Source: rules/anti-affinity.yaml saved as an instance file and loaded back."""
    from packing.io import save_instance

    inst = load_any(RULES / "anti-affinity.yaml", hosts="4c16g:6")
    for ext in ("json", "yaml"):
        p = tmp_path / f"i.{ext}"
        save_instance(inst, p)
        assert detect(p) == ("instance", p)
        assert load_any(p) == inst


def test_pod_level_requests_and_other_resources(tmp_path):
    """Source: a Pod written here: pod-level cpu 2 replaces the containers' 500m (memory stays
    the containers' 1Gi); ephemeral-storage is a resource of the instance (10 GiB)."""
    p = tmp_path / "p.yaml"
    p.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resources:\n"
                 "    requests: {cpu: '2'}\n  containers:\n  - name: c\n    resources:\n"
                 "      requests: {cpu: 500m, memory: 1Gi, ephemeral-storage: 10Gi}\n")
    m = read_manifests(p)
    assert m.resources == ("cpu", "memory", "pods", "ephemeral-storage")
    assert demand(m, "p") == (2.0, 1.0, 10.0)
    assert m.ignored == ()


HOSTS = [  # labelled and tainted host types for the node-selection manifests
    HostType("ssd-a", (8.0, 32.0), 2, labels=(("disk", "ssd"), ("gen", "5"), ("zone", "a"))),
    HostType("hdd-c", (8.0, 32.0), 2, labels=(("disk", "hdd"), ("gen", "4"), ("zone", "c"))),
    HostType("spot", (8.0, 32.0), 2, labels=(("gen", "2"), ("lifecycle", "spot"), ("pool", "x"))),
]


def test_node_selectors():
    """Source: rules/selectors.yaml on HOSTS; expected rows worked out in the file's comment."""
    m = read_manifests(RULES / "selectors.yaml")
    inst = m.instance(HOSTS)
    rows = {a.name: inst.type_allowed[i].tolist() for i, a in enumerate(inst.apps)}
    assert rows == {
        "ssd-app": [True, False, False],  # disk=ssd
        "new-gen": [True, False, True],  # gen>3 and zone in a,b | pool exists
        "not-spot": [True, True, False],  # lifecycle absent counts as NotIn
        "soft": [True, True, True],  # a preference only
    }
    assert len(m.ignored) == 1 and "preferredDuringScheduling" in m.ignored[0]


def test_taints_tolerations_and_daemonsets_per_type():
    """Source: rules/taints.yaml on an untainted CPU type and a tainted GPU type."""
    cpu = HostType("cpu", (16.0, 64.0, 0.0), 3, taints=(Taint("noisy", "", "PreferNoSchedule"),))
    gpu = HostType("gpu", (16.0, 64.0, 4.0), 2, labels=(("accelerator", "nvidia"),),
                   taints=(Taint("dedicated", "gpu", "NoSchedule"),))
    m = read_manifests(RULES / "taints.yaml")
    assert m.resources == ("cpu", "memory", "gpu", "pods")
    over = m.overhead([cpu, gpu])
    assert over.tolist() == [[0.1, 100 * MI, 0.0, 1.0], [0.05, 20 * MI, 0.0, 1.0]]
    inst = m.instance([cpu, gpu])
    rows = {a.name: inst.type_allowed[i].tolist() for i, a in enumerate(inst.apps)}
    assert rows == {"trainer": [False, True], "anywhere": [True, True], "plain": [True, False]}
    assert inst.host_types[1].capacity == (16 - 0.05, 64 - 20 * MI, 4.0, 109)


def test_bad_node_selection_fields(tmp_path):
    """Source: a Pod written here with a Gt of a non-integer and a toleration with a bad operator."""
    p = tmp_path / "bad.yaml"
    p.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  tolerations:\n"
                 "  - {key: a, operator: Matches}\n  affinity:\n    nodeAffinity:\n"
                 "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                 "        nodeSelectorTerms:\n        - matchExpressions:\n"
                 "          - {key: gen, operator: Gt, values: [x]}\n"
                 "  containers: [{name: c}]\n")
    with pytest.raises(InputError) as e:
        read_manifests(p)
    fields = sorted(x.field for x in e.value.problems)
    assert fields == [
        "Pod/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].values",
        "Pod/p: spec.tolerations[0]"]


CLUSTER = """resources: [cpu, memory, gpu]
host_types:
- {name: cpu, capacity: [16, 64, 0], count: 3}
- {name: gpu, capacity: {cpu: 16, memory: 64, gpu: 4}, count: 2, labels: {accelerator: nvidia},
   taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}
"""


def test_hosts_from_a_file(tmp_path):
    """Sources: rules/taints.yaml and a host file written here (labels and taints kept)."""
    p = tmp_path / "cluster.yaml"
    p.write_text(CLUSTER)
    inst = load_any(RULES / "taints.yaml", hosts=str(p))
    assert [t.name for t in inst.host_types] == ["cpu", "gpu"]
    # capacities less the DaemonSets, rounded down to floats never above the exact amount
    assert inst.host_types[0].capacity == pytest.approx((16 - 0.1, 64 - 100 * MI, 0.0, 109))
    assert inst.host_types[0].capacity[0] <= 15.9
    assert dict(inst.host_types[1].labels)["accelerator"] == "nvidia"
    assert dict(inst.host_types[1].labels)["kubernetes.io/os"] == "linux"  # the kubelet's
    assert inst.type_allowed.tolist() == [[False, True], [True, True], [True, False]]
    # a CPU-only file for CPU-only manifests; a resource no pod requests is not planned; a
    # host type without memory is refused
    p.write_text("resources: [cpu, memory]\nhost_types: [{name: h, capacity: [4, 8], count: 2}]\n")
    assert load_any(RULES / "init.yaml", hosts=str(p)).n_hosts == 2
    p.write_text("resources: [cpu, memory, example.com/disk]\n"
                 "host_types: [{name: h, capacity: [4, 8, 8], count: 2}]\n")
    assert "example.com/disk" not in load_any(RULES / "init.yaml", hosts=str(p)).resources
    p.write_text("resources: [cpu, disk]\nhost_types: [{name: h, capacity: [4, 8], count: 2}]\n")
    with pytest.raises(InputError, match="h.memory: a host type needs memory"):
        load_any(RULES / "init.yaml", hosts=str(p))


RS = """apiVersion: apps/v1
kind: ReplicaSet
metadata: {{name: {name}}}
spec:
  template:
    spec:
      containers: [{{name: c, resources: {{limits: {{cpu: 250m, {gpu}: 2}}}}}}]
"""


def test_replicaset_and_amd_gpus(tmp_path):
    """Sources: ReplicaSets written here: no replicas -> 1 pod; limits only -> requests;
    amd.com/gpu gives GPU cards too; mixing the two vendors is refused."""
    p = tmp_path / "rs.yaml"
    p.write_text(RS.format(name="r", gpu="amd.com/gpu"))
    m = read_manifests(p)
    assert m.resources == ("cpu", "memory", "gpu", "pods")
    assert [(a.name, a.count, a.demand) for a in m.apps] == [("r", 1, (0.25, 0.0, 2, 1))]
    (tmp_path / "rs2.yaml").write_text(RS.format(name="n", gpu="nvidia.com/gpu"))
    with pytest.raises(InputError, match="both nvidia.com/gpu and amd.com/gpu"):
        read_manifests(tmp_path)


def test_runtime_class_without_overhead_is_listed(tmp_path):
    """Source: a Pod written here naming a RuntimeClass but no spec.overhead."""
    p = tmp_path / "p.yaml"
    p.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  runtimeClassName: kata\n"
                 "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n")
    m = read_manifests(p)
    assert demand(m, "p") == (0.1, 0.0)
    assert len(m.ignored) == 1 and "runtimeClassName" in m.ignored[0]


def test_other_container_fields_pass(tmp_path):
    """Source: a pod written here with fields vbp does not read, one of them newer than others."""
    p = tmp_path / "ok.yaml"
    p.write_text(POD_CONTAINER + "    resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired}]\n"
                 "    someFutureField: {x: 1}\n    resources:\n      requests: {cpu: 250m}\n")
    assert demand(read_manifests(p), "p") == (0.25, 0.0)
