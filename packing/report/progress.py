"""Progress on stderr: one rule for every command that can run long.

Progress (a bar, or a line per step) goes to stderr only, so a command's table and JSON on stdout
are the same with or without it. The mode says when it is shown:

* ``None`` or ``"auto"``: when stderr is a terminal; not in a pipe or a log file (the convention of
  tqdm's ``disable=None`` and of pip's progress bars);
* ``"always"`` (``--progress``): shown anyway, e.g. into a CI log;
* ``"never"`` (``-q/--quiet``): hidden.

Example:
    >>> from packing.report.progress import bar
    >>> with bar(3, "runs", "run", "never") as b:   # silent
    ...     for _ in range(3):
    ...         b.update(1)
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm

MODES = ("auto", "always", "never")
"""The progress modes (``None`` is ``"auto"``)."""


def shown(mode: str | None, stream: TextIO | None = None) -> bool:
    """Whether progress is shown on ``stream`` (default: the current ``sys.stderr``) in ``mode``.

    Raises:
        ValueError: an unknown mode.
    """
    mode = mode or "auto"
    if mode not in MODES:
        raise ValueError(f"progress mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode != "auto":
        return mode == "always"
    isatty = getattr(sys.stderr if stream is None else stream, "isatty", None)
    return bool(isatty is not None and isatty())


def bar(total: int | None, desc: str, unit: str, mode: str | None, *, initial: int = 0,
        leave: bool = True) -> tqdm:
    """A tqdm bar on stderr, disabled unless :func:`shown` (``total`` ``None``: a counter)."""
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=sys.stderr, leave=leave,
                disable=not shown(mode))


def echo(text: str, mode: str | None) -> None:
    """One progress line on stderr, when :func:`shown`."""
    if shown(mode):
        print(text, file=sys.stderr, flush=True)


__all__ = ["MODES", "bar", "echo", "shown"]
