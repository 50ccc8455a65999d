"""Mistakes a new user makes in host lists, deployments and manifests: one clear line, exit 2.

Sources: files written here; each case names the mistake and what vbp must say. None of them may
plan silently (a misspelt price column must not drop the prices, a misspelt resource must not
plan a zero request, a CPU in bytes must not end as "fits on no host type").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vbp import plan
from vbp.cli import main

POD = """apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers: [{{name: c, resources: {{requests: {{{requests}}}}}}}]
"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.fixture
def demand(tmp_path: Path) -> Path:
    return write(tmp_path, "d.csv", "name,replicas,cpu,memory\nweb,4,1,1Gi\n")


@pytest.mark.parametrize(("header", "near"), [
    ("name,cpu,memory,pirce", "price"), ("name,cpu,memory,cout", "count"),
    ("name,cpu,memory,memroy", "memory"), ("name,cpu,memory,Price", "price"),
])
def test_a_near_miss_column_is_an_error_not_a_label(capsys, tmp_path, demand, header, near):
    hosts = write(tmp_path, "h.csv", f"{header}\nstd,4,8Gi,1\n")
    code, out, err = run(capsys, "plan", str(demand), "--hosts", str(hosts))
    bad = header.split(",")[-1]
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"error: {hosts}: line 1, column {bad}: unknown column; did you "
                                f"mean {near!r}? (a column that is no known one is a node label)"]


def test_a_count_column_given_twice_is_an_error(capsys, tmp_path, demand):
    hosts = write(tmp_path, "h.csv", "name,cpu,memory,count,count\nstd,4,8Gi,1,2\n")
    code, _, err = run(capsys, "plan", str(demand), "--hosts", str(hosts))
    assert code == 2 and "column count: the column is given twice" in err
    d2 = write(tmp_path, "d2.csv", "name,replicas,cpu,cpu,memory\nweb,1,1,2,1Gi\n")
    code, _, err = run(capsys, "plan", str(d2), "--hosts", "std=4c8g")
    assert code == 2 and "column cpu: the column is given twice" in err


def test_other_columns_stay_labels(tmp_path, demand):
    hosts = write(tmp_path, "h.csv", "name,cpu,memory,role,pool,price\nstd,4,8Gi,web,x,1\n")
    (s,) = plan(demand, [str(hosts)], time_limit=10).scenarios
    assert s.objective_kind == "cost" and s.cost == 1.0  # the price is read: one 4-core host at 1
    assert {"role": "web", "pool": "x"}.items() <= s.per_type[0].labels.items()


def test_a_near_miss_inline_key_is_an_error(capsys, demand):
    code, _, err = run(capsys, "plan", str(demand), "--hosts", "std=4c8g:cout=2")
    assert code == 2
    assert err.strip() == ("error: --hosts: cout=2: unknown key 'cout'; did you mean count=? "
                           "(other keys are node labels)")


@pytest.mark.parametrize("cpu", ["1.5Gi", "100Mi"])
def test_cpu_in_bytes_is_an_error(capsys, tmp_path, cpu):
    d = write(tmp_path, "d.csv", f"name,replicas,cpu,memory\nweb,1,{cpu},1Gi\n")
    code, out, err = run(capsys, "plan", str(d), "--hosts", "std=4c8g")
    assert (code, out) == (2, "")
    assert f"line 2, column cpu: {cpu!r} has the byte unit {cpu[-2:]}; cpu is CPU in cores or " \
           "millicores" in err
    hosts = write(tmp_path, "h.csv", f"name,cpu,memory\nstd,{cpu},8Gi\n")
    code, _, err = run(capsys, "plan", str(write(tmp_path, "ok.csv",
                                                 "name,replicas,cpu,memory\nw,1,1,1Gi\n")),
                       "--hosts", str(hosts))
    assert code == 2 and "has the byte unit" in err


def test_host_capacities_are_never_rounded_up(capsys, tmp_path):
    one = write(tmp_path, "d.csv", "name,replicas,cpu,memory\nweb,1,1,1Gi\n")
    hosts = write(tmp_path, "h.csv", "name,cpu,memory\nh,999.5m,4Gi\n")
    code, out, _ = run(capsys, "plan", str(one), "--hosts", str(hosts))
    assert code == 3 and "h (cpu 1 > 0.999)" in out  # 999.5m is 999m, not 1000m
    (s,) = plan(one, ["t=1.0001c4g"], time_limit=10).scenarios
    assert s.per_type[0].host_capacity["cpu"] == 1.0  # 1000.1m is 1000m, not 1001m


@pytest.mark.parametrize(("requests", "name", "meant"), [
    ("CPU: 3, Memory: 7Gi", "CPU", "cpu"), ("cpus: 2", "cpus", "cpu"),
    ("Memory: 7Gi", "Memory", "memory"),
])
def test_misspelt_resource_names_are_refused(capsys, tmp_path, requests, name, meant):
    p = write(tmp_path, "p.yaml", POD.format(requests=requests))
    for cmd in (["plan", str(p), "--hosts", "std=4c8g"], ["solve", str(p), "--hosts", "4c8g:1"]):
        code, out, err = run(capsys, *cmd)
        assert (code, out) == (2, ""), cmd
        assert f"Pod/p: spec.containers[0].resources.requests.{name}: {name!r} is not a " \
               f"resource a container can request" in err and f"did you mean {meant!r}" in err


def test_a_request_in_another_resources_unit_is_refused(capsys, tmp_path):
    p = write(tmp_path, "p.yaml", POD.format(requests="cpu: 1Gi"))
    code, _, err = run(capsys, "plan", str(p), "--hosts", "std=4c8g")
    assert code == 2 and "requests.cpu: '1Gi' has the byte unit Gi" in err


def test_an_oversized_pod_is_named(capsys, tmp_path):
    p = write(tmp_path, "p.yaml", POD.format(requests="cpu: 100m, memory: 5000000Ei"))
    code, out, _ = run(capsys, "solve", str(p), "--hosts", "16c64g")
    assert code == 3 and "app 'p': a container needs" in out and "of 'memory'" in out
    code, out, _ = run(capsys, "plan", str(p), "--hosts", "std=16c64g")
    assert code == 3 and "app 'p' fits on no host type" in out and "std (memory" in out


def test_best_effort_pods_are_listed(capsys, tmp_path):
    p = write(tmp_path, "p.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: idle}\n"
              "spec:\n  containers: [{name: c, image: x}]\n")
    code, out, _ = run(capsys, "info", str(p))
    assert code == 0 and "BestEffort" in out and "idle" in out


@pytest.mark.parametrize(("value", "why"), [("1_0", "'_'"), ("010", "a leading 0"),
                                           ("1:30", "':'")])
def test_numbers_yaml_versions_read_differently_are_refused(capsys, tmp_path, value, why):
    p = write(tmp_path, "d.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\n"
              f"spec:\n  replicas: {value}\n  template:\n    spec:\n"
              "      containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n")
    code, out, err = run(capsys, "info", str(p))
    assert (code, out) == (2, "")
    assert err.strip() == (f"error: {p}: line 5, column 13: the number {value} has {why}"
                           + err.strip().split(why, 1)[1])


def test_the_files_of_a_run_are_written_together(capsys, tmp_path, monkeypatch):
    """--out and --k8s-out are one set: Ctrl-C while the second file is written replaces none,
    and the message says so."""
    from packing.io import atomic

    d = write(tmp_path, "d.csv", "name,replicas,cpu,memory\nweb,2,1,1Gi\n")
    out = write(tmp_path, "p.json", "old placement")
    k8s = write(tmp_path, "nodes.yaml", "old nodes")
    calls: list[int] = []

    def fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    code, _, err = run(capsys, "plan", str(d), "--hosts", "std=4c8g", "--out", str(out),
                       "--k8s-out", str(k8s), "--force")
    assert code == 130 and err.strip() == "error: interrupted: none of the 2 files was replaced"
    assert (out.read_text(), k8s.read_text()) == ("old placement", "old nodes")
