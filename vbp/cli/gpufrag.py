"""``vbp gpu-frag``: the FGD paper's experiment on an openb pod list (unallocated GPU as demand arrives)."""

from __future__ import annotations

import json

import click

from packing.errors import InputError, Problem
from packing.report.text import gpu_frag_lines
from vbp.cli.common import PLOT_SUFFIXES, SEED, FiniteFloat
from vbp.cli.formats import FORMATS
from vbp.cli.outputs import check_outputs, force_option, progress_options

MAX_SEEDS = 1000
"""Most seeds one command runs."""


@click.command("gpu-frag")
@click.argument("data", metavar="DATA")
@click.option("--pods", default="default", show_default=True,
              help="Pod list: a name (default, multigpu50, gpuspec33, ...) or an openb_pod_list_*.csv file.")
@click.option("--policies", "policy_text", default=None,
              help="Comma-separated policies (default: gpu-random, gpu-dotprod, gpu-clustering, "
                   "gpu-packing, gpu-bestfit, fgd).")
@click.option("--seeds", type=click.IntRange(1, MAX_SEEDS), default=3, show_default=True,
              help="Number of workload seeds (seed, seed+1, ...).")
@click.option("--seed", type=SEED, default=42, show_default=True, help="First seed.")
@click.option("--until", type=click.IntRange(1, 1000), default=130, show_default=True,
              help="Arrived GPU demand to reach, in % of the cluster's GPU capacity.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (format vbp-gpu-frag/2).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Plot unallocated GPU against arrived demand (the paper's Fig. 7).")
@click.option("--bound/--no-bound", default=True, show_default=True,
              help="Also compute the offline bound (an LP: no scheduler leaves less GPU unallocated).")
@click.option("--bound-method", type=click.Choice(["config", "aggregate"]), default="config",
              show_default=True,
              help="config: per-node configuration LP (column generation, CP-SAT pricing) at "
                   "90/95/100%, several minutes per seed; aggregate: the LP by pod shape x node type "
                   "(about 1 s per seed, weaker).")
@click.option("--bound-time", type=FiniteFloat(0.0, 86400.0), default=300.0, show_default=True,
              help="Seconds of column generation per level and seed for --bound-method config (the bound "
                   "stays valid when it stops early, only looser).")
@force_option
@progress_options
def gpu_frag(data: str, pods: str, policy_text: str | None, seeds: int, seed: int, until: int,
             as_json: bool, plot: str | None, bound: bool, bound_method: str, bound_time: float,
             force: bool, progress: str | None) -> None:
    """Replay an openb pod list on DATA's GPU nodes with the FGD paper's policies.

    Pods arrive in a seeded random order and never leave, resampled from the list until the
    arrived GPU demand reaches --until % of capacity; the table gives the unallocated GPU % at
    90/95/100/130 % arrived (median and mean over seeds), next to the paper's published medians,
    and the offline bound: the least GPU any placement of the arrived pods could leave unallocated.
    """
    from packing.report.progress import echo
    from policies.registry import parse_named_policies

    check_outputs([(plot, "--plot", PLOT_SUFFIXES)], force=force, inputs=[data, pods])
    if seed + seeds - 1 > 2**32 - 1:
        raise InputError([Problem("--seed", str(seed),
                                  f"seed + seeds - 1 must be below 2^32 (--seeds {seeds})")])
    from packing.gpu.fgd_paper import DEFAULT_POLICIES, LEVELS

    labels, names = (parse_named_policies(policy_text) if policy_text is not None
                     else (list(DEFAULT_POLICIES), list(DEFAULT_POLICIES)))
    label_of = dict(zip(names, labels, strict=True))
    from packing.gpu.fgd_protocol import gpu_capacity
    from packing.loaders.openb import load_openb, pod_list_file
    from policies.fgd_eval import evaluate
    from solvers.bounds.gpu_bound import evaluate_bound

    pod_file, pod_name = pod_list_file(data, pods)

    inst = load_openb(pod_file, nodes="gpu")
    if gpu_capacity(inst) <= 0:
        raise InputError([Problem(str(pod_file), "", "the node list has no GPU")])
    seed_list = list(range(seed, seed + seeds))

    def report(name: str, s: int, run: object) -> None:
        echo(f"  seed {s}: {name} done in {getattr(run, 'seconds', 0.0):.1f} s", progress)

    results = evaluate(inst, names, seed_list, until / 100.0, progress=report)
    bres = evaluate_bound(inst, seed_list, until / 100.0, method=bound_method,
                          time_limit=bound_time) if bound else None
    bound_row = None if bres is None else bres.summary(LEVELS)
    rows = [res.summary(until, label_of.get(res.name, res.name)) for res in results]
    if plot is not None:
        from packing.report.plots import plot_unallocated

        plot_unallocated(plot, results, until, title=f"openb {pod_name}: {inst.n_hosts} GPU nodes, "
                         f"{len(seed_list)} seed(s), median", bound=None if bres is None else bres.curve())
    if as_json:
        click.echo(json.dumps({"format": FORMATS["gpu-frag"],
                               "data": data, "pod_list": pod_name, "nodes": inst.n_hosts,
                               "gpus": int(inst.host_gpus.sum()), "seeds": seed_list, "until": until,
                               "policies": rows, "unallocated_gpu_bound": bound_row}))
        return
    click.echo(f"openb {pod_name}: {inst.n_hosts} GPU nodes, {int(inst.host_gpus.sum())} GPUs; "
               f"seeds {seed_list[0]}..{seed_list[-1]}; arrivals until {until}% of GPU capacity")
    click.echo("unallocated GPU % at arrived 90/95/100/130 % (median over seeds; published medians "
               "of the FGD paper, 10 seeds)")
    click.echo("\n".join(gpu_frag_lines(rows, bound_row, LEVELS, bound_method)))
    if plot is not None:
        click.echo(f"plot written to {plot}")
