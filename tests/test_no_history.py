"""No file of the README, the docs or the code tells the project's development history.

Documentation and docstrings describe what vbp is and does, in the present tense; how it came to
be (sessions, issues, fixes, earlier rounds, who did what) belongs to the version control log. The
scan covers ``README.md``, ``docs/`` and the Python and Markdown files of ``packing``, ``policies``,
``solvers``, ``vbp``, ``benchmarks`` and ``examples``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCANNED = ("README.md", "docs", "packing", "policies", "solvers", "vbp", "benchmarks", "examples")
SUFFIXES = {".py", ".md", ".txt", ".json", ".yaml", ".yml", ".csv"}

PATTERNS: tuple[str, ...] = (
    r"\bsessions?\b",
    r"\bissue ?#\s*\d*",
    r"\bissues? \d+\b",
    r"\b(the|our|a) tracker\b",
    r"\bpreviously\b",
    r"\bformerly\b",
    r"\bwe (tried|fixed|changed|added|removed|replaced|decided|found that)\b",
    r"\b(earlier|previous|last) rounds?\b",
    r"\bround \d+ (of the|fixes|review)\b",
    r"\b(was|were|got|been) (fixed|broken)\b",
    r"\bbug ?fix(es|ed)?\b",
    r"\bfixed in\b",
    r"\bTODO from\b",
    r"\b(the|a|another|other|each) helpers? (session|worktree|branch|wrote|did|added|owns)\b",
    r"\bhelper sessions?\b",
    r"\bworktrees?\b",
    r"\bthe lead\b",
    r"\bas before\b",
    r"\bused to (be|give|take|run|print|report)\b",
    r"\bnow (converges|uses|gives|reports|passes|supports|handles|works)\b",
    r"\b(after|before) the (fix|change|refactor|review|rewrite)\b",
    r"\breview fix(es)?\b",
    r"\bthe old (version|behaviou?r|default|carving|code|model)\b",
    r"\bin (an|the) (earlier|previous|older) (version|commit|release)\b",
)
"""Wording that tells history, matched case-insensitively."""

ALLOWED: tuple[tuple[str, str], ...] = ()
"""Legitimate uses: (file relative to the repository, a phrase its matching line contains).

For example ``("packing/sim/ray_cluster.py", "Ray session")`` would allow Ray's own session directory;
each entry must still be needed (a test checks it).
"""

GAP = r"[\s#]+"
HISTORY = re.compile("|".join("(?:" + p.replace(" ", GAP) + ")" for p in PATTERNS), re.I)
"""The patterns, a space matching any run of blanks, line breaks and comment marks."""


def scanned_files() -> list[Path]:
    """The files whose text is scanned."""
    out: list[Path] = []
    for name in SCANNED:
        path = REPO / name
        if path.is_file():
            out.append(path)
        else:
            out += sorted(f for f in path.rglob("*") if f.is_file() and f.suffix in SUFFIXES
                          and "__pycache__" not in f.parts and f.stat().st_size < 2_000_000)
    return out


def allowed(rel: str, line: str) -> bool:
    """Whether the matched line of ``rel`` is a listed legitimate use."""
    return any(rel == f and phrase.lower() in line.lower() for f, phrase in ALLOWED)


def findings(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` where history wording starts in ``text`` (it may span lines)."""
    lines = text.splitlines()
    out = []
    for m in HISTORY.finditer(text):
        n = text.count("\n", 0, m.start()) + 1
        out.append((n, lines[n - 1].strip() if n <= len(lines) else ""))
    return out


def test_no_file_tells_the_development_history() -> None:
    bad = []
    for f in scanned_files():
        rel = f.relative_to(REPO).as_posix()
        if rel.startswith("examples/data/") or "/data/" in rel and f.suffix in {".csv", ".json"}:
            continue  # data, not prose
        for n, line in findings(f.read_text(encoding="utf-8", errors="replace")):
            if not allowed(rel, line):
                bad.append(f"{rel}:{n}: {line[:160]}")
    assert not bad, "development history in:\n" + "\n".join(bad)


def test_every_allowed_use_is_still_needed() -> None:
    texts = {f.relative_to(REPO).as_posix(): f.read_text(encoding="utf-8", errors="replace")
             for f in scanned_files()}
    for rel, phrase in ALLOWED:
        assert any(phrase.lower() in line.lower() for _, line in findings(texts.get(rel, ""))), \
            f"{rel}: {phrase!r} is no longer matched: remove it from ALLOWED"


@pytest.mark.parametrize("text", [
    "This was fixed in the last round.", "As discussed in issue #12, ...", "We tried a cache first.",
    "The solver previously took 3 s.", "a helper session added it",
    "Column generation on X now\n  converges.",
    "rules are refused, as before.", "TODO from the review: ...",
])
def test_the_scan_finds_history(text: str) -> None:
    assert findings(text)


@pytest.mark.parametrize("text", [
    "Helpers shared by the CLI commands.", "the process no longer runs", "Round 0 plays episodes.",
    "the best placement found so far", "a fixed seeded order", "Issues and pull requests welcome.",
])
def test_the_scan_leaves_present_tense_alone(text: str) -> None:
    assert not findings(text)
