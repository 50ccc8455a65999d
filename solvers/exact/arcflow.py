"""Arc-flow model (Valério de Carvalho) with graph compression (Brandão & Pedroso) for 1-D packing.

One resource, identical hosts of integer capacity ``W`` (after the exact scaling of
:mod:`solvers.exact.scaling`), item sizes ``w[a]`` and counts ``b[a]``. A host's content is a path
through a graph whose nodes are loads and whose arcs are items; the packing is a flow of ``z``
units (one per host) from the source to the sink::

    min  z
    s.t. inflow(v) - outflow(v) = z [v = sink] - z [v = source]      every node v
         sum of the flow on the arcs of app a >= b[a]                every app a
         flow integer, >= 0

Building the graph (all in integers, vectorised over the capacity grid)
    1. The knapsack state graph: items are expanded into ``min(b, cap, W // w)`` copies sorted
       by decreasing size; node ``(i, s)`` is "copies ``< i`` decided, load ``s``"; arc
       ``(i, s) -> (i + 1, s + w_i)`` takes copy ``i``. Only states reachable from
       ``(0, 0)`` count. So every path holds items in non-increasing size order and at most
       ``b[a]`` copies of app ``a``.
    2. Main compression: every state gets the label ``phi = W - (longest path to the end)``
       (the highest load it could sit at and still fit every continuation); states with equal
       labels merge, and arcs become ``(phi(u), phi(v), app)``, deduplicated. Every arc keeps
       ``phi(v) - phi(u) >= w``, so every path of the merged graph still fits in ``W``.
    3. Final compression: labels ``psi = longest path from the source`` (``psi(source) = 0``);
       equal labels merge again.
    4. Loss arcs join consecutive labels (the last label is the sink), so a path may end
       anywhere.

Every packing of the instance is a flow of this graph and every integer flow decomposes into
paths that fit (possibly covering an app more than ``b`` times: surplus copies are dropped), so
the MIP optimum is the optimum, and its LP is at least as strong as the Gilmore-Gomory LP with
unbounded patterns.

Solving
    The LP relaxation (GLOP) gives a bound at once; the MIP is solved by CBC through OR-Tools
    (measured on the hard 1-D instances of :mod:`packing.generators.hard1d`: CBC proves them in
    seconds where SCIP and CP-SAT on the same model time out; see ``benchmarks/bench_hard1d.py``)
    with ``z >= bound`` and, given an incumbent of ``U`` hosts, ``z <= U - 1``, so "infeasible"
    proves the incumbent optimal. CBC cannot be interrupted in-process, so when a stop request
    and its own time limit is not kept (its root node can take minutes on large graphs), the MIP
    runs in a child process that is terminated at the time limit or when the stop request
    (``stop=``) is set; the LP bound is kept either way. Before the MIP, arcs that no bin within
    the waste allowed by ``z <= U - 1`` can use are dropped (:func:`prune`). The flow is
    decomposed into paths, one host each, and the placement is checked by
    :func:`packing.feasibility.checker.check` before it is returned.

When it applies (:func:`not_applicable` gives the reason when it does not)
    one resource (after the presolve of :mod:`solvers.exact.reduce` drops resources that never bind),
    identical hosts (capacity and cost), no GPU cards, no rules or exclusions, caps only where
    they never bind (``cap >= min(count, W // w)``), objective hosts or cost, data that scale
    *exactly* to integers (never rounded: a rounded model could prove a false bound) with a
    capacity of at most :data:`MAX_GRID` units, at most :data:`MAX_STATES` knapsack states and
    :data:`MAX_ARCS` arcs after compression. Otherwise :func:`solve_arcflow` hands the instance
    to CP-SAT (:func:`solvers.exact.cpsat.solve_cpsat`) and says so in ``proofs``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from packing.feasibility.checker import check
from packing.model.instance import Instance, Placement
from solvers.base import (
    DEFAULT_OPTIONS,
    EPS,
    Clock,
    SolveOptions,
    Stop,
    bound_infeasible,
    cheap_lower_bound,
    infeasible_result,
    notify,
    objective_value,
    resolve_objective,
)
from solvers.exact.scaling import CBC_LIMIT, scale_columns
from solvers.result import Progress, SolveResult

MAX_GRID = 10_000
"""Largest integer capacity (after exact scaling) the arc-flow model is built for."""

MAX_STATES = 4_000_000
"""Most knapsack states ``(copies + 1) * (W + 1)`` of step 1 (memory: about 13 bytes each)."""

MAX_ARCS = 300_000
"""Most item arcs after compression (beyond this the LP alone takes tens of seconds)."""

CBC_SHARE = 0.85
"""Share of the MIP's time limit given to CBC's own limit at least; the child is terminated at the
full limit (CBC reports its own time-out late, if at all)."""

CBC_SLACK = 3.0
"""On long runs CBC's own limit is the MIP's time limit less this many seconds (when that is more
than :data:`CBC_SHARE` of it)."""


@dataclass(frozen=True)
class ArcGraph:
    """The compressed arc-flow graph of a 1-D instance.

    Attributes:
        capacity: the integer capacity ``W``.
        size: integer size of every app, shape ``(n_apps,)`` (0 for apps of size 0, which are
            not in the graph).
        need: containers of every app, shape ``(n_apps,)``.
        labels: node labels in increasing order, shape ``(n_nodes,)``; node 0 is the source,
            the last node the sink.
        tail: tail node index of every item arc, shape ``(n_arcs,)``.
        head: head node index of every item arc, shape ``(n_arcs,)``.
        app: app of every item arc, shape ``(n_arcs,)``.
        states: knapsack states of step 1 (a measure of the work).
    """

    capacity: int
    size: np.ndarray
    need: np.ndarray
    labels: np.ndarray
    tail: np.ndarray
    head: np.ndarray
    app: np.ndarray
    states: int

    @property
    def n_nodes(self) -> int:
        """Nodes of the graph."""
        return int(len(self.labels))

    @property
    def n_arcs(self) -> int:
        """Item arcs of the graph (loss arcs not counted)."""
        return int(len(self.tail))


# ------------------------------------------------------------------------------------------------
# applicability and scaling
def _integer_data(inst: Instance) -> tuple[np.ndarray, int] | None:
    """Exact integer sizes, shape ``(n_apps,)``, and capacity; ``None`` when not exact."""
    cap = np.asarray(inst.host_types[0].capacity, dtype=np.float64)[None, :]
    sc = scale_columns(inst.demand, cap, inst.counts, limit=CBC_LIMIT, fallback="strict")
    if not sc.exact:
        return None
    return sc.demand[:, 0].astype(np.int64), int(sc.capacity[0, 0])


def not_applicable(instance: Instance, objective: str | None = None) -> str | None:
    """Why the arc-flow model does not apply to ``instance`` (``None`` when it does).

    The instance is taken as it is (no presolve): see the module docstring for the conditions.
    """
    inst = instance
    kind = resolve_objective(inst, objective)
    if kind == "deployed":
        return "objective 'deployed' is not modelled (hosts or cost only)"
    if inst.n_resources != 1:
        return f"{inst.n_resources} resources (the arc-flow model is one-dimensional)"
    if not inst.host_types or inst.n_containers == 0:
        return "no hosts or no containers"
    first = inst.host_types[0]
    if any(t.capacity != first.capacity or t.cost != first.cost for t in inst.host_types):
        return "host types differ in capacity or cost"
    if inst.max_gpus or bool(np.any(inst.gpu_cards > 0)):
        return "GPU cards are not modelled"
    if inst.type_allowed is not None:
        return "apps restricted to host types (GPU models, node selection, taints) are not modelled"
    if inst.all_rules:
        return "rules and exclusions are not modelled"
    if inst.has_topology:
        return "topology rules (domain caps, spread) are not modelled"
    data = _integer_data(inst)
    if data is None:
        return "the data cannot be scaled exactly to integers"
    size, cap = data
    if cap > MAX_GRID:
        return f"the integer capacity {cap} exceeds {MAX_GRID}"
    pos = size > 0
    if bool(np.any(size > cap)):
        return None  # some container fits nowhere: solve_arcflow reports it infeasible
    most = np.minimum(inst.counts, cap // np.maximum(size, 1))
    if bool(np.any(pos & (inst.cap < most))):
        return "a per-host cap binds (caps are not modelled)"
    if bool(np.any(~pos & (inst.cap < inst.counts))):
        return "a per-host cap on a zero-size app binds"
    copies = int(np.minimum(inst.counts, np.where(pos, cap // np.maximum(size, 1), 0)).sum())
    if (copies + 1) * (cap + 1) > MAX_STATES:
        return f"{copies} item copies on a grid of {cap}: too many states (> {MAX_STATES})"
    return None


# ------------------------------------------------------------------------------------------------
# the graph
def build_graph(instance: Instance) -> ArcGraph:
    """The compressed arc-flow graph (steps 1-3 of the module docstring).

    Raises:
        ValueError: the model does not apply (:func:`not_applicable`) or a container fits on
            no host.
    """
    why = not_applicable(instance)
    if why is not None:
        raise ValueError(why)
    data = _integer_data(instance)
    assert data is not None
    size, W = data
    if bool(np.any(size > W)):
        raise ValueError("a container is larger than the hosts")
    need = instance.counts.astype(np.int64)
    pos = np.flatnonzero(size > 0)
    order = pos[np.argsort(-size[pos], kind="stable")]
    reps = np.minimum(need[order], W // size[order])
    vw = np.repeat(size[order], reps)  # copy sizes, non-increasing
    va = np.repeat(order, reps)  # app of every copy
    n = len(vw)
    if n == 0:
        return ArcGraph(W, size, need, np.array([0], dtype=np.int64), np.zeros(0, np.int64),
                        np.zeros(0, np.int64), np.zeros(0, np.int64), 0)
    # step 1: reachable states (forward) and the longest fill to the end (backward)
    reach = np.zeros((n + 1, W + 1), dtype=bool)
    reach[0, 0] = True
    for i in range(n):
        w = int(vw[i])
        reach[i + 1] = reach[i]
        reach[i + 1, w:] |= reach[i, : W + 1 - w]
    fill = np.zeros((n + 1, W + 1), dtype=np.int32)
    for i in range(n - 1, -1, -1):
        w = int(vw[i])
        fill[i] = fill[i + 1]
        top = W + 1 - w
        np.maximum(fill[i + 1, :top], w + fill[i + 1, w:], out=fill[i, :top])
    # step 2: phi = W - longest fill; arcs (phi(u), phi(v), app), deduplicated
    base = W + 1
    keys = []
    for i in range(n):
        w = int(vw[i])
        s = np.flatnonzero(reach[i, : W + 1 - w])
        u = W - fill[i, s].astype(np.int64)
        v = W - fill[i + 1, s + w].astype(np.int64)
        keys.append(np.unique((int(va[i]) * base + u) * base + v))
    del reach, fill
    key = np.unique(np.concatenate(keys))
    app = key // (base * base)
    tail = (key // base) % base
    head = key % base
    # step 3: psi = longest path from the source (the label of state (0, 0)), arcs in tail order
    src = int(tail.min())
    nodes = np.unique(np.concatenate([tail, head, [src]]))
    ti = np.searchsorted(nodes, tail)
    hi = np.searchsorted(nodes, head)
    psi = _longest_from_source(ti, hi, size[app], len(nodes), int(np.searchsorted(nodes, src)))
    ok = psi[ti] >= 0
    key = np.unique((app[ok] * base + psi[ti[ok]]) * base + psi[hi[ok]])
    app = key // (base * base)
    tail = (key // base) % base
    head = key % base
    labels = np.unique(np.concatenate([[0], tail, head]))
    return ArcGraph(W, size, need, labels, np.searchsorted(labels, tail),
                    np.searchsorted(labels, head), app.astype(np.int64), int((n + 1) * (W + 1)))


def _longest_from_source(ti: np.ndarray, hi: np.ndarray, w: np.ndarray, n_nodes: int,
                         src: int) -> np.ndarray:
    """Longest path length from ``src`` to every node, shape ``(n_nodes,)``.

    Paths use the item arcs (``ti -> hi`` of length ``w``) and the loss arcs of length 0 between
    consecutive nodes (the skipped copies of step 1 became those). Node indices are in label
    order and every arc goes up (``ti < hi``), so one sweep settles every node before its arcs
    are used; nodes below ``src`` get -1.
    """
    psi = np.full(n_nodes, -1, dtype=np.int64)
    psi[src] = 0
    order = np.argsort(ti, kind="stable")
    ti, hi, w = ti[order], hi[order], w[order]
    starts = np.searchsorted(ti, np.arange(n_nodes + 1))
    for k in range(src, n_nodes):
        if k > src:
            psi[k] = max(psi[k], psi[k - 1])  # the loss arc k - 1 -> k
        lo, up = starts[k], starts[k + 1]
        if lo < up:
            np.maximum.at(psi, hi[lo:up], psi[k] + w[lo:up])
    return psi


def prune(g: ArcGraph, slack: int) -> ArcGraph:
    """Drop the arcs that no bin wasting at most ``slack`` capacity units can use.

    A bin is a path from the source (label 0) to the sink (label ``L``); labels are longest
    paths from the source (step 3), so a bin through item arc ``(u, v, a)`` wastes at least
    ``(label(v) - label(u) - w[a]) + (L - label(v) - best(v))``, ``best(v)`` the most item size
    on a path from ``v`` to the sink. With ``z`` bins the total waste is ``z * L - total size``,
    so for ``z <= hi`` every arc wasting more than ``hi * L - total`` can go (and loss arcs
    likewise: they are kept implicitly between consecutive labels, so nodes that lose every
    item arc stay). The result is again an :class:`ArcGraph` on the same labels.
    """
    n = g.n_nodes
    lab = g.labels
    best = np.zeros(n, dtype=np.int64)
    w = g.size[g.app]
    order = np.argsort(-g.tail, kind="stable")
    starts: dict[int, list[int]] = {}
    for k in order.tolist():
        starts.setdefault(int(g.tail[k]), []).append(k)
    for node in range(n - 2, -1, -1):
        b = int(best[node + 1])
        for k in starts.get(node, ()):
            b = max(b, int(w[k] + best[g.head[k]]))
        best[node] = b
    waste = (lab[g.head] - lab[g.tail] - w) + (lab[-1] - lab[g.head] - best[g.head])
    keep = waste <= slack
    return ArcGraph(g.capacity, g.size, g.need, g.labels, g.tail[keep], g.head[keep],
                    g.app[keep], g.states)


# ------------------------------------------------------------------------------------------------
# the MIP
def _build_mip(g: ArcGraph, solver_name: str, integer: bool, lo: int, hi: int) -> tuple[Any, ...]:
    """The arc-flow programme in OR-Tools' linear solver wrapper.

    Returns:
        ``(solver, z, arc variables, loss variables)``; ``solver`` is ``None`` when the back-end
        is missing.
    """
    from ortools.linear_solver import pywraplp

    mip = pywraplp.Solver.CreateSolver(solver_name)
    if mip is None:  # pragma: no cover - CBC and GLOP ship with OR-Tools
        return None, None, [], []
    if solver_name == "SCIP":  # pragma: no cover - measured, not used
        mip.SetSolverSpecificParametersAsString("misc/catchctrlc = FALSE\n")
    var = mip.IntVar if integer else mip.NumVar
    z = var(float(lo), float(hi), "z")
    x = [var(0.0, float(min(g.need[a], hi)), f"x{k}") for k, a in enumerate(g.app.tolist())]
    loss = [var(0.0, float(hi), f"l{k}") for k in range(g.n_nodes - 1)]
    _flow_rows(mip, g, z, x, loss)
    mip.Minimize(z)
    return mip, z, x, loss


def _flow_rows(solver: Any, g: ArcGraph, z: Any, x: list[Any], loss: list[Any]) -> dict[int, Any]:
    """Flow conservation (``z`` hosts leave the source and reach the sink) and one demand row per app.

    Returns:
        The demand row of every app in the graph, by app index.
    """
    rows = [solver.Constraint(0.0, 0.0) for _ in range(g.n_nodes)]
    for k, (t, h) in enumerate(zip(g.tail.tolist(), g.head.tolist(), strict=True)):
        rows[t].SetCoefficient(x[k], -1.0)
        rows[h].SetCoefficient(x[k], 1.0)
    for k in range(g.n_nodes - 1):
        rows[k].SetCoefficient(loss[k], -1.0)
        rows[k + 1].SetCoefficient(loss[k], 1.0)
    rows[0].SetCoefficient(z, 1.0)
    rows[-1].SetCoefficient(z, -1.0)
    dem = {a: solver.Constraint(float(g.need[a]), solver.infinity()) for a in np.unique(g.app).tolist()}
    for k, a in enumerate(g.app.tolist()):
        dem[a].SetCoefficient(x[k], 1.0)
    return dem


def lp_bound(g: ArcGraph, time_limit: float = 60.0) -> float | None:
    """The LP relaxation's value in hosts (GLOP), or ``None`` when it was not solved."""
    sol = lp_solution(g, time_limit)
    return None if sol is None else sol[0]


def lp_solution(g: ArcGraph, time_limit: float = 60.0) -> tuple[float, np.ndarray] | None:
    """The LP relaxation (GLOP): its value in hosts and the item duals, shape ``(n_apps,)``.

    The arcs have no upper bounds here (the LP is then the Gilmore-Gomory LP over the patterns
    of the graph), so the duals of the demand rows are the item prices of that LP (0 for apps
    not in the graph). ``None`` when the LP was not solved within ``time_limit``.
    """
    from ortools.linear_solver import pywraplp

    n_apps = len(g.need)
    if g.n_arcs == 0:
        return 1.0, np.zeros(n_apps)
    lp = pywraplp.Solver.CreateSolver("GLOP")
    if lp is None:  # pragma: no cover - GLOP ships with OR-Tools
        return None
    inf = lp.infinity()
    z = lp.NumVar(0.0, inf, "z")
    x = [lp.NumVar(0.0, inf, f"x{k}") for k in range(g.n_arcs)]
    loss = [lp.NumVar(0.0, inf, f"l{k}") for k in range(g.n_nodes - 1)]
    dem = _flow_rows(lp, g, z, x, loss)
    apps = list(dem)
    lp.Minimize(z)
    lp.SetTimeLimit(max(1, int(1000 * time_limit)))
    if lp.Solve() != pywraplp.Solver.OPTIMAL:
        return None
    duals = np.zeros(n_apps)
    duals[apps] = [dem[a].dual_value() for a in apps]
    return float(z.solution_value()), duals


@dataclass(frozen=True)
class MipOutcome:
    """What the MIP run returned.

    Attributes:
        status: ``"optimal"``, ``"feasible"``, ``"infeasible"`` or ``"unknown"``.
        flow: integer flow of every item arc, shape ``(n_arcs,)`` (``None`` without a
            solution).
        loss: integer flow of every loss arc, shape ``(n_nodes - 1,)``.
        bound: CBC's proven lower bound on ``z`` within ``[lo, hi]`` (``lo`` when unknown).
    """

    status: str
    flow: np.ndarray | None
    loss: np.ndarray | None
    bound: float


def solve_mip(g: ArcGraph, lo: int, hi: int, time_limit: float, seed: int = 0) -> MipOutcome:
    """Solve the arc-flow MIP with ``lo <= z <= hi`` by CBC (in this process)."""
    from ortools.linear_solver import pywraplp

    if hi < lo:
        return MipOutcome("infeasible", None, None, float(lo))
    mip, z, x, loss = _build_mip(g, "CBC", True, lo, hi)
    if mip is None:  # pragma: no cover
        return MipOutcome("unknown", None, None, float(lo))
    mip.SetTimeLimit(max(1, int(1000 * time_limit)))
    st = mip.Solve()
    if st == pywraplp.Solver.INFEASIBLE:
        return MipOutcome("infeasible", None, None, float(hi + 1))
    if st not in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
        bound = mip.Objective().BestBound()
        return MipOutcome("unknown", None, None, _safe_bound(bound, lo))
    flow = np.rint([v.solution_value() for v in x]).astype(np.int64)
    lf = np.rint([v.solution_value() for v in loss]).astype(np.int64)
    if st == pywraplp.Solver.OPTIMAL:
        return MipOutcome("optimal", flow, lf, float(round(z.solution_value())))
    return MipOutcome("feasible", flow, lf, _safe_bound(mip.Objective().BestBound(), lo))


def _safe_bound(bound: float, lo: int) -> float:
    if not math.isfinite(bound):
        return float(lo)
    return float(max(lo, math.ceil(bound - 1e-6)))


def _child_main() -> None:
    """``python -m solvers.exact.arcflow``: read a graph and limits (npz) on stdin, write the outcome."""
    import io
    import sys

    data = np.load(io.BytesIO(sys.stdin.buffer.read()), allow_pickle=False)
    g = ArcGraph(int(data["capacity"]), data["size"], data["need"], data["labels"], data["tail"],
                 data["head"], data["app"], 0)
    lo, hi, limit, seed = (int(data["lo"]), int(data["hi"]), float(data["limit"]),
                           int(data["seed"]))
    out = solve_mip(g, lo, hi, limit, seed)
    buf = io.BytesIO()
    np.savez(buf, status=np.array(out.status), bound=np.array(out.bound),
             flow=out.flow if out.flow is not None else np.zeros(0, np.int64),
             loss=out.loss if out.loss is not None else np.zeros(0, np.int64),
             has=np.array(out.flow is not None))
    sys.stdout.buffer.write(buf.getvalue())
    sys.stdout.buffer.flush()


def solve_mip_stoppable(g: ArcGraph, lo: int, hi: int, time_limit: float, seed: int,
                        stop: Stop | None) -> MipOutcome:
    """:func:`solve_mip` in a child process, terminated when ``stop`` is set or time is up.

    CBC overruns its own time limit by a lot in its root node on large graphs (measured: 100 s
    for a 20 s limit), and cannot be interrupted in-process; the child
    (``python -m solvers.exact.arcflow``, arrays in and out as ``.npz`` through pipes, no pickles) is
    terminated at ``time_limit`` (CBC's own limit is the larger of :data:`CBC_SHARE` of it and
    ``time_limit - CBC_SLACK``, so it may report its bound first). A stopped, timed-out or
    crashed child proves nothing: the outcome is
    ``"unknown"`` with bound ``lo``.
    """
    import io

    buf = io.BytesIO()
    np.savez(buf, capacity=np.array(g.capacity), size=g.size, need=g.need, labels=g.labels,
             tail=g.tail, head=g.head, app=g.app, lo=np.array(lo), hi=np.array(hi),
             limit=np.array(max(CBC_SHARE * time_limit, time_limit - CBC_SLACK)),
             seed=np.array(seed))
    got = run_child("solvers.exact.arcflow", buf.getvalue(), time_limit, stop)
    if got is None:
        return MipOutcome("unknown", None, None, float(lo))
    data = np.load(io.BytesIO(got), allow_pickle=False)
    has = bool(data["has"])
    return MipOutcome(str(data["status"]), data["flow"] if has else None,
                      data["loss"] if has else None, float(data["bound"]))


def run_child(module: str, payload: bytes, time_limit: float, stop: Stop | None,
              standalone: bool = False) -> bytes | None:
    """``python -m module`` with ``payload`` on stdin; its stdout, or ``None``.

    The child is terminated when ``stop`` is set or ``time_limit`` seconds have passed; a
    stopped, timed-out or failed child gives ``None``. With ``standalone`` (a module that imports
    only NumPy and OR-Tools) its file runs as the main module without importing its packages
    first (``solvers`` and ``packing``: a tenth of a CPU second saved on every child).
    """
    import subprocess
    import sys
    import threading

    if standalone:
        from importlib.util import find_spec

        spec = find_spec(module)
        assert spec is not None and spec.origin is not None
        args = ["-c", "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')",
                spec.origin]
    else:
        args = ["-m", module]
    proc = subprocess.Popen([sys.executable, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    got: list[bytes] = []

    def talk() -> None:
        out, _err = proc.communicate(payload)
        got.append(out)

    th = threading.Thread(target=talk, name="vbp-arcflow-child", daemon=True)
    th.start()
    deadline = time.perf_counter() + time_limit
    while th.is_alive():
        th.join(0.05)
        if (stop is not None and stop.is_set()) or time.perf_counter() > deadline:
            break
    if proc.poll() is None:
        proc.kill()
    th.join(5.0)
    if proc.returncode != 0 or not got or not got[0]:
        return None
    return got[0]


# ------------------------------------------------------------------------------------------------
# from the flow to a placement
def decompose(g: ArcGraph, flow: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """Split an integer flow into paths: containers per bin and app, shape ``(n_bins, n_apps)``.

    Surplus copies (an app covered more than its count) are dropped from the fullest bins first;
    zero-size apps join the first bin; empty bins are dropped.
    """
    n_apps = len(g.need)
    f = flow.astype(np.int64).copy()
    lf = loss.astype(np.int64).copy()
    out_arcs: list[list[int]] = [[] for _ in range(g.n_nodes)]
    for k, t in enumerate(g.tail.tolist()):
        if f[k] > 0:
            out_arcs[t].append(k)
    bins = []
    sink = g.n_nodes - 1
    while True:
        node = 0
        row = np.zeros(n_apps, dtype=np.int64)
        moved = False
        while node != sink:
            arcs = out_arcs[node]
            while arcs and f[arcs[-1]] == 0:
                arcs.pop()
            if arcs:
                k = arcs[-1]
                f[k] -= 1
                row[g.app[k]] += 1
                node = int(g.head[k])
                moved = True
            elif lf[node] > 0:
                lf[node] -= 1
                node += 1
                moved = True
            else:
                break
        if not moved or node != sink:
            break
        bins.append(row)
    if not bins:
        bins.append(np.zeros(n_apps, dtype=np.int64))
    counts = np.array(bins, dtype=np.int64)
    zero = g.size == 0
    counts[0, zero] = g.need[zero]
    surplus = counts.sum(axis=0) - g.need
    for a in np.flatnonzero(surplus > 0).tolist():
        extra = int(surplus[a])
        for b in np.argsort(-counts[:, a], kind="stable").tolist():
            take = min(extra, int(counts[b, a]))
            counts[b, a] -= take
            extra -= take
            if extra == 0:
                break
    return counts[counts.sum(axis=1) > 0]


def checked_placement(inst: Instance, counts: np.ndarray) -> Placement | None:
    """Bins to hosts 0, 1, ... and a checked placement (``None`` when it does not check).

    Args:
        inst: the instance.
        counts: containers per bin and app, shape ``(n_bins, n_apps)``.
    """
    from solvers.exact.pricing import placement_from_counts

    if len(counts) > inst.n_hosts or (counts.sum(axis=0) != inst.counts).any():
        return None
    host_counts = np.zeros((inst.n_hosts, inst.n_apps), dtype=np.int64)
    host_counts[: len(counts)] = counts
    pl = placement_from_counts(inst, host_counts)
    if check(inst, pl, require_all=True):
        return None
    return pl


# ------------------------------------------------------------------------------------------------
# the method
def solve_arcflow(
    instance: Instance,
    options: SolveOptions = DEFAULT_OPTIONS,
    *,
    lower_bound: float | None = None,
    mip: bool = True,
) -> SolveResult:
    """Solve a one-dimensional instance exactly with the compressed arc-flow model.

    Instances the model does not cover (see :func:`not_applicable`, after the presolve of
    :mod:`solvers.exact.reduce`) go to :func:`solvers.exact.cpsat.solve_cpsat`; the result then has
    ``proofs["bound"] != "arcflow"`` and ``proofs["arcflow"]`` gives the reason.

    Args:
        instance: the instance (solved offline).
        options: the common options (:class:`~solvers.base.SolveOptions`):

            - ``time_limit``: wall-time budget in seconds (graph, LP and MIP).
            - ``workers``: unused by CBC (one thread); passed on to CP-SAT when it takes over.
            - ``seed``: CBC's random seed.
            - ``objective``: ``"hosts"``, ``"cost"`` or ``None``; ``"deployed"`` goes to CP-SAT.
            - ``callback``: receives a :class:`Progress` for the first fit, the LP bound and the MIP.
            - ``hint``: a feasible placement: its hosts are the incumbent the MIP must beat.
            - ``stop``: a stop request: the MIP's child process is terminated when it is set.

        lower_bound: a proven lower bound on the objective (e.g. column generation's) that the
            MIP may assume.
        mip: solve the MIP after the LP; ``False`` stops at the LP bound (a few seconds).

    Returns:
        The result (``method="arcflow"``); on a time limit or stop the best placement found
        (first fit or the hint if nothing better) and the best proven bound.
    """
    time_limit, seed, objective = options.time_limit, options.seed, options.objective
    callback, hint, stop = options.callback, options.hint, options.stop
    from solvers.exact.reduce import reduce_instance
    from solvers.search.greedy import ffd

    clock = Clock(time_limit, stop)
    kind = resolve_objective(instance, objective)
    red = reduce_instance(instance)
    inst = red.reduced
    why = not_applicable(inst, kind)
    if why is not None:
        from solvers.exact.cpsat import solve_cpsat

        res = solve_cpsat(instance, options.replace(objective=kind))
        return _rename(res, {**res.proofs, "arcflow": f"not applicable: {why}"})
    history: list[Progress] = []
    unit = float(inst.host_types[0].cost) if kind == "cost" else 1.0
    lb, lb_name = cheap_lower_bound(inst, kind)
    if lower_bound is not None and lower_bound > lb + EPS:
        lb, lb_name = float(lower_bound), "given"
    if bound_infeasible(inst, kind, lb):
        return infeasible_result(instance, kind, "arcflow", clock, lb_name, history)
    g0 = ffd(inst, kind)
    best_pl = g0.placement(inst) if g0.complete else None
    hinted = red.project(hint)
    if hinted is not None and not check(inst, hinted, require_all=True):
        hv = objective_value(inst, hinted.host_array(inst), kind)
        if best_pl is None or hv < objective_value(inst, best_pl.host_array(inst), kind) - EPS:
            best_pl = hinted
    best_by = "ffd"

    def value(pl: Placement | None) -> float | None:
        return None if pl is None else objective_value(inst, pl.host_array(inst), kind)

    notify(callback, history, clock, value(best_pl), lb, "arcflow", "first fit")

    def result() -> SolveResult:
        # lift to the original instance and check there (a dropped resource may not hold
        # within the float allowance): first fit on the original instance otherwise
        lifted = red.lift(best_pl) if best_pl is not None else None
        by = best_by
        if lifted is not None and check(instance, lifted, require_all=True):
            g1 = ffd(instance, kind)
            lifted, by = (g1.placement(instance) if g1.complete else None), "ffd"
        if lifted is None:
            return SolveResult("unknown", None, lb, None, None, "arcflow", clock.elapsed, kind,
                               {"bound": lb_name}, None, tuple(history), clock.stopped)
        host_of = lifted.host_array(instance)
        v = objective_value(instance, host_of, kind)
        closed = v <= lb + EPS * max(1.0, lb)
        return SolveResult("optimal" if closed else "feasible", v, v if closed else lb, lifted,
                           int(len(np.unique(host_of[host_of >= 0]))), "arcflow", clock.elapsed,
                           kind, {"solution": by, "bound": lb_name}, None, tuple(history),
                           clock.stopped)

    cur = value(best_pl)
    if cur is not None and cur <= lb + EPS * max(1.0, lb):
        return result()
    g = cached_graph(inst)
    if g.n_arcs > MAX_ARCS:
        notify(callback, history, clock, cur, lb, "arcflow", f"{g.n_arcs} arcs: too many")
        return result()
    if g.n_arcs == 0:  # only zero-size containers: one host
        counts = decompose(g, np.zeros(0, np.int64), np.zeros(g.n_nodes - 1, np.int64))
        pl = checked_placement(inst, counts)
        if pl is not None:
            best_pl, best_by = pl, "arcflow"
        lb, lb_name = max(lb, unit), "arcflow"
        return result()
    # the LP bound
    if not clock.stopped:
        lp = _cached_lp(g, clock.left())
        if lp is not None and math.ceil(lp - 1e-6) * unit > lb + EPS:
            lb, lb_name = float(math.ceil(lp - 1e-6) * unit), "arcflow"
            notify(callback, history, clock, cur, lb, "arcflow", f"LP bound {lp:.4f}")
    cur = value(best_pl)
    if cur is not None and cur <= lb + EPS * max(1.0, lb):
        return result()
    if not mip or clock.stopped or clock.left() < 0.2:
        return result()
    lo = int(math.ceil(lb / unit - 1e-9))
    hi = (int(round(cur / unit)) - 1) if cur is not None else inst.n_hosts
    hi = min(hi, inst.n_hosts)
    budget = max(0.1, clock.left() - 0.5)
    total = int((g.size * g.need).sum())
    gp = prune(g, hi * int(g.labels[-1]) - total)
    notify(callback, history, clock, cur, lb, "arcflow",
           f"MIP on {gp.n_arcs} arcs, {g.n_nodes} nodes, hosts in [{lo}, {hi}]")
    out = solve_mip_stoppable(gp, lo, hi, budget, seed, stop)
    if out.flow is not None and out.loss is not None:
        pl = checked_placement(inst, decompose(gp, out.flow, out.loss))
        if pl is not None and (cur is None or value(pl) < cur - EPS):  # type: ignore[operator]
            best_pl, best_by = pl, "arcflow"
            notify(callback, history, clock, value(pl), lb, "arcflow", "MIP solution")
    if out.status == "infeasible":
        if cur is None:
            return infeasible_result(instance, kind, "arcflow", clock, "arcflow", history)
        lb, lb_name = cur, "arcflow"  # nothing below the incumbent: it is optimal
    elif out.status == "optimal" and best_by == "arcflow":
        lb, lb_name = value(best_pl), "arcflow"  # type: ignore[assignment]
    elif out.bound * unit > lb + EPS:
        lb, lb_name = out.bound * unit, "arcflow"
    notify(callback, history, clock, value(best_pl), lb, "arcflow", f"MIP {out.status}")
    return result()


_LAST: dict[str, Any] = {}
"""The last graph built and its LP bound (``solvers.exact.auto`` calls :func:`solve_arcflow` for the LP
bound and again for the MIP on the same reduced instance)."""


def cached_graph(inst: Instance) -> ArcGraph:
    """:func:`build_graph`, kept for the next call on an instance of the same data."""
    key = (tuple(inst.host_types[0].capacity), tuple((a.demand, a.count) for a in inst.apps))
    if _LAST.get("key") != key:
        _LAST.clear()
        _LAST.update(key=key, graph=build_graph(inst))
    return _LAST["graph"]


def forget_graph() -> None:
    """Drop the kept graph and LP bound (benchmarks timing each solve from scratch call it)."""
    _LAST.clear()


def _cached_lp(g: ArcGraph, time_limit: float) -> float | None:
    """The LP value of :func:`lp_solution` on the cached graph, computed once (no time-out kept)."""
    sol = cached_lp_solution(g, time_limit)
    return None if sol is None else sol[0]


def cached_lp_solution(g: ArcGraph, time_limit: float) -> tuple[float, np.ndarray] | None:
    """:func:`lp_solution` of ``g``, kept when ``g`` is the cached graph (:func:`cached_graph`)."""
    if _LAST.get("graph") is not g:
        return lp_solution(g, time_limit)
    if _LAST.get("lp") is None:
        _LAST["lp"] = lp_solution(g, time_limit)
    sol: tuple[float, np.ndarray] | None = _LAST["lp"]
    return sol


def _rename(res: SolveResult, proofs: dict[str, str]) -> SolveResult:
    import dataclasses

    return dataclasses.replace(res, method="arcflow", proofs=proofs)


__all__ = ["MAX_ARCS", "MAX_GRID", "MAX_STATES", "ArcGraph", "MipOutcome", "build_graph",
           "cached_graph", "cached_lp_solution", "checked_placement", "decompose", "forget_graph",
           "lp_bound", "lp_solution", "not_applicable", "prune", "run_child", "solve_arcflow",
           "solve_mip", "solve_mip_stoppable"]


if __name__ == "__main__":  # pragma: no cover - the child process of solve_mip_stoppable
    _child_main()
