"""Errors for bad input: every problem names the file, the field and the reason.

The CLI prints one line per :class:`Problem` and exits with status 2; library callers catch
:class:`InputError` and read :attr:`InputError.problems`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input.

    Attributes:
        source: the file (or other source) the problem is in, e.g. ``"sigma.json"``.
        field: where in it, e.g. ``"apps[3].demand[1]"`` or ``"line 12, column cpu_milli"``.
        reason: what is wrong, in words a user can act on.
    """

    source: str
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"{self.source}: {self.field}" if self.field else self.source
        return f"{where}: {self.reason}"


class InputError(ValueError):
    """Raised when an input file or object is malformed or invalid.

    Args:
        problems: every problem found (validation collects them all before raising).
    """

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems) or "invalid input")


def input_error(source: str, field: str, reason: str) -> InputError:
    """Build an :class:`InputError` with a single problem."""
    return InputError([Problem(str(source), field, reason)])
