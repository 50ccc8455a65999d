"""``vbp gpu-frag``: the FGD paper's experiment on an openb pod list (unallocated GPU as demand arrives)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click

from packing.errors import InputError, Problem
from vbp.cli.common import PLOT_SUFFIXES, SEED, FiniteFloat
from vbp.cli.formats import FORMATS
from vbp.cli.outputs import check_outputs, force_option

MAX_SEEDS = 1000
"""Most seeds one command runs."""


def _pods_option(data: str, pods: str) -> tuple[Path, str]:
    """The data folder and pod list name (a name such as ``default``, or a pod list file)."""
    from packing.loaders.openb import find_folder

    p = Path(pods)
    if p.suffix.lower() == ".csv":
        if not p.is_file() and p.name == pods:  # a bare file name: the one in DATA's folder
            folder = find_folder(data)
            if folder is not None and (folder / pods).is_file():
                p = folder / pods
        if not p.is_file():
            raise InputError([Problem(pods, "--pods", "no such pod list file (in the current folder or "
                                      "in DATA's folder)")])
        if not p.name.startswith("openb_pod_list_"):
            raise InputError([Problem(pods, "--pods", "expected a file named openb_pod_list_<name>.csv")])
        return p, p.stem.removeprefix("openb_pod_list_")
    folder = find_folder(data)
    if folder is None:
        raise InputError([Problem(data, "", "not an openb folder: no openb_node_list_*.csv in it or "
                                  "in its csv/ subfolder")])
    f = folder / f"openb_pod_list_{pods}.csv"
    if not f.is_file():
        have = sorted(x.stem.removeprefix("openb_pod_list_") for x in folder.glob("openb_pod_list_*.csv"))
        raise InputError([Problem(str(f), "--pods", f"no pod list {pods!r}; available: "
                                  f"{', '.join(have) or 'none'}")])
    return f, pods


def _fmt(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.2f}"


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
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (format vbp-gpu-frag/1).")
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
def gpu_frag(data: str, pods: str, policy_text: str | None, seeds: int, seed: int, until: int,
             as_json: bool, plot: str | None, bound: bool, bound_method: str, bound_time: float,
             force: bool) -> None:
    """Replay an openb pod list on DATA's GPU nodes with the FGD paper's policies.

    Pods arrive in a seeded random order and never leave, resampled from the list until the
    arrived GPU demand reaches --until % of capacity; the table gives the unallocated GPU % at
    90/95/100/130 % arrived (median and mean over seeds), next to the paper's published medians,
    and the offline bound: the least GPU any placement of the arrived pods could leave unallocated.
    """
    from policies.registry import parse_named_policies

    check_outputs([(plot, "--plot", PLOT_SUFFIXES)], force=force, inputs=[data, pods])
    if seed + seeds - 1 > 2**32 - 1:
        raise InputError([Problem("--seed", str(seed),
                                  f"seed + seeds - 1 must be below 2^32 (--seeds {seeds})")])
    from vbp.gpufrag import DEFAULT_POLICIES

    labels, names = (parse_named_policies(policy_text) if policy_text is not None
                     else (list(DEFAULT_POLICIES), list(DEFAULT_POLICIES)))
    label_of = dict(zip(names, labels, strict=True))
    pod_file, pod_name = _pods_option(data, pods)

    from packing.fgd_protocol import gpu_capacity
    from packing.loaders.openb import load_openb
    from solvers.gpu_bound import evaluate_bound
    from vbp.gpufrag import LEVELS, PAPER_NAMES, evaluate, plot_curves

    inst = load_openb(pod_file, nodes="gpu")
    if gpu_capacity(inst) <= 0:
        raise InputError([Problem(str(pod_file), "", "the node list has no GPU")])
    seed_list = list(range(seed, seed + seeds))

    def progress(name: str, s: int, run: object) -> None:
        if not as_json:
            click.echo(f"  seed {s}: {name} done in {getattr(run, 'seconds', 0.0):.1f} s", err=True)

    results = evaluate(inst, names, seed_list, until / 100.0, progress=progress)
    bres = evaluate_bound(inst, seed_list, until / 100.0, method=bound_method,
                          time_limit=bound_time) if bound else None
    bound_row: dict[str, Any] | None = None if bres is None else {
        "median": bres.at(LEVELS), "mean": bres.at(LEVELS, stat="mean"),
        "seconds_per_seed": round(float(sum(bres.seconds) / len(bres.seconds)), 3),
        "method": bound_method,
        "converged": None if bound_method != "config" else {
            str(lv): sum(bool(d[lv].converged) for d in bres.details if lv in d) for lv in LEVELS},
        "definition": ("per-node configuration LP (solvers.gpu_bound.GpuBound, solvers.gpu_config): "
                       "Lagrangian certificate from column generation with exact CP-SAT pricing, at "
                       "least the aggregated LP" if bound_method == "config" else
                       "LP relaxation by pod shape x node type (solvers.gpu_bound.GpuBound)")
                      + ": least unallocated GPU % any placement of the arrived pods can reach"}
    rows: list[dict[str, Any]] = []
    for res in results:
        med = res.at(LEVELS, until)
        mean = res.at(LEVELS, until, stat="mean")
        pub = res.published
        rows.append({
            "name": label_of.get(res.name, res.name),
            "paper_name": PAPER_NAMES.get(res.name),
            "unallocated_gpu_pct": med,
            "unallocated_gpu_pct_mean": mean,
            "frag_gpu_pct": res.at(LEVELS, until, what="frag"),
            "frag_rate_pct": res.at(LEVELS, until, what="frag_rate"),
            "per_seed_unallocated_100": [None if until < 100 else _num(r.levels("unallocated", until)[100])
                                         for r in res.runs],
            "published": None if pub is None else {
                "median": {str(lv): pub[i] for i, lv in enumerate(LEVELS)}, "mean_100": pub[4]},
            "seconds_per_seed": round(res.seconds, 3),
            "deployed_mean": sum(r.placed for r in res.runs) / len(res.runs),
            "rejected_mean": sum(r.rejected for r in res.runs) / len(res.runs),
        })
    if plot is not None:
        plot_curves(plot, results, until, title=f"openb {pod_name}: {inst.n_hosts} GPU nodes, "
                    f"{len(seed_list)} seed(s), median", bound=bres)
    if as_json:
        click.echo(json.dumps({"format": FORMATS["gpu-frag"],
                               "data": data, "pods": pod_name, "nodes": inst.n_hosts,
                               "gpus": int(inst.host_gpus.sum()), "seeds": seed_list, "until": until,
                               "policies": rows, "bound": bound_row}))
        return
    click.echo(f"openb {pod_name}: {inst.n_hosts} GPU nodes, {int(inst.host_gpus.sum())} GPUs; "
               f"seeds {seed_list[0]}..{seed_list[-1]}; arrivals until {until}% of GPU capacity")
    click.echo("unallocated GPU % at arrived 90/95/100/130 % (median over seeds; published medians "
               "of the FGD paper, 10 seeds)")
    head = f"{'policy':<15}" + "".join(f"{lv:>8}" for lv in LEVELS) + f"{'mean100':>9}" + \
        "  |" + "".join(f"{'pub' + str(lv):>8}" for lv in LEVELS) + f"{'d100':>7}{'s/seed':>8}"
    click.echo(head)
    click.echo("-" * len(head))
    for r in rows:
        med, mean, pub = r["unallocated_gpu_pct"], r["unallocated_gpu_pct_mean"], r["published"]
        line = f"{r['name']:<15}" + "".join(f"{_fmt(med[str(lv)]):>8}" for lv in LEVELS)
        line += f"{_fmt(mean['100']):>9}  |"
        if pub is None:
            line += "".join(f"{'-':>8}" for _ in LEVELS) + f"{'-':>7}"
        else:
            line += "".join(f"{_fmt(pub['median'][str(lv)]):>8}" for lv in LEVELS)
            d = None if med["100"] is None else med["100"] - pub["median"]["100"]
            line += f"{('-' if d is None else f'{d:+.2f}'):>7}"
        line += f"{r['seconds_per_seed']:>8.1f}"
        click.echo(line)
    if bound_row is not None:
        bm = bound_row["median"]
        click.echo("-" * len(head))
        click.echo(f"{'offline bound':<15}" + "".join(f"{_fmt(bm[str(lv)]):>8}" for lv in LEVELS)
                   + f"{_fmt(bound_row['mean']['100']):>9}  |" + " " * (8 * len(LEVELS) + 7)
                   + f"{bound_row['seconds_per_seed']:>8.1f}")
        what = ("per-node configuration LP" if bound_method == "config" else "LP by pod shape x node type")
        click.echo(f"(offline bound, {what}: no placement of the arrived pods leaves less GPU unallocated)")
    if plot is not None:
        click.echo(f"plot written to {plot}")


def _num(x: float) -> float | None:
    return None if not math.isfinite(x) else round(float(x), 2)
