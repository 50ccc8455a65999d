"""``vbp train rl``: train a multi-cluster RL agent (EADE-DDPG, EADE-M, DDPG, TD3, SAC, PPO)."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import click

from packing.errors import input_error
from packing.io import escape_control
from packing.io.fields import parse_sets
from vbp.cli.common import MAX_ORDERS, MAX_THREADS, SEED
from vbp.cli.formats import FORMATS
from vbp.cli.outputs import check_outputs, force_option, progress_options

ALGO_CHOICES = ("eade-m", "eade", "ddpg", "td3", "sac", "ppo")
"""The ``--algo`` values (:data:`policies.agents.rl.ALGOS`, repeated here so ``--help`` needs no torch)."""


def _streams(paths: tuple[str, ...]) -> list[Any]:
    from policies.agents.rl_train import check_streams
    from vbp.cli.common import load_any

    streams = [load_any(p) for p in paths]
    check_streams(paths, streams)
    return streams


@click.command("rl")
@click.argument("scenarios", nargs=-1, required=True)
@click.option("--algo", type=click.Choice(ALGO_CHOICES), default="eade-m", show_default=True,
              help="eade-m: EADE-M (masked per-cluster values, the improvement); eade: the paper's "
                   "EADE-DDPG; ddpg: without attention and history; td3/sac/ppo: Stable-Baselines3.")
@click.option("--episodes", type=click.IntRange(1, 1_000_000), default=60, show_default=True,
              help="Training episodes (one episode = one scenario's whole stream; scenarios cycle).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the run.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Hyper-parameter override (e.g. --set batch=64); repeatable.")
@click.option("--threads", type=click.IntRange(1, MAX_THREADS), default=1, show_default=True,
              help="Torch threads.")
@click.option("--resume", is_flag=True,
              help="Continue the run saved in --out (eade-m, eade, ddpg); the file is rewritten "
                   "every 10 episodes.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write the training curve (tasks placed per episode) to this PNG.")
@click.option("--held-out", "held_out", type=click.IntRange(1, MAX_ORDERS), default=8, show_default=True,
              help="Held-out orders per scenario (seeded shuffles, never trained on) for the comparison "
                   "with Best-Fit at the end.")
@click.option("--json", "as_json", is_flag=True, help="Print the training curve as JSON.")
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="The model file (.pt).")
@force_option
@progress_options
def rl(scenarios: tuple[str, ...], algo: str, episodes: int, seed: int, sets: tuple[str, ...],
       threads: int, resume: bool, plot: str | None, held_out: int, as_json: bool, out: str,
       force: bool, progress: str | None) -> None:
    """Train an RL agent on SCENARIOS (multi-cluster files from `vbp generate multicluster`).

    Each scenario's FIFO stream is one episode; several scenarios (seeds) are played in turn.
    The model is an agent file: `vbp compare SCENARIO --policies mc-util,MODEL.pt` runs it.
    At the end the saved agent and Best-Fit replay --held-out shuffled orders of every scenario
    (never trained on); a warning on stderr says when the agent deploys fewer tasks (or, as many,
    on more hosts).
    """
    import importlib.util

    check_outputs([(out, "--out", (".pt",))], force=force or resume, inputs=scenarios)
    check_outputs([(plot, "--plot", (".png",))], force=force or resume, inputs=[*scenarios, out])
    if importlib.util.find_spec("torch") is None:
        raise input_error("--algo", algo, "learned agents need torch (pip install 'vbp-toolkit[rl]')")
    from policies.agents.rl import coerce

    raw = parse_sets(sets)
    try:
        overrides = coerce(algo, raw)
    except ValueError as e:
        field = getattr(e, "field", ",".join(sets))
        raise input_error("--set", escape_control(field)[:200], getattr(e, "reason", str(e))) from None
    from policies.agents.rl_train import check_run, previous_run

    previous = previous_run(out, algo) if resume else None
    streams = _streams(scenarios)
    check_run(algo, streams, overrides, previous, scenarios[0], out)
    _train_and_save(algo, streams, episodes, seed, overrides, threads, previous, plot, held_out, as_json,
                    out, progress)


def _train_and_save(algo: str, streams: list[Any], episodes: int, seed: int, overrides: dict[str, Any],
                    threads: int, previous: dict[str, Any] | None, plot: str | None, held_out: int,
                    as_json: bool, out: str, progress: str | None) -> None:
    from packing.report.progress import bar as progress_bar
    from policies.agents import rl_train
    from policies.agents.rl import RESUMABLE
    from vbp.cli.train_report import echo_held_out

    done0 = int(previous["episodes"]) if previous else 0
    if done0 >= episodes:
        click.echo(f"{out} already has {done0} episodes (>= --episodes {episodes}); nothing to do")
        return
    command = shlex.join(["vbp", "train", "rl", *sys.argv[3:]]) if sys.argv[1:3] == ["train", "rl"] else ""
    bar = progress_bar(episodes, algo, "ep", progress, initial=done0)

    def log(row: dict[str, Any]) -> None:
        bar.update(1)
        bar.set_postfix(deployed=row["deployed"])

    try:
        run = rl_train.train_run(algo, streams, out, episodes=episodes, seed=seed, overrides=overrides,
                                 threads=threads, previous=previous, command=command, log=log)
    except KeyboardInterrupt:
        bar.close()
        kept = (f"{out} holds the last multiple of 10 episodes; continue with --resume"
                if algo in RESUMABLE else "nothing was saved")
        click.echo(f"error: interrupted; {kept}", err=True)
        raise SystemExit(130) from None
    finally:
        bar.close()
    assert run is not None  # done0 < episodes
    curve = run.curve
    if plot:
        rl_train.plot_curve(curve, plot, f"{algo} training ({len(streams)} stream(s), seed {seed})")
    cmp = rl_train.held_out(out, streams, orders=held_out, seed=seed)
    if as_json:
        click.echo(json.dumps({"format": FORMATS["train-rl"],
                               "model": out, "algo": algo, "episodes": episodes,
                               "seconds": round(run.seconds, 2), "cpu_seconds": round(run.cpu_seconds, 2),
                               "curve": curve, "held_out": cmp.to_dict()}, indent=1))
    else:
        last = curve[-min(10, len(curve)):]
        mean = sum(r["deployed"] for r in last) / max(1, len(last))
        click.echo(f"trained {algo} for {episodes - done0} episode(s) in {run.seconds:.1f} s "
                   f"({run.cpu_seconds:.1f} s CPU); tasks deployed, mean of the last {len(last)} "
                   f"episode(s): {mean:.1f}")
        click.echo(f"saved {out}")
    echo_held_out(cmp, rl_train.REMEDY, line=not as_json)


__all__ = ["ALGO_CHOICES", "rl"]
