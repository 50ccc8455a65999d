"""``vbp consolidate`` and ``vbp.consolidate``: the report, JSON with its schema, the drain plan, exits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import vbp
from packing.errors import InputError
from packing.generators.cluster import as_list
from vbp.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "k8s-snapshots"
SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "vbp-consolidate-2.json"
HOSTS = ["--hosts", "m5.large=2c8g:price=0.096", "--hosts", "m5.xlarge=4c16g:price=0.192",
         "--hosts", "g4dn.xlarge=4c16g1gpu:price=0.526"]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


def test_report_and_drain_plan(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    sh = tmp_path / "plan.sh"
    code, out, err = run(capsys, "consolidate", str(DATA / "cluster.yaml"), *HOSTS, "--max-moves",
                         "0,1,all", "--time-limit", "10", "--out", str(sh))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].endswith("6 nodes, cost 1.198; 26 pods (12 DaemonSet pods, 3 pinned, 1 pending)")
    assert lines[2].split()[:5] == ["0", "vbp", "optimal", "1.102", "5"]
    assert "autoscalers 0.91, vbp 0.91, no plan below 0.91" in out
    assert "remove ip-10-0-2-21.ec2.internal" in out and f"drain plan {sh}" in out
    text = sh.read_text()
    nodes = "ip-10-0-2-21.ec2.internal ip-10-0-2-22.ec2.internal ip-10-0-3-32.ec2.internal"
    assert f"kubectl cordon {nodes}" in text
    assert text.count("/eviction -f -") == 3 and "kubectl delete node ip-10-0-3-32.ec2.internal" in text


def test_json_schema_and_yaml_plan(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    plan = tmp_path / "plan.yaml"
    code, out, _ = run(capsys, "consolidate", str(DATA / "cluster.json"), "--max-moves", "1",
                       "--json", "--out", str(plan), "--time-limit", "10")
    doc = json.loads(out)
    jsonschema.validate(doc, schema)
    (r,) = doc["results"]
    assert (code, doc["priced"], r["cost_before"], r["cost_after"], r["moves"]) == (0, False, 6, 4, 1)
    assert [b["name"] for b in r["baselines"]] == ["cluster-autoscaler", "karpenter"]
    written = yaml.safe_load(plan.read_text())
    jsonschema.validate(written, schema)
    assert written["results"][0]["removed"] == r["removed"]
    assert any(line.startswith("kubectl cordon") for line in written["kubectl"])


def test_infeasible_names_the_node(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    doc = yaml.safe_load((DATA / "cluster.yaml").read_text())
    doc["items"][0]["status"]["allocatable"]["cpu"] = "1"  # ip-10-0-1-11 runs more than 1 core
    p = tmp_path / "tight.yaml"
    p.write_text(yaml.safe_dump(doc))
    code, out, _ = run(capsys, "consolidate", str(p), "--max-moves", "0", "--time-limit", "5")
    assert code == 3
    assert "infeasible: running now: ip-10-0-1-11.ec2.internal cpu over by" in out


@pytest.mark.parametrize(("args", "part"), [
    (["bad/unknown-node.yaml"], "Pod/shop/lost-0: spec.nodeName"),
    (["cluster.yaml", "--hosts", "m5.large=2c8g:price=0.096"], "has no price"),
    (["cluster.yaml", "--replace"], "--replace: needs --hosts"),
    (["cluster.yaml", "--max-moves", "x"], "--max-moves"),
])
def test_bad_input_writes_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str],
                                  part: str) -> None:
    out = tmp_path / "plan.sh"
    code, stdout, err = run(capsys, "consolidate", str(DATA / args[0]), *args[1:], "--out", str(out))
    assert code == 2 and stdout == "" and part in err and err.count("\n") >= 1
    assert not out.exists()


def test_python_api(tmp_path: Path) -> None:
    r = vbp.consolidate(DATA / "folder", ["m5.large=2c8g:price=0.096", "m5.xlarge=4c16g:price=0.192",
                                          "g4dn.xlarge=4c16g1gpu:price=0.526"],
                        max_moves=[3, 0], time_limit=10, baselines=False)
    assert [a.max_moves for a in r.answers] == [3, 0]
    assert [a.cost_after for a in r.answers] == [pytest.approx(0.91), pytest.approx(1.102)]
    assert r.answers[0].baselines == ()
    with pytest.raises(InputError):
        vbp.consolidate(DATA / "cluster.yaml", max_moves=-1)
    p = tmp_path / "list.json"
    p.write_text(json.dumps(as_list([])))
    with pytest.raises(InputError, match="no Node objects"):
        vbp.consolidate(p)


def test_never_dearer_than_the_autoscalers_with_no_limit(tmp_path: Path) -> None:
    """Their answers with no move limit join the climb: vbp's with no limit is at most theirs, even
    with little time (the seeded generator's cluster, as in benchmarks/bench_consolidate.py)."""
    from packing.generators.cluster import generate_cluster

    p = tmp_path / "cluster.json"
    p.write_text(json.dumps(as_list(generate_cluster(40, 260, seed=5))))
    offers = ["m5.large=2c8g:price=0.096", "m5.xlarge=4c16g:price=0.192",
              "m5.2xlarge=8c32g:price=0.384", "c5.2xlarge=8c16g:price=0.34",
              "r5.xlarge=4c32g:price=0.252"]
    (a,) = vbp.consolidate(p, offers, max_moves=None, time_limit=1.0).answers
    assert a.cost_after is not None and len(a.baselines) == 2
    assert a.cost_after <= min(b.cost_after for b in a.baselines) + 1e-9
