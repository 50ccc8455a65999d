"""``vbp train gcn`` (the click command object, in process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("torch")
pytest.importorskip("torch_geometric")

from packing.errors import InputError  # noqa: E402
from packing.io import save_instance  # noqa: E402
from packing.model.instance import App, HostType, Instance, Request  # noqa: E402
from policies.registry import get_policy  # noqa: E402
from vbp.cli.train_gcn import gcn  # noqa: E402


def tiny(path: Path) -> Path:
    apps = (App("a", (4.0, 8.0), 4, max_per_host=2), App("b", (8.0, 16.0), 3, max_per_host=1),
            App("c", (4.0, 4.0), 4))
    inst = Instance(name="tiny", resources=("cpu", "mem"), host_types=(HostType("h", (16.0, 64.0), 8),),
                    apps=apps, exclusions=(("a", "c"),),
                    requests=tuple(Request(float(t), a.name, a.count) for t, a in enumerate(apps)))
    save_instance(inst, path)
    return path


def test_train_gcn_writes_a_model_that_the_registry_loads(tmp_path: Path) -> None:
    inst = tiny(tmp_path / "tiny.json")
    out, plot = tmp_path / "m.pt", tmp_path / "curve.png"
    r = CliRunner().invoke(gcn, [str(inst), "--episodes", "8", "--batch", "4", "--orders", "3", "--dim", "8",
                                 "--seed", "1", "--out", str(out), "--plot", str(plot)])
    assert r.exit_code == 0, r.output
    assert "trained 2 iteration(s)" in r.output and "held-out orders" in r.output
    import re

    gcn_mean, bf_mean = map(float, re.search(r"gcn ([0-9.]+) hosts; bf ([0-9.]+) hosts", r.stdout).groups())
    assert ("warning: on the 8 held-out orders" in r.stderr) == (gcn_mean > bf_mean)
    assert out.is_file() and plot.is_file()
    pol = get_policy(str(out))
    assert pol.name == "gcn"
    info = pol.info  # type: ignore[attr-defined]
    assert info["command"].startswith("vbp train gcn ") and "--episodes 8" in info["command"]
    assert len(info["curve"]) == 2


@pytest.mark.parametrize("args, match", [
    (["--out", "m.txt"], "--out"),
    (["--out", "m.pt", "--family", "2"], "--family"),
    (["--out", "m.pt", "--resume"], "--resume"),
    (["--out", "m.pt", "--plot", "c.nope"], "--plot"),
    (["--out", "m.pt", "--checkpoint", "m.pt"], "is the same file as --out"),
])
def test_bad_options_are_input_errors(tmp_path: Path, args: list[str], match: str) -> None:
    inst = tiny(tmp_path / "tiny.json")
    args = [a if not a.startswith(("m.", "c.")) else str(tmp_path / a) for a in args]
    r = CliRunner().invoke(gcn, [str(inst), *args])
    assert isinstance(r.exception, InputError), r.output
    assert match in str(r.exception)
