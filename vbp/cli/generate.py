"""``vbp generate``: write a seeded instance (``sigma`` or ``random``) to a JSON or YAML file."""

from __future__ import annotations

import sys

import click

from packing.errors import InputError, Problem
from packing.io import MAX_CELLS, MAX_CONTAINERS, MAX_RESOURCES, save_instance
from packing.model.instance import Instance
from vbp.cli.common import SEED, FiniteFloat
from vbp.cli.outputs import check_outputs, force_option


def _write(inst: Instance, out: str) -> None:
    save_instance(inst, out)  # refuses an instance vbp would refuse to read
    extra = ""
    if "planted_optimum" in inst.meta:
        extra = f", planted optimum {inst.meta['planted_optimum']} hosts"
    click.echo(f"{out}: {inst.name}: {inst.n_apps} apps, {inst.n_containers} containers, "
               f"{inst.n_hosts} hosts, {len(inst.rules) + len(inst.exclusions)} rules{extra}")


def _check_out(out: str, force: bool) -> None:
    """Check ``--out`` (suffix, writable folder, exists only with --force) before generating."""
    check_outputs([(out, "--out", None)], force=force)


# ``vbp generate multicluster`` lives in vbp/cli/generate_multicluster.py, registered in
# vbp.cli.COMMANDS as "generate multicluster"
@click.group()
def generate() -> None:
    """Generate a seeded instance (sigma, random, multicluster) and save it as JSON or YAML."""


@generate.command()
@click.option("--seed", type=SEED, default=0, show_default=True, help="Random seed.")
@click.option("--planted-hosts", type=click.IntRange(min=2, max=MAX_CONTAINERS // 16), default=None,
              help="Build the Sigma-like instance at scale instead: this many exactly filled hosts "
                   "(about 16 containers each; 310 gives about 5,000 containers).")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Output file (.json, .yaml or .yml).")
@force_option
def sigma(seed: int, planted_hosts: int | None, out: str, force: bool) -> None:
    """An Alibaba-Sigma-like instance: 30 apps, 96c512g hosts, caps and exclusions."""
    _check_out(out, force)
    from packing.generators.sigma import generate_sigma_large
    from vbp.instances import generate_sigma

    inst = (generate_sigma(seed=seed) if planted_hosts is None
            else generate_sigma_large(planted_hosts, seed=seed))
    _write(inst, out)


@generate.command()
@click.option("--apps", "n_apps", type=click.IntRange(min=1, max=MAX_CONTAINERS), default=10,
              show_default=True,
              help="Number of apps.")
@click.option("--containers", "n_containers", type=click.IntRange(min=1, max=MAX_CONTAINERS),
              default=100,
              show_default=True, help="Number of containers (at least the number of apps).")
@click.option("--resources", "n_resources", type=click.IntRange(min=1, max=MAX_RESOURCES),
              default=2,
              show_default=True, help="Number of resources.")
@click.option("--binding", type=click.Choice(["cpu", "two", "none"]), default="cpu",
              show_default=True, help="Which resources bind: CPU, CPU and memory, or none.")
@click.option("--rule-density", type=FiniteFloat(0.0, 1.0), default=0.0, show_default=True,
              help="Probability of a rule <A,B,k> per ordered pair of apps.")
@click.option("--exclusion-density", type=FiniteFloat(0.0, 1.0), default=0.0,
              show_default=True, help="Probability of an exclusion per pair of apps.")
@click.option("--cap-fraction", type=FiniteFloat(0.0, 1.0), default=0.0, show_default=True,
              help="Fraction of apps with an anti-affinity cap.")
@click.option("--tightness", type=FiniteFloat(0.0, 1.0, min_open=True), default=1.0,
              show_default=True, help="Hosts of a known packing / hosts offered per type.")
@click.option("--host-types", "n_host_types", type=click.IntRange(min=1, max=64), default=1,
              show_default=True, help="Number of host types (capacities halve).")
@click.option("--planted/--no-planted", default=False, show_default=True,
              help="Plant a known optimum (recorded in meta.planted_optimum).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Random seed.")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Output file (.json, .yaml or .yml).")
@force_option
def random(n_apps: int, n_containers: int, n_resources: int, binding: str, rule_density: float,
           exclusion_density: float, cap_fraction: float, tightness: float, n_host_types: int,
           planted: bool, seed: int, out: str, force: bool) -> None:
    """A random instance, optionally with a planted optimum."""
    from packing.generators.random import generate_random

    _check_out(out, force)
    if n_apps * n_resources > MAX_CELLS:
        raise InputError([Problem("<options>", "--apps/--resources", f"{n_apps:,} apps x "
                                  f"{n_resources:,} resources is {n_apps * n_resources:,} values, "
                                  f"more than the {MAX_CELLS:,} vbp reads (packing.io.MAX_CELLS)")])
    try:
        inst = generate_random(
            n_apps, n_containers, n_resources=n_resources, binding=binding,  # type: ignore[arg-type]
            rule_density=rule_density, exclusion_density=exclusion_density,
            cap_fraction=cap_fraction, tightness=tightness, n_host_types=n_host_types,
            planted=planted, seed=seed)
    except ValueError as e:
        click.echo(f"error: vbp generate random: {e}", err=True)
        sys.exit(2)
    _write(inst, out)

