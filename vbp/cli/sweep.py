"""``vbp sweep``: instances x policies x orders on one executor, written as one tidy table."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import click

from packing.sim.simulator import check_order_budget
from vbp.cli.common import (
    MAX_ORDERS,
    SEED,
    FiniteFloat,
    data_options,
    executor_options,
    load_any,
    naming_file,
    prepare,
    uncovered_option,
)
from vbp.cli.outputs import force_option, progress_options


@click.command()
@click.argument("paths", metavar="INSTANCES...", nargs=-1, required=True)
@click.option("--policies", "policy_list", default=None,
              help="Comma-separated policies: registry names, policy files, or NAME=SPEC; the "
                   "policy column holds the registry name, the file's stem, or NAME (unique) "
                   "[default: every heuristic].")
@click.option("--optimum", is_flag=True,
              help="Solve each instance once (up to --time-limit), as compare does (fewest hosts or "
                   "cost; most tasks deployed for a multi-cluster scenario), and add the columns "
                   "optimum, bound, excess (each run over the optimum), optimum_status and "
                   "optimum_kind.")
@click.option("--time-limit", type=FiniteFloat(min=0.0, min_open=True), default=20.0,
              show_default=True, help="With --optimum: solver budget per instance, in seconds.")
@click.option("--orders", type=click.IntRange(min=1, max=MAX_ORDERS), default=8, show_default=True,
              help="Arrival orders per instance and policy: the own order, then seeded shuffles.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the orders and policies.")
@click.option("--out", type=click.Path(), required=True,
              help="The table: .csv, or .parquet (needs pyarrow).")
@click.option("--repair-snapshot", is_flag=True,
              help="If an initial snapshot breaks constraints, re-place the containers that break them.")
@click.option("--keep-departures", is_flag=True,
              help="Replay departures too (default: every container arrives and stays, as in compare).")
@progress_options
@uncovered_option
@executor_options
@force_option
@data_options
def sweep(paths: tuple[str, ...], policy_list: str | None, optimum: bool, time_limit: float,
          orders: int, seed: int, out: str,
          repair_snapshot: bool, keep_departures: bool, progress: str | None, uncovered: str,
          executor_kind: str, workers: int | None, ray_address: str | None, force: bool) -> None:
    """Run every policy on every instance over the same orders; write one row per run to --out.

    INSTANCES are instance files, .vbp files, data sets, `sigma` or DEMAND on counted --hosts. Columns:
    instance, policy, order (0 = the instance's own order), seed, hosts, hosts_peak, cost,
    rejected, delayed, deployed, allocation (Sigma allocation rate of the bottleneck resource),
    seconds, executor, waiting (never placed: the policy chose WAIT), departed, bottleneck (the
    resource of allocation); with --optimum
    also optimum, bound, excess, optimum_status and optimum_kind (the optimum of `vbp compare`: hosts,
    cost, or deployed for a multi-cluster scenario; an instance proven infeasible exits with
    status 3 before any run). The same seed gives the same numbers on every executor.

    Bad input exits with status 2 before any solve or run starts, naming the file: a policy file
    or learned agent of another shape than an instance (resources, clusters); an instance whose
    request stream leaves containers out is refused unless --uncovered drop or arrive is given
    (then a note per instance says how many containers were dropped or made to arrive first).
    An --out that exists is refused unless --force is given (never one of INSTANCES). The table
    is written when every run is done, to a temporary file renamed over --out: an interruption
    leaves any previous table as it was.
    """
    from packing.io.atomic import check_target
    from packing.model.coverage import cover_requests, uncovered_note
    from packing.report.progress import bar as progress_bar
    from packing.report.progress import echo
    from packing.sim.evaluation import make_executor
    from packing.sim.simulator import static_view
    from policies.registry import DEFAULT_COMPARE, parse_named_policies
    from policies.runner import check_policies, resolve_policy
    from vbp.sweep import labels, output_format, run_sweep, solve_optima, write_table

    # every option is checked before any instance is loaded or any run starts
    row_names, names = (parse_named_policies(policy_list) if policy_list is not None
                        else (list(DEFAULT_COMPARE), list(DEFAULT_COMPARE)))
    fmt = output_format(out)
    check_target(out, "--out", force=force, inputs=[*paths, *names])
    executor = make_executor(executor_kind, workers, ray_address)  # starts nothing yet
    for n in names:
        resolve_policy(n)  # policy files are read now
    insts = []
    notes = []
    naming = contextlib.ExitStack()  # engine errors name the file, not the instance
    for p in paths:
        loaded = load_any(p)
        check_order_budget("--orders", orders, loaded.n_containers)
        naming.enter_context(naming_file(loaded, p))
        with naming_file(loaded, p):
            inst, missing = cover_requests(prepare(loaded, repair_snapshot), uncovered)
        note = uncovered_note(uncovered, missing)
        if note is not None:
            notes.append(f"note: {p}: {note.removeprefix('note: ')}")
        insts.append(inst if keep_departures else static_view(inst))
    pairs = list(zip(labels([i.name for i in insts], list(paths)), insts, strict=True))
    for inst in insts:
        check_policies(names, inst, seed)  # an agent of another shape: before any solve or run
    optima = solve_optima(pairs, time_limit, seed, lambda line: echo(line, progress)) if optimum else None
    t0 = time.perf_counter()
    with naming, executor, progress_bar(len(pairs) * len(names) * orders, f"sweep ({executor.name})",
                                        "run", progress) as bar:
        rows = run_sweep(pairs, names, orders, seed, executor, bar.update,
                         policy_labels=row_names, optima=optima)
    write_table(rows, out, fmt)
    for note in notes:
        click.echo(note)
    for label, res in (optima or {}).items():
        found = "none found" if res.objective is None else f"{res.objective:g}"
        click.echo(f"optimum {label}: {found} {res.objective_kind} ({res.status}, "
                   f"{'upper ' if res.bound_kind == 'upper' else ''}bound {res.bound:g})")
    click.echo(f"{len(rows)} runs ({len(pairs)} instance(s) x {len(names)} policies x {orders} orders) "
               f"on {executor.name} in {time.perf_counter() - t0:.1f} s; wrote {Path(out)}")
