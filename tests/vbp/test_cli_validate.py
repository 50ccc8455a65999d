"""``vbp validate``: exit 0 on good files, exit 2 with one clear line per problem, no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.vbp.cli_run import run

GOOD = {
    "name": "g", "resources": ["cpu"],
    "host_types": [{"name": "h", "capacity": [4], "count": 3}],
    "apps": [{"name": "a", "demand": [2], "count": 2, "max_per_host": 1},
             {"name": "b", "demand": [1], "count": 1}],
    "exclusions": [["a", "b"]],
}


def write(tmp_path: Path, name: str, doc) -> str:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(p)


def test_good_file(tmp_path: Path, capsys) -> None:
    code, out, _ = run(["validate", write(tmp_path, "g.json", GOOD)], capsys)
    assert code == 0 and "valid (2 apps, 3 containers, 3 hosts)" in out


def test_bad_files(tmp_path: Path, capsys) -> None:
    code, _, err = run(["validate", write(tmp_path, "m.json", "{oops")], capsys)
    assert code == 2 and "m.json" in err and "malformed JSON" in err
    doc = json.loads(json.dumps(GOOD))
    doc["apps"][0]["demand"] = [-1]
    doc["exclusions"] = [["a", "nope"]]
    code, _, err = run(["validate", write(tmp_path, "b.json", doc)], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 2
    assert any("apps[0] (a).demand[0]" in x and "negative" in x for x in lines)
    assert any("exclusions[0][1]" in x and "'nope'" in x for x in lines)
    code, _, err = run(["validate", str(tmp_path / "missing.json")], capsys)
    assert code == 2 and "missing.json" in err


def test_infeasible_instance_is_explained(tmp_path: Path, capsys) -> None:
    doc = json.loads(json.dumps(GOOD))
    doc["apps"][0]["count"] = 4
    code, _, err = run(["validate", write(tmp_path, "inf.json", doc)], capsys)
    assert code == 3 and "infeasible" in err and "'a'" in err and "max_per_host = 1" in err


def test_placement_with_violations(tmp_path: Path, capsys) -> None:
    inst = write(tmp_path, "g.json", GOOD)
    bad = write(tmp_path, "p.json", {"hosts": {"a": ["h#0", "h#0"], "b": ["h#0"]}})
    code, _, err = run(["validate", inst, "--placement", bad], capsys)
    assert code == 2
    assert "anti_affinity" in err and "exclusion" in err and "capacity" in err and "h#0" in err
    ok = write(tmp_path, "ok.json", {"hosts": {"a": ["h#0", "h#1"], "b": [None]}})
    code, out, _ = run(["validate", inst, "--placement", ok], capsys)
    assert code == 0 and "feasible" in out
    code, _, err = run(["validate", inst, "--placement", ok, "--require-all"], capsys)
    assert code == 2 and "unplaced" in err
    code, _, err = run(["validate", inst, "--placement",
                        write(tmp_path, "u.json", {"hosts": {"a": ["nowhere", None]}})], capsys)
    assert code == 2 and "unknown host 'nowhere'" in err


def test_a_placement_made_for_another_instance_is_named(tmp_path: Path, capsys) -> None:
    inst = write(tmp_path, "g.json", GOOD)
    other = write(tmp_path, "o.json", {"instance": "other", "hosts": {"a": ["h#0", "h#1"], "b": ["h#2"]}})
    code, out, err = run(["validate", inst, "--placement", other], capsys)
    assert code == 0 and "feasible" in out  # the checker is the judge; the name is a hint
    assert f"warning: {other} was made for instance 'other', this is 'g'" in err
    same = write(tmp_path, "s.json", {"instance": "g", "hosts": {"a": ["h#0", "h#1"], "b": ["h#2"]}})
    code, _, err = run(["validate", inst, "--placement", same], capsys)
    assert code == 0 and "warning" not in err


def test_console_script_no_traceback(tmp_path: Path) -> None:
    bad = write(tmp_path, "y.yaml", "apps: [\n")
    r = subprocess.run([sys.executable, "-c", "from vbp.cli import main; main()", "validate", bad],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "malformed YAML" in r.stderr and "Traceback" not in r.stderr


def test_a_full_view_placement_is_checked_against_the_full_view(tmp_path: Path, capsys) -> None:
    # tests/data/tianchi_small solved on its 98 time points (first fit meets the bound: the same
    # packing every run): hosts whose summed *peaks* exceed
    # the capacity are fine over time; validate must read the folder as it was solved
    data = str(Path(__file__).resolve().parents[1] / "data" / "tianchi_small")
    out_pl = str(tmp_path / "full.json")
    code, _, _ = run(["solve", data, "--view", "full", "--time-limit", "5", "--out", out_pl], capsys)
    assert code == 0
    code, out, _ = run(["validate", data, "--view", "full", "--placement", out_pl,
                        "--require-all"], capsys)
    assert code == 0 and "full.json: feasible" in out
    code, _, err = run(["validate", data, "--placement", out_pl, "--require-all"], capsys)
    assert code == 2 and "capacity" in err  # the peaks view rejects the same placement
