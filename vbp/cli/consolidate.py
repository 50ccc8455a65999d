"""``vbp consolidate``: which nodes of a running cluster to remove (and add), proven, in waves."""

from __future__ import annotations

import json
from pathlib import Path

import click

from packing.errors import EXIT_INFEASIBLE, EXIT_INTERRUPTED, EXIT_NO_PLACEMENT
from vbp.cli.common import MAX_WORKERS, SEED, FiniteFloat
from vbp.cli.formats import tagged
from vbp.cli.outputs import check_outputs, force_option, progress_options

OUT_SUFFIXES = (".json", ".yaml", ".yml", ".sh")


@click.command()
@click.argument("snapshot")
@click.option("--hosts", "hosts", multiple=True, metavar="HOSTS",
              help="Host types (as vbp plan takes them): prices by node type (nodes are matched "
                   "by instance type; without prices nodes are counted), and with --replace the "
                   "types new nodes may be of. Repeatable.")
@click.option("--max-moves", default="all", show_default=True, metavar="M[,M...]",
              help="Most pods evicted: a number, several (0,5,20: each answer starts from the "
                   "one before, so more moves never cost more) or all.")
@click.option("--replace", is_flag=True, help="Let new nodes of the --hosts types be added (m -> n).")
@click.option("--type-label", default=None, metavar="LABEL",
              help="The node label naming node types [default: node.kubernetes.io/instance-type].")
@click.option("--time-limit", type=FiniteFloat(min=0.0, min_open=True), default=60.0,
              show_default=True, help="Seconds for the autoscalers' answers and the climb to no "
                                      "move limit (each budget of the ladder a share; a lower "
                                      "budget takes less).")
@click.option("--threads", type=click.IntRange(1, MAX_WORKERS), default=2, show_default=True,
              help="CP-SAT workers.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Search seed.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (vbp-consolidate/2).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Write the drain plan of the last budget: .sh (the kubectl commands) or "
                   ".json/.yaml (the answer and the commands).")
@force_option
@progress_options
def consolidate(snapshot: str, hosts: tuple[str, ...], max_moves: str, replace: bool,
                type_label: str | None, time_limit: float, threads: int, seed: int, as_json: bool,
                out: str | None, force: bool, progress: str | None) -> None:
    """Consolidate the cluster of SNAPSHOT (kubectl get nodes,pods,pdb -A -o yaml or -o json).

    Prints, per move budget, the cost and nodes before and after, a proven lower bound on the
    cheapest cluster reachable with that many evictions, what cluster-autoscaler and Karpenter
    would do, and for the last budget the nodes to remove and add and the evictions in waves that
    every PodDisruptionBudget allows. Exit status 0 with an answer, 2 on bad input, 3 when a
    budget is proven infeasible (naming the nodes and resources over), 4 when none was found.
    """
    from packing.cluster.answer import parse_budgets
    from packing.cluster.drain import kubectl_commands
    from packing.io.atomic import write_text
    from packing.io.documents import write_document
    from packing.report.progress import echo
    from packing.report.text import consolidate_lines
    from solvers import Aborted, run_stoppable
    from vbp.consolidate import consolidate as run

    parse_budgets(max_moves)
    check_outputs([(out, "--out", OUT_SUFFIXES)], force=force,
                  inputs=[snapshot, *(h for h in hosts if Path(h).exists())])
    try:
        result, stopped = run_stoppable(lambda stop: run(
            snapshot, list(hosts), max_moves=max_moves, replace=replace, time_limit=time_limit,
            threads=threads, seed=seed, type_label=type_label, stop=stop,
            progress=lambda line: echo(line, progress)))
    except Aborted:
        raise SystemExit(EXIT_INTERRUPTED) from None
    last = result.answers[-1]
    doc = tagged("consolidate", result.to_dict())
    if out is not None and last.cost_after is not None:
        lines = kubectl_commands(result.problem, last)
        if out.endswith(".sh"):
            write_text(Path(out), "#!/bin/sh\nset -e\n" + "\n".join(lines) + "\n")
        else:
            write_document(out, {**doc, "kubectl": lines})
    if as_json:
        click.echo(json.dumps(doc))
    else:
        click.echo("\n".join(consolidate_lines(result.to_dict())))
        if out is not None and last.cost_after is not None:
            click.echo(f"drain plan {out}")
    if stopped:
        raise SystemExit(EXIT_INTERRUPTED)
    if any(a.status == "infeasible" for a in result.answers):
        raise SystemExit(EXIT_INFEASIBLE)
    if any(a.cost_after is None for a in result.answers):
        raise SystemExit(EXIT_NO_PLACEMENT)
