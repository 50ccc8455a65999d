"""Policy code and training code live apart: no large module under ``policies/`` mixes them.

A module *acts* when it defines a public class with an ``act`` method (a policy); it *trains* when it
builds or steps an optimiser (``torch.optim``, ``.backward()``, ``.zero_grad()``) or imports a training
module (``*_train``). No module over :data:`MAX_LINES` lines does both, and no agent policy module
with a ``<agent>_train.py`` next to it does both at any size (its training lives in that module).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "policies"
MAX_LINES = 700


def _acts(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.ClassDef) and not node.name.startswith("_")
               and any(isinstance(f, ast.FunctionDef) and f.name == "act" for f in node.body)
               for node in tree.body)


def _trains(tree: ast.Module) -> list[str]:
    """What in the module is training (empty: nothing)."""
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module.startswith("torch.optim") or node.module.endswith("_train"):
                found.append(f"from {node.module} import")
            if node.module == "torch" and any(a.name == "optim" for a in node.names):
                found.append("from torch import optim")
        elif isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names
                      if a.name.startswith("torch.optim") or a.name.endswith("_train")]
        elif isinstance(node, ast.Attribute):
            if node.attr == "optim" and isinstance(node.value, ast.Name) and node.value.id == "torch":
                found.append("torch.optim")
            elif node.attr in ("backward", "zero_grad"):
                found.append(f".{node.attr}()")
    return found


def _modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT.parent)))
def test_no_large_module_mixes_policy_and_training(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    n_lines = len(text.splitlines())
    has_trainer = path.with_name(f"{path.stem}_train.py").is_file()
    if (n_lines > MAX_LINES or has_trainer) and _acts(tree):
        assert not _trains(tree), (f"{path.name} ({n_lines} lines) defines a policy and trains: "
                                   f"{sorted(set(_trains(tree)))}")


def test_the_check_can_fail() -> None:
    mixed = ast.parse("import torch\nclass P:\n    def act(self, o, m):\n        return 0\n"
                      "opt = torch.optim.Adam([])\n")
    assert _acts(mixed) and _trains(mixed) == ["torch.optim"]
    assert _trains(ast.parse("from policies.agents.eade_train import train\n"))
    assert not _acts(ast.parse("class _Run:\n    def act(self, o, m):\n        return 0\n"))
    assert len(_modules()) > 20 and (ROOT / "agents" / "eade.py") in _modules()
