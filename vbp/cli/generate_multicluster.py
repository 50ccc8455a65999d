"""``vbp generate multicluster``: the EADE-DDPG multi-cluster scenario from the Alibaba GPU traces."""

from __future__ import annotations

from collections.abc import Sequence

import click

from vbp.cli.common import SEED


@click.command("multicluster")
@click.option("--data", type=click.Path(exists=True, file_okay=False), default=None,
              help="Folder holding alibaba-gpu-v2020/ and alibaba-gpu-v2023/ (e.g. ../shared/data).")
@click.option("--machines", type=click.Path(exists=True), default=None,
              help="pai_machine_spec.csv or its folder (default: under --data).")
@click.option("--pods", type=click.Path(exists=True), default=None,
              help="An openb pod list or its csv folder (default: under --data).")
@click.option("--pod-list", default="openb_pod_list_default.csv", show_default=True,
              help="Pod list file name when --pods is a folder.")
@click.option("--clusters", type=click.IntRange(1, 10_000), default=16, show_default=True, help="Clusters N.")
@click.option("--nodes", type=click.IntRange(1, 10_000), default=4, show_default=True,
              help="GPU nodes per cluster P.")
@click.option("--tasks", type=click.IntRange(1, 1_000_000), default=220, show_default=True, help="Tasks K.")
@click.option("--gpu-type", "gpu_types", multiple=True, default=("T4",), show_default=True,
              help="Machine type(s) of the v2020 table to draw nodes from (repeatable).")
@click.option("--max-gpus-per-task", type=click.IntRange(1, 8), default=1, show_default=True,
              help="Most cards per task (1: the paper's one-card tasks).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Random seed.")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Output file (.json, .yaml or .yml).")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
def multicluster_command(data: str | None, machines: str | None, pods: str | None, pod_list: str,
                         clusters: int, nodes: int, tasks: int, gpu_types: Sequence[str],
                         max_gpus_per_task: int, seed: int, out: str, force: bool) -> None:
    """The EADE-DDPG multi-cluster scenario: N clusters x P GPU nodes (v2020), K openb tasks (v2023)."""
    import sys

    from packing.errors import InputError, Problem
    from packing.generators.multicluster import RESOURCES, generate_multicluster
    from packing.io import MAX_CELLS, MAX_HOSTS, save_instance
    from vbp.cli.outputs import check_outputs

    check_outputs([(out, "--out", None)], force=force)
    n_hosts = clusters * nodes
    if n_hosts > MAX_HOSTS or n_hosts * len(RESOURCES) > MAX_CELLS:
        raise InputError([Problem("<options>", "--clusters/--nodes", f"{clusters:,} clusters x "
                                  f"{nodes:,} nodes is {n_hosts:,} hosts; vbp reads at most "
                                  f"{min(MAX_HOSTS, MAX_CELLS // len(RESOURCES)):,} with "
                                  f"{len(RESOURCES)} resources (packing.io.MAX_HOSTS, MAX_CELLS)")])
    if clusters * nodes > 100_000:  # hosts the scenario holds
        from packing.errors import input_error

        raise input_error("--clusters/--nodes", f"{clusters} x {nodes}",
                          f"{clusters * nodes:,} GPU nodes; at most 100,000 (clusters x nodes)")
    m_src, p_src = machines or data, pods or data
    if m_src is None or p_src is None:
        click.echo("error: vbp generate multicluster: give --data, or both --machines and --pods", err=True)
        sys.exit(2)
    try:
        inst = generate_multicluster(m_src, p_src, clusters=clusters, nodes=nodes, tasks=tasks, seed=seed,
                                     gpu_types=tuple(gpu_types), pod_list=pod_list,
                                     max_gpus_per_task=max_gpus_per_task)
    except (OSError, ValueError) as e:
        click.echo(f"error: vbp generate multicluster: {e}", err=True)
        sys.exit(2)
    save_instance(inst, out)
    click.echo(f"{out}: {inst.name}: {clusters} clusters x {nodes} nodes ({inst.n_hosts} hosts, "
               f"{int(inst.host_gpus.sum())} cards), {inst.n_containers} tasks in {inst.n_apps} shapes, "
               f"offered GPU load {inst.meta.get('offered_gpu_load')}")


__all__ = ["multicluster_command"]
