"""``vbp simulate``: replay an instance's arrivals with one online policy."""

from __future__ import annotations

import json

import click

from packing.errors import input_error
from packing.model.coverage import cover_requests, uncovered_note
from packing.report.comparison import json_number
from packing.report.text import simulate_lines
from packing.sim.simulator import check_order_budget
from vbp.cli.common import (
    MAX_ORDERS,
    PLOT_SUFFIXES,
    SEED,
    autoscale_options,
    autoscaling,
    data_options,
    load_any,
    naming_file,
    prepare,
    uncovered_option,
)
from vbp.cli.formats import tagged
from vbp.cli.outputs import check_outputs, force_option, progress_options


@click.command()
@click.argument("paths", metavar="FILE...", nargs=-1, required=True)
@click.option("--policy", "policy_name", default="bf", show_default=True,
              help="Policy name (ff, bf, bf-bottleneck, wf, ffd, bfd, dot, l2, k8s-least, k8s-most, "
                   "k8s-balanced, k8s-rtcr, greedy, random, alignment) or a policy file.")
@click.option("--orders", type=click.IntRange(min=1, max=MAX_ORDERS), default=1, show_default=True,
              help="Arrival orders: the instance's own order, then seeded shuffles.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the orders and the policy.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (format vbp-simulate/1).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Write the placement of the first order's run (JSON or YAML by extension).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Plot hosts in use and allocation over the first order's run.")
@click.option("--repair-snapshot", is_flag=True,
              help="If the initial snapshot breaks constraints, re-place the containers that break them.")
@uncovered_option
@autoscale_options
@force_option
@progress_options
@data_options
def simulate(paths: tuple[str, ...], policy_name: str, orders: int, seed: int, as_json: bool, out: str | None,
             plot: str | None, repair_snapshot: bool, uncovered: str, force: bool,
             progress: str | None) -> None:
    """Replay FILE's arrivals (a file, a data set, `sigma`, or DEMAND... on counted --hosts) with one policy.

    Departures in the request stream are replayed; hosts are counted at the end and at the peak.
    A request stream that never requests some containers of an app (counting the snapshot's) is
    refused (exit 2) unless --uncovered drop or arrive says what to do with them.
    """
    from packing.feasibility.metrics import compute_metrics
    from packing.report.progress import bar as progress_bar
    from packing.report.text import allocation_columns
    from packing.sim.simulator import evaluate, sample_orders
    from policies.registry import get_policy, parse_named_policies

    labels, specs = parse_named_policies(policy_name, "--policy")
    if len(specs) != 1:
        raise input_error("--policy", policy_name, f"one policy, got {len(specs)} (vbp compare runs several)")
    label, spec, scale = labels[0], specs[0], autoscaling()
    check_outputs([(out, "--out", None), (plot, "--plot", PLOT_SUFFIXES)], force=force,
                  inputs=[*paths, spec])
    policy = get_policy(spec)
    loaded, path = load_any(paths, pool="open" if scale else "fixed"), ", ".join(paths)
    check_order_budget("--orders", orders, loaded.n_containers)
    with naming_file(loaded, path):
        inst, missing = cover_requests(prepare(loaded, repair_snapshot), uncovered)
        with progress_bar(orders, "simulate", "order", progress) as bar:
            samples = evaluate(policy, inst, sample_orders(inst, orders, seed), seed=seed, autoscale=scale,
                               progress=bar.update)
    note = uncovered_note(uncovered, missing)
    runs = []
    for i, r in enumerate(samples.results):
        m = compute_metrics(inst, r.placement)
        runs.append({"order": i, **r.summary(), "policy": label, "allocation": json_number(m.allocation),
                     "allocation_by_resource": {k: json_number(v)
                                                for k, v in m.allocation_by_resource.items()}})
    first = samples.results[0]
    if out is not None:
        from packing.io import save_placement

        save_placement(first.placement, inst, out)
    if plot is not None:
        from packing.report.plots import plot_trajectory

        tr, pool = first.trajectory, first.engine.pool
        plot_trajectory(plot, tr.time, tr.hosts_used, tr.allocation, inst.resources,
                        title=f"{inst.name}: {label}, own order", nodes=None if pool is None else pool.sizes)
    if as_json:
        click.echo(json.dumps(tagged("simulate", {
            "instance": inst.name, "policy": label, "orders": orders, "seed": seed,
            "hosts_mean": samples.mean, "hosts_min": samples.min, "hosts_max": samples.max,
            "runs": runs, "autoscale": scale and scale.to_dict(),
            "uncovered": {"mode": uncovered, "containers": sum(u.missing for u in missing)}})))
        if note is not None:
            click.echo(note, err=True)
        return
    click.echo(f"{inst.name}: {inst.n_apps} apps, {inst.n_containers} containers, {inst.n_hosts} hosts; "
               f"policy {label}, {orders} order(s), seed {seed}")
    click.echo("\n".join(simulate_lines(runs, allocation_columns(inst))))
    if orders > 1:
        click.echo(f"hosts: mean {samples.mean:.2f}, min {samples.min}, max {samples.max}, "
                   f"range {samples.range}")
    if first.n_rejected:
        by_app = ", ".join(f"{a} x{n}" for a, n in first.rejected_by_app(inst).items())
        click.echo(f"rejected in the first order: {by_app}")
    if note is not None:
        click.echo(note)
    if out is not None:
        click.echo(f"placement written to {out}")
    if plot is not None:
        click.echo(f"plot written to {plot}")
