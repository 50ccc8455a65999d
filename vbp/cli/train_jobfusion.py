"""``vbp train gcn DATA`` for a DAG folder: train the JobFusion agent (REINFORCE) on sampled job streams.

The command object is :data:`train_jobfusion` (named ``gcn``); ``vbp train gcn`` dispatches to it when
its argument is a folder of DAG jobs (see :func:`packing.dag.loader.is_dag_folder`); the training
environments come from :func:`vbp.jobfusion.build_envs`. Torch is imported only when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from packing.errors import input_error
from vbp.cli.common import PLOT_SUFFIXES, SEED, FiniteFloat
from vbp.cli.outputs import check_outputs, force_option, progress_options

MAX_JOBS_DRAWN = 1_000_000
"""Most jobs the training samples may draw in all (``--jobs`` x (``--samples`` + 10 ``--long-samples``))."""

DEFAULT_HOSTS = "32c64g:4,92c288g:2"
"""The default training cluster: small enough that 10 jobs queue (so the order matters)."""


@click.command("gcn")
@click.argument("data", metavar="DATA")
@click.option("--out", "out", type=click.Path(dir_okay=False), required=True, help="Model file (.pt).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of samples, network and actions.")
@click.option("--episodes", type=click.IntRange(0, 1_000_000), default=120, show_default=True,
              help="REINFORCE episodes in all (iterations = episodes / batch; 0 with --imitate or --expert: "
                   "no REINFORCE).")
@click.option("--jobs", "n_jobs", type=click.IntRange(1, 10_000), default=10, show_default=True,
              help="Jobs per training sample.")
@click.option("--samples", type=click.IntRange(1, 1000), default=8, show_default=True,
              help="Seeded job samples to train on.")
@click.option("--batch", type=click.IntRange(2, 256), default=4, show_default=True,
              help="Episodes per iteration (same sample; the time-based baseline is their mean).")
@click.option("--q", "q", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Container types of JobFusion's partition.")
@click.option("--single", is_flag=True, help="Decima-like: one container type (no clustering).")
@click.option("--hosts", default=DEFAULT_HOSTS, show_default=True,
              help="The training cluster: <cores>c<GB>g:<count>, comma-separated.")
@click.option("--interarrival", type=FiniteFloat(0.0, 1e7), default=10.0, show_default=True,
              help="Mean seconds between job arrivals (Poisson, seeded).")
@click.option("--carving", type=click.Choice(["proportional", "nested"]), default="nested", show_default=True,
              help="Container counts of the Q types (see `vbp jobs compare --help`).")
@click.option("--large-share", default="0.6", show_default=True,
              help="Nested carving: share of the large containers kept, or 'auto': the share with the "
                   "least SJF mean JCT on the training samples.")
@click.option("--dim", type=click.IntRange(2, 256), default=16, show_default=True, help="Embedding width.")
@click.option("--features", type=click.Choice(["1", "2"]), default=None,
              help="Node features: 2 (the default) scale-free shares and ranks; 1 the raw log-scaled counts "
                   "of the paper (docs/jobfusion-gcn.md). A resumed run keeps its model's.")
@click.option("--lr", type=FiniteFloat(0.0, 1.0, min_open=True), default=3e-3, show_default=True,
              help="Adam learning rate.")
@click.option("--imitate", default=None, metavar="POLICY",
              help="Warm start: first fit the heads to this DAG policy's decisions (fifo, sjf, sjf-cp, "
                   "cpf) by behaviour cloning, then REINFORCE.")
@click.option("--imitate-epochs", type=click.IntRange(1, 10_000), default=10, show_default=True,
              help="Passes over the training samples for --imitate.")
@click.option("--dagger", type=FiniteFloat(0.0, 1.0), default=0.0, show_default=True,
              help="With --imitate: share of decisions the agent itself drives after the first epoch "
                   "(DAgger; the teacher still labels every state).")
@click.option("--expert", type=click.Choice(["rollout"]), default=None,
              help="Expert iteration after --imitate: DAgger passes labelled by the rollout expert (a few "
                   "candidate actions compared by simulating the jobs in the system with SJF).")
@click.option("--expert-epochs", type=click.IntRange(1, 10_000), default=3, show_default=True,
              help="Passes over the training samples for --expert.")
@click.option("--expert-horizon", type=click.IntRange(0, 1_000_000), default=40, show_default=True,
              help="SJF decisions per rollout of --expert (0: to the end of the jobs in the system).")
@click.option("--expert-rollouts", type=click.IntRange(1, 100), default=1, show_default=True,
              help="SJF rollouts per candidate of --expert (averaged over overhead draws).")
@click.option("--expert-base", type=click.Choice(["sjf", "sjf-cp"]), default="sjf", show_default=True,
              help="--expert: the rollout policy and first candidate of the rollout expert.")
@click.option("--expert-within", is_flag=True,
              help="--expert: also try every other runnable stage of the base policy's job.")
@click.option("--expert-passes", type=click.IntRange(0, 1000), default=0, show_default=True,
              help="--expert with dataset aggregation: --expert-epochs labelling rounds, each followed by "
                   "this many passes over every label so far (0: one Adam step per episode).")
@click.option("--candidates", type=click.IntRange(0, 10_000), default=3, show_default=True,
              help="Stage head over the runnable stages of this many jobs with the least remaining work "
                   "(SJF's among them; 0: every runnable stage, as in the paper).")
@click.option("--long-samples", type=click.IntRange(0, 1000), default=0, show_default=True,
              help="Also train on this many long samples of --jobs jobs (the most task-seconds among "
                   "10x as many seeded draws), so the agent sees job sets with thousands of decisions.")
@click.option("--max-labels", type=click.IntRange(1, 10_000_000), default=None,
              help="--imitate/--expert: label about this many decisions per episode at most (long "
                   "samples); the others are SJF's (--expert: the --expert-base policy's).")
@click.option("--held-out", "held_out", type=click.IntRange(1, 1000), default=4, show_default=True,
              help="Held-out job samples (seeded, never trained on) for the comparison with SJF at the end.")
@click.option("--resume", is_flag=True, help="Continue the run saved in --out.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, help="Training curve plot.")
@force_option
@progress_options
def train_jobfusion(data: str, out: str, seed: int, episodes: int, n_jobs: int, samples: int, batch: int,
                    q: int, single: bool, hosts: str, interarrival: float, carving: str, large_share: str,
                    dim: int, features: str | None, lr: float,
                    imitate: str | None, imitate_epochs: int, dagger: float, expert: str | None,
                    expert_epochs: int, expert_horizon: int, expert_rollouts: int, expert_base: str,
                    expert_within: bool, expert_passes: int, candidates: int,
                    long_samples: int, max_labels: int | None, held_out: int, resume: bool,
                    plot: str | None, force: bool, progress: str | None) -> None:
    """Train the JobFusion GCN agent on seeded samples of DATA's DAG jobs (a batch_task folder).

    Saves a weights-only model that `vbp jobs compare --policies sjf,MODEL.pt` accepts. Checkpoints every
    10 iterations; --resume continues from --out. At the end the saved agent and SJF run --held-out job
    samples never trained on; a warning on stderr says when the agent's mean JCT is higher.
    """
    check_outputs([(out, "--out", (".pt",))], force=force or resume, inputs=[data])
    check_outputs([(plot, "--plot", PLOT_SUFFIXES)], force=force or resume, inputs=[data, out])
    if imitate is not None and imitate not in ("fifo", "sjf", "sjf-cp", "cpf"):
        raise input_error("--imitate", imitate, "expected fifo, sjf, sjf-cp or cpf")
    if imitate is not None and resume:
        raise input_error("--imitate", imitate, "a resumed run already has its warm start; drop --imitate")
    if expert is None and (expert_base != "sjf" or expert_within or expert_passes):
        raise input_error("--expert-base/--expert-within/--expert-passes", expert_base,
                          "only with --expert rollout")
    if expert is not None and resume:
        raise input_error("--expert", expert, "a resumed run already has its warm start; drop --expert")
    if features is not None and resume:
        raise input_error("--features", features, "a resumed run keeps its model's features; drop --features")
    try:
        from policies.agents import jobfusion as jf
        from policies.agents import jobfusion_train as jft
    except ImportError:
        raise input_error("command line", "gcn",
                          "needs torch and torch_geometric (pip install 'vbp-toolkit[rl]')") from None
    from packing.dag.loader import load_dag_folder
    from packing.report.progress import shown
    from vbp.jobfusion import build_envs, parse_hosts, sample_jobs, tune_large_share

    share: float | None = None
    if large_share != "auto":
        try:
            share = float(large_share)
        except ValueError:
            share = -1.0
        if not 0.0 <= share <= 1.0:
            raise input_error("--large-share", large_share, "expected a share in [0, 1] or 'auto'")
    drawn = n_jobs * (samples + held_out + 10 * long_samples)
    if drawn > MAX_JOBS_DRAWN:
        raise input_error("--jobs/--samples/--held-out/--long-samples",
                          f"{n_jobs}/{samples}/{held_out}/{long_samples}",
                          f"{drawn:,} jobs to draw (jobs x (samples + held-out + 10 x long samples)); "
                          f"at most {MAX_JOBS_DRAWN:,}")
    jf.set_threads(1)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    method = "single" if single else "constrained"
    host_list = parse_hosts(hosts)
    w = load_dag_folder(data)
    if share is None:
        if carving != "nested" or single:
            share = 1.0
        else:
            tune = [sample_jobs(w, n_jobs, seed * 1000 + i, interarrival) for i in range(samples)]
            share, means = tune_large_share(tune, host_list, q=q, seed=seed)
            click.echo("nested carving, SJF mean JCT on the training samples by large share: "
                       + ", ".join(f"{f:g}: {m:.1f} s" for f, m in means.items()) + f"; using {share:g}")
    common: dict[str, Any] = {"jobs": n_jobs, "seed": seed, "partition_method": method, "q": q,
                              "hosts": host_list, "interarrival": interarrival, "carving": carving,
                              "large_share": share}
    envs = build_envs(w, n_envs=samples, long_samples=long_samples, **common)
    if episodes == 0 and imitate is None and expert is None and not resume:
        raise input_error("--episodes", "0", "nothing to train: give --imitate/--expert or episodes > 0")
    iterations = episodes // batch if imitate is not None or expert is not None else max(1, episodes // batch)
    if resume and not Path(out).exists():
        raise input_error("--resume", out, "no model file to resume from")
    cfg = jf.Config(dim=dim, lr=lr, batch=batch, partition=method, candidates=candidates,
                    features=int(features or 2))
    warm = jft.WarmStart(imitate, imitate_epochs, dagger, expert, expert_epochs, expert_horizon,
                         expert_rollouts, expert_base, expert_within, expert_passes, max_labels)
    run = jft.train_run(envs, out, cfg=cfg, iterations=iterations, seed=seed, warm=warm, resume=resume,
                        progress=shown(progress), name="decima-gcn" if single else "jobfusion",
                        carving=carving, large_share=share, samples=samples, long_samples=long_samples)
    state = run.state
    if plot:
        jft.plot_curve(state, plot, "Decima-like agent training" if single else "JobFusion agent training")
    k = max(1, len(state.curve) // 10)
    first, last = sum(state.curve[:k]) / k, sum(state.curve[-k:]) / k
    if run.imitation_nll:
        nll = run.imitation_nll
        click.echo(f"imitated {imitate}: negative log-likelihood per decision {nll[0]:.3f} -> {nll[-1]:.3f}")
    if run.expert_nll:
        click.echo(f"distilled the {expert} expert: negative log-likelihood per decision "
                   f"{run.expert_nll[0]:.3f} -> {run.expert_nll[-1]:.3f}")
    if state.curve:
        click.echo(f"trained {state.iteration} iterations ({state.iteration * batch} episodes) in "
                   f"{state.seconds:.0f} s; sampled mean JCT {first:.1f} s -> {last:.1f} s; saved {out}")
    else:
        click.echo(f"no REINFORCE iterations; saved {out}")
    from vbp.cli.train_report import echo_held_out

    held = build_envs(w, n_envs=held_out, first=samples, **common)
    echo_held_out(jft.held_out(out, held, seed=seed), jft.JOBS_REMEDY)


__all__ = ["train_jobfusion"]


if __name__ == "__main__":  # python -m vbp.cli.train_jobfusion DATA --out M.pt
    train_jobfusion()
