"""Helpers shared by the CLI commands: loading any instance, and checking options before any work.

Every option a command takes is checked before the command does anything expensive: numbers with
:class:`FiniteFloat` (no ``nan``, no ``inf``) and :data:`SEED`, output paths with
:func:`check_output` (suffix, folder exists and is writable). A bad option is an
:class:`~packing.errors.InputError` (or a click usage error), exit status 2.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from packing.errors import InputError, Problem
from packing.io.atomic import check_writable
from packing.io.fields import MAX_SEED
from packing.model.coverage import UNCOVERED_MODES
from packing.model.instance import Instance

SEED = click.IntRange(0, MAX_SEED)
"""The type of every ``--seed`` option: a whole number in ``0 .. 2^32 - 1``."""

MAX_ORDERS = 100_000
"""Most arrival orders one command replays."""

MAX_WORKERS = 256
"""Most worker processes (or CPUs of a local Ray) one command starts."""

MAX_THREADS = 256
"""Most torch threads one command asks for."""

MAX_SECONDS = 10_000_000.0
"""Longest time limit (seconds, about 115 days) an option takes."""

INSTANCE_SUFFIXES = (".json", ".yaml", ".yml")
"""Suffixes of instance and placement files."""

PLOT_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg", ".eps", ".ps", ".tif", ".tiff", ".webp")
"""Suffixes matplotlib writes."""


def _num(x: float | None) -> str:
    """``x`` for a message: ``10_000_000`` rather than ``1e+07``."""
    if x is None:
        return ""
    return f"{x:_.0f}" if float(x).is_integer() and abs(x) >= 1e6 else f"{x:g}"


class FiniteFloat(click.ParamType):
    """A finite number (``nan`` and ``inf`` are refused), optionally bounded.

    Every option that takes a number uses this type (click's ``FloatRange`` lets ``nan`` through);
    a refusal names the option and the allowed range (exit status 2).

    Args:
        min: smallest value allowed (``None``: no bound).
        max: largest value allowed (``None``: no bound).
        min_open: whether ``min`` itself is excluded.
    """

    name = "float"

    def __init__(self, min: float | None = None, max: float | None = None,  # noqa: A002
                 min_open: bool = False) -> None:
        self.min, self.max, self.min_open = min, max, min_open

    def describe(self) -> str:
        """The allowed range in words, e.g. ``"a finite number in [0, 1]"``."""
        lo, hi = _num(self.min), _num(self.max)
        if self.min is None and self.max is None:
            return "a finite number"
        if self.max is None:
            return f"a finite number {'>' if self.min_open else '>='} {lo}"
        if self.min is None:
            return f"a finite number <= {hi}"
        return f"a finite number in {'(' if self.min_open else '['}{lo}, {hi}]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        """Parse and check ``value``; a bad one is a usage error naming the option and the range."""
        if isinstance(value, float) and math.isfinite(value):
            v = value
        else:
            try:
                v = float(value)
            except (TypeError, ValueError):
                self.fail(f"expected a number, got {value!r}", param, ctx)
        if not math.isfinite(v):
            self.fail(f"must be {self.describe()}, got {value!r}", param, ctx)
        if self.min is not None and (v <= self.min if self.min_open else v < self.min):
            self.fail(f"must be {'greater than' if self.min_open else 'at least'} {_num(self.min)} "
                      f"({self.describe()}), got {value!r}", param, ctx)
        if self.max is not None and v > self.max:
            self.fail(f"must be at most {_num(self.max)} ({self.describe()}), got {value!r}", param, ctx)
        return v


def check_output(path: str | None, option: str, suffixes: Sequence[str] = INSTANCE_SUFFIXES) -> None:
    """Check an output path before any work: its suffix, and that it can be written.

    The file need not exist; its folder (or the nearest existing parent, since saving creates
    missing folders) must be a writable folder, and an existing target must be a writable file.

    Args:
        path: the path given on the command line (``None``: nothing to check).
        option: the option's name, e.g. ``"--out"``.
        suffixes: the suffixes allowed (lower case, with the dot).

    Raises:
        InputError: naming the path, the option and the reason.
    """
    if path is None:
        return
    if Path(path).suffix.lower() not in suffixes:
        raise InputError([Problem(str(path), option,
                                  f"expected a file name ending in {', '.join(suffixes)}")])
    check_writable(path, option)


def ray_address_option(needs: str) -> Any:
    """The ``--ray-address`` option of the commands that run on Ray (``needs``: the option it goes with).

    Args:
        needs: the option and value that select Ray, e.g. ``"--executor ray"``.
    """
    return click.option(
        "--ray-address", default=None, metavar="HOST:PORT",
        help=f"With {needs}: the Ray cluster to run on, the address of its head node (the port of "
             "`ray start --head --port`, 6379 by default) [default: $RAY_ADDRESS, else a local "
             "Ray]. A cluster with token authentication takes the token from $RAY_AUTH_TOKEN, "
             "$RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token. See docs/scale-out.md.")


LOADER_OPTIONS = "vbp.loader_options"
"""Key in ``click.Context.meta`` under which :func:`data_options` keeps the data-set options."""


def _keep_loader_option(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if value is not None and value is not False and param.name is not None:
        ctx.meta.setdefault(LOADER_OPTIONS, {})[param.name] = value


def data_options(fn: Any) -> Any:
    """Add the data-set loader options to a command.

    They are ``--view``, ``--hosts``, ``--rules``, ``--round-up``, ``--pods``, ``--nodes``,
    ``--scale`` and ``--ignore-topology``.
    They are not passed to the command's function: :func:`load_any` picks them up from the click
    context, so every command that loads its input through it honours them. An option
    that does not apply to the input (``--pods`` on a Tianchi folder) is an error (exit 2).
    """
    options = [
        click.option("--view", type=click.Choice(["reduced", "full"]), default=None,
                     help="Tianchi 2018: peak cpu/mem (reduced, default) or every time point (full)."),
        click.option("--hosts", default=None, metavar="SPEC",
                     help="Tianchi 2018: a uniform fleet instead of the contest machines, "
                          "<cores>c<GB>g[:count], e.g. 64c128g (CPU and memory only). "
                          "Kubernetes manifests: the host types, [NAME=]<cores>c<GiB>g[<cards>gpu]"
                          "[:count=N][:pods=N][:KEY=VALUE], several separated by commas."),
        click.option("--rules", type=click.Choice(["all", "cross", "none"]), default=None,
                     help="Tianchi 2018: every rule (default), the cross-app rules only, or none."),
        click.option("--round-up", is_flag=True, default=False,
                     help="Tianchi 2018: round peak CPU and memory up to whole units (as the "
                          "published 2-D form of the data set does)."),
        click.option("--pods", default=None, metavar="NAME",
                     help="openb: the pod list openb_pod_list_NAME.csv (default: default)."),
        click.option("--nodes", type=click.Choice(["all", "gpu"]), default=None,
                     help="openb: all nodes (default) or the GPU nodes only."),
        click.option("--scale", type=click.FloatRange(min=0, min_open=True), default=None,
                     metavar="K",
                     help="Kubernetes manifests: run every workload K times wider (replicas "
                          "times K, rounded up)."),
        click.option("--ignore-topology", is_flag=True, default=False,
                     help="Kubernetes manifests: plan without the rules vbp does not model "
                          "(zone anti-affinity, spread constraints, pod affinity); vbp info "
                          "lists them."),
    ]
    for opt in reversed(options):
        fn = opt(fn)
    for param in fn.__click_params__[-len(options):]:
        param.expose_value = False
        param.callback = _keep_loader_option
    return fn


def load_any(path: str | Path | None, *, hosts_needed: bool = True, **options: Any) -> Instance:
    """The instance a command names: a file or data-set folder, or a built-in name.

    Args:
        path: an instance file (JSON/YAML), a ``.vbp`` file, a data-set folder (see
            :func:`packing.loaders.load_any`), or a built-in name such as ``sigma`` (used when no
            file of that name exists); ``None`` means the built-in ``sigma`` instance.
        hosts_needed: the command places containers, so Kubernetes manifests need ``--hosts``
            (``vbp info`` and ``vbp validate`` describe manifests without hosts).
        **options: passed to the data-set loader, over the command's :func:`data_options`.

    Raises:
        InputError: as the loader does; also a data-set option given for a built-in instance,
            and manifests without ``--hosts`` when ``hosts_needed``.
    """
    from packing.io.builtin import BUILTIN_NAMES, builtin_instance
    from packing.loaders import load_any as _load_any

    ctx = click.get_current_context(silent=True)
    given = dict(ctx.meta.get(LOADER_OPTIONS, {})) if ctx is not None else {}
    given.update({k: v for k, v in options.items() if v is not None})
    if path is None or (str(path) in BUILTIN_NAMES and not Path(path).exists()):
        if given:
            raise InputError([Problem(str(path or "sigma"), "--" + k.replace("_", "-"),
                                      "option applies to data-set folders, not to a built-in "
                                      "instance") for k in given])
        return builtin_instance(str(path or "sigma"))
    inst = _load_any(path, **given)
    if hosts_needed and "k8s" in inst.meta and inst.apps and not inst.host_types:
        raise InputError([Problem(str(path), "--hosts", "Kubernetes manifests carry no hosts; "
                                  "give the host types, e.g. --hosts 16c64g:10")])
    return inst


def given_command(*prefix: str) -> list[str]:
    """The words of this run's command line: ``prefix`` then the options given (defaults left out)."""
    import click
    from click.core import ParameterSource

    ctx = click.get_current_context()
    words = list(prefix)
    for param in ctx.command.params:
        name = param.name
        if name is None or ctx.get_parameter_source(name) in (None, ParameterSource.DEFAULT):
            continue
        value = ctx.params.get(name)
        if isinstance(param, click.Argument):
            words.append(str(value))
        elif isinstance(param, click.Option):
            flag = max(param.opts, key=len)
            if param.is_flag:
                if value:
                    words.append(flag)
            elif value is not None:
                words += [flag, str(value)]
    return words


def prepare(inst: Instance, repair: bool) -> Instance:
    """Repair an infeasible snapshot when asked (reporting how many containers move, on stderr)."""
    if repair and inst.initial is not None:
        from packing.sim.simulator import repair_snapshot

        inst, moved = repair_snapshot(inst)
        if moved:
            click.echo(f"{inst.name}: {moved} containers of the snapshot broke constraints; "
                       "they arrive first and are re-placed", err=True)
    return inst


@contextlib.contextmanager
def naming_file(inst: Instance, path: str | None) -> Iterator[None]:
    """Errors the engine raises name the instance; rewrite them to name the file instead."""
    try:
        yield
    except InputError as e:
        if path is None:
            raise
        raise InputError([Problem(path, p.field, p.reason) if p.source == inst.name else p
                          for p in e.problems]) from None


F = TypeVar("F", bound=Callable[..., Any])


def executor_options(fn: F) -> F:
    """Add ``--executor``, ``--workers`` and ``--ray-address`` to a command (compare, sweep)."""
    fn = ray_address_option("--executor ray")(fn)
    fn = click.option("--workers", type=click.IntRange(1, MAX_WORKERS), default=None,
                      help="Processes (process) or CPUs of a local Ray (ray) [default: all cores].")(fn)
    fn = click.option("--executor", "executor_kind", type=click.Choice(["serial", "process", "ray"]),
                      default="serial", show_default=True,
                      help="Where the runs go: this process, local processes, or Ray. The numbers "
                           "are the same on every executor.")(fn)
    return fn


def uncovered_option(fn: F) -> F:
    """Add ``--uncovered error|drop|arrive`` to a command (compare, simulate, sweep)."""
    return click.option(
        "--uncovered", type=click.Choice(UNCOVERED_MODES), default="error", show_default=True,
        help="Containers of an app that neither the snapshot holds nor the request stream "
             "requests: error (refuse the instance, exit 2), drop (leave them out: solve and "
             "simulate only the covered containers) or arrive (they arrive first, before the "
             "stream). The report says which.")(fn)

