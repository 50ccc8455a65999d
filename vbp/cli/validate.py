"""``vbp validate``: check an instance file, and optionally a placement against it.

Loading already checks every field, the limits, the names, the request stream and the structure
of the initial placement (see :mod:`packing.io`). On top of that ``validate`` runs the checker
on the initial placement (the snapshot must keep every constraint: capacity, caps, rules, GPU
cards, and list every container of the apps it names), explains an instance that cannot be
placed, and checks ``--placement``.
"""

from __future__ import annotations

import json
import sys

import click

from packing.errors import EXIT_INFEASIBLE, EXIT_INPUT
from packing.feasibility.checker import check
from packing.io import escape_control
from packing.io.documents import read_document
from packing.io.placement_file import placement_from_dict
from vbp.cli.common import data_options, load_any
from vbp.cli.formats import tagged


@click.command()
@click.argument("paths", metavar="PATH...", nargs=-1, required=True, type=click.Path())
@data_options
@click.option("--placement", "placement_path", type=click.Path(), default=None,
              help="A placement file to check against the instance.")
@click.option("--require-all/--allow-unplaced", default=False, show_default=True,
              help="Whether unplaced containers count as violations.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (format vbp-validate/1) on stdout; the exit status is "
                   "the same.")
def validate(paths: tuple[str, ...], placement_path: str | None, require_all: bool, as_json: bool) -> None:
    """Validate PATH (and a placement), one line per problem.

    A data-set folder is read with the same options as ``vbp solve`` (``--view full``,
    ``--hosts 64c128g``, ...), so a placement is checked against the instance it was solved for.

    Exit status: 0 if valid; 2 if the file, its initial placement or the placement is bad; 3 if
    the instance itself is fine but has no placement of every container (proven; the reason
    names the app and the rule or resource).
    """
    inst, path = load_any(paths, pool="describe"), ", ".join(paths)
    problems: list[str] = []
    from packing.feasibility.explain import explain_infeasibility

    if inst.initial is not None:
        problems += [f"{path}: initial: {v}" for v in check(inst, inst.initial)]
    infeasible = [f"{path}: infeasible: {r}" for r in explain_infeasibility(inst)]
    if placement_path is not None:
        doc = read_document(placement_path)
        pl = placement_from_dict(doc, inst, placement_path)
        problems += [f"{placement_path}: {v}" for v in check(inst, pl, require_all=require_all)]
        named = doc.get("instance")  # a mapping: placement_from_dict refused anything else
        if isinstance(named, str) and named != inst.name:  # the checker is the judge; a hint only
            click.echo(f"warning: {escape_control(placement_path)} was made for instance "
                       f"{escape_control(repr(named))}, this is {escape_control(repr(inst.name))}", err=True)
    if as_json:
        click.echo(json.dumps(tagged("validate", {
            "path": path, "valid": not (problems or infeasible), "feasible": not infeasible,
            "apps": inst.n_apps, "containers": inst.n_containers, "hosts": inst.n_hosts,
            "requests": len(inst.requests),
            "initial": None if inst.initial is None else inst.initial.n_placed,
            "placement": placement_path, "problems": problems, "infeasible": infeasible})))
    if problems or infeasible:
        if not as_json:
            for line in problems + infeasible:
                click.echo(f"error: {escape_control(line)}", err=True)
        sys.exit(EXIT_INPUT if problems else EXIT_INFEASIBLE)
    if as_json:
        return
    msg = f"{path}: valid ({inst.n_apps} apps, {inst.n_containers} containers, {inst.n_hosts} hosts)"
    if inst.initial is not None:
        msg += f"; initial placement ({inst.initial.n_placed} containers) feasible"
    if inst.requests:
        msg += f"; {len(inst.requests)} requests"
    if placement_path is not None:
        msg += f"; {placement_path}: feasible"
    click.echo(escape_control(msg))
