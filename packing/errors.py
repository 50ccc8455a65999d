"""vbp's error family: bad input, policy misbehaviour and solver failures share one base class.

* :class:`VbpError` — the base: ``except VbpError`` catches every error vbp raises on purpose.
* :class:`InputError` — bad input (a file, a field, an option); every :class:`Problem` names the
  file, the field and the reason. The CLI prints one line per problem and exits with status 2.
  It is also a ``ValueError``, so callers that caught ``ValueError`` keep working.
* :class:`PolicyError` — a policy broke the contract (chose a host its mask forbids, returned a
  non-integer action, cards that do not fit).
* :class:`SolverError` — a solver could not run (a back-end is missing or failed).
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


class VbpError(Exception):
    """Base of every error vbp raises on purpose (bad input, a misbehaving policy, a solver failure)."""


class InputError(VbpError, ValueError):
    """Raised when an input file or object is malformed or invalid.

    Args:
        problems: every problem found (validation collects them all before raising).
    """

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems) or "invalid input")

    def __reduce__(self) -> tuple[type[InputError], tuple[list[Problem]], dict[str, object]]:
        """Pickle by the problems (not by the message), so an error crosses processes intact.

        Without this, pickling (a process pool, Ray) rebuilt the error from its message, and the
        problems came back as a list of characters. Extra attributes (``__dict__``) travel too.
        """
        state = {k: v for k, v in self.__dict__.items() if k != "problems"}
        return (type(self), (list(self.problems),), state)


class PolicyError(VbpError, RuntimeError):
    """A policy broke the contract: an action outside the mask, or GPU cards that do not fit."""


class SolverError(VbpError, RuntimeError):
    """A solver could not run: a back-end is missing or failed (not: no solution in the time limit)."""


def input_error(source: str, field: str, reason: str) -> InputError:
    """Build an :class:`InputError` with a single problem."""
    return InputError([Problem(str(source), field, reason)])


__all__ = ["InputError", "PolicyError", "Problem", "SolverError", "VbpError", "input_error"]
