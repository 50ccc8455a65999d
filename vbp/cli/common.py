"""Helpers shared by the CLI commands: loading any instance path or built-in name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from packing.model import Instance


def load_any(path: str | Path | None, **options: Any) -> Instance:
    """The instance a command names: a file or data-set folder, or a built-in name.

    Args:
        path: an instance file (JSON/YAML), a ``.vbp`` file, a data-set folder (see
            :func:`packing.loaders.load_any`), or a built-in name such as ``sigma`` (used when no
            file of that name exists); ``None`` means the built-in ``sigma`` instance.
        **options: passed to the data-set loader.
    """
    from packing.builtin import BUILTIN_NAMES, builtin_instance
    from packing.loaders import load_any as _load_any

    if path is None:
        return builtin_instance("sigma")
    if str(path) in BUILTIN_NAMES and not Path(path).exists():
        return builtin_instance(str(path))
    return _load_any(path, **options)
