"""``vbp train swarm``: tune a scoring policy's weights by particle swarm optimisation."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.group()
def train() -> None:
    """Tune a policy in the simulator."""


@train.command("swarm")
@click.argument("path", required=False, default="sigma")
@click.option("--particles", default=16, show_default=True, help="Swarm size.")
@click.option("--iters", default=30, show_default=True, help="Maximum PSO iterations.")
@click.option("--samples", default=8, show_default=True,
              help="Training orders per iteration (the same for every particle).")
@click.option("--held-out", default=20, show_default=True, help="Held-out orders for the report.")
@click.option("--seed", default=0, show_default=True, help="Seed of orders and optimiser.")
@click.option("--w", "inertia", default=0.7, show_default=True, help="PSO inertia weight w.")
@click.option("--c1", default=1.5, show_default=True, help="PSO self-learning coefficient c1.")
@click.option("--c2", default=1.5, show_default=True, help="PSO social-learning coefficient c2.")
@click.option("--patience", default=10, show_default=True,
              help="Stop after this many iterations without improvement (0: never).")
@click.option("--optimizer", type=click.Choice(["pso", "de"]), default="pso", show_default=True,
              help="pso (pyswarms GlobalBestPSO) or de (SciPy differential evolution).")
@click.option("--backend", type=click.Choice(["local", "process", "ray"]), default="local",
              show_default=True,
              help="Where candidates are evaluated: this process (serial executor), local processes, "
                   "or Ray. The same seed gives the same policy on every backend.")
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True,
              help="Processes (process) or CPUs of a local Ray (ray).")
@click.option("--ray-address", default=None, metavar="ADDRESS",
              help="With --backend ray: the cluster to connect to [default: $RAY_ADDRESS, else a "
                   "local Ray].")
@click.option("--init", "init", type=click.Choice(["bf", "ff", "none"]), default="bf",
              show_default=True, help="Start the swarm around this policy's weights.")
@click.option("--checkpoint", type=click.Path(), default=None,
              help="Checkpoint file, written after every iteration.")
@click.option("--resume", is_flag=True, help="Continue from --checkpoint if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--repair-snapshot", is_flag=True,
              help="If the initial snapshot breaks constraints, re-place the containers that break them.")
@click.option("--out", type=click.Path(), required=True, help="Where to save the tuned policy (JSON).")
def swarm(path: str, particles: int, iters: int, samples: int, held_out: int, seed: int,
          inertia: float, c1: float, c2: float, patience: int, optimizer: str, backend: str,
          workers: int, ray_address: str | None, init: str, checkpoint: str | None, resume: bool,
          as_json: bool, repair_snapshot: bool, out: str) -> None:
    """Tune a swarm scoring policy on PATH (an instance, data set, or `sigma`); save it to --out."""
    from tqdm import tqdm

    from packing.errors import input_error
    from policies.swarm.optimizer import DESettings, IterationRecord, PSOSettings
    from policies.swarm.train import TrainSettings, train_swarm
    from vbp.cli.common import load_any
    from vbp.cli.simulate import prepare

    if ray_address and backend != "ray":
        raise input_error("--ray-address", ray_address, "only with --backend ray")
    if backend == "ray":
        from packing.evaluation import RayExecutor

        RayExecutor(ray_address, workers)  # fails now, before loading, if Ray is missing
    inst = prepare(load_any(path), repair_snapshot)
    settings = TrainSettings(samples=samples, held_out=held_out, seed=seed, backend=backend,  # type: ignore[arg-type]
                             workers=workers, address=ray_address,
                             optimizer=optimizer,  # type: ignore[arg-type]
                             init=None if init == "none" else init)
    opt = (PSOSettings(n_particles=particles, iters=iters, w=inertia, c1=c1, c2=c2, seed=seed,
                       patience=patience)
           if optimizer == "pso" else DESettings(iters=iters, seed=seed))
    bar = tqdm(total=iters, desc=f"{optimizer} on {inst.name}", unit="iter", file=sys.stderr,
               disable=None)

    def progress(rec: IterationRecord) -> None:
        bar.update(1)
        bar.set_postfix(best=f"{rec.best_cost:.3f}")

    try:
        res = train_swarm(inst, opt, settings, checkpoint=checkpoint, resume=resume,
                          callback=progress)
    finally:
        bar.close()
    res.policy.save(out)
    rows = [h.to_dict() for h in res.held_out]
    if as_json:
        click.echo(json.dumps({"policy": str(Path(out)), "weights": res.policy.to_dict()["weights"],
                               "features": res.policy.to_dict()["features"],
                               "initial_cost": res.initial_cost, "best_cost": res.best_cost,
                               "iterations": len(res.history), "seconds": round(res.seconds, 2),
                               "held_out": rows}, indent=1))
        return
    click.echo(f"trained on {inst.name}: {len(res.history)} iterations in {res.seconds:.1f} s; "
               f"training cost {res.initial_cost:.3f} -> {res.best_cost:.3f}")
    click.echo(f"saved {out}: {res.policy!r}")
    click.echo(f"held-out orders ({held_out}):")
    click.echo(f"  {'policy':<10} {'hosts mean':>10} {'min':>5} {'max':>5} {'range':>6} "
               f"{'allocation':>11}")
    for r in rows:
        click.echo(f"  {r['policy']:<10} {r['hosts_mean']:>10.2f} {r['hosts_min']:>5} "
                   f"{r['hosts_max']:>5} {r['hosts_range']:>6} {r['allocation_mean']:>10.2%}")
