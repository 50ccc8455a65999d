"""Every module, object and file of the project that the README and docs name exists under that name.

A dotted name that starts with one of the packages (``packing.sim.engine``, ``solvers.solve``,
``policies.dag.SjfCriticalPath``) must import, or be an attribute of what imports; a path such as
``packing/feasibility/checker.py`` or ``benchmarks/bench_plan.py`` must be a file of the repository.
Files move with their names in the docs, or this test fails.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SCRIPTS = [*sorted((REPO / ".ci").iterdir()), *sorted((REPO / "scripts").glob("*.sh"))]
"""The CI and setup scripts: the test files and modules they name exist too."""
PACKAGES = ("packing", "policies", "solvers", "vbp")
DOTTED = re.compile(r"(?<![\w./-])((?:" + "|".join(PACKAGES) + r")(?:\.[A-Za-z_]\w*)+)(?![\w/-])")
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join((*PACKAGES, "benchmarks", "examples", "tests", "scripts"))
                  + r")/[\w./-]*\.(?:py|sh))\b")
def resolves(name: str) -> bool:
    """Whether ``name`` is a module, or an attribute (chain) of the longest module prefix."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError as e:
            if e.name is not None and not e.name.startswith(parts[0]):
                pytest.skip(f"{name}: needs {e.name}")
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):  # a dataclass field without a default is an annotation only
                return attr in getattr(obj, "__annotations__", {}) and attr == parts[-1]
            obj = getattr(obj, attr)
        return True
    return False


def names(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    # a trailing dot ends a sentence, not a name
    return {m.rstrip(".") for m in DOTTED.findall(text) if not m.endswith(".md")}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_dotted_names_in_the_docs_exist(page: Path) -> None:
    bad = sorted(n for n in names(page) if not resolves(n))
    assert not bad, f"{page.name} names what does not exist: {bad}"


@pytest.mark.parametrize("page", PAGES + SCRIPTS, ids=lambda p: p.name)
def test_paths_in_the_docs_exist(page: Path) -> None:
    found = set(PATH.findall(page.read_text(encoding="utf-8")))
    bad = sorted(p for p in found if "*" not in p and not (REPO / p).exists())
    assert not bad, f"{page.name} names files that do not exist: {bad}"


REF = re.compile(r":(?:mod|func|class|data|meth|attr|exc):`~?((?:" + "|".join(PACKAGES) + r")(?:\.\w+)+)`")
"""A cross-reference of a docstring to something of the project."""


@pytest.mark.parametrize("package", PACKAGES)
def test_docstring_references_exist(package: str) -> None:
    bad = sorted(f"{f.relative_to(REPO)}: {n}" for f in sorted((REPO / package).rglob("*.py"))
                 for n in set(REF.findall(f.read_text(encoding="utf-8"))) if not resolves(n))
    assert not bad, f"docstrings refer to what does not exist: {bad}"


def test_the_check_catches_a_moved_module() -> None:
    assert resolves("packing.sim.engine.Engine") and resolves("solvers.solve")
    assert not resolves("packing.engine") and not resolves("solvers.exact.cpsat.no_such_thing")
    assert DOTTED.findall("see `packing.sim.engine` and packing/sim/engine.py.") == ["packing.sim.engine"]
