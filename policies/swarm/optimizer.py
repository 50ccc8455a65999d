"""Black-box optimisers for policy weights, behind one interface.

The objective is vectorised: it takes positions of shape ``(n_candidates, dims)`` and returns costs
of shape ``(n_candidates,)``; every candidate of an iteration is scored on the same request orders
(common random numbers), which the objective closes over.

:class:`PSO` drives pyswarms' ``GlobalBestPSO`` one iteration at a time (inertia ``w``, cognitive
``c1``, social ``c2``), so it can report progress, stop early, and checkpoint and resume. pyswarms
draws from NumPy's *global* RNG; every call into it runs inside :func:`_seeded_global_rng`, which
seeds the global RNG from the optimiser's own ``numpy.random.Generator`` and restores the caller's
global state afterwards. The same seed therefore gives the same run, whatever else the process does.

:class:`DifferentialEvolution` (SciPy) implements the same interface, to check whether PSO itself is
the bottleneck.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol
from unittest import mock

import numpy as np

from packing.errors import InputError, Problem
from packing.io.atomic import atomic_path

Objective = Callable[[np.ndarray], np.ndarray]
"""Maps positions ``(n_candidates, dims)`` to costs ``(n_candidates,)``."""


@dataclass(frozen=True)
class IterationRecord:
    """One iteration of an optimiser.

    Attributes:
        iteration: 0-based iteration number.
        best_cost: best cost found so far.
        mean_cost: mean cost of this iteration's candidates.
        best_position: the best position so far, shape ``(dims,)``.
    """

    iteration: int
    best_cost: float
    mean_cost: float
    best_position: tuple[float, ...]


IterationCallback = Callable[[IterationRecord], bool | None]
"""Called after every iteration; returning ``False`` stops the optimisation early."""


@dataclass(frozen=True)
class OptimResult:
    """What an optimiser returns.

    Attributes:
        best_position: shape ``(dims,)``.
        best_cost: its cost.
        history: one record per iteration run.
        stopped_early: whether a stopping rule or the callback ended the run.
        evaluations: number of candidate evaluations.
    """

    best_position: np.ndarray
    best_cost: float
    history: tuple[IterationRecord, ...]
    stopped_early: bool
    evaluations: int


class Optimizer(Protocol):
    """A bounded black-box minimiser over ``dims`` real parameters."""

    def minimize(
        self,
        objective: Objective,
        dims: int,
        bounds: tuple[np.ndarray, np.ndarray],
        *,
        init: np.ndarray | None = None,
        callback: IterationCallback | None = None,
    ) -> OptimResult:
        """Minimise ``objective`` within ``bounds`` (each of shape ``(dims,)``)."""
        ...


@dataclass(frozen=True)
class PSOSettings:
    """Settings of particle swarm optimisation (pyswarms ``GlobalBestPSO``).

    Attributes:
        n_particles: swarm size.
        iters: maximum number of iterations.
        w: inertia weight.
        c1: cognitive (self-learning) coefficient.
        c2: social-learning coefficient.
        seed: seed of the optimiser's own generator.
        patience: stop after this many iterations without improving the best cost by more than
            ``tol`` (0: never stop early).
        tol: improvement that counts, absolute.
        init_scale: initial positions are ``init + init_scale * N(0, 1)`` around ``init`` when
            given (particle 0 sits exactly on ``init``), else uniform within the bounds.
    """

    n_particles: int = 16
    iters: int = 30
    w: float = 0.7
    c1: float = 1.5
    c2: float = 1.5
    seed: int = 0
    patience: int = 10
    tol: float = 1e-9
    init_scale: float = 0.3

    def to_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (for provenance in saved policies)."""
        return asdict(self)


@contextlib.contextmanager
def _quiet_pyswarms() -> Iterator[None]:
    """Keep pyswarms from configuring the root logger and writing ``report.log``.

    pyswarms 1.3 calls ``logging.config.dictConfig`` with a file handler in the current directory
    when it is imported and whenever an optimiser is built; a library must not touch its caller's
    logging or files. Import pyswarms and build its objects only inside this context.
    """
    import logging.config

    with mock.patch.object(logging.config, "dictConfig", lambda config: None):
        yield


@contextlib.contextmanager
def _seeded_global_rng(rng: np.random.Generator) -> Iterator[None]:
    """Seed NumPy's global RNG from ``rng`` for the duration, then restore the caller's state."""
    saved = np.random.get_state()
    np.random.seed(int(rng.integers(2**32 - 1)))
    try:
        yield
    finally:
        np.random.set_state(saved)


CHECKPOINT_FORMAT = "vbp-pso-checkpoint"
"""The ``format`` field of a checkpoint file."""
CHECKPOINT_VERSION = 1
"""The version of the checkpoint layout this code writes and reads."""
MAX_CHECKPOINT_BYTES = 2**30
"""Largest checkpoint file read (1 GiB)."""


def _enc(x: float) -> float | str:
    """A float for JSON: finite ones as numbers (exact), others as ``"inf"``, ``"-inf"``, ``"nan"``."""
    x = float(x)
    return x if math.isfinite(x) else str(x)


def _canonical(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


@dataclass
class PSOCheckpoint:
    """Everything needed to resume a PSO run exactly.

    Saved as a data-only JSON file (never pickle: loading a checkpoint cannot run code)::

        {"format": "vbp-pso-checkpoint", "version": 1, "sha256": "<hex>", "payload": {...}}

    ``sha256`` is the SHA-256 of the payload's canonical JSON (sorted keys, no spaces), so a
    corrupt or edited file is refused. Floats are stored exactly (JSON numbers in Python's
    shortest round-trip form; non-finite ones as the strings ``"inf"``, ``"-inf"``, ``"nan"``).
    Saving writes a temporary file in the same folder, flushes it to disk and renames it over
    the target, so a process killed while saving leaves the previous checkpoint intact.

    Attributes:
        iteration: iterations completed.
        position, velocity, pbest_pos: shape ``(n_particles, dims)``.
        pbest_cost: shape ``(n_particles,)``.
        best_pos: shape ``(dims,)``.
        best_cost: the global best cost.
        rng_state: the optimiser generator's bit-generator state.
        history: records so far.
        since_improved: iterations since the best cost last improved.
        settings: the settings of the run that wrote it (checked on resume).
    """

    iteration: int
    position: np.ndarray
    velocity: np.ndarray
    pbest_pos: np.ndarray
    pbest_cost: np.ndarray
    best_pos: np.ndarray
    best_cost: float
    rng_state: dict[str, Any]
    history: list[IterationRecord] = field(default_factory=list)
    since_improved: int = 0
    settings: dict[str, Any] = field(default_factory=dict)

    def to_payload(self) -> dict[str, Any]:
        """The checkpoint as plain JSON data (the file's ``payload``)."""
        def mat(a: np.ndarray) -> list[Any]:
            return [[_enc(x) for x in row] for row in np.asarray(a, dtype=np.float64)]

        def vec(a: Any) -> list[float | str]:
            return [_enc(x) for x in np.asarray(a, dtype=np.float64).ravel()]

        return {
            "iteration": int(self.iteration), "position": mat(self.position),
            "velocity": mat(self.velocity), "pbest_pos": mat(self.pbest_pos),
            "pbest_cost": vec(self.pbest_cost), "best_pos": vec(self.best_pos),
            "best_cost": _enc(self.best_cost), "rng_state": _plain_state(self.rng_state),
            "history": [{"iteration": r.iteration, "best_cost": _enc(r.best_cost),
                         "mean_cost": _enc(r.mean_cost), "best_position": vec(r.best_position)}
                        for r in self.history],
            "since_improved": int(self.since_improved), "settings": dict(self.settings),
        }

    def save(self, path: str | Path) -> None:
        """Write the checkpoint atomically (:mod:`packing.io.atomic`: temp file beside it, fsync, rename).

        Raises:
            InputError: the file cannot be written.
        """
        p = Path(path)
        payload = self.to_payload()
        doc = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION,
               "sha256": hashlib.sha256(_canonical(payload)).hexdigest(), "payload": payload}
        data = json.dumps(doc, allow_nan=False).encode()
        with atomic_path(p) as tmp:
            tmp.write_bytes(data)

    @classmethod
    def load(cls, path: str | Path) -> PSOCheckpoint:
        """Read and check a checkpoint written by :meth:`save` (data only: nothing is executed).

        Raises:
            InputError: naming the file (and the field) when it is missing, not a checkpoint, of
                another version, corrupt (checksum) or malformed.
        """
        src = str(path)

        def bad(field: str, reason: str) -> InputError:
            return InputError([Problem(src, field, reason)])

        p = Path(path)
        try:
            if p.stat().st_size > MAX_CHECKPOINT_BYTES:
                raise bad("", f"file is larger than {MAX_CHECKPOINT_BYTES:,} bytes; not a "
                          "checkpoint")
            raw = p.read_bytes()
        except FileNotFoundError:
            raise bad("", "no such checkpoint file") from None
        except IsADirectoryError:
            raise bad("", "is a folder, expected a checkpoint file") from None
        except OSError as e:
            raise bad("", f"cannot read: {e.strerror or e}") from None
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise bad("", "not a vbp checkpoint (not JSON; checkpoints of older versions were "
                      "pickles, which are never loaded: start again without --resume)") from None
        if not isinstance(doc, dict) or doc.get("format") != CHECKPOINT_FORMAT:
            raise bad("format", f"not a vbp checkpoint (expected format {CHECKPOINT_FORMAT!r})")
        if doc.get("version") != CHECKPOINT_VERSION:
            raise bad("version", f"checkpoint version {doc.get('version')!r} is not supported "
                      f"(this vbp reads version {CHECKPOINT_VERSION})")
        payload = doc.get("payload")
        if not isinstance(payload, dict):
            raise bad("payload", "missing or not an object")
        try:
            digest = hashlib.sha256(_canonical(payload)).hexdigest()
        except (TypeError, ValueError):
            digest = ""
        if doc.get("sha256") != digest:
            raise bad("sha256", "checksum mismatch: the checkpoint is corrupt or was edited")
        return _from_payload(payload, src)


def _plain_state(state: Any) -> Any:
    """A bit-generator state as plain JSON data (ints stay exact: JSON integers are unbounded)."""
    if isinstance(state, dict):
        return {str(k): _plain_state(v) for k, v in state.items()}
    if isinstance(state, np.ndarray):
        return [_plain_state(x) for x in state.tolist()]
    if isinstance(state, np.integer):
        return int(state)
    return state


def _from_payload(d: dict[str, Any], src: str) -> PSOCheckpoint:
    """Build a checkpoint from a checked payload, validating every field's type and shape."""
    def bad(field: str, reason: str) -> InputError:
        return InputError([Problem(src, field, reason)])

    def num(v: Any, field: str) -> float:
        if isinstance(v, str) and v in ("inf", "-inf", "nan"):
            return float(v)
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise bad(field, f"expected a number, got {type(v).__name__}")
        return float(v)

    def whole(v: Any, field: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise bad(field, "expected a whole number, at least 0")
        return v

    def arr(v: Any, field: str, ndim: int) -> np.ndarray:
        if not isinstance(v, list) or (ndim == 2 and not all(isinstance(r, list) for r in v)):
            raise bad(field, f"expected a {'list of lists' if ndim == 2 else 'list'} of numbers")
        if ndim == 1:
            return np.array([num(x, field) for x in v], dtype=np.float64)
        rows = [[num(x, field) for x in r] for r in v]
        if len({len(r) for r in rows}) > 1:
            raise bad(field, "rows of different lengths")
        return np.array(rows, dtype=np.float64).reshape(len(rows), len(rows[0]) if rows else 0)

    for k in ("iteration", "position", "velocity", "pbest_pos", "pbest_cost", "best_pos",
              "best_cost", "rng_state", "history", "since_improved"):
        if k not in d:
            raise bad(f"payload.{k}", "missing")
    position = arr(d["position"], "payload.position", 2)
    raw_settings = d.get("settings")
    settings: dict[str, Any] = raw_settings if isinstance(raw_settings, dict) else {}
    n, dims = position.shape if position.ndim == 2 else (0, 0)
    ck = PSOCheckpoint(
        whole(d["iteration"], "payload.iteration"), position,
        arr(d["velocity"], "payload.velocity", 2), arr(d["pbest_pos"], "payload.pbest_pos", 2),
        arr(d["pbest_cost"], "payload.pbest_cost", 1), arr(d["best_pos"], "payload.best_pos", 1),
        num(d["best_cost"], "payload.best_cost"), {}, [],
        whole(d["since_improved"], "payload.since_improved"), settings)
    for name, a, shape in (("velocity", ck.velocity, (n, dims)), ("pbest_pos", ck.pbest_pos, (n, dims)),
                           ("pbest_cost", ck.pbest_cost, (n,)), ("best_pos", ck.best_pos, (dims,))):
        if a.shape != shape:
            raise bad(f"payload.{name}", f"has shape {a.shape}, expected {shape}")
    state = d["rng_state"]
    try:
        probe = np.random.default_rng(0)
        probe.bit_generator.state = state
    except (TypeError, ValueError, KeyError, OverflowError):
        raise bad("payload.rng_state", "not a valid PCG64 generator state") from None
    ck.rng_state = state
    if not isinstance(d["history"], list):
        raise bad("payload.history", "expected a list")
    for i, r in enumerate(d["history"]):
        f = f"payload.history[{i}]"
        if not isinstance(r, dict):
            raise bad(f, "expected an object")
        pos = arr(r.get("best_position"), f"{f}.best_position", 1)
        ck.history.append(IterationRecord(whole(r.get("iteration"), f"{f}.iteration"),
                                          num(r.get("best_cost"), f"{f}.best_cost"),
                                          num(r.get("mean_cost"), f"{f}.mean_cost"),
                                          tuple(float(x) for x in pos)))
    return ck


class PSO:
    """Particle swarm optimisation with pyswarms' ``GlobalBestPSO``, seeded and resumable.

    With a checkpoint file, an interruption (``KeyboardInterrupt`` from Ctrl-C, or a killed
    process) while an iteration is evaluated or while its checkpoint is written leaves the
    checkpoint of the last complete iteration (saves are atomic); resuming from it gives the same
    history, best position and best cost as a run that was never interrupted. A checkpoint written
    when ``patience`` ran out resumes as a finished run (no further iteration).

    Args:
        settings: the typed settings.
        checkpoint_path: if given, a checkpoint is written there after every iteration.
        resume: resume from ``checkpoint_path`` if it exists.
    """

    name = "pso"

    def __init__(
        self,
        settings: PSOSettings | None = None,
        *,
        checkpoint_path: str | Path | None = None,
        resume: bool = False,
    ) -> None:
        self.settings = settings or PSOSettings()
        self.checkpoint_path = checkpoint_path
        self.resume = resume

    def _run_settings(self, dims: int) -> dict[str, Any]:
        """What a resumed run must share with the run that wrote the checkpoint."""
        s = self.settings
        return {"n_particles": s.n_particles, "dims": dims, "w": s.w, "c1": s.c1, "c2": s.c2,
                "seed": s.seed}

    def _check_resumable(self, ck: PSOCheckpoint, dims: int) -> None:
        """Refuse a checkpoint written by a run with other settings (resuming would not be exact).

        Raises:
            InputError: naming the checkpoint file and every setting that differs.
        """
        src = str(self.checkpoint_path)
        now = self._run_settings(dims)
        problems = [Problem(src, f"settings.{k}", f"the checkpoint was written with {k} = "
                            f"{ck.settings[k]!r}, this run has {v!r}")
                    for k, v in now.items() if k in ck.settings and ck.settings[k] != v]
        if ck.position.shape != (self.settings.n_particles, dims):
            problems.append(Problem(src, "payload.position", f"has shape {ck.position.shape}; "
                                    f"this run has {self.settings.n_particles} particles in "
                                    f"{dims} dimensions"))
        if problems:
            raise InputError(problems)

    def _initial_positions(
        self, rng: np.random.Generator, dims: int, lo: np.ndarray, hi: np.ndarray,
        init: np.ndarray | None,
    ) -> np.ndarray:
        s = self.settings
        if init is None:
            return rng.uniform(lo, hi, size=(s.n_particles, dims))
        pos = init[None, :] + s.init_scale * (hi - lo) * rng.standard_normal((s.n_particles, dims))
        pos[0] = init
        return np.clip(pos, lo, hi)

    def minimize(
        self,
        objective: Objective,
        dims: int,
        bounds: tuple[np.ndarray, np.ndarray],
        *,
        init: np.ndarray | None = None,
        callback: IterationCallback | None = None,
    ) -> OptimResult:
        """Run PSO; see :class:`Optimizer`."""
        with _quiet_pyswarms():
            from pyswarms.backend.operators import compute_pbest
            from pyswarms.single.global_best import GlobalBestPSO

        s = self.settings
        lo = np.asarray(bounds[0], dtype=np.float64)
        hi = np.asarray(bounds[1], dtype=np.float64)
        rng = np.random.default_rng(s.seed)
        ck: PSOCheckpoint | None = None
        if self.resume and self.checkpoint_path is not None and Path(self.checkpoint_path).exists():
            ck = PSOCheckpoint.load(self.checkpoint_path)
            self._check_resumable(ck, dims)
        init_pos = self._initial_positions(rng, dims, lo, hi, init) if ck is None else ck.position
        options = {"c1": s.c1, "c2": s.c2, "w": s.w}
        with _seeded_global_rng(rng), _quiet_pyswarms():
            opt = GlobalBestPSO(n_particles=s.n_particles, dimensions=dims, options=options,
                                bounds=(lo, hi), init_pos=init_pos)
        if ck is not None:  # continue the generator's stream exactly where the run stopped
            rng.bit_generator.state = ck.rng_state
        swarm = opt.swarm
        opt.bh.memory = swarm.position
        opt.vh.memory = swarm.position
        history: list[IterationRecord] = []
        since = 0
        start = 0
        if ck is None:
            swarm.pbest_cost = np.full(s.n_particles, np.inf)
            swarm.best_cost = np.inf
        else:
            swarm.position, swarm.velocity = ck.position.copy(), ck.velocity.copy()
            swarm.pbest_pos, swarm.pbest_cost = ck.pbest_pos.copy(), ck.pbest_cost.copy()
            swarm.best_pos, swarm.best_cost = ck.best_pos.copy(), ck.best_cost
            history, since, start = list(ck.history), ck.since_improved, ck.iteration
        evaluations = start * s.n_particles  # every iteration scores every particle once
        # a checkpoint written when patience ran out: the run had ended, resuming adds nothing
        stopped = bool(ck is not None and s.patience and since >= s.patience)
        for it in range(start, start if stopped else s.iters):
            costs = np.asarray(objective(swarm.position), dtype=np.float64)
            if costs.shape != (s.n_particles,):
                raise ValueError(f"objective returned shape {costs.shape}, "
                                 f"expected ({s.n_particles},)")
            evaluations += s.n_particles
            swarm.current_cost = costs
            swarm.pbest_pos, swarm.pbest_cost = compute_pbest(swarm)
            previous = float(swarm.best_cost)
            swarm.best_pos, swarm.best_cost = opt.top.compute_gbest(swarm)
            since = 0 if float(swarm.best_cost) < previous - s.tol else since + 1
            rec = IterationRecord(it, float(swarm.best_cost), float(costs.mean()),
                                  tuple(float(x) for x in swarm.best_pos))
            history.append(rec)
            with _seeded_global_rng(rng):
                swarm.options = opt.oh(opt.options, iternow=it, itermax=s.iters)
                swarm.velocity = opt.top.compute_velocity(swarm, opt.velocity_clamp, opt.vh,
                                                          opt.bounds)
                swarm.position = opt.top.compute_position(swarm, opt.bounds, opt.bh)
            if self.checkpoint_path is not None:
                PSOCheckpoint(it + 1, swarm.position.copy(), swarm.velocity.copy(),
                              swarm.pbest_pos.copy(), swarm.pbest_cost.copy(),
                              np.asarray(swarm.best_pos).copy(), float(swarm.best_cost),
                              dict(rng.bit_generator.state), list(history),
                              since, self._run_settings(dims)).save(self.checkpoint_path)
            if callback is not None and callback(rec) is False:
                stopped = True
                break
            if s.patience and since >= s.patience:
                stopped = True
                break
        best = int(np.argmin(swarm.pbest_cost))
        return OptimResult(swarm.pbest_pos[best].copy(), float(swarm.pbest_cost[best]),
                           tuple(history), stopped, evaluations)


@dataclass(frozen=True)
class DESettings:
    """Settings of SciPy's differential evolution.

    Attributes:
        popsize: population multiplier (population = popsize * dims).
        iters: maximum generations.
        seed: seed of the generator passed to SciPy.
        tol: relative convergence tolerance.
    """

    popsize: int = 8
    iters: int = 30
    seed: int = 0
    tol: float = 1e-6

    def to_dict(self) -> dict[str, Any]:
        """The settings as a plain dict."""
        return asdict(self)


class DifferentialEvolution:
    """SciPy's ``differential_evolution`` (vectorised) behind the :class:`Optimizer` interface."""

    name = "de"

    def __init__(self, settings: DESettings | None = None) -> None:
        self.settings = settings or DESettings()

    def minimize(
        self,
        objective: Objective,
        dims: int,
        bounds: tuple[np.ndarray, np.ndarray],
        *,
        init: np.ndarray | None = None,
        callback: IterationCallback | None = None,
    ) -> OptimResult:
        """Run differential evolution; see :class:`Optimizer`."""
        from scipy.optimize import differential_evolution

        s = self.settings
        lo, hi = np.asarray(bounds[0], float), np.asarray(bounds[1], float)
        rng = np.random.default_rng(s.seed)
        n_pop = max(5, s.popsize * dims)
        pop = rng.uniform(lo, hi, size=(n_pop, dims))
        if init is not None:
            pop[0] = np.clip(init, lo, hi)
        history: list[IterationRecord] = []
        count = [0]
        stop = [False]

        def f(x: np.ndarray) -> np.ndarray:  # scipy passes (dims, S)
            count[0] += x.shape[1]
            return np.asarray(objective(x.T), dtype=np.float64)

        def cb(intermediate_result: Any) -> bool:
            rec = IterationRecord(len(history), float(intermediate_result.fun), float("nan"),
                                  tuple(float(v) for v in intermediate_result.x))
            history.append(rec)
            if callback is not None and callback(rec) is False:
                stop[0] = True
                return True
            return False

        res = differential_evolution(
            f, list(zip(lo, hi, strict=True)), maxiter=s.iters, popsize=s.popsize, init=pop, tol=s.tol,
            rng=rng, vectorized=True, updating="deferred", polish=False, callback=cb)
        return OptimResult(np.asarray(res.x), float(res.fun), tuple(history),
                           stop[0] or bool(res.success), count[0])


def settings_json(settings: PSOSettings | DESettings) -> str:
    """Settings as a JSON string (for logs)."""
    return json.dumps(settings.to_dict(), sort_keys=True)
