"""vbp beside the solvers a user would pick instead, on the same instances in the same run.

Peers, each with the same time limit and one thread:

* ``cpsat``: a plain CP-SAT assignment model, as in OR-Tools' bin-packing documentation (a
  boolean per item and bin, one per bin for "used", as many bins as items, minimise the bins
  used; ``num_workers = 1``);
* ``highs``: the same model as a MIP in HiGHS (``highspy``, ``threads = 1``);
* ``vpsolver``: VPSolver 3.1.4's arc-flow script with COIN-OR CBC (``vpsolver_coinor.sh --vbp``,
  its own default options), when it is installed (``pip install pyvpsolver==3.1.4`` and
  Debian's ``coinor-cbc``); skipped otherwise. The script passes its options through ``$*``, so
  it gets none here; it is killed (its process group) at the time limit plus ``--margin``.

vbp runs ``auto`` with ``workers=1`` twice: in-process (``vbp``: the modules already imported,
the arc-flow graph cache cleared) and through the command line (``vbp-cli``: ``python -m
vbp.cli solve FILE --workers 1 --json``, process start included). Before any clock starts,
numba's disk cache is filled and the bytecode of vbp's packages compiled, as an installed
package has them. The solvers take turns instance by instance, the first of them rotating, so a
change in the machine's load falls on all of them alike.

Families (``--families``): ``ct``, the Caprara-Toth 2-D instances named by ``--ct`` (shell
patterns over ``--data``; the default is instance 3 of every class at sizes 50 and 100, held
out: settings were chosen on instances 1 and 2); ``hard1d``, ``--per-kind`` instances of every
kind of :func:`packing.generators.hard1d.generate_hard1d` with seeds from ``--first-seed``
(default 3000: nothing was tuned on them); ``falkenauer-u``, Falkenauer-like "u" instances
(sizes uniform in 20-100, capacity 150) of ``--u-sizes`` items, seeded from ``--first-seed``.

Prints a line per instance and solver, then per family and solver: instances proven optimal,
the median time to proof over the instances it proves, and, for every peer, the ratio of vbp's
median time to the peer's on the instances both prove (below 1: vbp is faster) with how many
of them vbp proves faster; then the same table in CPU time (user + system, child processes
included: a shared machine's load stretches it far less than the wall time). A proven optimum
that differs between two solvers is printed as a disagreement (exit 1).

Usage::

    python benchmarks/bench_peers.py --time-limit 30
    python benchmarks/bench_peers.py --families hard1d --per-kind 1 --time-limit 10 --solvers vbp vpsolver
"""

from __future__ import annotations

import argparse
import compileall
import fnmatch
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from packing.generators.hard1d import KINDS, generate_hard1d
from packing.loaders import load_vbp
from packing.model.instance import App, HostType, Instance

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "caprara-toth-2d"
DEFAULT_CT = tuple(f"CL_{c}_{n}_3.vbp" for c in range(1, 11)
                   for n in ((51, 99) if c == 10 else (50, 100)))
SOLVERS = ("vbp", "vbp-cli", "cpsat", "highs", "vpsolver")
ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Outcome:
    """One solver on one instance: proven optimal or not, the objective, the seconds it took.

    ``cpu`` is the CPU time it took (user + system, its child processes included), which a
    shared machine's load stretches far less than the wall time.
    """

    proven: bool
    objective: float | None
    seconds: float
    cpu: float = float("nan")


def _cpu() -> float:
    """CPU seconds of this process and of its child processes that have ended (user + system)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


# ------------------------------------------------------------------------------------------------
# instances
def write_vbp(inst: Instance, path: Path) -> None:
    """Write an instance of integer data as a VPSolver ``.vbp`` file (one item type per app)."""
    cap = inst.host_types[0].capacity
    lines = [str(inst.n_resources), " ".join(str(int(c)) for c in cap), str(inst.n_apps)]
    lines += [" ".join(str(int(w)) for w in a.demand) + f" {a.count}" for a in inst.apps]
    path.write_text("\n".join(lines) + "\n")


def falkenauer_u(n_items: int, seed: int) -> Instance:
    """Falkenauer-like "u" instance: ``n_items`` sizes uniform in 20-100, capacity 150."""
    rng = np.random.default_rng(seed)
    sizes, counts = np.unique(rng.integers(20, 101, n_items), return_counts=True)
    apps = tuple(App(f"item{k}", (float(s),), int(c))
                 for k, (s, c) in enumerate(zip(sizes[::-1], counts[::-1], strict=True)))
    return Instance(f"u{n_items}_{seed}", ("r0",), (HostType("bin", (150.0,), n_items),), apps)


def instances(args: argparse.Namespace, folder: Path) -> list[tuple[str, Instance, Path]]:
    """``(family, instance, .vbp file)`` for every instance of the chosen families."""
    out: list[tuple[str, Instance, Path]] = []
    if "ct" in args.families:
        files = sorted(p for p in (args.data / "instances").glob("*.vbp")
                       if any(fnmatch.fnmatch(p.name, pat) for pat in args.ct))
        out += [("caprara-toth", load_vbp(p), p) for p in files]
    gen: list[tuple[str, Instance]] = []
    if "hard1d" in args.families:
        gen += [("hard1d", generate_hard1d(args.first_seed + k, kind=kind))
                for kind in KINDS for k in range(args.per_kind)]
    if "falkenauer-u" in args.families:
        gen += [("falkenauer-u", falkenauer_u(n, args.first_seed + k))
                for n in args.u_sizes for k in range(args.per_kind)]
    for family, inst in gen:
        path = folder / f"{inst.name}.vbp"
        write_vbp(inst, path)
        out.append((family, inst, path))
    return out


# ------------------------------------------------------------------------------------------------
# the solvers
def run_vbp(inst: Instance, path: Path, limit: float) -> Outcome:
    """``solvers.solve(..., workers=1)`` in this process."""
    from solvers import solve
    from solvers.exact.arcflow import forget_graph

    forget_graph()
    c0, t0 = _cpu(), time.perf_counter()
    res = solve(inst, time_limit=limit, workers=1)
    return Outcome(res.status == "optimal", res.objective, time.perf_counter() - t0, _cpu() - c0)


def run_vbp_cli(inst: Instance, path: Path, limit: float) -> Outcome:
    """``vbp solve FILE --workers 1 --json`` as a new process (its start counted)."""
    c0, t0 = _cpu(), time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "vbp.cli", "solve", str(path), "--workers", "1",
                           "--time-limit", f"{limit:g}", "--json", "--quiet"], cwd=ROOT,
                          capture_output=True, text=True)
    dt, cpu = time.perf_counter() - t0, _cpu() - c0
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return Outcome(False, None, dt, cpu)
    return Outcome(doc.get("status") == "optimal", doc.get("objective"), dt, cpu)


def _items(inst: Instance) -> tuple[list[list[int]], list[int], range]:
    """Integer sizes of every item (``n_items`` rows of ``n_resources``), the capacities, the bins.

    As in the libraries' examples: one bin per item.
    """
    w = np.repeat(inst.demand, inst.counts, axis=0).astype(np.int64).tolist()
    return w, [int(c) for c in inst.host_types[0].capacity], range(len(w))


def run_cpsat(inst: Instance, path: Path, limit: float) -> Outcome:
    """The assignment model of OR-Tools' bin-packing example, in CP-SAT, one worker."""
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    w, cap, bins = _items(inst)
    m = cp_model.CpModel()
    x = {(i, j): m.new_bool_var(f"x_{i}_{j}") for i in bins for j in bins}
    y = [m.new_bool_var(f"y_{j}") for j in bins]
    for i in bins:
        m.add_exactly_one(x[i, j] for j in bins)
    for j in bins:
        for r, c in enumerate(cap):
            m.add(sum(w[i][r] * x[i, j] for i in bins) <= c * y[j])
    m.minimize(sum(y))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.0, limit - (time.perf_counter() - t0))
    solver.parameters.num_workers = 1
    status = solver.solve(m)
    dt = time.perf_counter() - t0
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    return Outcome(status == cp_model.OPTIMAL, solver.objective_value if found else None, dt)


def run_highs(inst: Instance, path: Path, limit: float) -> Outcome:
    """The same assignment model as a MIP in HiGHS (``highspy``), one thread."""
    import highspy

    t0 = time.perf_counter()
    w, cap, bins = _items(inst)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    x = {(i, j): h.addBinary() for i in bins for j in bins}
    y = [h.addBinary() for _ in bins]
    for i in bins:
        h.addConstr(sum(x[i, j] for j in bins) == 1)
    for j in bins:
        for r, c in enumerate(cap):
            h.addConstr(sum(w[i][r] * x[i, j] for i in bins) <= c * y[j])
    h.setOptionValue("time_limit", max(0.01, limit - (time.perf_counter() - t0)))
    h.minimize(sum(y))
    dt = time.perf_counter() - t0
    status = h.getModelStatus()
    info = h.getInfo()
    proven = status == highspy.HighsModelStatus.kOptimal
    found = info.primal_solution_status == 2  # a feasible solution
    return Outcome(proven, float(round(info.objective_function_value)) if found else None, dt)


def vpsolver_script() -> str | None:
    """The path of ``vpsolver_coinor.sh`` when VPSolver and CBC are installed, else ``None``."""
    script = shutil.which("vpsolver_coinor.sh")
    if script is None:
        here = Path(sys.executable).parent / "vpsolver_coinor.sh"
        script = str(here) if here.exists() else None
    return script if script is not None and shutil.which("cbc") is not None else None


def run_vpsolver(inst: Instance, path: Path, limit: float, margin: float = 2.0) -> Outcome:
    """VPSolver's arc-flow script with CBC; killed at ``limit + margin`` seconds."""
    script = vpsolver_script()
    assert script is not None
    c0, t0 = _cpu(), time.perf_counter()
    proc = subprocess.Popen(["bash", script, "--vbp", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=limit + margin)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the script, vbp2afg and CBC
        proc.communicate()
        return Outcome(False, None, time.perf_counter() - t0, _cpu() - c0)
    dt, cpu = time.perf_counter() - t0, _cpu() - c0
    objective = None
    for line in out.splitlines():
        if line.startswith("Objective:"):
            objective = float(line.split()[1])
    proven = "Result - Optimal solution found" in out and objective is not None and dt <= limit
    return Outcome(proven, objective, dt, cpu)


RUNNERS: dict[str, Callable[[Instance, Path, float], Outcome]] = {
    "vbp": run_vbp, "vbp-cli": run_vbp_cli, "cpsat": run_cpsat, "highs": run_highs,
    "vpsolver": run_vpsolver,
}


# ------------------------------------------------------------------------------------------------
# the table
def summary(rows: list[tuple[str, str, dict[str, Outcome]]], solvers: list[str],
            clock: str = "seconds") -> list[str]:
    """Per family and solver: proven, median time to proof, vbp's median time over the peer's.

    ``clock``: ``"seconds"`` (wall time) or ``"cpu"`` (CPU time, child processes included).
    """
    what = "s" if clock == "seconds" else "CPU s"
    lines = [f"| family (instances) | solver | proven | median {what} to proof | vbp / solver (both "
             "prove) | vbp-cli / solver (both prove) |", "|---|---|---|---|---|---|"]
    for family in dict.fromkeys(f for f, _, _ in rows):
        mine = [o for f, _, o in rows if f == family]
        for s in solvers:
            done = [o[s] for o in mine if o[s].proven]
            med = f"{statistics.median(getattr(d, clock) for d in done):.2f}" if done else "-"
            cells = []
            for ours in ("vbp", "vbp-cli"):
                both = [o for o in mine if o[s].proven and ours in o and o[ours].proven]
                if s in ("vbp", "vbp-cli") or ours not in solvers or not both:
                    cells.append("-")
                    continue
                ratio = (statistics.median(getattr(o[ours], clock) for o in both)
                         / max(1e-9, statistics.median(getattr(o[s], clock) for o in both)))
                faster = sum(getattr(o[ours], clock) < getattr(o[s], clock) for o in both)
                cells.append(f"{ratio:.2f} on {len(both)} (faster on {faster})")
            lines.append(f"| {family} ({len(mine)}) | {s} | {len(done)} | {med} | {cells[0]} | "
                         f"{cells[1]} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--families", nargs="+", default=["ct", "hard1d", "falkenauer-u"],
                    choices=["ct", "hard1d", "falkenauer-u"])
    ap.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=list(SOLVERS))
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--ct", nargs="+", default=list(DEFAULT_CT), help="shell patterns of CT file names")
    ap.add_argument("--per-kind", type=int, default=2)
    ap.add_argument("--first-seed", type=int, default=3000)
    ap.add_argument("--u-sizes", type=int, nargs="+", default=[120, 250, 500])
    ap.add_argument("--margin", type=float, default=2.0, help="VPSolver is killed this long after the limit")
    args = ap.parse_args(argv)
    solvers = list(args.solvers)
    if "vpsolver" in solvers and vpsolver_script() is None:
        print("vpsolver: not installed (pyvpsolver 3.1.4 and coinor-cbc), skipped")
        solvers.remove("vpsolver")
    if "highs" in solvers:
        try:
            import highspy  # noqa: F401
        except ImportError:
            print("highs: highspy not installed, skipped")
            solvers.remove("highs")
    if "vbp" in solvers or "vbp-cli" in solvers:
        # compiled code into numba's disk cache (for the command line) and this process, and the
        # modules imported, before any clock starts
        from packing.generators.hard1d import petersen_instance
        from solvers import solve
        from solvers.exact.warmup import warm_up

        warm_up()
        solve(petersen_instance(), time_limit=5, workers=1)
        # the modules' bytecode, as an installed package has it (with PYTHONDONTWRITEBYTECODE
        # every `vbp solve` would compile them again)
        for pkg in ("packing", "solvers", "vbp"):
            compileall.compile_dir(str(ROOT / pkg), quiet=1)
    rows: list[tuple[str, str, dict[str, Outcome]]] = []
    bad = 0
    load = os.getloadavg()
    print(f"time limit {args.time_limit:g} s, one thread each; load average at the start "
          f"{load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}")
    with tempfile.TemporaryDirectory(prefix="vbp-peers-") as tmp:
        todo = instances(args, Path(tmp))
        for k, (family, inst, path) in enumerate(todo):
            order = solvers[k % len(solvers):] + solvers[: k % len(solvers)]
            got: dict[str, Outcome] = {}
            for s in order:
                got[s] = RUNNERS[s](inst, path, args.time_limit)
                o = got[s]
                print(f"{family:<13} {inst.name:<22} {s:<9} {'proven' if o.proven else 'open':<7} "
                      f"obj {o.objective if o.objective is not None else '-'!s:>6} {o.seconds:7.2f}s "
                      f"{o.cpu:7.2f}s CPU", flush=True)
            values = {o.objective for o in got.values() if o.proven}
            if len(values) > 1:
                bad += 1
                print(f"  DISAGREE {inst.name}: " + ", ".join(
                    f"{s} {o.objective}" for s, o in got.items() if o.proven))
            rows.append((family, inst.name, got))
    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}\n")
    print("\n".join(summary(rows, solvers)))
    print("\nCPU time (user + system, child processes included):\n")
    print("\n".join(summary(rows, solvers, clock="cpu")))
    print(f"\ndisagreements {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
