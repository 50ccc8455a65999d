r"""The ``vbp`` command line.

Each subcommand lives in its own module under :mod:`vbp.cli` and is imported only when it
runs, so ``vbp --help`` stays fast and never imports torch or the solvers.

Exit statuses, the same in every command (:data:`EXIT_STATUSES`; :func:`main` is the last line
of defence; ``vbp`` never shows a traceback unless ``--debug`` is given):

* 0: success;
* 1: an internal error: a bug in vbp (one line naming the exception type and message; ``vbp
  --debug ...`` prints the traceback), a policy breaking its contract
  (:class:`~packing.errors.PolicyError`) or a solver back-end failing
  (:class:`~packing.errors.SolverError`);
* 2: bad input (:class:`packing.errors.InputError`, one ``error: file: field: reason`` line per
  problem) or a bad command line (click's usage errors);
* 3: the instance has no feasible placement, proven (:class:`~packing.errors.InfeasibleError`);
* 4: no placement found within the time limit, nothing proven (``solve`` and ``plan``, after
  printing what they have);
* 130: interrupted (Ctrl-C).

Control characters in messages are escaped (``\n``, ``\x1b``), so a name cannot forge lines.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from typing import NoReturn

import click

from packing.errors import (
    EXIT_BUG,
    EXIT_INFEASIBLE,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_NO_PLACEMENT,
    EXIT_OK,
    InputError,
    VbpError,
)
from packing.io import escape_control

# name -> (module, attribute, one-line help); "group sub" names a subcommand of a group command,
# added to the group when the group is loaded (no command module imports another)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "info": ("vbp.cli.info", "info", "Describe an instance file, a .vbp file or a data-set folder."),
    "validate": ("vbp.cli.validate", "validate", "Check an instance file, and a placement against it."),
    "generate": ("vbp.cli.generate", "generate", "Seeded instances: sigma, random or multicluster."),
    "solve": ("vbp.cli.solve", "solve", "Solve an instance exactly, with a proven lower bound."),
    "simulate": ("vbp.cli.simulate", "simulate", "Replay arrivals with an online policy."),
    "compare": ("vbp.cli.compare", "compare", "Compare online policies against the optimum."),
    "train": ("vbp.cli.train", "train", "Train a policy: swarm, rl (multi-cluster agents), gcn."),
    "sweep": ("vbp.cli.sweep", "sweep", "Run instances x policies x orders into one table (CSV/Parquet)."),
    "gpu-frag": ("vbp.cli.gpufrag", "gpu_frag", "FGD paper: unallocated GPU as openb demand arrives."),
    "jobs": ("vbp.cli.jobs", "jobs", "DAG batch jobs (JobFusion): partition, compare."),
    "plan": ("vbp.cli.plan", "plan", "Plan capacity: fewest hosts or cheapest mix, headroom, growth."),
    "consolidate": ("vbp.cli.consolidate", "consolidate",
                    "Remove (and add) nodes of a running cluster: proven, in PDB-safe waves."),
    "train rl": ("vbp.cli.train_rl", "rl", "Train a multi-cluster agent (EADE-DDPG, EADE-M, SB3)."),
    "generate multicluster": ("vbp.cli.generate_multicluster", "multicluster_command",
                              "The EADE-DDPG multi-cluster scenario from the Alibaba GPU traces."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Names of the subcommands whose modules exist."""
        return [n for n, (mod, _, _) in COMMANDS.items()
                if " " not in n and importlib.util.find_spec(mod)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the subcommand's module and return its click command (with its subcommands)."""
        if cmd_name not in COMMANDS or " " in cmd_name:
            return None
        mod, attr, _ = COMMANDS[cmd_name]
        if importlib.util.find_spec(mod) is None:
            return None
        cmd: click.Command = getattr(importlib.import_module(mod), attr)
        if isinstance(cmd, click.Group):
            add_subcommands(cmd, cmd_name)
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the subcommands with their one-line help, without importing them."""
        rows = [(n, COMMANDS[n][2]) for n in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def add_subcommands(group: click.Group, name: str) -> None:
    """Add the subcommands :data:`COMMANDS` registers as ``"<name> <sub>"`` to ``group``."""
    for key, (mod, attr, _) in COMMANDS.items():
        parent, _, sub = key.rpartition(" ")
        if parent == name and sub not in group.commands and importlib.util.find_spec(mod):
            group.add_command(getattr(importlib.import_module(mod), attr), sub)


_STATE: dict[str, bool] = {"debug": False}
"""Whether ``--debug`` was given (set by the group callback, read by :func:`main`)."""

INTERRUPTED = EXIT_INTERRUPTED
"""Exit status after Ctrl-C (128 + SIGINT, as shells report it)."""

EXIT_STATUSES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "success"),
    (EXIT_BUG, "internal error (a bug in vbp, a policy breaking its contract, a failing solver "
               "back-end)"),
    (EXIT_INPUT, "bad input or command line (a file, a field, an option, a refused output path)"),
    (EXIT_INFEASIBLE, "the instance has no feasible placement (proven)"),
    (EXIT_NO_PLACEMENT, "no placement found within the time limit, nothing proven"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"),
)
"""Every exit status of ``vbp``, with its meaning (the table of ``vbp --help``)."""

EPILOG = "\b\nExit statuses (every command):\n" + "\n".join(
    f"  {code:<4} {text}" for code, text in EXIT_STATUSES)
"""The epilog of ``vbp --help``: the exit statuses (``\\b``: click keeps the lines as they are)."""


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=EPILOG)
@click.version_option(package_name="vbp-toolkit", prog_name="vbp")
@click.option("--debug", is_flag=True,
              help="Print the full traceback of an unexpected error (a bug in vbp).")
def cli(debug: bool) -> None:
    """vbp: place containers on as few hosts as possible, and know how far from optimal you are."""
    _STATE["debug"] = debug


def _error(text: str) -> None:
    """Print one ``error:`` line on stderr, control characters escaped."""
    click.echo(f"error: {escape_control(text)}", err=True)


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the ``vbp`` console script; always ends with :class:`SystemExit`.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).
    """
    _STATE["debug"] = bool(os.environ.get("VBP_DEBUG"))
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        rv = cli.main(args=args, prog_name="vbp", standalone_mode=False)
    except InputError as e:
        for p in e.problems:
            _error(str(p))
        sys.exit(EXIT_INPUT)
    except click.ClickException as e:
        object.__setattr__(e, "message", escape_control(e.message))  # no forged lines
        e.show()
        sys.exit(e.exit_code)
    except (click.Abort, KeyboardInterrupt) as e:
        why = str(e.__cause__ if isinstance(e, click.Abort) and e.__cause__ else e)
        _error(f"interrupted: {why}" if why else "interrupted")  # which files were written, if any
        sys.exit(INTERRUPTED)
    except VbpError as e:  # infeasible, no placement, a policy or solver failure: one line each
        for line in str(e).splitlines() or [type(e).__name__]:
            _error(line)
        sys.exit(e.exit_status)
    except BrokenPipeError:  # the reader went away (``vbp ... | head``)
        sys.stderr.close()
        sys.exit(EXIT_BUG)
    except MemoryError:
        _error("out of memory")
        sys.exit(EXIT_BUG)
    except Exception as e:  # the last line of defence: a bug, in one line
        if _STATE["debug"]:
            traceback.print_exc()
        msg = str(e).strip().splitlines()
        first = msg[0] if msg else ""
        if len(first) > 300:
            first = first[:300] + "..."
        _error(f"internal error (a bug in vbp, please report it): {type(e).__name__}"
               + (f": {first}" if first else "")
               + ("" if _STATE["debug"] else "; run 'vbp --debug ...' for the traceback"))
        sys.exit(EXIT_BUG)
    sys.exit(rv if isinstance(rv, int) else EXIT_OK)


if __name__ == "__main__":  # pragma: no cover
    main()
