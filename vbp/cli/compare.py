"""``vbp compare``: every online policy against the solver's optimum and bound, on the same orders."""

from __future__ import annotations

import json
from typing import Any

import click

from packing.errors import InputError, Problem, input_error
from packing.model.coverage import cover_requests, uncovered_note
from packing.model.instance import Instance
from packing.report.text import pool_lines
from packing.sim.simulator import check_order_budget
from vbp.cli.common import (
    MAX_ORDERS,
    MAX_SECONDS,
    PLOT_SUFFIXES,
    SEED,
    FiniteFloat,
    autoscale_options,
    autoscaling,
    data_options,
    executor_options,
    load_any,
    naming_file,
    prepare,
    uncovered_option,
)
from vbp.cli.formats import tagged
from vbp.cli.outputs import check_outputs, force_option, progress_options
from vbp.compare import (
    json_number,
    run_compare,
)


@click.command()
@click.argument("paths", metavar="[FILE...]", nargs=-1)
@click.option("--policies", "policy_list", default=None,
              help="Comma-separated policies: registry names, policy files, or NAME=SPEC; a row is "
                   "named by the registry name, the file's stem, or NAME (unique) [default: every "
                   "heuristic, and the shipped policies trained for the instance (swarm-sigma on "
                   "sigma)].")
@click.option("--orders", type=click.IntRange(min=1, max=MAX_ORDERS), default=8, show_default=True,
              help="Arrival orders per policy: the instance's own order, then seeded shuffles.")
@click.option("--time-limit", type=FiniteFloat(0.0, MAX_SECONDS, min_open=True), default=20.0,
              show_default=True, help="Solver budget in seconds.")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the orders, policies, solver.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (format vbp-compare/3).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a plot: hosts per policy with the optimum and bound, and per-host use.")
@progress_options
@click.option("--repair-snapshot", is_flag=True,
              help="If the initial snapshot breaks constraints, re-place the containers that break them.")
@click.option("--snapshots", type=click.IntRange(min=0, max=MAX_ORDERS), default=0, show_default=True,
              help="Replay this many resampled snapshots instead of shuffled orders (instances "
                   "with a snapshot only; an error otherwise).")
@click.option("--keep", type=FiniteFloat(0.0, 1.0), default=0.9, show_default=True,
              help="With --snapshots: probability that a snapshot container stays in place.")
@click.option("--keep-departures", is_flag=True,
              help="Replay departures too (default: every container arrives and stays, as the solver "
                   "assumes).")
@uncovered_option
@autoscale_options
@executor_options
@force_option
@data_options
def compare(paths: tuple[str, ...], policy_list: str | None, orders: int, time_limit: float, seed: int,
            as_json: bool, plot: str | None, progress: str | None, repair_snapshot: bool,
            snapshots: int, keep: float, keep_departures: bool, uncovered: str, executor_kind: str,
            workers: int | None, ray_address: str | None, force: bool) -> None:
    """Compare online policies with the optimum on FILE (default: the built-in `sigma` instance).

    FILE is an instance, .vbp file, data set, `sigma` or DEMAND on counted --hosts. Every policy replays the
    same orders (common random numbers); the same seed gives the same table. Hosts are counted at the end
    of each run; the optimum is the offline solve of all containers at once, so departures in the request
    stream are dropped unless --keep-departures is given. --executor process or ray spreads the runs
    over processes or a Ray cluster; the table is the same.

    Bad input exits with status 2 before any policy runs: every option is checked before FILE is
    read; every policy file and learned agent is checked against the instance (an agent trained
    for another number of resources or clusters is named) before the optimum is solved; a request
    stream that leaves containers out is refused unless --uncovered says what to do with them.
    An instance with no placement of every container (the solver proves it) exits with status 3
    and the reason `vbp solve` prints (the app and the rule or resource), since there is no
    optimum to compare with.
    """
    from click.core import ParameterSource

    from packing.report.progress import shown
    from packing.report.text import comparison_lines
    from packing.sim.evaluation import make_executor
    from packing.sim.simulator import static_view
    from policies.registry import default_policies, parse_named_policies, policy_label

    if snapshots == 0 and click.get_current_context().get_parameter_source("keep") not in (
            None, ParameterSource.DEFAULT):
        raise input_error("--keep", f"{keep:g}", "only with --snapshots (it is the share of a resampled "
                          "snapshot's containers that stay)")
    labels, names = parse_named_policies(policy_list) if policy_list is not None else (None, None)
    scale = autoscaling()
    check_outputs([(plot, "--plot", PLOT_SUFFIXES)], force=force, inputs=[*paths, *(names or [])])
    executor = make_executor(executor_kind, workers, ray_address)  # checks the options; starts nothing
    loaded, path = load_any(paths, pool="open" if scale else "fixed"), ", ".join(paths) or None
    check_order_budget("--orders", orders, loaded.n_containers)
    if names is None:
        names = default_policies(loaded.name)
    if labels is None:
        labels = [policy_label(n) for n in names]
    with naming_file(loaded, path):
        if snapshots and loaded.initial is None:
            raise InputError([Problem(loaded.name, "--snapshots", f"the instance has no snapshot "
                                      f"(no 'initial' placement) to resample; --snapshots "
                                      f"{snapshots} needs one (or replay orders with --orders)")])
        inst = prepare(loaded, repair_snapshot)
        inst, missing = cover_requests(inst, uncovered)
        if not keep_departures:
            inst = static_view(inst)
        pick = "bf" if "bf" in names else names[0]
        with executor:
            res, rows, records = run_compare(inst, names, orders, time_limit, seed,
                                             quiet=not shown(progress), snapshots=snapshots,
                                             keep=keep, executor=executor, labels=labels,
                                             keep_placement=pick if plot is not None else None,
                                             autoscale=scale)
    note = uncovered_note(uncovered, missing)
    if note is not None and as_json:
        click.echo(note, err=True)
    if plot is not None:
        from packing.feasibility.metrics import host_utilisation
        from packing.report.plots import plot_compare

        first = records[pick][0]
        placement = first.placement(inst)
        util = host_utilisation(inst, placement)[_used(inst, placement)]
        plot_compare(plot, [r.name for r in rows], [r.hosts_mean for r in rows],
                     [r.hosts_min for r in rows], [r.hosts_max for r in rows],
                     optimum=res.hosts if res.objective_kind == "hosts" else None,
                     bound=res.bound if res.objective_kind == "hosts" else None,
                     utilisation=util, resources=inst.resources,
                     utilisation_title=f"{first.policy}, own order: per-host utilisation",
                     title=f"{inst.name}: hosts used over {orders} orders",
                     proven=res.status == "optimal")
    opt = {"status": res.status, "objective": json_number(res.objective),
           "bound": json_number(res.bound),
           "bound_kind": res.bound_kind, "objective_kind": res.objective_kind, "hosts": res.hosts}
    if as_json:
        click.echo(json.dumps(tagged("compare", {
            "instance": inst.name, "orders": orders, "seed": seed, "optimum": opt,
            "policies": [r.to_dict() for r in rows], "autoscale": scale and scale.to_dict(),
            "uncovered": {"mode": uncovered, "containers": sum(u.missing for u in missing)}})))
        return
    what_runs = (f"{snapshots} resampled snapshot(s) (keep {keep:g})"
                 if snapshots else f"{orders} order(s) (own order first)")
    click.echo("\n".join(comparison_lines(inst, res, rows, what_runs, seed)))
    if scale is not None:
        click.echo("\n".join(pool_lines(rows, scale.scale_down_delay)))
    if note is not None:
        click.echo(note)
    if plot is not None:
        click.echo(f"plot written to {plot}")


def _used(inst: Instance, placement: Any) -> Any:
    import numpy as np

    h = placement.host_array(inst)
    used = np.zeros(inst.n_hosts, dtype=bool)
    used[h[h >= 0]] = True
    return used
