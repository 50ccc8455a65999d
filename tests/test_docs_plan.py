"""docs/plan.md: its Python blocks run, and its CLI lines parse, on a small deployments CSV."""

from __future__ import annotations

import re
import runpy
import shlex
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "plan.md"

DEPLOYMENTS = "name,replicas,cpu,memory,max_per_host\nweb,6,500m,1Gi,2\napi,4,2,4Gi,\n"
HOSTS = "name,cpu,memory,price\nstd,16,64Gi,0.77\nc16,16,32Gi,0.68\n"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "deployments.csv").write_text(DEPLOYMENTS)
    (tmp_path / "hosts.csv").write_text(HOSTS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_python_blocks_run(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = _blocks("python")
    assert len(blocks) == 2
    for code in blocks:
        script = folder / "block.py"
        script.write_text(code.replace("time_limit=60", "time_limit=10"), encoding="utf-8")
        runpy.run_path(str(script), run_name="__main__")
    assert "optimal" in capsys.readouterr().out


def test_cli_lines_run(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vbp.cli import main

    lines = [ln for b in _blocks("sh") for ln in b.splitlines() if ln.startswith("vbp plan ")]
    assert len(lines) == 3
    for ln in lines:
        with pytest.raises(SystemExit) as e:
            main([*shlex.split(ln)[1:], "--time-limit", "10"])
        assert e.value.code == 0, ln
    assert (folder / "plan.png").is_file()
