"""Progress goes to stderr only: stdout is the same with ``--progress``, with ``-q`` and by default.

Each command that can run long is run three ways on a small input: ``--progress`` (progress forced on
stderr, as into a CI log), ``-q`` (none) and neither (stderr is not a terminal here, so none, as
with tqdm and pip). Its stdout, wall times masked, is the same all three ways; stderr holds
progress only when forced. :mod:`packing.report.progress` decides, for every command alike.
"""

from __future__ import annotations

import importlib.util
import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from packing.report.progress import bar, echo, shown
from vbp.cli import cli

DATA = Path(__file__).resolve().parents[1] / "data"
TIMES = re.compile(r"\d+(\.\d+)?(e-?\d+)? ?s\b|\"(cpu_)?seconds\": [0-9.e-]+|\d+\.\d+ s ")
"""Wall times in text (``0.25 s``, ``1.3s``) and JSON (``"seconds": 0.25``): they differ run to run."""
LAST_COLUMN = re.compile(r" +\d+\.\d+$", re.M)
"""The last column of ``vbp gpu-frag`` (``s/seed``) and ``vbp jobs compare`` (``ms/dec``): wall times."""


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_rule() -> None:
    assert shown("always") and not shown("never")
    assert shown(None, Tty()) and shown("auto", Tty()) and not shown(None, io.StringIO())
    assert shown("always", io.StringIO())  # forced: shown on any stream
    with pytest.raises(ValueError, match="progress mode must be one of auto, always, never"):
        shown("loud")


def test_bar_and_echo_write_to_stderr_only_when_shown(capsys: pytest.CaptureFixture[str]) -> None:
    for mode in ("never", None):  # pytest's stderr is no terminal
        with bar(2, "runs", "run", mode) as b:
            b.update(2)
        echo("step 1", mode)
        assert capsys.readouterr() == ("", "")
    with bar(2, "runs", "run", "always") as b:
        b.update(2)
    echo("step 1", "always")
    out, err = capsys.readouterr()
    assert out == "" and "runs: 100%" in err and "2/2" in err and err.endswith("step 1\n")


def _deployments(tmp: Path) -> list[str]:
    d = tmp / "d.csv"
    d.write_text("name,replicas,cpu,memory\nweb,3,2,4Gi\ndb,2,3,8Gi\n")
    return ["plan", str(d), "--hosts", "std:4c8g", "--growth", "1,2", "--time-limit", "5"]


def _sweep(tmp: Path) -> list[str]:
    return ["sweep", "sigma", "--policies", "ff,bf", "--orders", "2", "--out", str(tmp / "t.csv"),
            "--force"]


def _swarm(tmp: Path) -> list[str]:
    return ["train", "swarm", "sigma", "--particles", "2", "--iters", "2", "--samples", "1", "--held-out",
            "2", "--init", "none", "--seed", "3", "--out", str(tmp / "t.json"), "--force"]


def _rl(tmp: Path) -> list[str]:
    s = tmp / "s.json"
    if not s.exists():
        r = CliRunner().invoke(cli, ["generate", "multicluster", "--data", str(DATA / "multicluster_small"),
                                     "--clusters", "3", "--nodes", "2", "--tasks", "20", "--seed", "1",
                                     "--out", str(s)])
        assert r.exit_code == 0, r.output
    return ["train", "rl", str(s), "--algo", "eade-m", "--episodes", "2", "--set", "embed=8", "--set",
            "heads=2", "--set", "hidden=16,8", "--set", "batch=16", "--held-out", "1",
            "--out", str(tmp / "m.pt"), "--force"]


def _gcn(tmp: Path) -> list[str]:
    from tests.vbp.test_cli_train_gcn import tiny

    return ["train", "gcn", str(tiny(tmp / "tiny.json")), "--episodes", "8", "--batch", "4", "--orders", "3",
            "--dim", "8", "--seed", "1", "--out", str(tmp / "g.pt"), "--force"]


def _jobfusion(tmp: Path) -> list[str]:
    return ["train", "gcn", str(DATA / "dag"), "--out", str(tmp / "jf.pt"), "--episodes", "4", "--batch",
            "2", "--jobs", "3", "--samples", "1", "--held-out", "1", "--hosts", "32c64g:1", "--dim", "8",
            "--force"]


COMMANDS: dict[str, tuple[Callable[[Path], list[str]], str, str | None]] = {
    "solve": (lambda t: ["solve", "sigma", "--time-limit", "5"], "bound ", None),
    "solve --json": (lambda t: ["solve", "sigma", "--time-limit", "5", "--json"], "bound ", None),
    "compare": (lambda t: ["compare", "sigma", "--policies", "ff,bf", "--orders", "2", "--time-limit", "5"],
                "simulating", None),
    "compare --json": (lambda t: ["compare", "sigma", "--policies", "ff", "--orders", "2", "--time-limit",
                                  "5", "--json"], "simulating", None),
    "simulate": (lambda t: ["simulate", "sigma", "--policy", "k8s-most", "--orders", "3"], "simulate", None),
    "simulate --autoscale": (lambda t: ["simulate", "sigma", "--orders", "2", "--autoscale", "--json"],
                             "simulate", None),
    "sweep": (_sweep, "sweep (serial)", None),
    "sweep --optimum": (lambda t: [*_sweep(t), "--optimum", "--time-limit", "5"], "solving sigma", None),
    "plan": (_deployments, "plan", None),
    "consolidate": (lambda t: ["consolidate", str(DATA / "k8s-snapshots" / "cluster.yaml"), "--max-moves",
                               "0,all", "--time-limit", "5"], "max moves all", None),
    "train swarm": (_swarm, "pso on sigma", None),
    "jobs partition": (lambda t: ["jobs", "partition", str(DATA / "dag"), "--q", "1,2", "--methods",
                                  "single,plain", "--containers", "20", "--time-limit", "2"],
                       "plain Q=2: optimal", None),
    "jobs compare --search": (lambda t: ["jobs", "compare", str(DATA / "dag"), "--seed", "3", "--hosts",
                                         "32c64g:1", "--interarrival", "0", "--q", "2", "--policies",
                                         "sjf,sjf-headroom", "--search", "20", "--search-seed", "1"],
                              "search: episode", None),
    "gpu-frag": (lambda t: ["gpu-frag", str(DATA / "openb_small"), "--seeds", "1", "--policies",
                            "gpu-bestfit", "--no-bound", "--until", "100"], "gpu-bestfit done", None),
    "train rl": (_rl, "eade-m", "torch"),
    "train gcn": (_gcn, "training", "torch_geometric"),
    "train gcn DAG": (_jobfusion, "jobfusion", "torch"),
}
"""Per command: its arguments (given a scratch folder), what its progress shows, a module it needs."""


def run(args: list[str]) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, args)
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("name", list(COMMANDS))
def test_stdout_is_the_same_with_and_without_progress(name: str, tmp_path: Path) -> None:
    make, marker, needs = COMMANDS[name]
    if needs is not None and importlib.util.find_spec(needs) is None:
        pytest.skip(f"needs {needs}")
    args = make(tmp_path)
    code, forced, err = run([*args, "--progress"])
    assert code == 0, err
    assert marker in err, err  # progress, on stderr
    code, quiet, quiet_err = run([*args, "-q"])
    assert code == 0 and marker not in quiet_err, quiet_err
    code, default, default_err = run(args)  # stderr is no terminal here: no progress
    assert code == 0 and marker not in default_err, default_err
    timed_column = name in ("gpu-frag", "jobs compare --search")  # s/seed, ms/dec: wall times
    mask = re.compile(f"{TIMES.pattern}|{LAST_COLUMN.pattern}", re.M) if timed_column else TIMES
    assert mask.sub("T", forced) == mask.sub("T", quiet) == mask.sub("T", default)
    assert forced.strip()
