"""The plan's input readers: deployments CSV, host types (CSV, YAML, inline), DEMAND dispatch."""

from __future__ import annotations

from pathlib import Path

import pytest

from packing.errors import InputError
from packing.io import save_instance
from packing.loaders.deployments import load_demand, load_deployments
from packing.loaders.host_types import load_hosts, parse_inline
from packing.model.instance import App, HostType, Instance
from packing.plan.model import HostOffer

GI = 2**30


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_deployments_units(tmp_path: Path) -> None:
    p = _write(tmp_path, "d.csv", "name,replicas,cpu,memory,gpu,max_per_host\n"
               "web,12,500m,1Gi,,2\ndb,3,2,512Mi,0,\ntrain,2,1.5,2G,4,1\n")
    d = load_deployments(p)
    web, db, train = d.apps
    assert web.demand == (0.5, 1.0, 0.0) and web.count == 12 and web.max_per_host == 2
    assert db.demand == (2.0, 0.5, 0.0) and db.max_per_host is None
    assert train.demand == (1.5, 2e9 / GI, 4.0)
    assert d.sources["web"] == str(p)


@pytest.mark.parametrize(("body", "needle"), [
    ("web,1,500x,1Gi\n", "unknown unit 'x'"),
    ("web,1,1,64\n", "memory needs a unit"),
    ("web,1,-1,1Gi\n", "must not be negative"),
    ("web,1.5,1,1Gi\n", "whole number"),
    ("web,1,1,1Gi\nweb,2,1,1Gi\n", "duplicate name 'web'"),
])
def test_deployments_bad_rows(tmp_path: Path, body: str, needle: str) -> None:
    p = _write(tmp_path, "d.csv", "name,replicas,cpu,memory\n" + body)
    with pytest.raises(InputError) as e:
        load_deployments(p)
    assert needle in str(e.value)
    assert str(p) in str(e.value)


def test_deployments_unknown_and_missing_columns(tmp_path: Path) -> None:
    p = _write(tmp_path, "d.csv", "name,replicas,cpu,memory,disk\nweb,1,1,1Gi,3\n")
    with pytest.raises(InputError, match="column disk: unknown column"):
        load_deployments(p)
    p = _write(tmp_path, "e.csv", "name,replicas,cpu\nweb,1,1\n")
    with pytest.raises(InputError, match="column memory: missing column"):
        load_deployments(p)


def test_inline_hosts() -> None:
    o = parse_inline("gpu:32c256g8gpu:12.5:4")
    assert (o.name, o.cpu_milli, o.memory_bytes, o.gpus, o.price, o.count) == (
        "gpu", 32000, 256 * GI, 8, 12.5, 4)
    o = parse_inline("std:0.5c1.5g::10")
    assert (o.cpu_milli, o.memory_bytes, o.price, o.count) == (500, 3 * GI // 2, None, 10)
    for bad in ("std", "std:16c", "std:16c64g:x", "std:16c64g:1:2.5", "std:0c64g", ":16c64g"):
        with pytest.raises(InputError):
            parse_inline(bad)


@pytest.mark.parametrize("offer, field, reason", [
    (HostOffer("std", 16.5, 64 * 2**30),  # type: ignore[arg-type]
     "std.cpu", "expected whole millicores (an int), got 16.5"),
    (HostOffer("std", 16_000, 64.0 * 2**30), "std.memory",  # type: ignore[arg-type]
     "expected whole bytes (an int), got 68719476736.0"),
    (HostOffer("std", 16_000, 64 * 2**30, gpus=-1), "std.gpu", "must not be negative, got -1"),
])
def test_host_offers_built_in_python_are_checked(offer: HostOffer, field: str, reason: str) -> None:
    """Base units are whole: 16.5 millicores (cores meant) is refused, not planned as infeasible."""
    with pytest.raises(InputError) as e:
        load_hosts([offer])
    assert [(p.source, p.field, p.reason) for p in e.value.problems] == [("--hosts", field, reason)]


def test_host_csv_labels_and_errors(tmp_path: Path) -> None:
    p = _write(tmp_path, "h.csv", "name,cpu,memory,gpu,price,count,zone\n"
               "std,16,64Gi,,0.8,,eu-1a\ngpu,32,256Gi,8,12.5,4,eu-1b\n")
    std, gpu = load_hosts([str(p)])
    # zone is the shorthand of topology.kubernetes.io/zone; the kubelet's labels come with
    assert dict(std.labels) == {"topology.kubernetes.io/zone": "eu-1a", "kubernetes.io/os": "linux",
                                "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                                "beta.kubernetes.io/arch": "amd64",
                                "node.kubernetes.io/instance-type": "std"}
    assert std.count is None and std.price == 0.8 and std.pods == 110
    assert gpu.gpus == 8 and gpu.count == 4
    bad = _write(tmp_path, "z.csv", "name,cpu,memory\nstd,0,64Gi\n")
    with pytest.raises(InputError, match="needs CPU"):
        load_hosts([str(bad)])
    with pytest.raises(InputError, match="duplicate host type name"):
        load_hosts([str(p), "std:4c8g:1"])
    with pytest.raises(InputError, match="give every host type a price"):
        load_hosts(["a:4c8g:1", "b:8c16g"])


def test_host_yaml(tmp_path: Path) -> None:
    p = _write(tmp_path, "h.yaml", "- {name: std, cpu: 16, memory: 64Gi, labels: {zone: a}}\n"
               "- {name: big, cpu: 64000m, memory: 256Gi, count: 3}\n")
    std, big = load_hosts([str(p)])
    assert dict(std.labels)["zone"] == "a"  # a label given under labels is taken as it is
    assert big.cpu_milli == 64000 and big.count == 3
    q = _write(tmp_path, "q.yaml", "- {name: std, cpu: 16, memory: 64Gi, disk: 1}\n")
    with pytest.raises(InputError, match="unknown key"):
        load_hosts([str(q)])


def test_demand_from_files_adds_up(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.csv", "name,replicas,cpu,memory\nweb,2,1,1Gi\n")
    inst = Instance("i", ("cpu", "mem"), (HostType("ignored", (8.0, 8.0), 1),),
                    (App("db", (2.0, 4.0), 3, max_per_host=1), App("cache", (1.0, 2.0), 1)),
                    exclusions=(("db", "cache"),))
    b = tmp_path / "b.json"
    save_instance(inst, b)
    d = load_demand([a, b])
    assert [x.name for x in d.apps] == ["web", "db", "cache"]
    assert d.apps[1].demand == (2.0, 4.0, 0.0) and d.apps[1].max_per_host == 1
    assert d.exclusions == (("db", "cache"),)
    with pytest.raises(InputError, match="names must be unique"):
        load_demand([a, a])


class _Manifests:
    """What a manifest reader returns: apps in its resources' order, and DaemonSet load per host."""

    resources = ("cpu", "memory")
    apps = (App("deployment/default/web", (0.25, 0.5), 3, max_per_host=1),)
    exclusions = ()
    reserve = (0.1, 0.125)


def _fake_reader(path: Path) -> _Manifests:
    return _Manifests()


def test_manifests_go_through_the_reader_hook(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import packing.loaders.deployments as dep

    p = _write(tmp_path, "app.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
               "  name: web\n---\nkind: Service\n")
    assert dep.is_manifest(p)
    monkeypatch.setattr(dep, "K8S_READER", f"{__name__}:_fake_reader")
    d = load_demand([p])
    assert [a.name for a in d.apps] == ["deployment/default/web"]
    assert d.apps[0].demand == (0.25, 0.5, 0.0)
    assert d.overhead == (100, 128 * 2**20, 0)  # 100m and 128Mi, the plan's extra reserve
    monkeypatch.setattr(dep, "K8S_READER", "no.such.module:read")
    with pytest.raises(InputError, match="no manifest reader"):
        load_demand([p])
