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
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from packing.errors import EXIT_INFEASIBLE, EXIT_INTERRUPTED, EXIT_NO_PLACEMENT, InputError, Problem
from packing.model.instance import Instance
from solvers import METHOD_NAMES
from vbp.cli.common import MAX_SECONDS, MAX_WORKERS, SEED, FiniteFloat, data_options, load_any
from vbp.cli.formats import tagged
from vbp.cli.outputs import check_outputs, force_option

if TYPE_CHECKING:
    from solvers import SolveResult, StopFlag


def _load(path: str) -> Instance:
    return load_any(path)


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


class _Aborted(KeyboardInterrupt):
    """A second Ctrl-C while the solver thread still runs."""


def _run_stoppable(work: Callable[[StopFlag], SolveResult]) -> tuple[SolveResult, bool]:
    """Run ``work(stop)`` with Ctrl-C wired to ``stop``; return its result and whether stopped.

    The solve runs in a worker thread while the main thread waits for SIGINT. On POSIX, SIGINT
    is blocked in every thread the solve starts (the worker and the threads the solvers start
    inherit the mask) and the main thread takes it with ``sigwait``, waiting there without a
    break until the worker wakes it (``pthread_kill``) as it ends. The kernel hands a
    process-wide signal to the main thread whenever that thread is waiting for it, so neither a
    native solver that installs a SIGINT disposition of its own for a moment (CBC does, during
    branch and bound) nor a thread started before the mask (OpenBLAS's, at numpy's import) can
    take the Ctrl-C; the main thread sees it even while the worker is inside native code. The
    worker starts its work only once the main thread is about to wait (a Ctrl-C in between, with
    SIGINT blocked in the main thread and a native SIG_IGN in force, went to OpenBLAS's thread
    and was lost).
    Elsewhere a Python handler does the same, less robustly. The first SIGINT sets
    the flag; the solver then returns its best so far. A second SIGINT raises
    :class:`KeyboardInterrupt` here (hard abort). Outside the main thread no handler can be
    installed and the solve runs directly.

    Raises:
        _Aborted: a second Ctrl-C (the worker thread is still running).
        KeyboardInterrupt: raised by the solve itself.
    """
    from solvers import StopFlag

    stop = StopFlag()
    if threading.current_thread() is not threading.main_thread():
        return work(stop), stop.is_set()
    box: dict[str, Any] = {}

    done = threading.Event()
    listening = threading.Event()  # the main thread still waits (not after a hard abort)
    main_id = threading.main_thread().ident
    waitable = hasattr(signal, "pthread_sigmask") and hasattr(signal, "sigwait")

    ready = threading.Event()  # set by the main thread just before it starts waiting for SIGINT

    def target() -> None:
        try:
            ready.wait()
            box["result"] = work(stop)
        except BaseException as e:  # noqa: BLE001 - re-raised in the main thread
            box["error"] = e
        finally:
            done.set()
            if waitable and listening.is_set() and main_id is not None:
                signal.pthread_kill(main_id, signal.SIGINT)  # wake the main thread's sigwait

    def on_sigint(signum: int = signal.SIGINT, frame: object = None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt  # the second Ctrl-C: abort now
        stop.set()
        click.echo("interrupted: stopping the solver; the best placement and bound found so far "
                   "follow (Ctrl-C again to abort)", err=True)

    worker = threading.Thread(target=target, name="vbp-solve", daemon=True)
    previous = signal.signal(signal.SIGINT, on_sigint)
    if waitable:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        listening.set()
    try:
        worker.start()
        while not done.is_set():
            ready.set()  # the worker needs the GIL, which this thread keeps until it is in sigwait
            if not waitable:
                worker.join(0.5)
            elif signal.sigwait({signal.SIGINT}) and not done.is_set():
                on_sigint()
        worker.join()
    except KeyboardInterrupt:
        if worker.is_alive():
            raise _Aborted from None
        raise
    finally:
        listening.clear()
        if waitable:
            while signal.sigtimedwait({signal.SIGINT}, 0) is not None:
                pass  # a Ctrl-C as the solve ended: its result is complete
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, previous)
    if "error" in box:
        raise box["error"]
    return box["result"], stop.is_set()


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
@click.argument("path", metavar="FILE")
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
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@data_options
def solve(path: str, method: str, time_limit: float, workers: int, seed: int,
          objective: str | None, as_json: bool, out: str | None, force: bool, quiet: bool) -> None:
    """Solve FILE (an instance file, a .vbp file, a data-set folder, or the word `sigma`).

    The instance is solved offline (all containers at once, ignoring an initial snapshot and
    request times). Prints status, objective, proven bound, gap, time and method; progress goes
    to stderr. Exit status: 0 with a placement, 2 on bad input (also an --out that exists,
    without --force, or that is FILE itself), 3 when the instance is proven infeasible, 4 when no
    placement was found within --time-limit and nothing is proven, 130 when interrupted. Ctrl-C
    stops the solver, which returns the best placement and the best proven bound found so far:
    they are printed as usual (``interrupted`` in the JSON, ``--out`` still written) with exit
    status 130; a second Ctrl-C aborts at once.
    """
    from solvers import available
    from solvers import solve as run
    from solvers.result import Progress

    check_outputs([(out, "--out", None)], force=force, inputs=[path])
    if not available(method):
        raise InputError([Problem("<options>", "--method",
                                  f"method {method!r} is not available in this installation")])
    inst = _load(path)
    maximise = objective == "deployed"
    best: dict[str, Any] = {"objective": None, "bound": None, "seconds": 0.0,
                            "bound_kind": "upper" if maximise else "lower"}

    def progress(p: Progress) -> None:
        better = max if maximise else min
        if p.objective is not None and math.isfinite(p.objective):
            o = best["objective"]
            best["objective"] = p.objective if o is None else better(o, p.objective)
        if p.bound is not None and math.isfinite(p.bound):
            b = best["bound"]
            best["bound"] = p.bound if b is None else (min if maximise else max)(b, p.bound)
        best["seconds"] = p.seconds
        if not quiet:
            click.echo(f"[{p.seconds:7.2f}s] {p.method:<7} objective {_fmt(p.objective):>8}  "
                       f"bound {_fmt(p.bound):>8}  {p.message}", err=True)

    def work(stop: StopFlag) -> SolveResult:
        return run(inst, method, time_limit=time_limit, workers=workers, seed=seed,
                   objective=objective, callback=progress, stop=stop)

    try:
        res, stopped = _run_stoppable(work)
    except _Aborted:
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
