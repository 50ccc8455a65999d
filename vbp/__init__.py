"""vbp's application layer: the command line and the orchestration that combines the libraries.

Layers (imports only point down)::

    vbp            CLI, compare / sweep orchestration          (imports all below)
    policies       heuristics, swarm, learned agents           (imports packing)
    solvers        CP-SAT, column generation, PuLP, auto       (imports packing)
    packing        model, files, loaders, feasibility, checker, metrics, engine, policy contract

``policies`` and ``solvers`` never import each other; ``packing`` imports neither.

:func:`consolidate` and :func:`plan` are imported on first use, so that ``import vbp`` (and every
``vbp`` command) stays light: ``vbp solve`` needs neither. ``vbp.plan`` and ``vbp.consolidate``
are always these functions, as when they were imported eagerly (the modules of the same names
are ``sys.modules["vbp.plan"]`` and ``sys.modules["vbp.consolidate"]``).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vbp.consolidate import consolidate
    from vbp.plan import plan

__all__ = ["consolidate", "plan"]

_LAZY = {"consolidate": "vbp.consolidate", "plan": "vbp.plan"}


def __getattr__(name: str) -> Any:
    """Import :func:`consolidate` or :func:`plan` on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module 'vbp' has no attribute {name!r}")
    fn = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = fn
    return fn


class _Package(types.ModuleType):
    """The ``vbp`` package: importing ``vbp.plan`` (the module) keeps ``vbp.plan`` the function."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return  # the import system binding the submodule: the function stays (or comes later)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
