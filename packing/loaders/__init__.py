"""Loaders: instance files, VPSolver ``.vbp`` files and the real data sets, behind one ``load_any``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from packing.errors import input_error
from packing.io import load_instance
from packing.model import Instance


def load_any(path: str | Path, **options: Any) -> Instance:
    """Load an instance from an instance file (JSON/YAML), a ``.vbp`` file or a data-set folder.

    Args:
        path: the file or folder.
        **options: passed to the data-set loader (e.g. ``view="reduced"`` for Tianchi).

    Raises:
        InputError: the path is missing, of an unknown kind, or its content is invalid.
    """
    p = Path(path)
    if not p.exists():
        raise input_error(str(p), "", "no such file or folder")
    if p.is_file() and p.suffix.lower() in (".json", ".yaml", ".yml"):
        return load_instance(p)
    raise input_error(str(p), "", "not an instance file (.json, .yaml), a .vbp file or a known "
                      "data-set folder")
