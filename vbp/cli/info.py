"""``vbp info``: describe an instance file, Kubernetes manifests, a ``.vbp`` file or a data-set folder."""

from __future__ import annotations

import json
from pathlib import Path

import click

from packing.model.describe import describe
from packing.report.text import info_lines
from vbp.cli.common import data_options, load_any
from vbp.cli.formats import tagged


@click.command()
@click.argument("paths", metavar="PATH...", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (format vbp-info/1) instead of text.")
@data_options
def info(paths: tuple[str, ...], as_json: bool) -> None:
    """Describe PATH: an instance, .vbp file, data-set folder, snapshot, or demand (several add up)."""
    d = describe(load_any(paths, pool="describe"), ", ".join(str(Path(p)) for p in paths))
    if as_json:
        click.echo(json.dumps(tagged("info", d), indent=1))
        return
    for line in info_lines(d):
        click.echo(line)
