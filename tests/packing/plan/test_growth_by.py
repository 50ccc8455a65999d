"""Per-app growth: a deployments CSV's ``growth`` column and ``growth_by``, under the scenario's
growth, rounded up once (hand numbers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packing.errors import InputError
from packing.loaders.deployments import load_deployments
from packing.plan.model import parse_growth_by
from tests.vbp.cli_run import run
from vbp import plan

CSV = "name,replicas,cpu,memory,growth\nweb,3,1,1Gi,1.5\ndb,2,1,1Gi,\n"


@pytest.fixture
def csv(tmp_path: Path) -> Path:
    p = tmp_path / "d.csv"
    p.write_text(CSV)
    return p


def _counts(d) -> dict[str, int]:
    return {a.name: a.count for a in d.apps}


def test_column_and_scenario_round_up_once(csv: Path) -> None:
    d = load_deployments(csv)
    assert d.growth_by == {"web": 1.5}
    assert _counts(d) == {"web": 3, "db": 2}  # read as written: growth is a scenario's
    # growth 1: web ceil(3 * 1.5) = ceil(4.5) = 5, db 2
    assert _counts(d.scaled(1)) == {"web": 5, "db": 2}
    # growth 1.5: web ceil(3 * 2.25) = ceil(6.75) = 7 (not ceil(5 * 1.5) = 8), db ceil(3) = 3
    assert _counts(d.scaled(1.5)) == {"web": 7, "db": 3}
    # growth_by over the column: db twice, web back to 1; growth 1.25: web ceil(3.75) = 4,
    # db ceil(2 * 2 * 1.25) = 5
    both = d.with_growth_by({"db": 2, "web": 1})
    assert _counts(both.scaled(1.25)) == {"web": 4, "db": 5}
    # decimals are exact: ceil(2 * 1.1) = 3, and 100 x 1.1 is 110 (the float product
    # 110.00000000000001 would round up to 111)
    assert d.with_growth_by({"db": 1.1}).scaled(1).apps[1].count == 3
    hundred = load_deployments(_write(csv.parent, "h.csv", "name,replicas,cpu,memory,growth\n"
                                                           "a,100,1,1Gi,1.1\n"))
    assert hundred.scaled(1).apps[0].count == 110


def _write(folder: Path, name: str, text: str) -> Path:
    p = folder / name
    p.write_text(text)
    return p


@pytest.mark.parametrize(("text", "needle"), [
    ("web", "expected APP=MULTIPLIER pairs"),
    ("web=x", "expected APP=MULTIPLIER pairs"),
    ("web=0", "must be greater than 0"),
    ("web=-1", "must be greater than 0"),
    ("web=nan", "must be finite"),
    ("web=2,web=3", "given twice"),
])
def test_bad_growth_by(text: str, needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        parse_growth_by(text)


def test_bad_column_and_unknown_app(csv: Path) -> None:
    bad = _write(csv.parent, "bad.csv", "name,replicas,cpu,memory,growth\nweb,3,1,1Gi,0\n")
    with pytest.raises(InputError, match="line 2, column growth: expected a multiplier greater than 0"):
        load_deployments(bad)
    with pytest.raises(InputError, match="no app of that name"):
        load_deployments(csv).with_growth_by({"cache": 2})


def test_plan_with_growth_by(csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """4-core hosts, 1-core pods. Growth 1: web 5 + db 2 = 7 cores -> 2 hosts; growth 2: web
    ceil(3 * 3) = 9 + db 4 = 13 -> 4 hosts. With --growth-by web=1: 3 + 2 = 5 -> 2 hosts, and with
    db=3 as well at growth 1: 3 + 6 = 9 -> 3 hosts."""
    r = plan(str(csv), ["h=4c16g"], growth=(1, 2), time_limit=20)
    assert [(s.growth, s.hosts) for s in r.scenarios] == [(1, 2), (2, 4)]
    assert [sorted((a.name, a.count) for a in s.instance.apps) for s in r.scenarios] == [
        [("db", 2), ("web", 5)], [("db", 4), ("web", 9)]]
    r = plan(str(csv), ["h=4c16g"], growth_by="web=1,db=3", time_limit=20)
    assert r.scenarios[0].hosts == 3
    code, out, _ = run(["plan", str(csv), "--hosts", "h=4c16g", "--growth-by", "web=1", "--json"],
                       capsys)
    assert code == 0 and json.loads(out)["scenarios"][0]["hosts"] == 2
    code, out, err = run(["plan", str(csv), "--hosts", "h=4c16g", "--growth-by", "cache=2"], capsys)
    assert code == 2 and out == ""
    assert err == "error: --growth-by: cache: no app of that name; the apps are db, web\n"
