"""Bad input, as a new user or a hostile one would give it: every case runs the real CLI.

Each case asserts the exit status (2 for bad input, 1 for the bug guard, 130 for Ctrl-C), that no
traceback is printed, and that the message names the file or option, the field and the reason.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.vbp.cli_run import run
from vbp.cli import main

REPO = Path(__file__).resolve().parents[2]
TIANCHI = REPO / "tests" / "data" / "tianchi_small"

GOOD: dict[str, Any] = {
    "name": "tiny", "resources": ["cpu"],
    "host_types": [{"name": "std", "capacity": [4], "count": 3}],
    "apps": [{"name": "a", "demand": [2], "count": 2, "max_per_host": 1},
             {"name": "b", "demand": [1], "count": 1}],
}
GPU: dict[str, Any] = {
    "name": "g", "resources": ["cpu"], "gpu_resources": ["gpu_milli"],
    "host_types": [{"name": "g", "capacity": [8], "count": 2, "gpus": 2,
                    "gpu_capacity": [1000]}],
    "apps": [{"name": "t", "demand": [1], "count": 1, "gpu": {"cards": 1, "per_card": [500]}},
             {"name": "c", "demand": [1], "count": 1}],
}


def doc(**changes: Any) -> dict[str, Any]:
    d = json.loads(json.dumps(GOOD))
    d.update(changes)
    return d


def write(tmp_path: Path, name: str, content: Any) -> str:
    p = tmp_path / name
    if isinstance(content, bytes):
        p.write_bytes(content)
    else:
        p.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(p)


def bad(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: Any, *needles: str,
        name: str = "f.json", cmd: str = "validate", extra: tuple[str, ...] = ()) -> str:
    """Write ``content``, run ``vbp CMD file``; expect status 2 and every needle in one line."""
    path = write(tmp_path, name, content)
    code, _, err = run([cmd, path, *extra], capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert lines and all(x.startswith("error: ") for x in lines), err
    assert any(path in x and all(n in x for n in needles) for x in lines), err
    return err


# ------------------------------------------------------------------------------------------------
# code execution from a file
class _Evil:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (Path.touch, (self.marker,))


def test_crafted_pickle_checkpoint_runs_nothing(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "pwned"
    ck = write(tmp_path, "ck.pkl", pickle.dumps(_Evil(str(marker))))
    inst = write(tmp_path, "i.json", GOOD)
    code, _, err = run(["train", "swarm", inst, "--checkpoint", ck, "--resume", "--particles", "2",
                        "--iters", "1", "--samples", "1", "--held-out", "1",
                        "--out", str(tmp_path / "p.json")], capsys)
    assert code == 2 and ck in err and "not a vbp checkpoint" in err
    assert not marker.exists()


# ------------------------------------------------------------------------------------------------
# corrupted results
def test_host_names_unique_after_expansion(tmp_path: Path, capsys) -> None:
    d = doc(host_types=[{"name": "std", "capacity": [4], "count": 2},
                        {"name": "x", "capacity": [4], "count": 1, "host_names": ["std#0"]}])
    bad(tmp_path, capsys, d, "host_types[1]", "'std#0'", "unique")


# ------------------------------------------------------------------------------------------------
# silently accepted or dropped data
@pytest.mark.parametrize("initial, needle", [
    ({"hosts": {"ghost": ["std#0"]}}, "unknown app"),
    ({"hosts": {"a": ["std#0", "std#1", "std#2"]}}, "count"),
    ({"hosts": {"a": ["std#0", "std#1"], "b": ["std#0"]}, "gpus": {}}, None),
    ({"hosts": {"a": ["std#0", None], "b": ["std#0"]}}, None),
])
def test_validate_checks_the_snapshot(tmp_path: Path, capsys, initial, needle) -> None:
    d = doc(initial=initial)
    if needle is None:  # a feasible snapshot is fine...
        code, out, _ = run(["validate", write(tmp_path, "ok.json", d)], capsys)
        assert code == 0 and "initial placement" in out
        return
    bad(tmp_path, capsys, d, "initial", needle)


def test_validate_reports_an_overfilled_snapshot(tmp_path: Path, capsys) -> None:
    d = doc(host_types=[{"name": "std", "capacity": [4], "count": 3}],
            apps=[{"name": "a", "demand": [3], "count": 2}], initial={"hosts": {"a": ["std#0"] * 2}})
    bad(tmp_path, capsys, d, "initial", "capacity", "std#0")


@pytest.mark.parametrize("requests, field, reason", [
    ([{"time": 0, "app": "ghost"}], "requests[0].app", "unknown app 'ghost'"),
    ([{"time": 0, "app": "a", "count": 3}], "requests[0].count", "more than its count 2"),
    ([{"time": 0, "app": "a"}, {"time": 1, "app": "a", "count": 2}], "requests[1].count",
     "alive at once"),
    ([{"time": -1, "app": "a"}], "requests[0].time", "negative"),
    ([{"time": 5, "app": "a", "end": 2}], "requests[0].end", "before arrival"),
])
def test_requests_are_checked(tmp_path: Path, capsys, requests, field, reason) -> None:
    bad(tmp_path, capsys, doc(requests=requests), field, reason)


def test_requests_with_departures_may_reuse_containers(tmp_path: Path, capsys) -> None:
    d = doc(requests=[{"time": 0, "app": "a", "count": 2, "end": 5},
                      {"time": 5, "app": "a", "count": 2}])
    code, _, err = run(["validate", write(tmp_path, "ok.json", d)], capsys)
    assert code == 0, err


def test_host_index_minus_one_is_not_unplaced(tmp_path: Path, capsys) -> None:
    inst = write(tmp_path, "i.json", GOOD)
    pl = write(tmp_path, "p.json", {"hosts": {"a": [0, -1], "b": [None]}})
    code, _, err = run(["validate", inst, "--placement", pl], capsys)
    assert code == 2 and pl in err and "hosts.a[1]" in err and "write null" in err
    bad(tmp_path, capsys, doc(initial={"hosts": {"a": [-1, None]}}), "initial.hosts.a[0]",
        "out of range")


@pytest.mark.parametrize("gpus, field, reason", [
    ({"ghost": [[0]]}, "gpus.ghost", "do not list"),
    ({"t": [[0], [1]]}, "gpus.t", "2 card lists for the 1 containers"),
    ({"t": [[7]]}, "gpus.t[0]", "card 7 on host 'g#0', which has cards 0..1"),
])
def test_gpu_card_lists_are_checked(tmp_path: Path, capsys, gpus, field, reason) -> None:
    inst = write(tmp_path, "i.json", GPU)
    pl = write(tmp_path, "p.json", {"hosts": {"t": ["g#0"], "c": ["g#1"]}, "gpus": gpus})
    code, _, err = run(["validate", inst, "--placement", pl], capsys)
    assert code == 2 and any(pl in x and field in x and reason in x for x in err.splitlines()), err


@pytest.mark.parametrize("name, text, needle", [
    ("d.json", '{"name": "x", "name": "y"}', "key 'name'"),
    ("d.yaml", "name: x\nresources: [cpu]\nname: y\n", "line 3"),
])
def test_duplicate_keys_are_errors(tmp_path: Path, capsys, name, text, needle) -> None:
    bad(tmp_path, capsys, text, needle, "appears twice", name=name)


def test_empty_machine_csv(tmp_path: Path, capsys) -> None:
    bad(tmp_path, capsys, "", "file is empty", name="machine_meta.csv", cmd="info")


@pytest.mark.parametrize("names", [[1, 2, 3], ["h1", None, "h3"]])
def test_host_names_must_be_strings(tmp_path: Path, capsys, names) -> None:
    d = doc(host_types=[{"name": "std", "capacity": [4], "count": 3, "host_names": names}])
    bad(tmp_path, capsys, d, "host_types[0] (std).host_names[", "expected a non-empty string")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0"])
def test_time_limit_must_be_finite_and_positive(tmp_path: Path, capsys, value) -> None:
    code, _, err = run(["solve", write(tmp_path, "i.json", GOOD), "--time-limit", value], capsys)
    assert code == 2 and "--time-limit" in err and value in err


# ------------------------------------------------------------------------------------------------
# limits instead of tracebacks
@pytest.mark.parametrize("value", [2**63, 2**64 + 1, 1e308, 10**300, -(2**60)])
def test_huge_numbers(tmp_path: Path, capsys, value) -> None:
    text = json.dumps(doc()).replace('"capacity": [4]', f'"capacity": [{value}]')
    bad(tmp_path, capsys, text, "host_types[0] (std).capacity[0]", "supported range")


def test_too_many_digits_are_refused(tmp_path: Path, capsys) -> None:
    text = json.dumps(doc()).replace('"capacity": [4]', f'"capacity": [{"9" * 5000}]')
    bad(tmp_path, capsys, text, "malformed JSON")


def test_deep_nesting(tmp_path: Path, capsys) -> None:
    bad(tmp_path, capsys, '{"meta": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested more than")
    bad(tmp_path, capsys, "meta: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than",
        name="deep.yaml")


def test_yaml_aliases_are_refused(tmp_path: Path, capsys) -> None:
    text = "a: &x [1, 2]\nb: *x\n"
    bad(tmp_path, capsys, text, "line 2", "aliases", name="alias.yaml")


@pytest.mark.parametrize("cmd", ["info", "solve", "validate"])
def test_huge_counts_fail_fast(tmp_path: Path, capsys, cmd) -> None:
    t0 = time.perf_counter()
    d = doc(apps=[{"name": "a", "demand": [1], "count": 10**9}])
    bad(tmp_path, capsys, d, "apps[0] (a).count", "10,000,000", cmd=cmd)
    bad(tmp_path, capsys, "1\n10\n1\n1 1000000000\n", "item 1 demand", "10,000,000",
        name="big.vbp", cmd=cmd)
    d = doc(host_types=[{"name": "std", "capacity": [4], "count": 10**9}])
    bad(tmp_path, capsys, d, "host_types[0] (std).count", "hosts", cmd=cmd)
    assert time.perf_counter() - t0 < 10


@pytest.mark.parametrize("args", [
    ["simulate", "sigma", "--seed", "-1"],
    ["generate", "sigma", "--seed", "-1", "--out", "x.json"],
    ["generate", "random", "--seed", str(2**64), "--out", "x.json"],
    ["solve", "sigma", "--seed", "-5"],
])
def test_negative_or_huge_seeds(capsys, args) -> None:
    code, _, err = run(args, capsys)
    assert code == 2 and "--seed" in err


@pytest.mark.parametrize("cmd", [
    ["solve", "{missing}"], ["simulate", "{missing}"], ["generate", "sigma"],
    ["generate", "random"],
])
@pytest.mark.parametrize("out, reason", [
    ("x.txt", "expected a file name ending in"),
    ("{file}/x.json", "is not a folder"),
    ("{dir}", "is a directory"),  # click's own check of the path type
    ("{dir}.json", "is a directory"),
])
def test_out_is_checked_before_any_work(tmp_path: Path, capsys, cmd, out, reason) -> None:
    f = write(tmp_path, "plain.json", "{}")
    d = tmp_path / "adir"
    (tmp_path / "adir.json").mkdir()
    d.mkdir()
    out = out.format(file=f, dir=d)
    args = [a.format(missing=tmp_path / "missing.json") for a in cmd] + ["--out", out]
    code, _, err = run(args, capsys)
    # the instance is missing: naming --out proves the option was checked first
    assert code == 2 and "--out" in err and out in err and reason in err, err


def test_plot_is_checked_before_any_work(tmp_path: Path, capsys) -> None:
    code, _, err = run(["simulate", str(tmp_path / "missing.json"), "--plot", "p.csv"], capsys)
    assert code == 2 and "--plot" in err and "p.csv" in err


# ------------------------------------------------------------------------------------------------
# unclear messages
def test_rules_of_two_values(tmp_path: Path, capsys) -> None:
    err = bad(tmp_path, capsys, doc(rules=[["a", "b"]]), "rules[0]", "expected [A, B, k]",
              "list of 2 values")
    assert "expected an object" not in err


def test_empty_tianchi_resources_file(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "tianchi"
    folder.mkdir()
    for f in TIANCHI.glob("*.csv"):
        (folder / f.name).write_bytes(b"" if "app_resources" in f.name else f.read_bytes())
    code, _, err = run(["info", str(folder)], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "app_resources" in lines[0] and "file is empty" in lines[0]


def test_simulate_errors_name_the_file(tmp_path: Path, capsys) -> None:
    d = doc(name="not-the-file-name", apps=[{"name": "a", "demand": [3], "count": 2}],
            initial={"hosts": {"a": ["std#0", "std#0"]}})
    path = write(tmp_path, "snap.json", d)
    code, _, err = run(["simulate", path], capsys)
    assert code == 2 and f"{path}: initial" in err and "not-the-file-name:" not in err


def test_newline_in_a_name_cannot_forge_lines(tmp_path: Path, capsys) -> None:
    d = doc(apps=[{"name": "a\nerror: forged", "demand": [1], "count": 1}])
    err = bad(tmp_path, capsys, d, "apps[0].name", "control characters", "\\n")
    assert len(err.strip().splitlines()) == 1 and "\nerror: forged" not in err
    d = doc(**{"x\nerror: forged\x1b[2J": 1})
    err = bad(tmp_path, capsys, d, "unknown field", "\\n", "\\x1b")
    assert len(err.strip().splitlines()) == 1 and "\x1b" not in err


def test_control_characters_in_csv_names(tmp_path: Path, capsys) -> None:
    bad(tmp_path, capsys, "m\x1b1,0,a,b,8,50,ok\n", "line 1, column machine_id",
        "control characters", name="machine_meta.csv", cmd="info")


def test_meta_must_be_plain_finite_data(tmp_path: Path, capsys) -> None:
    bad(tmp_path, capsys, json.dumps(doc()).replace('"name": "tiny"', '"meta": {"x": NaN}'),
        "meta.x", "finite")


# ------------------------------------------------------------------------------------------------
# the last line of defence
def test_unexpected_error_is_one_line_and_exit_1(tmp_path: Path, capsys, monkeypatch) -> None:
    import vbp.cli.info as info

    def boom(*a: Any, **k: Any) -> Any:
        raise ZeroDivisionError("division by zero\nsecond line")

    monkeypatch.setattr(info, "describe", boom)
    path = write(tmp_path, "i.json", GOOD)
    code, out, err = run(["info", path], capsys)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1
    assert "bug in vbp" in lines[0] and "ZeroDivisionError: division by zero" in lines[0]
    assert "--debug" in lines[0]
    with pytest.raises(SystemExit) as e:
        main(["--debug", "info", path])
    assert e.value.code == 1 and "Traceback" in capsys.readouterr().err


def test_unexpected_error_from_the_console_script(tmp_path: Path) -> None:
    path = write(tmp_path, "i.json", GOOD)
    code = ("import vbp.cli.info as m\n"
            "def boom(*a, **k): raise KeyError('x')\n"
            "m.describe = boom\n"
            "from vbp.cli import main\nmain()\n")
    r = subprocess.run([sys.executable, "-c", code, "info", path], capture_output=True, text=True,
                       timeout=120, cwd=REPO)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "KeyError" in r.stderr


def test_ctrl_c_during_solve(tmp_path: Path, capsys, monkeypatch) -> None:
    import solvers
    from solvers.result import Progress

    def interrupted(inst: Any, method: str, **kw: Any) -> Any:
        kw["callback"](Progress(0.1, 3.0, 2.0, "cpsat", "incumbent"))
        raise KeyboardInterrupt

    monkeypatch.setattr(solvers, "solve", interrupted)
    path = write(tmp_path, "i.json", GOOD)
    code, out, err = run(["solve", path], capsys)
    assert code == 130 and "interrupted" in out and "objective  3" in out and "bound      2" in out
    code, out, err = run(["solve", path, "--json"], capsys)
    assert code == 130 and json.loads(out)["status"] == "interrupted"


def test_policy_errors_are_one_line_exit_1(tmp_path: Path, capsys, monkeypatch) -> None:
    import vbp.cli.info as info
    from packing.errors import PolicyError

    def refuse(*a: Any, **k: Any) -> Any:
        raise PolicyError("policy 'x' chose host 7, which its mask forbids")

    monkeypatch.setattr(info, "describe", refuse)
    code, _, err = run(["info", write(tmp_path, "i.json", GOOD)], capsys)
    assert code == 1 and err.strip() == "error: policy 'x' chose host 7, which its mask forbids"
