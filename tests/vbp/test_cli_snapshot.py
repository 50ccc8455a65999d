"""``vbp info`` on a cluster snapshot, and bad snapshots: one line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vbp.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "k8s-snapshots"
SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


def test_info_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "info", str(DATA / "cluster.yaml"))
    assert code == 0 and err == ""
    assert "nodes      6 (2 m5.xlarge, 3 m5.large, 1 g4dn.xlarge); 1 cordoned" in out
    assert "1 pending, 1 finished" in out
    assert "  pinned: default/debug: no controller" in out
    assert "  pending: shop/search-6f5e4d3c2-p0p0p" in out
    row = next(line for line in out.splitlines() if line.startswith("ip-10-0-2-22"))
    assert "(cordoned)" in row and "0.375/1.93" in row and "3/29" in row


def test_info_json(capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    code, out, _ = run(capsys, "info", str(DATA / "folder"), "--json")
    doc = json.loads(out)
    jsonschema.validate(doc, json.loads((SCHEMAS / "vbp-info-2.json").read_text()))
    s = doc["snapshot"]
    assert (code, s["nodes"], s["pods"], s["daemon_pods"]) == (0, 6, 26, 12)
    assert s["cordoned_nodes"] == ["ip-10-0-2-22.ec2.internal"]
    assert [n["node"] for n in s["per_node"] if n["cordoned"]] == s["cordoned_nodes"]
    assert s["resource_names"] == doc["resource_names"] == ["cpu", "memory", "pods", "ephemeral-storage",
                                                            "gpu"]
    assert [b["allowed"] for b in s["budgets"]] == [1, 1, 1]
    n1 = s["per_node"][0]
    assert n1["allocatable"]["cpu"] == pytest.approx(3.92) and n1["allocatable"]["pods"] == 58


@pytest.mark.parametrize(("name", "part"), [
    ("unknown-node.yaml", "Pod/shop/lost-0: spec.nodeName: node 'ip-10-0-9-99.ec2.internal'"),
    ("no-allocatable.yaml", "Node/ip-10-0-2-21.ec2.internal: status.allocatable: missing"),
    ("not-a-list.yaml", "document 2: expected a Kubernetes List or object"),
    ("truncated.yaml", "malformed YAML"),
])
def test_bad_snapshot(capsys: pytest.CaptureFixture[str], name: str, part: str) -> None:
    code, out, err = run(capsys, "info", str(DATA / "bad" / name))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: {DATA / 'bad' / name}: ") and part in err
