"""``vbp info`` and ``vbp solve`` on Kubernetes manifests (sources: tests/data/k8s, see SOURCE.txt)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vbp.cli import main

K8S = Path(__file__).resolve().parents[1] / "data" / "k8s"
RULES = K8S / "rules"


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


def test_info_counts_kinds_and_says_where_hosts_come_from(capsys):
    """Source: online-boutique-small.yaml (3 Deployments, a Service, a ServiceAccount)."""
    code, out, err = run(capsys, "info", str(K8S / "online-boutique-small.yaml"))
    assert code == 0 and err == ""
    rows = dict(line.split(None, 1) for line in out.splitlines())
    assert rows["objects"] == "3 Deployment, 1 Service, 1 ServiceAccount"
    assert rows["skipped"] == "1 Service, 1 ServiceAccount"
    assert rows["hosts"].startswith("none: manifests carry no hosts; give them with --hosts")


@pytest.mark.parametrize("command", [["solve", "-q"], ["simulate", "--policy", "bf"],
                                     ["compare", "--orders", "1", "--policies", "ff"],
                                     ["train", "swarm", "--particles", "2", "--iters", "1"]])
def test_placing_manifests_without_hosts_asks_for_hosts(capsys, tmp_path, command):
    """Source: online-boutique-small.yaml; without --hosts there is nowhere to place (exit 2).

    ``solve`` and ``compare`` ended in an internal error, ``simulate`` rejected every pod and
    ``train swarm`` trained on an empty cluster.
    """
    path = str(K8S / "online-boutique-small.yaml")
    out_file = ["--out", str(tmp_path / "tuned.json")] if command[0] == "train" else []
    code, out, err = run(capsys, *command, *out_file, path)
    assert (code, out) == (2, "") and not (tmp_path / "tuned.json").exists()
    assert err == (f"error: {path}: --hosts: Kubernetes manifests carry no hosts; give the host "
                   "types, e.g. --hosts 16c64g:10\n")


def test_info_lists_ignored_terms_and_daemonsets(capsys):
    """Sources: rules/spread-refused.yaml with --ignore-topology, rules/spread.yaml,
    rules/daemonset.yaml."""
    code, out, _ = run(capsys, "info", str(RULES / "spread-refused.yaml"), "--ignore-topology")
    assert code == 0
    assert "ignored     4 soft or unmodelled terms (listed below)" in out
    assert "topologySpreadConstraints[0].minDomains" in out
    code, out, _ = run(capsys, "info", str(RULES / "spread.yaml"))
    assert code == 0
    assert "ignored     1 soft or unmodelled terms (listed below)" in out
    assert "topologySpreadConstraints[1]" in out and "ScheduleAnyway" in out
    assert "topology    0 apps with domain caps; 1 apps with spread rules" in out
    code, out, _ = run(capsys, "info", str(RULES / "daemonset.yaml"), "--hosts", "4c8g:2",
                       "--json")
    d = json.loads(out)
    assert code == 0 and d["hosts"] == 2
    assert d["k8s"]["daemonsets"] == ["DaemonSet/monitoring/node-exporter",
                                      "DaemonSet/kube-system/gpu-plugin"]


def test_refused_rule_is_one_line_exit_2(capsys):
    """Source: rules/pod-affinity.yaml."""
    code, out, err = run(capsys, "info", str(RULES / "pod-affinity.yaml"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Pod/near-cache" in err and "not supported" in err


def test_solve_honours_anti_affinity(capsys):
    """Source: rules/anti-affinity.yaml on 5-core hosts.

    Cores: web 3 x 1, cache 2 x 1, db 2 x 2, api 2 x 0.5 = 10, so 2 hosts hold the volume
    (web web web db | db cache cache api api). Web takes at most one host each and cache never
    shares with db, so 3 hosts are needed, and 3 do: web db api | web db api | web cache cache.
    """
    code, out, err = run(capsys, "solve", str(RULES / "anti-affinity.yaml"), "--hosts", "5c16g:6",
                         "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["status"] == "optimal" and d["objective"] == 3


def test_info_counts_restricted_apps(capsys, tmp_path):
    """Source: rules/taints.yaml on a host file: trainer and plain are restricted, anywhere not."""
    p = tmp_path / "cluster.yaml"
    p.write_text("resources: [cpu, memory, gpu]\nhost_types:\n"
                 "- {name: cpu, capacity: [16, 64, 0], count: 3}\n"
                 "- {name: gpu, capacity: [16, 64, 4], count: 2, labels: {accelerator: nvidia},\n"
                 "   taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}\n")
    code, out, _ = run(capsys, "info", str(RULES / "taints.yaml"), "--hosts", str(p))
    assert code == 0
    # both types carry the kubelet's well-known labels (kubernetes.io/os, ...)
    assert "selection   2 apps restricted to some host types; 2 host types with labels" in out


def test_scale_on_the_command_line(capsys):
    """Source: rules/list.yaml: 1 + 1 + 3 pods, times 2 -> 10; --scale on an instance file is an
    error (it applies to manifests only)."""
    code, out, _ = run(capsys, "info", str(RULES / "list.yaml"), "--scale", "2", "--json")
    assert code == 0 and json.loads(out)["containers"] == 10
    code, _, err = run(capsys, "info", "sigma", "--scale", "2")
    assert code == 2 and "--scale" in err
