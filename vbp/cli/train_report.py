"""The end of every ``vbp train`` command: the held-out comparison, and a warning when training lost."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from policies.agents.heldout import HeldOut


def echo_held_out(cmp: HeldOut, remedy: str, *, line: bool = True) -> None:
    """End of a training command: the held-out comparison (one line) and, when worse, a warning on stderr.

    Args:
        cmp: the comparison.
        remedy: what the warning suggests.
        line: print the comparison's line on stdout (off with ``--json``, whose object holds it).
    """
    if line:
        click.echo(cmp.line())
    warning = cmp.warning(remedy)
    if warning is not None:
        click.echo(warning, err=True)


__all__ = ["echo_held_out"]
