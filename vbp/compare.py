"""The orchestration of ``vbp compare``: solve the instance, replay every policy on the same runs.

This is the application layer: it sits above :mod:`packing`, :mod:`policies` and :mod:`solvers` and is
the only place that combines them (the CLI in :mod:`vbp.cli` only parses options and formats output).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from packing.errors import InfeasibleError, InputError, Problem
from packing.model import UNPLACED, Instance, Placement, Request

if TYPE_CHECKING:
    from packing.evaluation import Executor, RunRecord


@dataclass(frozen=True)
class Row:
    """One policy's line of the table."""

    name: str
    hosts_mean: float
    hosts_min: int
    hosts_max: int
    cost_mean: float
    allocation_mean: float
    rejected_mean: float
    gap: float | None
    deployed_mean: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the row (names as in ``docs/outputs.md``)."""
        return {"name": self.name, "hosts_mean": self.hosts_mean, "hosts_min": self.hosts_min,
                "hosts_max": self.hosts_max, "cost_mean": self.cost_mean,
                "allocation_mean": json_number(self.allocation_mean),
                "deployed_mean": self.deployed_mean, "rejected_mean": self.rejected_mean,
                "gap": json_number(self.gap)}


def json_number(x: float | None) -> float | None:
    """``x`` for a JSON report: rounded to 6 decimals; ``None`` for none, ``nan`` or infinity."""
    return None if x is None or not math.isfinite(x) else round(float(x), 6)


UncoveredMode = Literal["error", "drop", "arrive"]
"""What to do with containers the request stream does not cover (see :func:`cover_requests`)."""

UNCOVERED_MODES: tuple[str, ...] = ("error", "drop", "arrive")
"""The values of ``--uncovered``."""


@dataclass(frozen=True)
class Uncovered:
    """An app whose containers are not all covered by the snapshot and the request stream.

    Attributes:
        app: the app's name.
        index: the app's index in ``instance.apps``.
        count: the app's container count.
        covered: containers in the snapshot plus containers requested (at most ``count``).
    """

    app: str
    index: int
    count: int
    covered: int

    @property
    def missing(self) -> int:
        """Containers that would never arrive."""
        return self.count - self.covered


def uncovered_containers(inst: Instance) -> list[Uncovered]:
    """Apps with containers that neither the snapshot holds nor the request stream requests.

    With a request stream, only requested containers arrive (and the snapshot's are already
    placed); the offline solvers place every container of every app. An app is covered when its
    snapshot containers plus the containers of its requests (summed over the stream, departures
    or not) reach its count. An instance without requests is always covered (every container not
    in the snapshot arrives).

    Args:
        inst: the instance.

    Returns:
        One :class:`Uncovered` per app that is not covered, in app order (empty: all covered).
    """
    if not inst.requests:
        return []
    requested = [0] * inst.n_apps
    idx = inst.app_index
    for q in inst.requests:
        if q.app in idx:
            requested[idx[q.app]] += q.count
    out = []
    for i, app in enumerate(inst.apps):
        placed = 0
        if inst.initial is not None:
            placed = sum(1 for h in inst.initial.hosts.get(app.name, ())[:app.count] if h != UNPLACED)
        covered = min(app.count, placed + requested[i])
        if covered < app.count:
            out.append(Uncovered(app.name, i, app.count, covered))
    return out


def cover_requests(inst: Instance, mode: str = "error", option: str = "--uncovered"
                   ) -> tuple[Instance, list[Uncovered]]:
    """Refuse, drop or add the containers the request stream does not cover.

    Args:
        inst: the instance (after any snapshot repair).
        mode: ``"error"`` (refuse the instance), ``"drop"`` (a copy whose apps count only the
            covered containers: solved and simulated without the others; the snapshot keeps
            every placed container) or ``"arrive"`` (a copy whose uncovered containers arrive
            first, at the stream's first time, before every request).
        option: the option that chooses the mode, named in the error message.

    Returns:
        ``(instance, uncovered)``: ``instance`` itself when every container is covered, else the
        changed copy (``meta["uncovered"]`` records the mode and the number of containers); and
        the apps that were not covered.

    Raises:
        InputError: with ``mode="error"``, one problem per app not covered, naming the instance
            (source), ``requests`` (field), the app and the numbers; or an unknown mode.
    """
    if mode not in UNCOVERED_MODES:
        raise InputError([Problem("<options>", option, f"unknown value {mode!r}; use "
                                  f"{', '.join(UNCOVERED_MODES)}")])
    missing = uncovered_containers(inst)
    if not missing:
        return inst, []
    if mode == "error":
        who = ("the snapshot and the request stream cover" if inst.initial is not None
               else "the request stream covers")
        raise InputError([Problem(
            inst.name, "requests",
            f"app {u.app!r} has {u.count} containers but {who} only {u.covered}; the other "
            f"{u.missing} would never arrive, while an offline solve places all {u.count} (pass "
            f"{option} drop to leave them out, or {option} arrive to make them arrive before the "
            "stream)") for u in missing])
    total = sum(u.missing for u in missing)
    meta = {**inst.meta, "uncovered": {"mode": mode, "containers": total}}
    if mode == "arrive":
        t0 = min(q.time for q in inst.requests)
        first = tuple(Request(t0, u.app, u.missing) for u in missing)
        return inst.replace(requests=first + inst.requests, meta=meta), missing
    by_app = {u.app: u for u in missing}
    apps = tuple(dataclasses.replace(a, count=by_app[a.name].covered) if a.name in by_app else a
                 for a in inst.apps)
    initial = inst.initial
    if initial is not None:
        hosts = dict(initial.hosts)
        gpus = dict(initial.gpus)
        for u in missing:
            hs = list(hosts.get(u.app, ()))[:u.count]
            hs += [UNPLACED] * (u.count - len(hs))
            drop: set[int] = set()
            for j in range(len(hs) - 1, -1, -1):  # drop unplaced slots, last first
                if len(drop) == u.missing:
                    break
                if hs[j] == UNPLACED:
                    drop.add(j)
            hosts[u.app] = tuple(h for j, h in enumerate(hs) if j not in drop)
            if u.app in gpus:
                gs = list(gpus[u.app])[:u.count]
                gs += [()] * (u.count - len(gs))
                gpus[u.app] = tuple(g for j, g in enumerate(gs) if j not in drop)
        initial = Placement(hosts, gpus)
    return inst.replace(apps=apps, initial=initial, meta=meta), missing


def uncovered_note(mode: str, uncovered: list[Uncovered]) -> str | None:
    """The report line for :func:`cover_requests`'s result (``None`` when all were covered)."""
    if not uncovered:
        return None
    total = sum(u.missing for u in uncovered)
    apps = ", ".join(f"{u.app} {u.covered}/{u.count}" for u in uncovered[:5])
    more = f" and {len(uncovered) - 5} more apps" if len(uncovered) > 5 else ""
    what = ("they are left out (solved and simulated without them)" if mode == "drop"
            else "they arrive first, before the request stream")
    return (f"note: the request stream does not cover {total} container(s) (covered/count: "
            f"{apps}{more}); --uncovered {mode}: {what}")


def is_multicluster(inst: Instance) -> bool:
    """A scenario of ``vbp generate multicluster`` (compared on tasks deployed, not hosts)."""
    return isinstance(inst.meta, dict) and inst.meta.get("generator") == "multicluster"


def deployed_optimum(inst: Instance, time_limit: float) -> Any:
    """The proven maximum of deployable tasks (:func:`solvers.max_deployed.optimum`) as a ``SolveResult``.

    ``objective`` is the tasks deployed by the best placement, ``lower_bound`` the proven *upper*
    bound (the ``"deployed"`` convention of :class:`solvers.result.SolveResult`).
    """
    from solvers.max_deployed import optimum
    from solvers.result import SolveResult

    opt = optimum(inst, time_limit=time_limit)
    hosts = int(len(set(int(h) for h in opt.placement.host_array(inst) if h >= 0)))
    return SolveResult(status="optimal" if opt.proven else "feasible", objective=float(opt.deployed),
                       lower_bound=float(opt.bound), placement=opt.placement, hosts=hosts,
                       method=opt.method, seconds=opt.seconds, objective_kind="deployed")


def run_compare(inst: Instance, policy_names: list[str], orders: int, time_limit: float, seed: int,
                quiet: bool = True, snapshots: int = 0, keep: float = 0.9,
                executor: Executor | None = None, keep_placement: str | None = None,
                labels: Sequence[str] | None = None
                ) -> tuple[Any, list[Row], dict[str, list[RunRecord]]]:
    """Solve ``inst`` and evaluate every policy on the same ``orders``.

    Every run is a :class:`packing.evaluation.RunTask` run by ``executor`` (default: serial, in this
    process); the table's numbers come from the :class:`packing.evaluation.RunRecord`, i.e. from
    :mod:`packing.metrics`. With ``snapshots > 0`` (and a snapshot in ``inst``) every policy instead
    replays the same ``snapshots`` resampled snapshots (:func:`packing.simulator.resample_snapshot`
    with ``keep``).

    Args:
        inst: the instance.
        policy_names: policy specs (registry names or policy files), one table row each.
        orders: arrival orders per policy (the own order first, then seeded shuffles).
        time_limit: solver budget in seconds.
        seed: seed of the orders, policies and solver.
        quiet: no progress on stderr.
        snapshots: replay this many resampled snapshots instead of orders.
        keep: with ``snapshots``: probability that a snapshot container stays.
        executor: where the runs go (left open; default: a serial executor).
        keep_placement: keep the final placement of this policy's first run (for a plot).
        labels: the row name of each policy, as the user named it (default: the policy's own
            name).

    Returns:
        ``(solve_result, rows, records_by_policy)``; records are keyed by the policy spec as given.

    Raises:
        InfeasibleError: the instance has no placement of every container (the solver proved
            it; the reason names the app and the rule or resource, as ``vbp solve`` prints it),
            so there is no optimum to compare with; raised before any policy runs.
        InputError: a policy file is bad.
    """
    from tqdm import tqdm

    from packing.evaluation import Scenario, SerialExecutor
    from packing.simulator import sample_orders
    from policies.runner import order_tasks, resolve_policy, run_task, snapshot_tasks
    from solvers import solve

    for name in policy_names:
        resolve_policy(name)  # a bad policy file fails before the solve

    def progress(p: Any) -> None:
        print(f"  [{p.seconds:7.2f}s] {p.method:<7} objective {p.objective}  bound {p.bound}  "
              f"{p.message}", file=sys.stderr)

    if not quiet:
        print(f"solving {inst.name} (auto, up to {time_limit:g} s)...", file=sys.stderr)
    if is_multicluster(inst):
        res = deployed_optimum(inst, time_limit)
    else:
        res = solve(inst, "auto", time_limit=time_limit, seed=seed, callback=None if quiet else progress)
    if res.status == "infeasible":  # no optimum to compare with: said before any run
        raise InfeasibleError(inst.name, "no placement of every container exists, so there is no "
                              "optimum to compare with: "
                              f"{res.reason or 'proven by ' + res.method}")
    by_cost = res.objective_kind == "cost"
    resample = snapshots > 0 and inst.initial is not None
    runs = snapshots if resample else orders
    own = executor is None
    ex = executor if executor is not None else SerialExecutor()
    try:
        ref = ex.share(Scenario(inst, () if resample else tuple(sample_orders(inst, orders, seed))),
                       "compare")
        tasks = (snapshot_tasks(ref, policy_names, snapshots, keep, seed) if resample
                 else order_tasks(ref, policy_names, orders, seed))
        if keep_placement in policy_names:
            k = policy_names.index(keep_placement) * runs
            tasks[k] = dataclasses.replace(tasks[k], options=dataclasses.replace(
                tasks[k].options, placement=True))
        with tqdm(total=len(tasks), desc=f"simulating ({ex.name})", unit="run", file=sys.stderr,
                  disable=quiet, leave=False) as bar:
            recs = ex.map(run_task, tasks, bar.update)
    finally:
        if own:
            ex.close()
    rows: list[Row] = []
    records: dict[str, list[RunRecord]] = {}
    for k, name in enumerate(policy_names):
        rs = recs[k * runs:(k + 1) * runs]
        records[name] = rs
        hosts = [r.hosts for r in rs]
        mean = sum(hosts) / runs
        cost = sum(r.cost for r in rs) / runs
        value = cost if by_cost else mean
        gap = None
        deployed = float(sum(r.deployed for r in rs) / runs)
        if res.objective is not None and res.objective > 0:
            gap = ((value - res.objective) / res.objective if res.objective_kind != "deployed"
                   else (res.objective - deployed) / res.objective)
        rows.append(Row(rs[0].policy if labels is None else labels[k], mean, min(hosts), max(hosts), cost,
                        float(sum(r.allocation for r in rs) / runs),
                        float(sum(r.rejected for r in rs) / runs), gap, deployed))
    return res, rows, records


__all__ = ["UNCOVERED_MODES", "Row", "Uncovered", "UncoveredMode", "cover_requests", "json_number",
           "run_compare", "uncovered_containers", "uncovered_note"]
