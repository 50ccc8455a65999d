"""``vbp plan --current / --max-moves / --n-plus-one / --verify-only``: end to end, with the one
checker, an independent capacity check, the JSON schema and one-line errors."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from packing.feasibility.checker import check
from packing.model.instance import Placement
from vbp import plan
from vbp.cli import main

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "vbp-plan-3.json"
DEMAND = "name,replicas,cpu,memory\nweb,2,2,2Gi\nbig,1,4,2Gi\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    d = tmp_path / "d.csv"
    d.write_text(DEMAND)
    cur = tmp_path / "cur.json"
    # std#0 and std#1 (4 cores) run one web (2 cpu) each; big (4 cpu) fits only if a web moves
    cur.write_text(json.dumps({"format": "vbp-placement/1",
                               "hosts": {"web": ["std#0", "std#1"], "big": [None]}}))
    return {"d": d, "cur": cur, "dir": tmp_path}


def _independent_capacity(s, cpu: float, mem_gib: float) -> None:
    """Every host's real demand within its capacity (no headroom here), counted by hand."""
    load: dict[int, list[float]] = {}
    inst = s.instance
    for a, hs in s.placement.hosts.items():
        d = inst.apps[inst.app_index[a]].demand
        for h in hs:
            load.setdefault(h, [0.0, 0.0])
            load[h][0] += d[0]
            load[h][1] += d[1]
    for c, m in load.values():
        assert c <= cpu + 1e-9 and m <= mem_gib + 1e-9


@pytest.mark.parametrize(("moves", "added"), [(None, 1), (0, 1), (1, 0), ("all", 0), ("1", 0)])
def test_moves_zero_versus_one(files: dict[str, Path], moves: int | str | None, added: int) -> None:
    # no move: 2 + 2 cores free, big needs 4 -> one host added; one move frees a host -> none
    res = plan(str(files["d"]), ["std:4c16g"], current=str(files["cur"]), max_moves=moves,
               time_limit=10)
    s = res.scenarios[0]
    assert s.status == "optimal"
    assert s.current is not None
    assert s.current["added_hosts"] == added and s.current["existing_hosts"] == 2
    assert s.current["used"] == (0 if not moves else 1)
    assert s.current["max"] == (2 if moves == "all" else int(moves or 0))  # "all": both running
    with pytest.warns(DeprecationWarning, match="ScenarioResult.moves is deprecated; use current"):
        assert s.moves == s.current
    assert s.hosts == 2 + added and s.bound == 2 + added
    assert s.placement is not None and not check(s.instance, s.placement, require_all=True)
    _independent_capacity(s, 4.0, 16.0)


def _brute_n1(inst, placement: Placement, hosts: list[int]) -> bool:
    host_of = placement.host_array(inst)
    for h in hosts:
        lost = np.flatnonzero(host_of == h)
        others = [g for g in hosts if g != h]
        if len(lost) and not any(
                not check(inst, Placement.from_arrays(inst, _put(host_of, lost, c)),
                          require_all=True)
                for c in itertools.product(others, repeat=len(lost))):
            return False
    return True


def _put(host_of: np.ndarray, lost: np.ndarray, combo: tuple[int, ...]) -> np.ndarray:
    out = host_of.copy()
    out[lost] = combo
    return out


def test_n_plus_one_plan_survives_every_loss(files: dict[str, Path]) -> None:
    res = plan(str(files["d"]), ["std:4c16g"], n_plus_one=True, time_limit=10)
    s = res.scenarios[0]
    n1 = s.n_plus_one
    assert n1 is not None and n1["holds"] is True
    # plain optimum: 8 cpu on 4-core hosts -> 2 hosts; N+1 needs >= 3 (S - {h} is a plan)
    assert n1["extra_bound"] == 1 and n1["extra_hosts"] == 1
    assert s.hosts == 3 and s.bound == 3 and s.status == "optimal"
    idx = s.instance.host_index
    hosts = sorted({h for hs in s.placement.hosts.values() for h in hs}
                   | {idx[n] for n in n1["spares"]})
    assert len(hosts) == 3
    assert _brute_n1(s.instance, s.placement, hosts)


def test_verify_only_names_the_first_failure(files: dict[str, Path],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    cur = files["dir"] / "full.json"
    cur.write_text(json.dumps({"hosts": {"web": ["std#0", "std#1"], "big": ["std#2"]}}))
    with pytest.raises(SystemExit) as e:
        main(["plan", str(files["d"]), "--hosts", "std:4c16g", "--current", str(cur),
              "--verify-only", "--n-plus-one", "--json"])
    assert e.value.code == 3  # proven: losing std#2 is not absorbed (README: does not hold)
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    s = doc["scenarios"][0]
    assert s["status"] == "feasible" and s["hosts"] == 3
    n1 = s["n_plus_one"]
    assert n1["holds"] is False
    # a web's loss is absorbed by the other web's host; big's (4 cpu) finds 2 + 2 free: proven not
    assert n1["checked_hosts"] == 3
    assert n1["first_failure"]["host"] == "std#2"
    assert n1["first_failure"]["proof"] == "cpsat"
    assert n1["first_failure"]["unplaced"] == {"big": 1}


def test_json_schema_with_moves(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    with pytest.raises(SystemExit) as e:
        main(["plan", str(files["d"]), "--hosts", "std:4c16g:1.5", "--current", str(files["cur"]),
              "--max-moves", "1", "--n-plus-one", "--json", "--time-limit", "10"])
    assert e.value.code in (0, None)
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    s = doc["scenarios"][0]
    assert s["current"]["added_cost"] == 0 and s["current"]["used"] == 1
    assert s["n_plus_one"]["holds"] is True and s["cost"] == pytest.approx(4.5)


@pytest.mark.parametrize(("doc", "msg"), [
    ({"hosts": {"web": ["big#0"]}}, "unknown host 'big#0'"),
    ({"hosts": {"nope": ["std#0"]}}, "unknown app 'nope'"),
    ({"hosts": {"web": [3]}}, "expected a host name"),
])
def test_bad_current_is_one_line_exit_2(files: dict[str, Path], doc: dict, msg: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    bad = files["dir"] / "bad.json"
    bad.write_text(json.dumps(doc))
    out = files["dir"] / "out.json"
    with pytest.raises(SystemExit) as e:
        main(["plan", str(files["d"]), "--hosts", "std:4c16g", "--current", str(bad),
              "--out", str(out)])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and msg in err and err.startswith("error:")
    assert not out.exists()


def test_max_moves_needs_current(files: dict[str, Path],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["plan", str(files["d"]), "--hosts", "std:4c16g", "--max-moves", "1"])
    assert e.value.code == 2
    assert "--max-moves" in capsys.readouterr().err


def test_instance_file_with_initial_as_current(files: dict[str, Path]) -> None:
    from packing.io import save_instance
    from packing.model.instance import App, HostType, Instance

    inst = Instance("running", ("cpu", "memory"), (HostType("std", (4.0, 16.0), 3),),
                    (App("web", (2.0, 2.0), 2), App("big", (4.0, 2.0), 1)),
                    initial=Placement({"web": (0, 1), "big": (-1,)}))
    path = files["dir"] / "running.json"
    save_instance(inst, path)
    s = plan(str(files["d"]), ["std:4c16g"], current=str(path), time_limit=10).scenarios[0]
    # three hosts run (std#2 empty): big goes on std#2, nothing added
    assert s.current is not None and s.current["existing_hosts"] == 3
    assert s.current["added_hosts"] == 0 and s.hosts == 3 and s.status == "optimal"
    assert s.placement is not None and not check(s.instance, s.placement, require_all=True)
    assert s.placement.hosts["web"] == (0, 1)


def test_existing_hosts_get_the_headroom(files: dict[str, Path]) -> None:
    d = files["dir"] / "web.csv"
    d.write_text("name,replicas,cpu,memory\nweb,2,2,2Gi\n")
    cur = files["dir"] / "packed.json"
    cur.write_text(json.dumps({"hosts": {"web": ["std#0", "std#0"]}}))  # 4 of 4 cores
    kept = plan(str(d), ["std:4c16g"], headroom="25%", current=str(cur), time_limit=10)
    s = kept.scenarios[0]
    assert s.status == "infeasible" and s.placement is None
    assert "in place" in (s.reason or "")
    moved = plan(str(d), ["std:4c16g"], headroom="25%", current=str(cur), max_moves=1,
                 time_limit=10).scenarios[0]
    assert moved.status == "optimal" and moved.current is not None
    assert moved.current["used"] == 1 and moved.current["added_hosts"] == 1 and moved.hosts == 2
    assert moved.placement is not None
    assert not check(moved.instance, moved.placement, require_all=True)
    _independent_capacity(moved, 4 * 0.75, 16 * 0.75)


def test_n_plus_one_on_a_running_cluster_is_proven(files: dict[str, Path]) -> None:
    # big must go on a new host (bound 1 added); N+1 then needs one host more: 2 + 1 + 1
    s = plan(str(files["d"]), ["std:4c16g"], current=str(files["cur"]), n_plus_one=True,
             time_limit=10).scenarios[0]
    assert s.n_plus_one is not None and s.n_plus_one["holds"] is True
    assert s.n_plus_one["extra_bound"] == 1 and s.n_plus_one["extra_hosts"] == 1
    assert s.hosts == 4 and s.bound == 4 and s.status == "optimal"
    assert s.current is not None and s.current["used"] == 0
    idx = s.instance.host_index
    hosts = sorted({h for hs in s.placement.hosts.values() for h in hs}
                   | {idx[n] for n in s.n_plus_one["spares"]} | {0, 1})
    assert _brute_n1(s.instance, s.placement, hosts)


@pytest.mark.parametrize(("running", "n1", "code", "status"), [
    # the running cluster holds the demand: 0; with N+1 a host's loss is proven not absorbed: 3
    ({"web": ["std#0", "std#1"], "big": ["std#2"]}, False, 0, "feasible"),
    ({"web": ["std#0", "std#1"], "big": ["std#2"]}, True, 3, "feasible"),
    # N+1 holds: two 1-core webs on two 4-core hosts, either loss leaves 3 cores for the other
    ({"web": ["std#0", "std#1"]}, True, 0, "feasible"),
    # big does not run anywhere (unplaced): the cluster does not hold the demand, proven: 3
    ({"web": ["std#0", "std#1"], "big": [None]}, False, 3, "infeasible"),
    ({"web": ["std#0", "std#1"], "big": [None]}, True, 3, "infeasible"),
])
def test_verify_only_exit_status(files: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                 running: dict[str, list[str | None]], n1: bool, code: int,
                                 status: str) -> None:
    """README's exit codes: 3 when --verify-only proves the cluster does not hold (or is not N+1)."""
    demand = files["d"]
    if "big" not in running:  # small webs only
        demand = files["dir"] / "small.csv"
        demand.write_text("name,replicas,cpu,memory\nweb,2,1,1Gi\n")
    cur = files["dir"] / "running.json"
    cur.write_text(json.dumps({"hosts": running}))
    with pytest.raises(SystemExit) as e:
        main(["plan", str(demand), "--hosts", "std:4c16g", "--current", str(cur), "--verify-only",
              *(["--n-plus-one"] if n1 else []), "--json"])
    doc = json.loads(capsys.readouterr().out)
    s = doc["scenarios"][0]
    assert (e.value.code or 0, s["status"]) == (code, status)
    if n1 and status == "feasible":
        assert s["n_plus_one"]["holds"] is (code == 0)


@pytest.mark.parametrize("bad", ["-1", "two", "1,2"])
def test_max_moves_bad_value(files: dict[str, Path], capsys: pytest.CaptureFixture[str],
                             bad: str) -> None:
    with pytest.raises(SystemExit) as e:
        main(["plan", str(files["d"]), "--hosts", "std:4c16g", "--current", str(files["cur"]),
              "--max-moves", bad])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--max-moves" in err and "Traceback" not in err
