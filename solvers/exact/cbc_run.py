"""Run PuLP's bundled CBC on a model as a process this module can interrupt.

``LpProblem.solve(PULP_CBC_CMD(...))`` waits for the CBC process until it ends: CBC keeps its own
``-sec`` limit (it can run past it on a large root node) and a stop request has to wait for it.
:func:`solve_interruptible` runs the same executable on the model's MPS file and, at a deadline
or when ``stop`` is set, sends it SIGINT: CBC then ends its search and writes the best solution it
has, as on a Ctrl-C; a CBC that does not end within :data:`GRACE` seconds is killed. The files go
through PuLP's own writers and readers (``writeMPS``, ``writesol``, ``readsol_MPS``), so the
variables and statuses are set exactly as ``LpProblem.solve`` sets them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from solvers.base import Stop

GRACE = 3.0
"""Seconds CBC gets to write its solution after SIGINT before it is killed."""


def _interrupt(proc: subprocess.Popen[bytes]) -> None:
    if os.name == "posix":
        proc.send_signal(signal.SIGINT)  # CBC stops and writes its best solution
    else:  # pragma: no cover - no SIGINT to a child elsewhere: end it (no solution)
        proc.terminate()


def solve_interruptible(problem: Any, *, time_limit: float, deadline: float, stop: Stop | None = None,
                        threads: int = 1, seed: int = 0, warm_start: bool = False) -> int:
    """Solve ``problem`` with PuLP's CBC; interrupt CBC at ``deadline`` or on ``stop``.

    Args:
        problem: a ``pulp.LpProblem`` (its variables get CBC's values, its ``status`` and
            ``sol_status`` CBC's statuses, as ``LpProblem.solve`` sets them).
        time_limit: CBC's own limit in seconds (``-sec``).
        deadline: ``time.perf_counter()`` value at which CBC is interrupted if still running.
        stop: interrupts CBC when set.
        threads: CBC threads.
        seed: CBC's random seed.
        warm_start: start from the variables' current values (``setInitialValue``).

    Returns:
        The PuLP status (``pulp.LpStatus*``); ``LpStatusNotSolved`` with no solution when CBC
        failed or was killed before writing one.
    """
    import pulp

    with warnings.catch_warnings():  # PuLP 3 flags its bundled CBC for removal in PuLP 4
        warnings.simplefilter("ignore", DeprecationWarning)
        cmd = pulp.PULP_CBC_CMD(msg=False)
    with tempfile.TemporaryDirectory(prefix="vbp-cbc-") as tmp:
        mps, sol, mst = (str(Path(tmp) / name) for name in ("model.mps", "model.sol", "start.mst"))
        variables, var_names, con_names, _ = problem.writeMPS(mps, rename=1)
        args = [cmd.path, mps]
        if problem.sense == pulp.LpMaximize:
            args.append("-max")
        if warm_start:
            cmd.writesol(mst, problem, variables, var_names, con_names)
            args += ["-mips", mst]
        args += ["-sec", f"{max(0.1, time_limit):.3f}", "-threads", str(max(1, threads)),
                 "-randomCbcSeed", str(int(seed)), "-solve", "-printingOptions", "all", "-solution", sol]
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            while proc.poll() is None:
                if time.perf_counter() >= deadline or (stop is not None and stop.is_set()):
                    _interrupt(proc)
                    try:
                        proc.wait(GRACE)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    break
                time.sleep(0.02)
        finally:
            if proc.poll() is None:  # an exception in this thread: never leave CBC running
                proc.kill()
                proc.wait()
        if proc.returncode != 0 or not Path(sol).exists():
            problem.assignStatus(pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound)
            return int(pulp.LpStatusNotSolved)
        status, values, _dj, _pi, _slacks, sol_status = cmd.readsol_MPS(sol, problem, variables, var_names,
                                                                         con_names)
    problem.assignVarsVals(values)
    problem.assignStatus(status, sol_status)
    return int(status)


__all__ = ["GRACE", "solve_interruptible"]
