"""Helpers shared by the CLI commands: loading any instance path, and raising input errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from packing.model import Instance


def load_any(path: str | Path, **options: Any) -> Instance:
    """Load an instance from a file or data-set folder (see :func:`packing.loaders.load_any`)."""
    from packing.loaders import load_any as _load_any

    return _load_any(path, **options)
