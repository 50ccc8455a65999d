"""vbp's error family: bad input, policy misbehaviour and solver failures share one base class.

* :class:`VbpError` — the base: ``except VbpError`` catches every error vbp raises on purpose.
* :class:`InputError` — bad input (a file, a field, an option); every :class:`Problem` names the
  file, the field and the reason. The CLI prints one line per problem and exits with status 2.
  It is also a ``ValueError``, so callers that caught ``ValueError`` keep working.
* :class:`PolicyError` — a policy broke the contract (chose a host its mask forbids, returned a
  non-integer action, cards that do not fit).
* :class:`SolverError` — a solver could not run (a back-end is missing or failed).
* :class:`InfeasibleError` — the instance has no feasible placement, and a solver proved it.

Each class carries the exit status ``vbp`` ends with when it escapes a command
(:attr:`VbpError.exit_status`; the table is in ``docs/outputs.md``).
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


EXIT_OK = 0
"""Exit status: success."""
EXIT_BUG = 1
"""Exit status: an internal error (a bug in vbp, a policy breaking its contract, a broken back-end)."""
EXIT_INPUT = 2
"""Exit status: bad input (a file, a field, an option, a refused output path)."""
EXIT_INFEASIBLE = 3
"""Exit status: the instance has no feasible placement (proven)."""
EXIT_NO_PLACEMENT = 4
"""Exit status: no placement found within the time limit, and none proven impossible."""
EXIT_INTERRUPTED = 130
"""Exit status: interrupted by Ctrl-C (128 + SIGINT)."""


class VbpError(Exception):
    """Base of every error vbp raises on purpose (bad input, a misbehaving policy, a solver failure)."""

    exit_status: int = EXIT_BUG
    """The exit status of ``vbp`` when this error ends a command."""


class InputError(VbpError, ValueError):
    """Raised when an input file or object is malformed or invalid.

    Args:
        problems: every problem found (validation collects them all before raising).
    """

    exit_status = EXIT_INPUT

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


class InfeasibleError(VbpError):
    """The instance has no placement of every container, and a solver (or a check) proved it.

    Args:
        source: the instance's name or file.
        reason: why (the app and the rule or resource involved).
    """

    exit_status = EXIT_INFEASIBLE

    def __init__(self, source: str, reason: str) -> None:
        self.source, self.reason = source, reason
        super().__init__(f"{source}: infeasible: {reason}")

    def __reduce__(self) -> tuple[type[InfeasibleError], tuple[str, str]]:
        """Pickle by the arguments, so the error crosses processes intact."""
        return (type(self), (self.source, self.reason))


def input_error(source: str, field: str, reason: str) -> InputError:
    """Build an :class:`InputError` with a single problem."""
    return InputError([Problem(str(source), field, reason)])


__all__ = ["EXIT_BUG", "EXIT_INFEASIBLE", "EXIT_INPUT", "EXIT_INTERRUPTED", "EXIT_NO_PLACEMENT",
           "EXIT_OK", "InfeasibleError", "InputError", "PolicyError", "Problem",
           "SolverError", "VbpError", "input_error"]
