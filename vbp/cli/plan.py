"""``vbp plan``: how many hosts of which types a demand needs, with headroom, per growth scenario."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from packing.errors import InputError, Problem
from solvers import METHOD_NAMES
from vbp.cli.common import MAX_WORKERS, PLOT_SUFFIXES, SEED, FiniteFloat
from vbp.cli.outputs import check_outputs, force_option, progress_options


@click.command()
@click.argument("demand", metavar="[DEMAND...]", nargs=-1)
@click.option("--hosts", "hosts", multiple=True, required=True, metavar="HOSTS",
              help="Host types: a CSV or YAML list (name,cpu,memory[,gpu][,price][,count]"
                   "[,pods][,zone][,labels...]) or inline [NAME=]16c64g[8gpu][:count=N][:price=P]"
                   "[:pods=N][:KEY=VALUE] (also NAME:16c64g[:PRICE[:COUNT]] and 16c64g:COUNT); "
                   "repeatable.")
@click.option("--zones", default=None, metavar="LIST",
              help="Make every host type without a zone one type per zone: a,b,c (each named "
                   "<type>-<zone>, labelled topology.kubernetes.io/zone).")
@click.option("--headroom", default=None, metavar="SHARE",
              help="Keep this share of every host free: 15% (cpu and memory) or "
                   "cpu=20%,memory=10%,gpu=25%.")
@click.option("--reserve", default=None, metavar="AMOUNTS",
              help="Per-host overhead taken off first (system daemons): 100m,128Mi or "
                   "cpu=100m,memory=128Mi.")
@click.option("--growth", default="1", show_default=True, metavar="LIST",
              help="Demand multipliers, one plan each (replicas rounded up): 1,1.25,1.5,2.")
@click.option("--growth-by", default=None, metavar="APP=M,...",
              help="Per-app multipliers under every --growth (over the CSV's growth column): "
                   "web=2,db=1; app a gets ceil(replicas * m_a * growth) replicas.")
@click.option("--time-limit", type=FiniteFloat(min=0.0, min_open=True), default=60.0,
              show_default=True,
              help="Budget per scenario (the count bounds, then the solver), seconds.")
@click.option("--method", type=click.Choice(METHOD_NAMES), default="auto", show_default=True,
              help="Solver method.")
@click.option("--threads", type=click.IntRange(1, MAX_WORKERS), default=2, show_default=True,
              help="Solver threads per scenario.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Solver seed.")
@click.option("--executor", "executor_kind", type=click.Choice(["serial", "process", "ray"]),
              default="serial", show_default=True,
              help="Where the growth scenarios run: this process, local processes, or Ray.")
@click.option("--workers", type=click.IntRange(1, MAX_WORKERS), default=None,
              help="Processes (process) or CPUs of a local Ray (ray) [default: all cores].")
@click.option("--ray-address", default=None, metavar="ADDRESS",
              help="With --executor ray: the cluster to connect to [default: $RAY_ADDRESS, "
                   "else a local Ray].")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (format vbp-plan/3).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Write the placement (JSON/YAML); with several scenarios one file each, "
                   "named <stem>-x<growth><suffix>.")
@click.option("--k8s-out", "k8s_out", type=click.Path(dir_okay=False), default=None,
              help="Write the plan as Kubernetes objects (YAML): a Node per host used, a Pod "
                   "per container with spec.nodeName; several scenarios as with --out.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Plot hosts (or cost) against growth with the proven bound (PNG, SVG, PDF).")
@click.option("--current", default=None, metavar="PLACEMENT",
              help="The running cluster: a placement file naming hosts <type>#<i> of HOSTS, "
                   "an instance file with 'initial', or a cluster snapshot (nodes by type). Its "
                   "hosts are kept (already paid); the plan says which hosts to add. Running "
                   "containers stay unless --max-moves.")
@click.option("--max-moves", default=None, metavar="M|all",
              help="With --current: let at most this many running containers move, or any "
                   "number with 'all' (default: none move).")
@click.option("--n-plus-one", is_flag=True,
              help="Plan so that losing any one host leaves room for its containers on the "
                   "others (every rule kept); adds spare hosts as needed.")
@click.option("--verify-only", is_flag=True,
              help="With --current: plan nothing, check that the running cluster holds the "
                   "demand (and, with --n-plus-one, survives losing any host).")
@force_option
@progress_options
def plan(demand: tuple[str, ...], hosts: tuple[str, ...], zones: str | None, headroom: str | None,
         reserve: str | None, growth: str, growth_by: str | None, time_limit: float, method: str,
         threads: int, seed: int, executor_kind: str, workers: int | None, ray_address: str | None,
         as_json: bool, out: str | None, k8s_out: str | None, plot: str | None, current: str | None,
         max_moves: str | None, n_plus_one: bool, verify_only: bool, force: bool,
         progress: str | None) -> None:
    """Plan the hosts DEMAND needs: the fewest hosts (or the cheapest mix, with prices), proven.

    DEMAND is a deployments CSV (name,replicas,cpu,memory[,gpu][,max_per_host], Kubernetes
    quantities), an instance file, Kubernetes manifests or a cluster snapshot; several add up.
    Without DEMAND, --current SNAPSHOT (kubectl get nodes,pods,pdb -A -o yaml) is the demand.
    A host type without a count is available as many times as needed. Prints, per growth
    scenario, the status, hosts, cost, proven lower bound and gap, and per host type the hosts,
    cost, utilisation, stranded capacity and bottleneck. Exit status: 0 when every scenario has
    a plan, 2 on bad input, 3 when a scenario is proven infeasible (with --verify-only: the
    running cluster does not hold the demand, or with --n-plus-one a host's loss is proven not
    absorbed), 4 when a scenario has no plan within --time-limit and nothing is proven (or the
    N+1 check could not decide).
    """
    from packing.plan.model import parse_growth
    from packing.plan.result import scenario_path
    from packing.report.progress import bar as progress_bar
    from packing.report.text import plan_text
    from vbp.plan import plan as run_plan

    if ray_address and executor_kind != "ray":
        raise InputError([Problem("--ray-address", ray_address, "only with --executor ray")])
    if not demand and current is None:
        raise click.UsageError("give DEMAND, or --current SNAPSHOT (its pods are the demand)")
    growths = parse_growth(growth)
    outs = ([(str(scenario_path(out, g, len(growths) > 1)), "--out", None) for g in growths]
            if out is not None else [])
    k8s_outs = ([(str(scenario_path(k8s_out, g, len(growths) > 1)), "--k8s-out", K8S_SUFFIXES)
                 for g in growths] if k8s_out is not None else [])
    check_outputs([*outs, *k8s_outs, (plot, "--plot", PLOT_SUFFIXES)], force=force,
                  inputs=[*demand, *(h for h in hosts if Path(h).exists()), current])
    with progress_bar(len(growths), "plan", "scenario", progress) as bar:
        result = run_plan(list(demand), list(hosts), headroom=headroom, reserve=reserve,
                          growth=growths, growth_by=growth_by, time_limit=time_limit, method=method,
                          threads=threads, seed=seed, executor=executor_kind, workers=workers,
                          address=ray_address, current=current, max_moves=max_moves,
                          n_plus_one=n_plus_one, verify_only=verify_only,
                          zones=tuple((zones or "").split(",")), progress=bar.update)
    from packing.io.atomic import write_texts
    from packing.plan.result import plan_files

    try:
        files = plan_files(result.scenarios, out, k8s_out)
    except ValueError as e:
        raise InputError([Problem(str(k8s_out), "--k8s-out", str(e))]) from None
    write_texts([(p, text) for p, text, _ in files])  # all the files of the run, or none
    written = [str(p) for p, _, what in files if what == "placement"]
    k8s_written = [(str(p), what) for p, _, what in files if what != "placement"]
    if plot is not None:
        plot_plan(plot, result.scenarios)
    if as_json:
        d = result.to_dict()
        if written or k8s_written:
            d["outputs"] = {"placements": written, "kubernetes": [w for w, _ in k8s_written]}
        click.echo(json.dumps(d))
    else:
        click.echo(plan_text(result))
        for w in written:
            click.echo(f"placement  {w}")
        for w, what in k8s_written:
            click.echo(f"kubernetes {w} ({what})")
        if plot is not None:
            click.echo(f"plot       {plot}")
    raise SystemExit(result.exit_status())  # 3 proven infeasible or not N+1, 4 nothing proven


K8S_SUFFIXES = (".yaml", ".yml")
"""Suffixes ``--k8s-out`` accepts."""




def plot_plan(path: str | Path, scenarios: Sequence[Any]) -> Path:
    """Hosts (or cost, with prices) against growth, the proven bound as a band up to the plan."""
    from packing.report.plots import plot_growth

    done = [s for s in scenarios if s.placement is not None]
    cost = bool(done) and done[0].objective_kind == "cost"
    return plot_growth(path, [s.growth for s in done], [float(s.cost if cost else s.hosts) for s in done],
                       [float(s.bound) for s in done], cost=cost)
