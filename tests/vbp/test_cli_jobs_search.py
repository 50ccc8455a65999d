"""``vbp jobs compare --search N``: the search row, the optimum's interval, the JSON keys, bad options."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

import vbp.cli
from packing.dag.engine import Overheads
from packing.dag.loader import load_dag_folder
from policies.dag_search import search_schedule
from vbp.cli.formats import schema_name
from vbp.cli.jobs import jobs
from vbp.jobfusion import carve_sample, compare_dag, parse_hosts, sample_jobs

FIXTURE = str(Path(__file__).resolve().parents[1] / "data" / "dag")
SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"
SMALL = ["--seed", "3", "--hosts", "32c64g:1", "--interarrival", "0", "--q", "2", "--carving", "proportional"]


def run(*args: str) -> str:
    r = CliRunner().invoke(jobs, ["compare", FIXTURE, *SMALL, *args])
    assert r.exit_code == 0, r.output
    return r.output


def test_table_has_the_search_row_and_the_optimum_line() -> None:
    out = run("--policies", "sjf,sjf-headroom", "--search", "20", "--search-seed", "1")
    lines = out.splitlines()
    row = next(x for x in lines if x.startswith("search (sjf-headroom)"))
    assert lines.index(row) == 4  # after the header and the two policies, before the bounds
    assert "bound (capacity)" in lines[5 + 1] and lines[-1].startswith("optimum mean JCT in [")
    # SJF-headroom 997.1 s and SJF 882.3 s on this sample; the search reaches 869.6 s by episode 7
    assert "997.1" in out and "882.3" in out and " 869.6 " in row
    assert lines[-1] == ("optimum mean JCT in [708.9, 869.6] s (capacity bound, best found: search "
                         "(sjf-headroom))")
    plain = run("--policies", "sjf")
    assert "search (" not in plain  # no search by default
    assert "optimum mean JCT in [708.9, 882.3] s (capacity bound, best found: sjf)" in plain


def test_json_search_object_and_best_found() -> None:
    doc = json.loads(run("--policies", "sjf,sjf-cp,fifo", "--search", "20", "--search-policy", "sjf-cp",
                         "--search-seed", "2", "--json"))
    schema = json.loads((SCHEMAS / schema_name(doc["format"])).read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)
    s, cap = doc["search"], doc["bounds"]["capacity_mean_jct"]
    assert {"name", "base", "evaluations", "search_seed", "start_mean_jct", "mean_jct", "jobs_reordered",
            "capacity_excess", "jct_excess", "makespan", "factors", "episodes"} <= set(s)
    assert (s["name"], s["base"], s["evaluations"], s["search_seed"], s["episodes"]) == (
        "search (sjf-cp)", "sjf-cp", 20, 2, 21)
    sjf_cp = next(p for p in doc["policies"] if p["name"] == "sjf-cp")
    assert s["start_mean_jct"] == pytest.approx(sjf_cp["mean_jct"], abs=1e-9)  # starts at the policy
    assert s["mean_jct"] <= s["start_mean_jct"] and "jct" not in s
    assert s["capacity_excess"] == pytest.approx(s["mean_jct"] / cap - 1.0)  # one carving: its bound is cap
    best = doc["best_found_mean_jct"]
    assert best == min([p["mean_jct"] for p in doc["policies"]] + [s["mean_jct"]])
    assert all(best <= p["mean_jct"] for p in doc["policies"]) and best >= cap - 1e-9
    plain = json.loads(run("--policies", "sjf", "--json"))
    jsonschema.validate(plain, schema)
    assert plain["search"] is None and plain["best_found_mean_jct"] == plain["policies"][0]["mean_jct"]


def test_search_uses_the_compared_engine_settings() -> None:
    # the same search run by hand on the same carving, seed, overheads and preemption
    w = sample_jobs(load_dag_folder(FIXTURE), 6, 3, 0.0)
    hosts = parse_hosts("32c64g:1")
    res = compare_dag(w, [], q=2, hosts=hosts, surges=2, preempt=True, seed=3, search=6,
                      search_policy="sjf-reserve", search_seed=4)
    cl = carve_sample(w, "constrained", q=2, hosts=hosts, surges=2, seed=3).cluster
    want = search_schedule(w, cl, "sjf-reserve", seed=3, evaluations=6, search_seed=4, overheads=Overheads(),
                           preempt=True)
    assert res["search"]["mean_jct"] == want.mean_jct and res["search"]["factors"] == want.factors.tolist()
    assert res["bounds"]["overheads"] == "least" and res["best_found_mean_jct"] == want.mean_jct
    assert want.mean_jct >= res["bounds"]["capacity_mean_jct"] - 1e-9


@pytest.mark.parametrize("args, needle", [
    (["--search-policy", "fifo"], "--search-policy: fifo: a DAG policy whose key is not a job's remaining "
                                  "work"),
    (["--search-policy", "nope", "--search", "3"], "--search-policy: nope: unknown DAG policy"),
    (["--search", "-1"], "'--search': -1 is not in the range"),
])
def test_bad_search_options_exit_2(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                   args: list[str], needle: str) -> None:
    monkeypatch.setitem(vbp.cli.COMMANDS, "jobs", ("vbp.cli.jobs", "jobs", "DAG jobs"))
    with pytest.raises(SystemExit) as e:
        vbp.cli.main(["jobs", "compare", FIXTURE, *args])
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert needle in err and "Traceback" not in err
    assert len([x for x in err.splitlines() if x.strip()]) <= 3  # one clear line (click adds its usage)
