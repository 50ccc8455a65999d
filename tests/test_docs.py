"""The documentation's code runs: the README's Python example and the file-format example."""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path

import pytest

from packing.feasibility.checker import check
from packing.io import instance_from_dict, instance_to_dict, placement_from_dict

REPO = Path(__file__).resolve().parents[1]


def blocks(path: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def test_readme_python_examples_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    plan_code, main_code = blocks(REPO / "README.md", "python")
    monkeypatch.chdir(REPO)  # the snippets name files of the repository (examples/data/...)
    for name, code in (("plan.py", plan_code), ("main.py", main_code)):
        script = tmp_path / name
        script.write_text(code, encoding="utf-8")
        runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    assert "x1: 12 hosts, cost 7.888 (optimal, bound 7.888)" in out
    assert "x2: 23 hosts" in out
    assert "cheap lower bound: 22 hosts" in out
    assert "optimum: 22.0 hosts (optimal" in out


def test_file_format_examples_load_and_round_trip() -> None:
    inst_doc, placement_doc = blocks(REPO / "docs" / "file-format.md", "json")
    inst = instance_from_dict(json.loads(inst_doc), "file-format.md")
    assert inst.n_apps == 4 and inst.n_hosts == 24 and inst.max_gpus == 8
    assert instance_from_dict(instance_to_dict(inst)) == inst
    p = placement_from_dict(json.loads(placement_doc), inst)
    kinds = {v.kind for v in check(inst, p)}
    assert kinds == {"count"}  # the example lists only some containers of web and infer
