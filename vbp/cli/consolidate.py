"""``vbp consolidate``: which nodes of a running cluster to remove (and add), proven, in waves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from packing.errors import EXIT_INFEASIBLE, EXIT_INTERRUPTED, EXIT_NO_PLACEMENT
from vbp.cli.common import MAX_WORKERS, SEED, FiniteFloat
from vbp.cli.formats import tagged
from vbp.cli.outputs import check_outputs, force_option

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
              show_default=True, help="Budget per move budget, seconds.")
@click.option("--threads", type=click.IntRange(1, MAX_WORKERS), default=2, show_default=True,
              help="CP-SAT workers.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Search seed.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (vbp-consolidate/1).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Write the drain plan of the last budget: .sh (the kubectl commands) or "
                   ".json/.yaml (the answer and the commands).")
@force_option
def consolidate(snapshot: str, hosts: tuple[str, ...], max_moves: str, replace: bool,
                type_label: str | None, time_limit: float, threads: int, seed: int, as_json: bool,
                out: str | None, force: bool) -> None:
    """Consolidate the cluster of SNAPSHOT (kubectl get nodes,pods,pdb -A -o yaml or -o json).

    Prints, per move budget, the cost and nodes before and after, a proven lower bound on the
    cheapest cluster reachable with that many evictions, what cluster-autoscaler and Karpenter
    would do, and for the last budget the nodes to remove and add and the evictions in waves that
    every PodDisruptionBudget allows. Exit status 0 with an answer, 2 on bad input, 3 when a
    budget is proven infeasible (naming the nodes and resources over), 4 when none was found.
    """
    from packing.cluster.drain import kubectl_commands
    from packing.io.atomic import write_text
    from packing.io.documents import write_document
    from solvers import Aborted, run_stoppable
    from vbp.consolidate import consolidate as run
    from vbp.consolidate import parse_budgets

    parse_budgets(max_moves)
    check_outputs([(out, "--out", OUT_SUFFIXES)], force=force,
                  inputs=[snapshot, *(h for h in hosts if Path(h).exists())])
    try:
        result, stopped = run_stoppable(lambda stop: run(
            snapshot, list(hosts), max_moves=max_moves, replace=replace, time_limit=time_limit,
            threads=threads, seed=seed, type_label=type_label, stop=stop))
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
        click.echo("\n".join(render(result.to_dict())))
        if out is not None and last.cost_after is not None:
            click.echo(f"drain plan {out}")
    if stopped:
        raise SystemExit(EXIT_INTERRUPTED)
    if any(a.status == "infeasible" for a in result.answers):
        raise SystemExit(EXIT_INFEASIBLE)
    if any(a.cost_after is None for a in result.answers):
        raise SystemExit(EXIT_NO_PLACEMENT)


def _g(x: float | None) -> str:
    return "-" if x is None else f"{x:g}"


def render(d: dict[str, Any]) -> list[str]:
    """The text report: a row per budget, the autoscalers' rows, the last answer's changes."""
    r0 = d["results"][0]
    lines = [f"snapshot {d['snapshot']}: {d['nodes']} nodes, cost {_g(r0['cost_before'])}"
             f"{'' if d['priced'] else ' (nodes counted: no prices)'}; {d['pods']} pods "
             f"({d['daemon_pods']} DaemonSet pods, {len(r0['pinned'])} pinned, "
             f"{len(r0['placed']) + len(r0['unplaced'])} pending)"]
    rows = [("max moves", "by", "status", "cost", "nodes", "bound", "gap", "moves", "waves", "time")]
    for r in d["results"]:
        rows.append(("all" if r["max_moves"] is None else str(r["max_moves"]), "vbp", r["status"],
                     _g(r["cost_after"]), _g(r["nodes_after"]), _g(r["bound"]),
                     "-" if r["gap"] is None else f"{100 * r['gap']:.2f}%", str(r["moves"]),
                     str(len(r["waves"])), f"{r['seconds']:.1f}s"))
        rows += [("", b["name"], "", _g(b["cost_after"]), str(b["nodes_after"]), "", "",
                  str(b["moves"]), "", "") for b in r["baselines"]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    r = d["results"][-1]
    if r["cost_after"] is not None:
        best = min([b["cost_after"] for b in r["baselines"]] or [r["cost_after"]])
        lines.append(f"autoscalers {_g(best)}, vbp {_g(r['cost_after'])}, no plan below {_g(r['bound'])}")
    if r["reason"]:
        lines.append(f"{r['status']}: {r['reason']}")
    lines += [f"remove {n}" for n in r["removed"]] + [f"add    {a['node']} ({a['type']})" for a in r["added"]]
    for k, wave in enumerate(r["waves"]):
        for i in wave:
            e = r["evictions"][i]
            lines.append(f"wave {k + 1}: {e['namespace']}/{e['pod']}: {e['from']} -> {e['to']}")
    lines += [f"pending {p['pod']} -> {p['node']}" for p in r["placed"]]
    lines += [f"cannot place {p['pod']}: {p['reason']}" for p in r["unplaced"]]
    return lines
