"""The ``vbp`` command line.

Each subcommand lives in its own module under :mod:`vbp.cli` and is imported only when it
runs, so ``vbp --help`` stays fast and never imports torch or the solvers. Bad input
(:class:`packing.errors.InputError`) is printed as one line per problem and exits with status 2.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import click

from packing.errors import InputError

# name -> (module, attribute, one-line help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "info": ("vbp.cli.info", "info", "Describe an instance file, a .vbp file or a data-set folder."),
    "validate": ("vbp.cli.validate", "validate", "Check an instance file, and a placement against it."),
    "generate": ("vbp.cli.generate", "generate", "Generate a seeded instance (sigma or random)."),
    "solve": ("vbp.cli.solve", "solve", "Solve an instance exactly, with a proven lower bound."),
    "simulate": ("vbp.cli.simulate", "simulate", "Replay arrivals with an online policy."),
    "compare": ("vbp.cli.compare", "compare", "Compare online policies against the optimum."),
    "train": ("vbp.cli.train", "train", "Tune a policy (swarm) in the simulator."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Names of the subcommands whose modules exist."""
        return [n for n, (mod, _, _) in COMMANDS.items() if importlib.util.find_spec(mod)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the subcommand's module and return its click command."""
        if cmd_name not in COMMANDS:
            return None
        mod, attr, _ = COMMANDS[cmd_name]
        if importlib.util.find_spec(mod) is None:
            return None
        cmd: click.Command = getattr(importlib.import_module(mod), attr)
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the subcommands with their one-line help, without importing them."""
        rows = [(n, COMMANDS[n][2]) for n in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="vbp", prog_name="vbp")
def cli() -> None:
    """vbp: place containers on as few hosts as possible, and know how far from optimal you are."""


def main(argv: list[str] | None = None) -> Any:
    """Entry point of the ``vbp`` console script."""
    try:
        return cli.main(args=argv, prog_name="vbp", standalone_mode=True)
    except InputError as e:
        for p in e.problems:
            click.echo(f"error: {p}", err=True)
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    main()
