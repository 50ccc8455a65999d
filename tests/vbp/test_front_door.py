"""One file set through every command: the same demand read by info, validate, solve, simulate,
compare, sweep and plan (one loader, :func:`packing.loaders.load_any`, and ``read_inputs``).

Sources: tests/data/front (deployments.csv, hosts.csv: hand-written, hand optimum in its
SOURCE.txt), tests/data/k8s/shapes/hotel (a manifests folder written for the tests) and, when
present, the real Online Boutique manifests in shared/data/k8s-manifests.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

import packing.loaders
import packing.loaders.front
from tests.vbp.cli_run import run

DATA = Path(__file__).resolve().parents[1] / "data"
FRONT = DATA / "front"
HOTEL = DATA / "k8s" / "shapes" / "hotel"
SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"

Apps = dict[str, tuple[int, float, float, int | None]]
"""Per app: replicas, cores, GiB and per-host cap."""


def _apps_of_instance(inst: Any) -> Apps:
    cpu, mem = inst.resources.index("cpu"), inst.resources.index("memory")
    return {a.name: (a.count, a.demand[cpu], a.demand[mem], a.max_per_host) for a in inst.apps}


def _apps_of_demand(dem: Any) -> Apps:
    return {a.name: (a.count, a.demand[0], a.demand[1], a.max_per_host) for a in dem.apps}


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[Apps]:
    """What every command read: the loader's instances and the plan's demand, recorded."""
    out: list[Apps] = []
    load, read = packing.loaders.load_any, packing.loaders.front.read_inputs

    def spy_load(*a: Any, **k: Any) -> Any:
        inst = load(*a, **k)
        out.append(_apps_of_instance(inst))
        return inst

    def spy_read(*a: Any, **k: Any) -> Any:
        dem, offers = read(*a, **k)
        out.append(_apps_of_demand(dem))
        return dem, offers

    monkeypatch.setattr(packing.loaders, "load_any", spy_load)
    monkeypatch.setattr(packing.loaders.front, "read_inputs", spy_read)
    return out


def _every_command(capsys: pytest.CaptureFixture[str], tmp_path: Path, demand: str,
                   hosts: list[str]) -> dict[str, Any]:
    """Run the seven commands on ``demand`` and ``hosts`` (counted); their JSON (sweep: its rows)."""
    h = [w for spec in hosts for w in ("--hosts", spec)]
    out: dict[str, Any] = {}
    for cmd, extra in (("info", []), ("validate", []), ("solve", ["--time-limit", "20", "-q"]),
                       ("simulate", ["--policy", "ff"]),
                       ("compare", ["--policies", "ff,bf", "--orders", "2", "--time-limit", "20"]),
                       ("plan", ["--time-limit", "20"])):
        code, text, err = run([cmd, demand, *h, "--json", *extra], capsys)
        assert code == 0, (cmd, err)
        out[cmd] = json.loads(text)
        _check_schema(out[cmd])
    table = tmp_path / "sweep.csv"
    code, _, err = run(["sweep", demand, *h, "--policies", "ff", "--orders", "1", "--out", str(table),
                        "-q"], capsys)
    assert code == 0, err
    with table.open() as f:
        out["sweep"] = list(csv.DictReader(f))
    return out


def _check_schema(doc: dict[str, Any]) -> None:
    """``doc`` against its schema in docs/schemas (named by its ``format``)."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = SCHEMAS / (doc["format"].replace("/", "-") + ".json")
    jsonschema.validate(doc, json.loads(schema.read_text()))


def _same_everywhere(seen: list[Apps], out: dict[str, Any]) -> Apps:
    assert len(seen) >= 7  # one read per command at least
    first = seen[0]
    for other in seen[1:]:
        assert other == first
    containers = sum(n for n, *_ in first.values())
    assert out["info"]["apps"] == out["validate"]["apps"] == len(first)
    assert out["info"]["containers"] == out["validate"]["containers"] == containers
    assert out["simulate"]["runs"][0]["deployed"] == containers
    assert all(p["deployed_mean"] == containers for p in out["compare"]["policies"])
    assert [int(r["deployed"]) for r in out["sweep"]] == [containers]
    return first


def test_deployments_csv_and_hosts_csv_through_every_command(capsys, tmp_path, seen):
    """The hand numbers of tests/data/front/SOURCE.txt: the cheapest plan is two std hosts (2.0)."""
    out = _every_command(capsys, tmp_path, str(FRONT / "deployments.csv"), [str(FRONT / "hosts.csv")])
    apps = _same_everywhere(seen, out)
    assert apps == {"web": (4, 0.5, 1.0, 2), "db": (2, 2.0, 4.0, 1), "cache": (3, 0.25, 0.5, None)}
    assert (out["solve"]["status"], out["solve"]["objective"]) == ("optimal", 2.0)
    assert out["compare"]["optimum"]["objective"] == 2.0
    (s,) = out["plan"]["scenarios"]
    assert (s["status"], s["cost"], s["hosts"]) == ("optimal", 2.0, 2)


def test_manifests_folder_and_inline_hosts_through_every_command(capsys, tmp_path, seen):
    """hotel/: frontend 1 x 1 core, geo and mongodb-geo (see the files) on counted 2c4g hosts."""
    out = _every_command(capsys, tmp_path, str(HOTEL), ["h=2c4g:count=3"])
    apps = _same_everywhere(seen, out)
    assert sorted(apps) == ["frontend", "geo", "mongodb-geo"]
    assert out["solve"]["objective"] == out["plan"]["scenarios"][0]["hosts"] == 2


def test_real_manifests_through_every_command(capsys, tmp_path, seen, shared_data):
    """The real Online Boutique manifests (12 Deployments) on a counted fleet."""
    folder = shared_data / "k8s-manifests" / "online-boutique"
    out = _every_command(capsys, tmp_path, str(folder), ["std=4c16g:count=4"])
    apps = _same_everywhere(seen, out)
    assert len(apps) == 12
    assert out["solve"]["objective"] == out["plan"]["scenarios"][0]["hosts"]


@pytest.mark.parametrize("command", ["simulate", "compare", "sweep"])
def test_a_fixed_pool_needs_counts(capsys, tmp_path, command):
    """simulate, compare and sweep replay on the hosts there are: a type without a count is one
    line naming it and ``count``, exit 2; solve takes it as many as needed."""
    args = [command, str(FRONT / "deployments.csv"), "--hosts", "std=4c16g", "--hosts", "big=8c32g:count=1"]
    if command == "sweep":
        args += ["--out", str(tmp_path / "t.csv")]
    code, out, err = run(args, capsys)
    assert code == 2 and out == ""
    assert err == ("error: --hosts: std.count: the pool is fixed here (a policy replays on the hosts "
                   "there are): give the type a count, e.g. std=...:count=10 inline or a count "
                   "column\n")
    code, out, err = run(["solve", str(FRONT / "deployments.csv"), "--hosts", "std=4c16g", "--json",
                          "-q"], capsys)
    assert code == 0 and json.loads(out)["objective"] == 2  # two std hosts: db's cap
    code, out, _ = run(["info", str(FRONT / "deployments.csv"), "--hosts", "std=4c16g", "--hosts",
                        "big=8c32g:count=1", "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and d["uncounted"] == ["std"] and d["hosts"] == 9 + 1  # one std per container
    _check_schema(d)


def test_demand_without_hosts(capsys):
    """info describes a deployments CSV without hosts; solve asks for them (one line, exit 2)."""
    code, out, _ = run(["info", str(FRONT / "deployments.csv"), "--json"], capsys)
    assert code == 0 and json.loads(out)["containers"] == 9
    code, out, err = run(["solve", str(FRONT / "deployments.csv")], capsys)
    assert code == 2 and out == ""
    assert err == (f"error: {FRONT / 'deployments.csv'}: --hosts: a deployments CSV carries no "
                   "hosts; give the host types, e.g. --hosts 16c64g:10\n")


def test_several_demand_paths_add_up(capsys, seen):
    """deployments.csv (9 containers) and hotel/ (4) add up the same in info, solve and plan."""
    both = [str(FRONT / "deployments.csv"), str(HOTEL)]
    hosts = ["--hosts", str(FRONT / "hosts.csv"), "--hosts", "h=2c4g:count=2:price=0.5"]
    code, out, _ = run(["info", *both, *hosts, "--json"], capsys)
    assert code == 0 and (json.loads(out)["apps"], json.loads(out)["containers"]) == (6, 13)
    code, out, err = run(["solve", *both, *hosts, "--json", "-q", "--time-limit", "20"], capsys)
    assert code == 0, err
    code, out, err = run(["plan", *both, *hosts, "--json", "--time-limit", "20"], capsys)
    assert code == 0, err
    assert len(seen) >= 3 and all(s == seen[0] for s in seen) and len(seen[0]) == 6


@pytest.mark.parametrize("command", ["info", "validate", "solve", "simulate", "compare", "sweep", "plan"])
def test_bad_input_is_one_line_in_every_command(capsys, tmp_path, command):
    """The same bad host spec and the same bad CSV row: the same one line, exit 2, everywhere."""
    extra = ["--out", str(tmp_path / "t.csv")] if command == "sweep" else []
    code, out, err = run([command, str(FRONT / "deployments.csv"), "--hosts", "std=16x64g:count=2",
                          *extra], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("error: --hosts: ") and "16x64g" in err
    bad = tmp_path / "d.csv"
    bad.write_text("name,replicas,cpu,memory\nweb,2,1,64\n")
    code, out, err = run([command, str(bad), "--hosts", str(FRONT / "hosts.csv"), *extra], capsys)
    assert code == 2 and out == ""
    assert err == (f"error: {bad}: line 2, column memory: memory needs a unit, e.g. 4Gi, 512Mi or 2G "
                   "(a plain number would be bytes), got '64'\n")


def test_solve_on_uncounted_types_is_the_plan(capsys):
    """examples/data: host types without counts are as many as needed in solve, as in plan: the
    same proven optimum (no headroom, no reserve, growth 1)."""
    examples = Path(__file__).resolve().parents[2] / "examples" / "data"
    args = [str(examples / "deployments.csv"), "--hosts", str(examples / "hosts.csv"), "--json",
            "--time-limit", "60"]
    code, out, err = run(["solve", *args, "-q"], capsys)
    assert code == 0, err
    solved = json.loads(out)
    code, out, err = run(["plan", *args], capsys)
    assert code == 0, err
    (s,) = json.loads(out)["scenarios"]
    assert solved["status"] == s["status"] == "optimal"
    assert solved["objective"] == pytest.approx(s["cost"]) and solved["hosts"] == s["hosts"]
