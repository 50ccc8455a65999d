"""Every page of ``docs/`` ends with a ``## Reproduce`` section whose commands run as written.

The section holds fenced blocks with the info string ``console`` (documentation only: long runs, real
data) or ``console run`` (run here). In a block, a line ``$ COMMAND`` is a command (a line ending in
``\\`` continues on the next one; ``# ...`` is a comment) and the lines after it, up to the next
command, are an excerpt of what it prints: each one, stripped, must occur in the output (``...`` on
its own line stands for lines left out). Every block shows at least one number.

Commands are ``vbp ...`` (run in this process) or ``python PATH.py ...`` (a script of the repository,
run as a subprocess). ``console run`` blocks run in order, page by page, in a scratch folder holding
copies of ``examples/data``, ``tests/data`` and ``policies/data``, so later commands read what earlier
ones wrote and nothing is written into the repository; a ``--json`` output is validated against its
schema in ``docs/schemas``. ``console`` blocks are only parsed: the ``vbp`` subcommand and each of its
options exist, or the script exists and names each option given.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"

PENDING: frozenset[str] = frozenset()
"""Pages whose owners add their ``## Reproduce`` section separately: skipped while they lack one.

Remove this list once every page has its section; a page listed here that has the section is
checked like any other.
"""

COPIED = ("examples/data", "tests/data", "policies/data")
"""Folders copied into the scratch folder of a page's ``console run`` blocks."""

BLOCK = re.compile(r"^```(console(?: run)?)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Command:
    """One ``$`` command of a block and the lines it is said to print.

    Attributes:
        words: the command split as a shell would (comments dropped).
        expected: the lines shown after it, stripped, without ``...``.
    """

    words: tuple[str, ...]
    expected: tuple[str, ...]


@dataclass(frozen=True)
class Block:
    """A ``console`` or ``console run`` block of a page's Reproduce section."""

    run: bool
    commands: tuple[Command, ...]


def pages() -> list[Path]:
    """Every Markdown page of ``docs/``."""
    return sorted(DOCS.glob("*.md"))


def reproduce_section(text: str) -> str | None:
    """The text of the final ``## Reproduce`` section, or None when the page's last ``##`` is another."""
    heads = list(re.finditer(r"^## (.*?)\s*$", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M), re.M))
    if not heads or heads[-1].group(1) != "Reproduce":
        return None
    return text[text.rindex("\n## Reproduce"):]


def parse_block(body: str) -> tuple[Command, ...]:
    """Commands of a block's body, with the excerpt of output that follows each."""
    commands: list[Command] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.startswith("$ "):
            if not commands and line.strip():
                raise AssertionError(f"output before the first command: {line!r}")
            continue
        cmd = line[2:]
        while cmd.rstrip().endswith("\\") and i < len(lines):
            cmd = cmd.rstrip()[:-1] + " " + lines[i].strip()
            i += 1
        expected: list[str] = []
        while i < len(lines) and not lines[i].startswith("$ "):
            if lines[i].strip() and lines[i].strip() != "...":
                expected.append(lines[i].strip())
            i += 1
        commands.append(Command(tuple(shlex.split(cmd, comments=True)), tuple(expected)))
    return tuple(commands)


def blocks(page: Path) -> list[Block] | None:
    """The blocks of the page's Reproduce section (None when it has no such section)."""
    section = reproduce_section(page.read_text(encoding="utf-8"))
    if section is None:
        return None
    return [Block(info == "console run", parse_block(body)) for info, body in BLOCK.findall(section)]


def page_blocks(page: Path) -> list[Block]:
    """The page's blocks; a listed page without its section is skipped."""
    found = blocks(page)
    if found is None and page.name in PENDING:
        pytest.skip(f"{page.name}: its owner adds the Reproduce section")
    assert found is not None, f"{page.name}: the last section is not '## Reproduce'"
    return found


PAGES = [pytest.param(p, id=p.name) for p in pages()]


def test_the_pending_list_names_pages() -> None:
    assert PENDING <= {p.name for p in pages()}


@pytest.mark.parametrize("page", PAGES)
def test_reproduce_section_shape(page: Path) -> None:
    found = page_blocks(page)
    assert found, f"{page.name}: the Reproduce section has no console or console run block"
    for b in found:
        assert b.commands, f"{page.name}: a block without a '$ ' command"
        shown = [line for c in b.commands for line in c.expected]
        assert any(re.search(r"\d", line) for line in shown), \
            f"{page.name}: a block ({b.commands[0].words[:3]}) shows no number it should print"
        for c in b.commands:
            ok = c.words and (c.words[0] == "vbp" or (c.words[0] in ("python", "bash") and len(c.words) > 1))
            assert ok, (f"{page.name}: {' '.join(c.words)}: a command is 'vbp ...', "
                        "'python SCRIPT ...' or 'bash SCRIPT'")


def vbp_command(args: list[str]) -> click.Command:
    """The click command ``vbp ARGS`` names; raises a UsageError for an unknown subcommand or option."""
    from vbp.cli import cli

    cmd: click.Command = cli
    name, parent = "vbp", None
    known: set[str] = set()
    while True:
        ctx = cmd.make_context(name, list(args), parent=parent, resilient_parsing=True)
        known |= {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
        if not isinstance(cmd, click.Group):
            break
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
        if not rest:
            break
        sub_name, sub, args = cmd.resolve_command(ctx, rest)
        if sub is None or sub_name is None:
            raise click.UsageError(f"no such command {rest[0]!r}")
        cmd, name, parent = sub, sub_name, ctx
    words = list(args)
    options = words[:words.index("--")] if "--" in words else words
    for word in options:
        if re.match(r"^--?[A-Za-z]", word) and word.split("=")[0] not in known | {"-h", "--help"}:
            raise click.UsageError(f"no such option {word!r} for 'vbp {name}'")
    return cmd


def script_of(words: tuple[str, ...]) -> tuple[Path, list[str]]:
    """The repository script a ``python SCRIPT ...`` (or ``bash SCRIPT``) command runs, and its arguments."""
    if words[0] == "bash":
        script = REPO / words[1]
        assert script.is_file(), f"{words[1]}: no such script in the repository"
        return script, list(words[2:])
    if words[1] == "-m" and len(words) > 2 and words[2] == "vbp.cli":
        raise AssertionError("write 'vbp ...' rather than 'python -m vbp.cli ...'")
    script = REPO / words[1]
    assert script.suffix == ".py" and script.is_file(), f"{words[1]}: no such script in the repository"
    return script, list(words[2:])


def check_parses(c: Command) -> None:
    """The command's subcommand and options exist (nothing runs)."""
    if c.words[0] == "vbp":
        vbp_command(list(c.words[1:]))
        return
    script, args = script_of(c.words)
    source = script.read_text(encoding="utf-8")
    for word in args:
        if re.match(r"^--?[A-Za-z]", word):
            opt = word.split("=")[0]
            assert f'"{opt}"' in source or f"'{opt}'" in source, f"{script.name} has no option {opt}"


@pytest.mark.parametrize("page", PAGES)
def test_console_commands_parse(page: Path) -> None:
    failures = []
    for b in page_blocks(page):
        for c in b.commands:
            try:
                check_parses(c)
            except (click.ClickException, AssertionError) as e:
                failures.append(f"{' '.join(c.words)}: {e}")
    assert not failures, f"{page.name}:\n" + "\n".join(failures)


def validate_json(out: str) -> None:
    """A ``--json`` output is one JSON document valid against the schema its ``format`` names."""
    jsonschema = pytest.importorskip("jsonschema")
    from vbp.cli.formats import schema_name

    doc = json.loads(out)
    schema = json.loads((DOCS / "schemas" / schema_name(doc["format"])).read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)


def run_vbp(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``vbp ARGS`` in this process: (exit status, stdout, stderr)."""
    from vbp.cli import main

    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(args)
    out, err = capsys.readouterr()
    code = e.value.code
    return (code if isinstance(code, int) else (0 if code is None else 1)), out, err


def run_command(c: Command, scratch: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run the command in the scratch folder: (exit status, stdout and stderr)."""
    if c.words[0] == "vbp":
        vbp_command(list(c.words[1:]))
        status, out, err = run_vbp(list(c.words[1:]), capsys)
        if status == 0 and "--json" in c.words:
            validate_json(out)
        return status, out + err
    script, args = script_of(c.words)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, str(script), *args], cwd=scratch, env=env,
                       capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.parametrize("page", PAGES)
def test_console_run_blocks_print_what_the_page_says(page: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    runnable = [b for b in page_blocks(page) if b.run]
    if not runnable:
        pytest.skip(f"{page.name}: no console run block")
    for folder in COPIED:
        shutil.copytree(REPO / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    failures = []
    for b in runnable:
        for c in b.commands:
            status, out = run_command(c, tmp_path, capsys)
            shown = " ".join(c.words)
            if status != 0:
                failures.append(f"$ {shown}\nexit {status}\n{out[-3000:]}")
                continue
            missing = [line for line in c.expected if line not in out]
            if missing:
                failures.append(f"$ {shown}\nnot in the output: {missing}\n{out[-3000:]}")
    assert not failures, f"{page.name}:\n" + "\n\n".join(failures)


def test_parse_block_reads_commands_continuations_and_excerpts() -> None:
    body = "$ vbp solve x \\\n    --json   # a comment\n{\"a\": 1}\n...\n  last 2\n$ vbp info y\n"
    assert parse_block(body) == (
        Command(("vbp", "solve", "x", "--json"), ('{"a": 1}', "last 2")),
        Command(("vbp", "info", "y"), ()),
    )


def test_the_parse_check_refuses_unknown_commands_and_options() -> None:
    vbp_command(["train", "swarm", "sigma", "--particles", "3", "--out=x.json"])
    with pytest.raises(click.UsageError):
        vbp_command(["compare", "sigma", "--no-such-option", "1"])
    with pytest.raises(click.UsageError):
        vbp_command(["no-such-command", "x"])
    with pytest.raises(click.UsageError):
        vbp_command(["train", "no-such-trainer"])
    with pytest.raises(AssertionError):
        check_parses(Command(("python", "benchmarks/bench_bestfit.py", "--no-such-option"), ("1",)))
    with pytest.raises(AssertionError):
        check_parses(Command(("python", "benchmarks/no_such_bench.py"), ("1",)))


def test_reproduce_must_be_the_last_section() -> None:
    assert reproduce_section("# T\n## A\ntext\n## Reproduce\n```console\n$ vbp info x\n```\n") is not None
    assert reproduce_section("# T\n## Reproduce\nx\n## After\n") is None
    assert reproduce_section("# T\n## A\n```console\n## Reproduce\n```\n") is None


def anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lowercase, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def without_code(text: str, inline: bool = True) -> str:
    """The text without fenced code blocks (and inline code, unless ``inline`` is False)."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text) if inline else text


@pytest.mark.parametrize("page", PAGES)
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in re.findall(r"!?\[[^\]]*\]\(([^)\s]+)\)", without_code(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z]+:", target):
            continue  # http:, https:, mailto:
        name, _, frag = target.partition("#")
        path = (page.parent / name).resolve() if name else page
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif frag and path.suffix == ".md":
            heads = re.findall(r"^#+ (.*)$", without_code(path.read_text(encoding="utf-8"), False), re.M)
            if frag not in {anchor(h) for h in heads}:
                broken.append(f"{target}: no such heading")
    assert not broken, f"{page.name}:\n" + "\n".join(broken)


def test_anchor_follows_github() -> None:
    assert anchor("Multi-cluster GPU scheduling (EADE-DDPG, EADE-M and baselines)") == \
        "multi-cluster-gpu-scheduling-eade-ddpg-eade-m-and-baselines"
    assert anchor("Instance (`\"format\": \"vbp-instance/1\"`)") == "instance-format-vbp-instance1"
