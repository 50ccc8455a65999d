"""``vbp train gcn``: train the GCN placement policy with REINFORCE on sampled arrival orders.

Attach to the ``train`` group with ``train.add_command(gcn)`` (the command is named ``gcn``).
Torch is imported only when the command runs.
"""

from __future__ import annotations

import shlex
from typing import Any

import click

from packing.errors import input_error
from packing.sim.simulator import check_order_budget
from vbp.cli.common import (
    MAX_ORDERS,
    PLOT_SUFFIXES,
    SEED,
    FiniteFloat,
    load_any,
)
from vbp.cli.common import given_command as common_given_command
from vbp.cli.outputs import check_checkpoint, check_outputs, force_option, progress_options


def given_command() -> str:
    """The command line of this run, rebuilt from the options given (defaults left out)."""
    return shlex.join(common_given_command("vbp", "train", "gcn"))


EVAL_ORDERS = 8
"""Orders of the report after training: those of ``vbp compare`` (own order, then seed 0 shuffles)."""


@click.command("gcn")
@click.argument("instance", metavar="INSTANCE|sigma")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of network, orders, samples.")
@click.option("--episodes", type=click.IntRange(min=1, max=10_000_000), default=1600, show_default=True,
              help="Training episodes in all (iterations = episodes / batch).")
@click.option("--orders", type=click.IntRange(min=1, max=MAX_ORDERS), default=64, show_default=True,
              help="Training orders per instance (never the evaluation orders).")
@click.option("--batch", type=click.IntRange(min=2, max=1024), default=8, show_default=True,
              help="Episodes per iteration (same order; the baseline is their mean).")
@click.option("--family", type=click.IntRange(min=0, max=1000), default=0, show_default=True,
              help="Also train on the Sigma-like family generate_sigma(1..N) (INSTANCE must be sigma).")
@click.option("--dim", type=click.IntRange(min=2, max=512), default=32, show_default=True,
              help="Embedding width.")
@click.option("--layers", type=click.IntRange(min=1, max=8), default=2, show_default=True,
              help="Message-passing layers.")
@click.option("--lr", type=FiniteFloat(0.0, 1.0, min_open=True), default=1e-2, show_default=True,
              help="Adam learning rate.")
@click.option("--init-scale", type=FiniteFloat(0.0, 1e6), default=20.0, show_default=True,
              help="Scale of the linear host term (starts as Best-Fit).")
@click.option("--entropy", type=FiniteFloat(0.0, 1e3), default=0.01, show_default=True,
              help="Entropy bonus coefficient.")
@click.option("--imitate", default=None, metavar="POLICY",
              help="Warm start: imitate this policy (a name or file, e.g. swarm-sigma) by DAgger first.")
@click.option("--imitate-episodes", type=click.IntRange(min=1, max=100_000), default=8, show_default=True,
              help="Episodes per DAgger round.")
@click.option("--imitate-rounds", type=click.IntRange(min=1, max=100), default=3, show_default=True,
              help="DAgger rounds (round 0 follows the teacher, later rounds the policy).")
@click.option("--init-from", default=None, metavar="SWARM",
              help="Start the linear host term from a swarm policy's weights (a name or .json file).")
@click.option("--checkpoint", type=click.Path(dir_okay=False), default=None,
              help="Save the training state here every 10 iterations.")
@click.option("--resume", is_flag=True, help="Continue from --checkpoint if it exists.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, help="Save the training curve.")
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="The model file (.pt).")
@force_option
@progress_options
def gcn(instance: str, seed: int, episodes: int, orders: int, batch: int, family: int, dim: int,
        layers: int, lr: float, init_scale: float, entropy: float, imitate: str | None,
        imitate_episodes: int, imitate_rounds: int, init_from: str | None, checkpoint: str | None,
        resume: bool, plot: str | None, out: str, force: bool, progress: str | None) -> None:
    """Train the GCN placement policy on sampled orders of INSTANCE (a file or ``sigma``).

    The model file works with ``vbp simulate --policy MODEL`` and ``vbp compare --policies bf,MODEL``.
    After training, the greedy policy is replayed on the evaluation orders of ``vbp compare`` (the
    instance's own order and 7 seeded shuffles, never trained on) next to Best-Fit.
    """
    check_outputs([(out, "--out", (".pt",)), (plot, "--plot", PLOT_SUFFIXES)], force=force,
                  inputs=[instance, init_from])
    check_checkpoint(checkpoint, resume=resume, suffix=".pt", force=force, inputs=[instance, init_from],
                     outputs=[(out, "--out"), (plot, "--plot")])
    if family and instance != "sigma":
        raise input_error("command line", "--family", "only with INSTANCE sigma")
    import importlib.util

    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("torch_geometric") is None:
        raise input_error("command line", "gcn",
                          "needs torch and torch_geometric (pip install 'vbp-toolkit[rl]')")
    from packing.report.progress import bar as progress_bar
    from packing.sim.simulator import sample_orders
    from policies.agents.gcn_placement import Config
    from policies.agents.gcn_placement_train import GCN_REMEDY, held_out, plot_curve, train
    from policies.registry import get_policy
    from vbp.cli.train_report import echo_held_out

    teacher = get_policy(imitate) if imitate else None
    init_weights = None
    if init_from:
        start = get_policy(init_from)
        init_weights = getattr(start, "weights", None)
        if init_weights is None or len(init_weights) != 10:
            raise input_error("command line", "--init-from", f"{init_from!r} is not a swarm policy")
    inst = load_any(instance)
    if inst.max_gpus:
        raise input_error(instance, "gpus", "the GCN placement policy does not place GPU cards")
    check_order_budget("--orders/--family", orders, inst.n_containers, family + 1)
    instances = [inst]
    if family:
        from vbp.instances import generate_sigma

        instances += [generate_sigma(s) for s in range(1, family + 1)]
    evals = [sample_orders(i, EVAL_ORDERS, seed=0) for i in instances]
    cfg = Config(n_resources=inst.n_resources, dim=dim, layers=layers, init_scale=init_scale, lr=lr,
                 batch=batch, entropy=entropy)
    command = given_command()
    info: dict[str, Any] = {"instance": inst.name, "family": family, "seed": seed, "episodes": episodes,
                            "orders": orders, "command": command, "init_from": init_from}
    bar = progress_bar(max(1, episodes // batch), "training", "it", progress)

    def report(it: int, n: int, cost: float) -> None:
        bar.n = it
        bar.set_postfix(hosts=f"{cost:.2f}")
        bar.refresh()

    res = train(instances, episodes=episodes, orders=orders, seed=seed, cfg=cfg, avoid=evals,
                checkpoint=checkpoint, resume=resume, progress=report, info=info, teacher=teacher,
                imitate_episodes=imitate_episodes if teacher is not None else 0,
                imitate_rounds=imitate_rounds, init_weights=init_weights)
    bar.close()
    policy = res.policy
    policy.name = "gcn"
    cmp = held_out(policy, inst, evals[0])
    policy.save(out)
    if plot:
        plot_curve(res.curve, plot, refs={"BF (held-out)": cmp.baseline_mean["hosts"]})
    click.echo(f"trained {res.iterations} iteration(s) ({res.iterations * batch} episodes) in "
               f"{res.seconds:.1f} s; saved {out}")
    echo_held_out(cmp, GCN_REMEDY)


__all__ = ["gcn"]


if __name__ == "__main__":  # python -m vbp.cli.train_gcn ... (before the command is attached to vbp train)
    gcn()
