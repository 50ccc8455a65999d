"""``vbp sweep``: one tidy row per run, the same numbers on every executor, options checked first."""

from __future__ import annotations

import csv
import importlib.util
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from packing.io import save_instance
from packing.io.builtin import builtin_instance
from packing.model.instance import App, HostType, Instance
from packing.sim.simulator import evaluate, sample_orders
from policies.registry import get_policy
from vbp.cli import cli, main
from vbp.sweep import COLUMNS


def small(tmp_path: Path) -> Path:
    inst = Instance("small", ("cpu",), (HostType("h", (10.0,), 4),),
                    (App("a", (6.0,), 2), App("b", (4.0,), 3), App("c", (3.0,), 3, max_per_host=1)))
    f = tmp_path / "small.json"
    save_instance(inst, f)
    return f


def sweep(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["sweep", *args])
    return r.exit_code, r.output


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_sweep_writes_one_row_per_run(tmp_path: Path) -> None:
    out = tmp_path / "new" / "runs.csv"  # a missing folder is created, as every --out does
    code, text = sweep("sigma", str(small(tmp_path)), "--policies", "ff,bf,random", "--orders", "3",
                       "--seed", "4", "--out", str(out), "-q")
    assert code == 0, text
    assert "18 runs" in text
    table = rows(out)
    assert tuple(table[0]) == COLUMNS and len(table) == 2 * 3 * 3
    assert {r["instance"] for r in table} == {"sigma", "small"}
    assert all(r["seed"] == "4" and r["executor"] == "serial" for r in table)
    sig = builtin_instance("sigma")
    s = evaluate(get_policy("random"), sig, sample_orders(sig, 3, 4), seed=4)
    got = [int(r["hosts"]) for r in table if r["instance"] == "sigma" and r["policy"] == "random"]
    assert got == s.hosts.tolist()  # the orders and seeds of compare / evaluate
    assert [r["order"] for r in table[:3]] == ["0", "1", "2"]
    for r in table:
        assert 0 < float(r["allocation"]) <= 1 and float(r["seconds"]) >= 0


def test_sweep_process_executor_same_numbers(tmp_path: Path) -> None:
    args = ["sigma", "--policies", "ff,random", "--orders", "3", "-q"]
    assert sweep(*args, "--out", str(tmp_path / "s.csv"))[0] == 0
    code, text = sweep(*args, "--out", str(tmp_path / "p.csv"), "--executor", "process", "--workers", "2")
    assert code == 0, text

    def numbers(p: str) -> list[tuple[str, ...]]:
        return [tuple(v for k, v in r.items() if k not in ("seconds", "executor"))
                for r in rows(tmp_path / p)]
    assert numbers("s.csv") == numbers("p.csv")
    assert {r["executor"] for r in rows(tmp_path / "p.csv")} == {"process"}


def test_pandas_reads_the_table(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    out = tmp_path / "runs.csv"
    assert sweep("sigma", "--policies", "bf", "--orders", "2", "--out", str(out), "-q")[0] == 0
    df = pd.read_csv(out)
    assert list(df.columns) == list(COLUMNS) and len(df) == 2
    assert df["hosts"].dtype.kind == "i" and df["allocation"].dtype.kind == "f"


def test_parquet_needs_pyarrow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.parquet"
    args = ["sweep", "sigma", "--policies", "bf", "--orders", "2", "--out", str(out), "-q"]
    if importlib.util.find_spec("pyarrow") is None:
        with pytest.raises(SystemExit) as e:
            main(args)
        assert e.value.code == 2 and "needs pyarrow" in capsys.readouterr().err and not out.exists()
    else:  # pragma: no cover - depends on the environment
        pd = pytest.importorskip("pandas")
        assert sweep(*args[1:])[0] == 0
        assert len(pd.read_parquet(out)) == 2


@pytest.mark.parametrize(("args", "message"), [
    (["--policies", "ff,nope"], "error: --policies: nope: unknown policy"),
    (["--out", "{tmp}/runs.txt"], "unknown table format '.txt'"),
    (["--out", "{tmp}/a-file/runs.csv"], "is not a folder"),
    (["--out", "{tmp}/folder.csv"], "is a folder"),
    (["--executor", "process", "--ray-address", "h:1"], "only with --executor ray"),
    (["--policies", "{tmp}/missing.json"], "no such policy file"),
])
def test_bad_options_exit_2_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            args: list[str], message: str) -> None:
    (tmp_path / "folder.csv").mkdir()
    (tmp_path / "a-file").write_text("x")
    argv = ["sweep", "does-not-exist.json", "--out", str(tmp_path / "r.csv")]
    argv += [a.format(tmp=tmp_path) for a in args]
    with pytest.raises(SystemExit) as e:
        main(argv)  # the instance is missing too: options are checked first
    assert e.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.csv").exists()


def test_unwritable_folder_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() == 0:  # root may write anywhere: let the permission check see a read-only folder
        monkeypatch.setattr("packing.io.atomic.os.access", lambda path, mode: False)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(SystemExit) as e:
            main(["sweep", "sigma", "--out", str(ro / "r.csv")])
        assert e.value.code == 2 and "no permission to write in folder" in capsys.readouterr().err
    finally:
        ro.chmod(0o700)
