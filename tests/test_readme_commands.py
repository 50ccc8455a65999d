"""Every command of the README runs as written (in a scratch folder with the files it names).

A line ``$ vbp ...`` in a ``console`` block is a command; the lines after it, up to the next command,
are what it prints (``...`` stands for lines left out). The command must exit 0 and print the first
line shown.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def readme_commands() -> list[tuple[str, str | None]]:
    """``(command, first line it prints or None)`` for every ``$ vbp`` line of the README."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    out: list[tuple[str, str | None]] = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ "):
                nxt = lines[i + 1] if i + 1 < len(lines) else None
                shown = None if nxt is None or nxt.startswith("$ ") or nxt == "..." else nxt
                out.append((line[2:], shown))
    return out


COMMANDS = readme_commands()


def test_the_readme_has_commands() -> None:
    assert len(COMMANDS) >= 12 and all(c.startswith("vbp ") for c, _ in COMMANDS)


def schema_problems(command: str, out: str) -> list[str]:
    """Problems of a ``--json`` output: one JSON document valid against its schema in docs/schemas."""
    jsonschema = pytest.importorskip("jsonschema")
    from vbp.cli.formats import schema_name

    try:
        doc = json.loads(out)
        schema = json.loads((REPO / "docs" / "schemas" / schema_name(doc["format"])).read_text())
        jsonschema.validate(doc, schema)
    except (OSError, ValueError, KeyError, jsonschema.ValidationError) as e:
        return [f"{command}: the --json output is not valid: {str(e)[:500]}"]
    return []


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A folder with the files the commands name, where their outputs go."""
    d = tmp_path
    shutil.copytree(REPO / "examples" / "data", d / "examples" / "data")
    for sub in ("k8s", "k8s-snapshots", "openb_small", "dag"):
        shutil.copytree(REPO / "tests" / "data" / sub, d / "tests" / "data" / sub)
    return d


def test_readme_commands_run_in_order(scratch: Path) -> None:
    # in order, in one folder: later commands read what earlier ones wrote (random.json, tuned.json)
    failures = []
    for command, shown in COMMANDS:
        words = shlex.split(command)
        r = subprocess.run([sys.executable, "-c", "from vbp.cli import main; main()", *words[1:]],
                           cwd=scratch, capture_output=True, text=True, timeout=600,
                           env={**os.environ, "PYTHONPATH": str(REPO)})  # this checkout's vbp
        if r.returncode != 0:
            failures.append(f"{command}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        elif shown is not None and shown.strip() not in r.stdout:
            failures.append(f"{command}: expected {shown!r} in\n{r.stdout[-2000:]}")
        elif "--json" in words:
            failures += schema_problems(command, r.stdout)
    assert not failures, "\n\n".join(failures)
