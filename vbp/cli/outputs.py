"""The overwrite rule of every command that writes files: ``--force``, and never over an input.

Each command checks its output paths with :func:`check_outputs` before any work: the suffix and
the folder (:func:`vbp.cli.common.check_output`), then :func:`packing.io.atomic.check_target`: an
output that is one of the command's input files (after symbolic and hard links) is refused even
with ``--force``; an existing file is refused unless ``--force`` is given. Exit status 2 either
way. The writing itself goes through :mod:`packing.io.atomic` (temporary file, then rename).
Progress goes to stderr only (:func:`progress_options`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from packing.errors import InputError, Problem, input_error
from packing.io.atomic import check_target, same_file
from vbp.cli.common import INSTANCE_SUFFIXES, check_output

F = TypeVar("F", bound=Callable[..., Any])

FORCE_HELP = "Replace output files that exist (never an input file)."


def force_option(fn: F) -> F:
    """Add ``--force`` (replace existing output files) to a command."""
    return click.option("--force", is_flag=True, help=FORCE_HELP)(fn)


def progress_options(fn: F) -> F:
    """Add ``-q/--quiet`` and ``--progress``: the ``progress`` mode of :mod:`packing.report.progress`."""
    fn = click.option("--progress", "progress", flag_value="always",
                      help="Progress on stderr even when it is not a terminal.")(fn)
    return click.option("--quiet", "-q", "progress", flag_value="never", help="No progress on stderr "
                        "[default: progress when stderr is a terminal].")(fn)


def check_outputs(outputs: Iterable[tuple[str | None, str, Sequence[str] | None]], *,
                  force: bool, inputs: Iterable[str | Path | None] = ()) -> None:
    """Check every output path of a command before any work.

    Args:
        outputs: ``(path, option, suffixes)`` per output; ``path`` ``None`` is skipped;
            ``suffixes`` ``None`` means instance suffixes (.json, .yaml, .yml).
        force: whether existing files may be replaced.
        inputs: the files the command reads (instance, placement, policy files...).

    Raises:
        InputError: a bad suffix or folder, an output that is an input, an existing file without
            ``force``, or two outputs naming the same file.
    """
    ins = [i for i in inputs if i is not None]
    given: list[tuple[str, str]] = []
    for path, option, suffixes in outputs:
        if path is None:
            continue
        check_output(path, option, INSTANCE_SUFFIXES if suffixes is None else suffixes)
        check_target(path, option, force=force, inputs=ins)
        for other, other_option in given:
            if Path(other).absolute() == Path(path).absolute() or same_file(other, path):
                raise InputError([Problem(path, option, f"is the same file as {other_option}")])
        given.append((path, option))


def check_checkpoint(checkpoint: str | None, *, resume: bool, suffix: str, force: bool,
                     outputs: Iterable[tuple[str | None, str]], inputs: Iterable[str | Path | None]) -> None:
    """Check ``--checkpoint FILE`` and ``--resume`` of a training command before any work.

    Raises:
        InputError: ``--resume`` without a checkpoint; a bad suffix or folder; an existing
            checkpoint without ``--resume`` or ``force``; a checkpoint that is an input or one of
            ``outputs`` (``(path, option)``).
    """
    if resume and checkpoint is None:
        raise input_error("--resume", "", "needs --checkpoint FILE (the checkpoint to continue from)")
    if checkpoint is None:
        return
    check_output(checkpoint, "--checkpoint", (suffix,))
    check_target(checkpoint, "--checkpoint", force=force or resume, inputs=[i for i in inputs if i],
                 remedy="pass --resume to continue from it, or --force to replace it")
    for other, option in outputs:
        if other is not None and (Path(checkpoint).absolute() == Path(other).absolute()
                                  or same_file(checkpoint, other)):
            raise input_error("--checkpoint", checkpoint, f"is the same file as {option}")


__all__ = ["FORCE_HELP", "check_checkpoint", "check_outputs", "force_option"]
