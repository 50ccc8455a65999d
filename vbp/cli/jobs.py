"""``vbp jobs``: JobFusion on DAG batch jobs (Alibaba v2018 batch_task with DAG task names)."""

from __future__ import annotations

import json
from typing import Any

import click

from packing.dag.partition import parse_q_list
from packing.errors import InputError, Problem
from packing.io import escape_control
from vbp.cli.common import PLOT_SUFFIXES, SEED, FiniteFloat
from vbp.cli.formats import FORMATS
from vbp.cli.outputs import check_outputs, force_option, progress_options


def _load(data: str, online: str | None) -> tuple[Any, Any]:
    from packing.dag.loader import load_dag_folder

    w = load_dag_folder(data)
    on = None
    if online is not None:
        from packing.dag.online import load_online_shapes

        on = load_online_shapes(online)
    return w, on


@click.group("jobs")
def jobs() -> None:
    """JobFusion on DAG batch jobs: partition sweep and scheduler comparison against bounds."""


@jobs.command("compare")
@click.argument("data", metavar="DATA")
@click.option("--policies", "policy_text", default=None,
              help="Comma-separated DAG policies (default: every baseline: fifo, sjf, cpf, random, "
                   "cpf-single, sjf-cp, sjf-reserve, sjf-headroom) or trained "
                   "agent files (MODEL.pt from `vbp train gcn DATA`), or NAME=SPEC; a row is named "
                   "by the policy, the file's stem, or NAME (unique).")
@click.option("--jobs", "n_jobs", type=click.IntRange(1, 100_000), default=100, show_default=True,
              help="Seeded sample of this many jobs.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the sample and overheads.")
@click.option("--q", "q", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Container types of JobFusion's partition.")
@click.option("--hosts", default="32c64g:8,92c288g:8", show_default=True,
              help="The cluster: <cores>c<GB>g:<count>, comma-separated.")
@click.option("--interarrival", type=FiniteFloat(0.0, 1e7), default=10.0, show_default=True,
              help="Mean seconds between job arrivals (Poisson, seeded); 0: all at once.")
@click.option("--carving", type=click.Choice(["proportional", "nested"]), default="nested", show_default=True,
              help="Container counts of the Q types: nested keeps --large-share of the one-type cluster's "
                   "large containers and fills the rest with smaller types; proportional splits by task "
                   "counts.")
@click.option("--large-share", type=FiniteFloat(0.0, 1.0), default=0.6, show_default=True,
              help="Nested carving: share of the large containers kept (0.6: the least SJF mean JCT on 40 "
                   "training samples of 10 jobs, benchmarks/bench_jobfusion_agent.py).")
@click.option("--trace-arrivals", is_flag=True, help="Keep the trace's arrival times instead.")
@click.option("--online", type=click.Path(file_okay=False), default=None,
              help="Folder with the online container digests (derived_from_full_container_meta).")
@click.option("--online-share", type=FiniteFloat(0.0, 0.95), default=0.3, show_default=True,
              help="Share of the cluster's CPU the online containers hold (with --online).")
@click.option("--surges", type=click.IntRange(0, 10_000), default=0, show_default=True,
              help="Seeded online surges that reclaim a host's offline containers for 60-600 s.")
@click.option("--preempt", is_flag=True, help="Surges kill running offline tasks (else online waits).")
@click.option("--no-overheads", is_flag=True, help="No scheduling delay, container start or preemption cost.")
@click.option("--search", "search", type=click.IntRange(0, 1_000_000), default=0, show_default=True,
              help="After the policies, search this many episodes for a lower mean JCT: per-job multipliers "
                   "of --search-policy's key, each candidate a whole seeded episode (clairvoyant: an upper "
                   "bound on the optimum, not a policy); 0: no search.")
@click.option("--search-policy", default="sjf-headroom", show_default=True,
              help="The policy the search starts from: sjf-headroom, sjf-reserve, sjf-cp or sjf (a job's "
                   "key is its remaining work).")
@click.option("--search-seed", type=SEED, default=0, show_default=True, help="Seed of the search's steps.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Plot the JCT distribution of each policy (CDF) with the critical-path and capacity "
                   "bounds.")
@force_option
@progress_options
def compare(data: str, policy_text: str | None, n_jobs: int, seed: int, q: int, hosts: str,
            interarrival: float, carving: str, large_share: float, trace_arrivals: bool, online: str | None,
            online_share: float, surges: int,
            preempt: bool, no_overheads: bool, search: int, search_policy: str, search_seed: int,
            as_json: bool, plot: str | None, force: bool, progress: str | None) -> None:
    """Run DAG scheduling policies on a seeded sample of DATA's jobs, against the bounds.

    DATA is a folder laid out like alibaba-v2018-batch-dag (batch_task*.csv with a header). With
    --search, a row `search (POLICY)` and the interval the optimum mean JCT lies in follow.
    """
    from packing.dag.engine import NO_OVERHEADS, Overheads
    from packing.report.progress import echo
    from policies.dag import parse_dag_policies
    from policies.dag_search import search_base
    from vbp.jobfusion import compare_dag, parse_hosts, sample_jobs

    check_outputs([(plot, "--plot", PLOT_SUFFIXES)], force=force, inputs=[data])
    search_base(escape_control(search_policy), "--search-policy")
    labels, pols = parse_dag_policies(policy_text, seed)
    host_list = parse_hosts(hosts)
    w, on = _load(data, online)
    sample = sample_jobs(w, n_jobs, seed, None if trace_arrivals else interarrival)
    res = compare_dag(sample, pols, q=q, hosts=host_list, online=on,
                      online_share=online_share if on is not None else 0.0, surges=surges, preempt=preempt,
                      overheads=NO_OVERHEADS if no_overheads else Overheads(), seed=seed,
                      carving=carving, large_share=large_share, search=search, search_policy=search_policy,
                      search_seed=search_seed, on_improve=lambda e, jct: echo(
                          f"search: episode {e}: mean JCT {jct:.1f} s", progress))
    for row, label in zip(res["policies"], labels, strict=True):
        row["name"] = label  # named as given: a policy name, a model file's stem, or NAME=
    rows = res["policies"] + ([res["search"]] if res["search"] is not None else [])
    if plot:
        from packing.report.plots import plot_jct

        plot_jct(plot, [p["name"] for p in rows], [p["jct"] for p in rows],
                 res["bounds"]["critical_path_mean_jct"], res["bounds"]["capacity_mean_jct"])
    if as_json:
        out = {"format": FORMATS["jobs-compare"], "bounds": res["bounds"], "policies": [
            {k: v for k, v in p.items() if k != "jct"} for p in res["policies"]],
            "search": None if res["search"] is None else {
                k: v for k, v in res["search"].items() if k != "jct"},
            "best_found_mean_jct": res["best_found_mean_jct"],
            "carving": res["carving"], "clusters": res["clusters"], "jobs": res["jobs"],
            "tasks": res["tasks"]}
        click.echo(json.dumps(out, indent=2))
        return
    b = res["bounds"]
    w = max([16] + [len(p["name"]) for p in rows])
    click.echo(f"{res['jobs']} jobs, {res['tasks']} tasks; makespan >= {b['makespan']:.1f} s")
    click.echo(f"{'policy':<{w}} {'types':>5} {'slots':>6} {'mean JCT':>10} {'exc cp':>7} {'exc cap':>7} "
               f"{'makespan':>10} {'exc':>7} {'util':>6} {'idle':>6} {'ms/dec':>7}")
    for p in rows:
        click.echo(f"{p['name']:<{w}} {p['n_types']:>5} {p['containers']:>6} {p['mean_jct']:>10.1f} "
                   f"{p['jct_excess']:>6.1%} {p['capacity_excess']:>6.1%} {p['makespan']:>10.1f} "
                   f"{p['makespan_excess']:>6.1%} {p['mean_utilisation']:>6.1%} {p['idle_share']:>6.1%} "
                   f"{p['decision_ms']:>7.3f}")
    pad = f"{'':>5} {'':>6}"
    delays = "least launch delay" if b["overheads"] == "least" else "its first launch delay"
    click.echo(f"{'bound (cp)':<{w}} {pad} {b['critical_path_mean_jct']:>10.1f}  critical path + {delays} "
               "per stage")
    click.echo(f"{'bound (capacity)':<{w}} {pad} {b['capacity_mean_jct']:>10.1f}  slot-limited critical "
               "paths, shared slots/cpu/mem, tails and busy times (least over the carvings; exc cap: the "
               "policy's own carving; exc: (value - bound) / bound)")
    best = min(rows, key=lambda p: p["mean_jct"])
    click.echo(f"optimum mean JCT in [{b['capacity_mean_jct']:.1f}, {best['mean_jct']:.1f}] s (capacity "
               f"bound, best found: {best['name']})")


@jobs.command("partition")
@click.argument("data", metavar="DATA")
@click.option("--q", "q_text", default="1-8", show_default=True, help="Numbers of types: 1-8 or 1,2,4.")
@click.option("--methods", default="constrained,single,plain", show_default=True,
              help="Partition methods: constrained (the paper's), single (one type), plain (Ward).")
@click.option("--containers", type=click.IntRange(1, 100_000), default=400, show_default=True,
              help="Containers to carve, split by the types' task shares.")
@click.option("--time-limit", type=FiniteFloat(0.0, 86400.0, min_open=True), default=30.0, show_default=True,
              help="Seconds per carving solve (most are proven optimal sooner).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Solver seed.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@progress_options
def partition_cmd(data: str, q_text: str, methods: str, containers: int, time_limit: float, seed: int,
                  as_json: bool, progress: str | None) -> None:
    """Idle share of carving the paper's hosts (32c64g, 92c288g) for Q = 1..8, with its proven bound."""
    from dataclasses import asdict

    from packing.dag.partition import METHODS
    from packing.report.progress import echo
    from vbp.jobfusion import carve_sweep

    qs = parse_q_list(q_text)
    ms = [m.strip() for m in methods.split(",") if m.strip()]
    bad = [m for m in ms if m not in METHODS]
    if bad or not ms:
        raise InputError([Problem("--methods", methods, f"unknown method(s) {', '.join(bad)}; known: "
                                  f"{', '.join(METHODS)}")])
    w, _ = _load(data, None)
    rows = carve_sweep(w, qs, ms, containers=containers, time_limit=time_limit, seed=seed, progress=lambda r:
                       echo(f"  {r.method} Q={r.q}: {r.status} in {r.seconds:.1f} s", progress))
    if as_json:
        click.echo(json.dumps({"format": FORMATS["jobs-partition"],
                               "jobs": w.n_jobs,
                               "rows": [{("hosts_by_type" if k == "hosts" else k): v
                                         for k, v in asdict(r).items()} for r in rows]}, indent=2))
        return
    click.echo(f"{'method':<12} {'Q':>3} {'types':>5} {'hosts':<24} {'idle':>7} {'bound':>7} {'gap':>6} "
               f"{'internal':>8} {'status':<9}")
    for r in rows:
        hs = ",".join(f"{k}:{v}" for k, v in r.hosts.items())
        idle = "-" if r.idle_share is None else f"{r.idle_share:.2%}"
        gap = "-" if r.gap is None else f"{r.gap:.1%}"
        click.echo(f"{r.method:<12} {r.q:>3} {r.n_types:>5} {hs:<24} {idle:>7} {r.idle_bound:>6.2%} {gap:>6} "
                   f"{r.internal_idle:>7.1%} {r.status:<9}")
