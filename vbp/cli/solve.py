"""``vbp solve``: solve an instance exactly (or as well as the time allows), with a proven bound.

Ctrl-C: the first one asks the solver to stop (:class:`solvers.StopFlag`); it returns the best
placement and the best proven bound found so far, which are printed (and written with ``--out``)
as usual, and the exit status is 130. A second Ctrl-C aborts at once: the best objective and
bound reported so far are printed, no placement.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import TYPE_CHECKING, Any

import click

from packing.errors import EXIT_INFEASIBLE, EXIT_INTERRUPTED, EXIT_NO_PLACEMENT, InputError, Problem
from packing.model.instance import Instance
from packing.report.progress import echo
from solvers import METHOD_NAMES
from vbp.cli.common import MAX_SECONDS, MAX_WORKERS, SEED, FiniteFloat, data_options, load_any
from vbp.cli.formats import tagged
from vbp.cli.outputs import check_outputs, force_option, progress_options

if TYPE_CHECKING:
    from solvers import SolveResult, StopFlag


def _load(path: tuple[str, ...]) -> Instance:
    from solvers.plan.type_bounds import bounded_pool

    return bounded_pool(load_any(path, pool="open"))  # an uncounted host type: as many as needed


INTERRUPTED = EXIT_INTERRUPTED
"""Exit status after Ctrl-C (128 + SIGINT)."""


def _interrupted(inst: Instance, best: dict[str, Any], as_json: bool) -> None:
    """Hard abort (second Ctrl-C): print the best objective and bound reported so far, exit 130.

    The solve did not return, so there is no placement to print or write.
    """
    if as_json:
        click.echo(json.dumps(tagged("solve", {
            "instance": inst.name, "status": "interrupted", "objective": best["objective"],
            "bound": best["bound"], "bound_kind": best["bound_kind"],
            "seconds": round(best["seconds"], 3), "placement": None})))
    else:
        click.echo(f"instance   {inst.name} ({inst.n_apps} apps, {inst.n_containers} containers, "
                   f"{inst.n_hosts} hosts)")
        click.echo("status     interrupted")
        click.echo(f"objective  {_fmt(best['objective'])} (best found before the interruption)")
        click.echo(f"bound      {_fmt(best['bound'])}")
    click.echo("error: interrupted; the best objective and bound found so far are shown, no "
               "placement was written", err=True)
    sys.exit(INTERRUPTED)


def _hard_abort(inst: Instance, best: dict[str, Any], as_json: bool) -> None:
    """:func:`_interrupted`, then end the process at once (the solver thread is still running)."""
    try:
        _interrupted(inst, best, as_json)
    except SystemExit:
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(INTERRUPTED)


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return "inf"
    return f"{x:g}"


@click.command()
@click.argument("path", metavar="FILE...", nargs=-1, required=True)
@click.option("--method", type=click.Choice(METHOD_NAMES), default="auto", show_default=True,
              help="Solver method.")
@click.option("--time-limit", type=FiniteFloat(0.0, MAX_SECONDS, min_open=True), default=60.0,
              show_default=True, help="Wall-time budget in seconds.")
@click.option("--workers", type=click.IntRange(1, MAX_WORKERS), default=2, show_default=True,
              help="Worker threads.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Random seed.")
@click.option("--objective", type=click.Choice(["hosts", "cost", "deployed"]), default=None,
              help="What to optimise [default: cost if any host type is priced, else hosts].")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object (format vbp-solve/2) instead of text.")
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Write the placement to this file (JSON or YAML by extension).")
@force_option
@progress_options
@data_options
def solve(path: tuple[str, ...], method: str, time_limit: float, workers: int, seed: int,
          objective: str | None, as_json: bool, out: str | None, force: bool, progress: str | None) -> None:
    """Solve FILE (an instance, .vbp file, data set, `sigma`, or DEMAND... on --hosts, as plan reads it).

    The instance is solved offline (all containers at once, ignoring an initial snapshot and
    request times). Prints status, objective, proven bound, gap, time and method; progress goes
    to stderr (on a terminal, or with --progress). Exit status: 0 with a placement, 2 on bad
    input (also an --out that exists, without --force, or that is FILE itself), 3 when the
    instance is proven infeasible, 4 when no placement was found within --time-limit and
    nothing is proven, 130 when interrupted. Ctrl-C
    stops the solver, which returns the best placement and the best proven bound found so far:
    they are printed as usual (``interrupted`` in the JSON, ``--out`` still written) with exit
    status 130; a second Ctrl-C aborts at once.
    """
    from solvers import Aborted, available, run_stoppable
    from solvers import solve as run
    from solvers.result import Progress

    check_outputs([(out, "--out", None)], force=force, inputs=list(path))
    if not available(method):
        raise InputError([Problem("<options>", "--method",
                                  f"method {method!r} is not available in this installation")])
    inst = _load(path)
    maximise = objective == "deployed"
    best: dict[str, Any] = {"objective": None, "bound": None, "seconds": 0.0,
                            "bound_kind": "upper" if maximise else "lower"}

    def report(p: Progress) -> None:
        better = max if maximise else min
        if p.objective is not None and math.isfinite(p.objective):
            o = best["objective"]
            best["objective"] = p.objective if o is None else better(o, p.objective)
        if p.bound is not None and math.isfinite(p.bound):
            b = best["bound"]
            best["bound"] = p.bound if b is None else (min if maximise else max)(b, p.bound)
        best["seconds"] = p.seconds
        echo(f"[{p.seconds:7.2f}s] {p.method:<7} objective {_fmt(p.objective):>8}  "
             f"bound {_fmt(p.bound):>8}  {p.message}", progress)

    def work(stop: StopFlag) -> SolveResult:
        return run(inst, method, time_limit=time_limit, workers=workers, seed=seed,
                   objective=objective, callback=report, stop=stop)

    try:
        res, stopped = run_stoppable(work, on_stop=lambda: click.echo(
            "interrupted: stopping the solver; the best placement and bound found so far follow "
            "(Ctrl-C again to abort)", err=True))
    except Aborted:
        _hard_abort(inst, best, as_json)  # the solver thread may be in native code: no waiting
    except KeyboardInterrupt:
        _interrupted(inst, best, as_json)
    if out is not None and res.placement is not None:
        from packing.io import save_placement

        save_placement(res.placement, inst, out)
    if as_json:
        doc = {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
               for k, v in res.to_dict().items()}  # JSON has no infinity: null
        click.echo(json.dumps(tagged("solve", {"instance": inst.name, **doc})))
    else:
        gap = res.gap
        click.echo(f"instance   {inst.name} ({inst.n_apps} apps, {inst.n_containers} containers, "
                   f"{inst.n_hosts} hosts)")
        click.echo(f"status     {res.status}" + (" (interrupted)" if stopped else ""))
        click.echo(f"objective  {_fmt(res.objective)} ({res.objective_kind})")
        click.echo(f"hosts      {res.hosts if res.hosts is not None else '-'}")
        side = " (upper: deployed is maximised)" if res.bound_kind == "upper" else ""
        click.echo(f"bound      {_fmt(res.bound)}{side}")
        click.echo(f"gap        {'-' if gap is None else f'{100 * gap:.2f}%'}")
        click.echo(f"time       {res.seconds:.2f} s")
        proofs = ", ".join(f"{k} by {v}" for k, v in res.proofs.items())
        click.echo(f"method     {res.method}" + (f" ({proofs})" if proofs else ""))
        if res.reason:
            click.echo(f"reason     {res.reason}")
        if out is not None and res.placement is not None:
            click.echo(f"placement  {out}")
    if stopped:
        click.echo("error: interrupted; the best placement and bound found so far are shown"
                   + (f", placement written to {out}" if out and res.placement is not None
                      else ""), err=True)
        raise SystemExit(INTERRUPTED)
    if res.placement is None:
        raise SystemExit(EXIT_INFEASIBLE if res.status == "infeasible" else EXIT_NO_PLACEMENT)
