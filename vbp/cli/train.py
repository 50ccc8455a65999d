"""``vbp train swarm``: tune a scoring policy's weights by particle swarm optimisation."""

from __future__ import annotations

import importlib.util
import json
import shlex
from pathlib import Path
from typing import Any, NoReturn

import click

from packing.errors import input_error
from packing.sim.simulator import check_order_budget
from vbp.cli.common import (
    MAX_ORDERS,
    MAX_WORKERS,
    SEED,
    FiniteFloat,
    given_command,
    ray_address_option,
)
from vbp.cli.formats import FORMATS
from vbp.cli.outputs import check_checkpoint, check_outputs, force_option, progress_options
from vbp.cli.train_report import echo_held_out

INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT)."""


def resume_command() -> str:
    """The command line that resumes this run: the options given, with ``--resume`` added."""
    words = given_command("vbp", "train", "swarm")
    if "--resume" not in words:
        words.append("--resume")
    return shlex.join(words)


def _interrupted(checkpoint: str | None, iterations: int) -> NoReturn:
    """Ctrl-C during training: say in one line what was kept and how to resume; exit 130."""
    from packing.io import escape_control
    from policies.swarm.train import interrupted_message

    text = interrupted_message(checkpoint, iterations, resume_command())
    click.echo(f"error: {escape_control(text)}", err=True)
    raise SystemExit(INTERRUPTED)


@click.group()
def train() -> None:
    """Tune a policy in the simulator."""


@train.command("swarm")
@click.argument("path", required=False, default="sigma")
@click.option("--particles", type=click.IntRange(1, 10_000), default=16, show_default=True,
              help="Swarm size.")
@click.option("--iters", type=click.IntRange(1, 1_000_000), default=30, show_default=True,
              help="Maximum PSO iterations.")
@click.option("--samples", type=click.IntRange(min=1, max=MAX_ORDERS), default=8, show_default=True,
              help="Training orders per iteration (the same for every particle).")
@click.option("--held-out", type=click.IntRange(min=1, max=MAX_ORDERS), default=20,
              show_default=True, help="Held-out orders for the report.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of orders and optimiser.")
@click.option("--w", "inertia", type=FiniteFloat(0.0, 2.0), default=0.7, show_default=True,
              help="PSO inertia weight w.")
@click.option("--c1", type=FiniteFloat(0.0, 10.0), default=1.5, show_default=True,
              help="PSO self-learning coefficient c1.")
@click.option("--c2", type=FiniteFloat(0.0, 10.0), default=1.5, show_default=True,
              help="PSO social-learning coefficient c2.")
@click.option("--patience", type=click.IntRange(0, 1_000_000), default=10, show_default=True,
              help="Stop after this many iterations without improvement (0: never).")
@click.option("--optimizer", type=click.Choice(["pso", "de"]), default="pso", show_default=True,
              help="pso (pyswarms GlobalBestPSO) or de (SciPy differential evolution).")
@click.option("--backend", type=click.Choice(["local", "process", "ray"]), default="local",
              show_default=True,
              help="Where candidates are evaluated: this process (serial executor), local processes, "
                   "or Ray. The same seed gives the same policy on every backend.")
@click.option("--workers", type=click.IntRange(1, MAX_WORKERS), default=2, show_default=True,
              help="Processes (process) or CPUs of a local Ray (ray).")
@ray_address_option("--backend ray")
@click.option("--init", "init", type=click.Choice(["bf", "ff", "none"]), default="bf",
              show_default=True, help="Start the swarm around this policy's weights.")
@click.option("--checkpoint", type=click.Path(dir_okay=False), default=None,
              help="Checkpoint file (.json), written after every iteration (pso only).")
@click.option("--resume", is_flag=True, help="Continue from --checkpoint if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--repair-snapshot", is_flag=True,
              help="If the initial snapshot breaks constraints, re-place the containers that break them.")
@click.option("--out", type=click.Path(dir_okay=False), required=True,
              help="Where to save the tuned policy (.json).")
@force_option
@progress_options
def swarm(path: str, particles: int, iters: int, samples: int, held_out: int, seed: int,
          inertia: float, c1: float, c2: float, patience: int, optimizer: str, backend: str,
          workers: int, ray_address: str | None, init: str, checkpoint: str | None, resume: bool,
          as_json: bool, repair_snapshot: bool, out: str, force: bool, progress: str | None) -> None:
    """Tune a swarm scoring policy on PATH (an instance, data set, or `sigma`); save it to --out.

    Every option is checked before PATH is read (bad input: exit status 2). Ctrl-C stops the
    training: with --checkpoint the file holds the last complete iteration, a line on stderr gives
    the command that resumes it (the same options and --resume; the resumed run ends with the
    same weights as an uninterrupted one), and the exit status is 130.
    """
    from packing.report.progress import bar as progress_bar
    from policies.swarm.optimizer import DESettings, IterationRecord, PSOCheckpoint, PSOSettings
    from policies.swarm.train import TrainSettings, train_swarm
    from vbp.cli.common import load_any, naming_file, prepare

    check_outputs([(out, "--out", (".json",))], force=force, inputs=[path, init])
    if resume and checkpoint is not None and Path(checkpoint).exists():
        PSOCheckpoint.load(checkpoint)  # not a checkpoint (a pickle, corrupt): said first, nothing run
    check_checkpoint(checkpoint, resume=resume, suffix=".json", force=force, inputs=[path, init],
                     outputs=[(out, "--out")])
    if checkpoint is not None and optimizer != "pso":
        raise input_error("--checkpoint", checkpoint, "only with --optimizer pso (differential "
                          "evolution does not checkpoint)")
    if ray_address and backend != "ray":
        raise input_error("--ray-address", ray_address, "only with --backend ray")
    if backend == "ray" and importlib.util.find_spec("ray") is None:
        raise input_error("--backend", "ray", "Ray is not installed: pip install 'vbp-toolkit[ray]' (or use "
                          "--backend process)")
    loaded = load_any(path)
    check_order_budget("--samples/--held-out", samples + held_out, loaded.n_containers)
    with naming_file(loaded, path):
        inst = prepare(loaded, repair_snapshot)
    settings = TrainSettings(samples=samples, held_out=held_out, seed=seed, backend=backend,  # type: ignore[arg-type]
                             workers=workers, address=ray_address,
                             optimizer=optimizer,  # type: ignore[arg-type]
                             init=None if init == "none" else init)
    opt = (PSOSettings(n_particles=particles, iters=iters, w=inertia, c1=c1, c2=c2, seed=seed,
                       patience=patience)
           if optimizer == "pso" else DESettings(iters=iters, seed=seed))
    bar = progress_bar(iters, f"{optimizer} on {inst.name}", "iter", progress)

    done = [0]  # iterations completed (resumed ones included)

    def report(rec: IterationRecord) -> None:
        done[0] = rec.iteration + 1
        bar.update(1)
        bar.set_postfix(best=f"{rec.best_cost:.3f}")

    try:
        with naming_file(loaded, path):
            res = train_swarm(inst, opt, settings, checkpoint=checkpoint, resume=resume,
                              callback=report)
    except KeyboardInterrupt:
        bar.close()
        _interrupted(checkpoint, done[0])
    finally:
        bar.close()
    res.policy.save(out)
    rows = [h.to_dict() for h in res.held_out]
    cmp = res.comparison()
    worse = cmp is not None and cmp.worse
    if as_json:
        click.echo(json.dumps({"format": FORMATS["train-swarm"],
                               "policy": str(Path(out)), "weights": res.policy.to_dict()["weights"],
                               "features": res.policy.to_dict()["features"],
                               "initial_cost": res.initial_cost, "best_cost": res.best_cost,
                               "iterations": len(res.history), "seconds": round(res.seconds, 2),
                               "held_out": rows, "worse_than_bf": worse}, indent=1))
    else:
        click.echo(f"trained on {inst.name}: {len(res.history)} iterations in {res.seconds:.1f} s; "
                   f"training cost {res.initial_cost:.3f} -> {res.best_cost:.3f}")
        click.echo(f"saved {out}: {res.policy!r}")
        click.echo(f"held-out orders ({held_out}):")
        click.echo(f"  {'policy':<10} {'hosts mean':>10} {'min':>5} {'max':>5} {'range':>6} "
                   f"{'allocation':>11}")
        for r in rows:
            click.echo(f"  {r['policy']:<10} {r['hosts_mean']:>10.2f} {r['hosts_min']:>5} "
                       f"{r['hosts_max']:>5} {r['hosts_range']:>6} {r['allocation_mean']:>10.2%}")
    if cmp is not None:
        echo_held_out(cmp, SWARM_REMEDY, line=False)


SWARM_REMEDY = "train longer, on more orders (--samples), or keep Best-Fit"
"""What the warning of a worse tuned policy suggests."""


@train.command("gcn", add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def gcn(ctx: click.Context, args: tuple[str, ...]) -> Any:
    """Train a GCN agent: a DAG folder trains JobFusion, an instance (or sigma) the placement policy.

    ``vbp train gcn DATA --help`` shows the options of the one that DATA selects.
    """
    from packing.dag.loader import is_dag_folder

    cmd: click.Command
    if any(is_dag_folder(a) for a in args if not a.startswith("-")):
        from vbp.cli.train_jobfusion import train_jobfusion as cmd
    else:
        from vbp.cli.train_gcn import gcn as cmd
    return cmd.main(args=list(args), prog_name=ctx.command_path, standalone_mode=False)

