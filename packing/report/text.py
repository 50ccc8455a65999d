"""Text reports for people: ``vbp info``, ``simulate``, ``compare``, ``gpu-frag``, ``plan``, ``consolidate``.

Each function formats what a library returned (the dictionaries of ``--json``, or the result
object); the commands print the lines.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any


def table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as lines, each column as wide as its widest cell, trailing blanks stripped."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def simulate_lines(runs: Sequence[dict[str, Any]], columns: Sequence[str] = ()) -> list[str]:
    """The table of ``vbp simulate``: one line per run (the dictionaries of its ``--json`` ``runs``).

    ``columns``: :func:`allocation_columns` (a GPU instance: one allocation column per resource).
    Runs on an autoscaled pool (with ``node_hours``) add the pool's nodes at the end and at the peak,
    node-hours and node cost.
    """
    pool = any("node_hours" in d for d in runs)
    more = f" {'nodes':>5} {'npeak':>5} {'node-hours':>10} {'node cost':>10}" if pool else ""
    out = [f"{'order':>5} {'hosts':>6} {'peak':>5}{allocation_head(columns, 'alloc', 8)} {'deployed':>8} "
           f"{'rejected':>8} {'delayed':>7} {'waiting':>7}{more}"]
    for d in runs:
        alloc = allocation_cells(columns, d["allocation"], d.get("allocation_by_resource"), 8)
        more = (f" {d['nodes']:>5} {d['nodes_peak']:>5} {d['node_hours']:>10.2f} {d['node_cost']:>10.2f}"
                if pool else "")
        out.append(f"{d['order']:>5} {d['hosts']:>6} {d['hosts_peak']:>5}{alloc} {d['deployed']:>8} "
                   f"{d['rejected']:>8} {d['delayed']:>7} {d['waiting']:>7}{more}")
    return out


def pool_lines(rows: Sequence[Any], delay: float) -> list[str]:
    """The autoscaled pool's block of ``vbp compare``: each row's mean peak nodes, node-hours, node cost.

    Args:
        rows: :class:`packing.report.comparison.ComparisonRow` of runs on an autoscaled pool.
        delay: the scale-down delay.
    """
    out = [f"autoscaled pool, scale-down delay {delay:g} (means over the runs; time from the first "
           "arrival to the end of the run)",
           f"{'policy':<16}{'nodes peak':>11}{'node-hours':>12}{'node cost':>11}"]
    out += [f"{r.name:<16}{r.nodes_peak_mean:>11.2f}{r.node_hours_mean:>12.2f}{r.node_cost_mean:>11.2f}"
            for r in rows if r.node_hours_mean is not None]
    return out


def _pct(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.2f}"


def gpu_frag_lines(rows: Sequence[dict[str, Any]], bound_row: dict[str, Any] | None, levels: Sequence[int],
                   bound_method: str) -> list[str]:
    """The table of ``vbp gpu-frag``: unallocated GPU per policy at each arrived level, the published medians.

    Args:
        rows: the policies' rows of its ``--json`` (``unallocated_gpu_pct``, ``..._mean``, ``published``,
            ``seconds_per_seed``).
        bound_row: the offline bound's row (``None``: no bound).
        levels: the arrived levels (% of GPU capacity).
        bound_method: ``"config"`` (per-node configuration LP) or the LP by pod shape x node type.
    """
    head = f"{'policy':<15}" + "".join(f"{lv:>8}" for lv in levels) + f"{'mean100':>9}" + \
        "  |" + "".join(f"{'pub' + str(lv):>8}" for lv in levels) + f"{'d100':>7}{'s/seed':>8}"
    out = [head, "-" * len(head)]
    for r in rows:
        med, mean, pub = r["unallocated_gpu_pct"], r["unallocated_gpu_pct_mean"], r["published"]
        line = f"{r['name']:<15}" + "".join(f"{_pct(med[str(lv)]):>8}" for lv in levels)
        line += f"{_pct(mean['100']):>9}  |"
        if pub is None:
            line += "".join(f"{'-':>8}" for _ in levels) + f"{'-':>7}"
        else:
            line += "".join(f"{_pct(pub['median'][str(lv)]):>8}" for lv in levels)
            d = None if med["100"] is None else med["100"] - pub["median"]["100"]
            line += f"{('-' if d is None else f'{d:+.2f}'):>7}"
        out.append(line + f"{r['seconds_per_seed']:>8.1f}")
    if bound_row is not None:
        bm = bound_row["median"]
        out.append("-" * len(head))
        out.append(f"{'offline bound':<15}" + "".join(f"{_pct(bm[str(lv)]):>8}" for lv in levels)
                   + f"{_pct(bound_row['mean']['100']):>9}  |" + " " * (8 * len(levels) + 7)
                   + f"{bound_row['seconds_per_seed']:>8.1f}")
        what = ("per-node configuration LP" if bound_method == "config" else "LP by pod shape x node type")
        out.append(f"(offline bound, {what}: no placement of the arrived pods leaves less GPU unallocated)")
    return out


SHOWN_RESOURCES = 6
"""How many resource names the human output lists before "...". """


def _counts(m: dict[str, int]) -> str:
    return ", ".join(f"{n:,} {k}" for k, n in m.items()) or "none"


def _k8s_rows(d: dict[str, Any]) -> tuple[list[tuple[str, str]], list[str]]:
    """Rows and the ignored-term lines for an instance read from Kubernetes manifests."""
    k = d["k8s"]
    res = d["resource_names"]
    rows = [("objects", _counts(k["objects"])), ("skipped", _counts(k["skipped"]))]
    if k["daemonsets"]:
        rows.append(("daemonsets", f"{len(k['daemonsets']):,} ({', '.join(k['daemonsets'])})"))
        def vec(v: list[float]) -> str:
            return ", ".join(f"{x:g} {r}" for x, r in zip(v, res, strict=False))

        if k["overhead"]:
            per = "; ".join(f"{t}: {vec(v)}" for t, v in k["overhead"].items())
            rows.append(("per host", f"{per} (DaemonSets; taken off each host's capacity)"))
        else:
            rows.append(("per host", f"{vec(k['reserve'])} reserved on a host without labels "
                                     "or taints (DaemonSets)"))
    if not d["host_types"]:
        rows.append(("hosts", "none: manifests carry no hosts; give them with --hosts, e.g. "
                              "--hosts 16c64g:10 (cores, GiB, optional <n>gpu, count)"))
    if k.get("best_effort"):
        rows.append(("BestEffort", f"{len(k['best_effort']):,} apps request nothing, a pod slot "
                                   f"each ({', '.join(k['best_effort'])})"))
    rows.append(("ignored", f"{len(k['ignored']):,} soft or unmodelled terms"
                 + (" (listed below)" if k["ignored"] else "")))
    return rows, [f"  {x}" for x in k["ignored"]]


def info_lines(d: dict[str, Any]) -> list[str]:
    """``vbp info``'s lines: aligned ``label  value`` rows (a snapshot's own lines for a snapshot)."""
    if "snapshot" in d:
        return [f"name       {d['name']}", "source     kubernetes snapshot",
                *snapshot_lines(d["snapshot"])]
    names = d["resource_names"]
    shown = ", ".join(names[:SHOWN_RESOURCES]) + (", ..." if len(names) > SHOWN_RESOURCES else "")
    rows: list[tuple[str, str]] = [
        ("name", str(d["name"])),
        ("source", str(d["source"] or "instance file")),
        ("apps", f"{d['apps']:,}"),
        ("containers", f"{d['containers']:,}"),
        ("hosts", f"{d['hosts']:,} in {d['host_types']:,} host type"
                  f"{'' if d['host_types'] == 1 else 's'}" + (
                      f" ({', '.join(d['uncounted'])} without a count: one host per container, as "
                      "many as needed)" if d.get("uncounted") else "")),
        ("resources", f"{d['resources']:,} ({shown})"),
        ("rules", f"{d['rules']:,} ({d['cross_rules']:,} between different apps)"),
        ("exclusions", f"{d['exclusions']:,}"),
    ]
    if d["gpus"] or d["gpu_resources"]:
        rows.append(("GPUs", f"{d['gpus']:,} cards ({', '.join(d['gpu_resources'])} per card)"))
    else:
        rows.append(("GPUs", "none"))
    if d["restricted_apps"] or d["labelled_host_types"]:
        rows.append(("selection", f"{d['restricted_apps']:,} apps restricted to some host types; "
                                  f"{d['labelled_host_types']:,} host types with labels or "
                                  "taints"))
    if d.get("domain_capped_apps") or d.get("spread_apps"):
        rows.append(("topology", f"{d['domain_capped_apps']:,} apps with domain caps; "
                                 f"{d['spread_apps']:,} apps with spread rules"))
    if d["initially_placed"]:
        rows.append(("initial", f"{d['initially_placed']:,} of {d['containers']:,} containers "
                                "placed"))
    else:
        rows.append(("initial", "none"))
    if d["requests"]:
        rows.append(("requests", f"{d['requests']:,} arrivals, {d['requests_with_end']:,} with "
                                 "a departure"))
    else:
        rows.append(("requests", "none"))
    extra: list[str] = []
    if "k8s" in d:
        more, extra = _k8s_rows(d)
        if not d["host_types"]:
            rows = [r for r in rows if r[0] != "hosts"]
        rows += more
    width = max(len(k) for k, _ in rows)
    return [f"{k.ljust(width)}  {v}" for k, v in rows] + extra


def allocation_columns(inst: Any) -> tuple[str, ...]:
    """The resources whose allocation a table shows in a column each (none: one column, the rate).

    On a GPU instance every resource (host resources, then GPU resources) gets its column: the cards
    are the bottleneck of nearly every run there, so the bottleneck's rate alone (``allocation``)
    would read 100% for every policy. Elsewhere: none, and one column gives ``allocation``.
    """
    return (*inst.resources, *inst.gpu_resources) if inst.gpu_resources else ()


def allocation_cells(columns: Sequence[str], allocation: float | None,
                     by_resource: Mapping[str, float] | None, width: int) -> str:
    """A row's allocation cell(s), as wide as :func:`allocation_head`'s: per column, else the rate."""
    def cell(x: float | None, w: int) -> str:
        return f"{'-' if x is None else f'{100 * x:.2f}%':>{w}}"

    if not columns:
        return cell(allocation, width)
    return "".join(cell(None if by_resource is None else by_resource.get(c), max(width, len(c) + 2))
                   for c in columns)


def allocation_head(columns: Sequence[str], label: str, width: int) -> str:
    """The allocation heads: the resources' names (``width`` wide, or 2 wider than a name), else ``label``."""
    return "".join(f"{c:>{max(width, len(c) + 2)}}" for c in columns) if columns else f"{label:>{width}}"


def comparison_lines(inst: Any, res: Any, rows: Sequence[Any], runs: str, seed: int) -> list[str]:
    """``vbp compare``'s table: every policy's row against the optimum, then notes.

    Args:
        inst: the instance the policies ran on (:class:`packing.model.instance.Instance`).
        res: the optimum (:class:`solvers.result.SolveResult`).
        rows: one :class:`packing.report.comparison.ComparisonRow` per policy.
        runs: what each policy replayed ("8 order(s) (own order first)").
        seed: the seed of the runs.
    """
    if res.objective_kind == "deployed":
        return _deployed_lines(inst, res, rows, runs, seed)
    kind = res.objective_kind
    lines = [f"{inst.name}: {inst.n_apps} apps, {inst.n_containers} containers, {inst.n_hosts} hosts; "
             f"{runs}, seed {seed}"]
    cols = allocation_columns(inst)
    head = (f"{'policy':<16}{'hosts mean':>11}{'min':>6}{'max':>6}{allocation_head(cols, 'alloc rate', 12)}"
            f"{'excess':>9}{'rejected':>10}")
    obj = "-" if res.objective is None else f"{res.objective:g}"
    what = "" if kind == "hosts" else f" ({kind})"
    opt_alloc = " " * 12 * max(1, len(cols))
    if res.placement is not None:
        from packing.feasibility.metrics import compute_metrics

        m = compute_metrics(inst, res.placement)
        opt_alloc = allocation_cells(cols, m.allocation, m.allocation_by_resource, 12)
    lines += [head, "-" * len(head),
              f"{'optimum':<16}{obj + what:>11}{'':>6}{'':>6}{opt_alloc}{'':>9}{'':>10}"
              f"   {res.status}, bound {res.bound:g}", "-" * len(head)]
    for r in rows:
        excess = "-" if r.excess is None else f"{100 * r.excess:+.1f}%"
        lines.append(f"{r.name:<16}{r.hosts_mean:>11.2f}{r.hosts_min:>6}{r.hosts_max:>6}"
                     f"{allocation_cells(cols, r.allocation_mean, r.allocation_by_resource_mean, 12)}"
                     f"{excess:>9}{r.rejected_mean:>10.1f}")
    lines.append(f"excess: ({'cost' if kind == 'cost' else 'hosts'} - optimum) / optimum, the optimum "
                 "placing every container at once (offline).")
    if cols:
        lines.append("allocation per resource: allocated / capacity of the hosts in use (mean over the "
                     "runs); the bottleneck is the largest.")
    if inst.initial is not None and inst.initial.n_placed:
        lines.append(f"note: policies start from the snapshot ({inst.initial.n_placed} containers already "
                     "placed); the optimum repacks every container from scratch.")
    if any(r.rejected_mean for r in rows):
        lines.append("note: some policies rejected containers; their host counts cover fewer containers.")
    if any(r.waiting_mean for r in rows):
        lines.append("note: some policies left containers waiting (WAIT) at the end, never placed: "
                     + ", ".join(f"{r.name} {r.waiting_mean:g}" for r in rows if r.waiting_mean) + ".")
    return lines


def _deployed_lines(inst: Any, res: Any, rows: Sequence[Any], runs: str, seed: int) -> list[str]:
    """The table of a multi-cluster scenario: tasks deployed against the proven maximum."""
    head = f"{'policy':<22}{'deployed':>10}{'excess':>9}{'lost':>10}{'nodes used':>12}"
    obj = "-" if res.objective is None else f"{res.objective:g}"
    lines = [f"{inst.name}: {inst.n_containers} tasks, {inst.n_hosts} nodes; {runs}, seed {seed}",
             head, "-" * len(head),
             f"{'optimum (max deployed)':<22}{obj:>10}{'':>9}{'':>10}{res.hosts or 0:>12}"
             f"   {res.status}, {res.bound_kind} bound {res.bound:g} ({res.method})", "-" * len(head)]
    for r in rows:
        excess = "-" if r.excess is None else f"{100 * r.excess:.1f}%"
        lost = r.rejected_mean + r.waiting_mean
        lines.append(f"{r.name:<22}{r.deployed_mean:>10.1f}{excess:>9}{lost:>10.1f}{r.hosts_mean:>12.1f}")
    return [*lines, "excess: (optimum - deployed) / optimum; the optimum places all tasks at once (offline).",
            "lost: tasks not deployed (rejected, or still waiting after a WAIT when the stream ends)."]


def _num(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return "inf"
    return f"{x:.{digits}g}"


def plan_text(result: Any) -> str:
    """``vbp plan``'s report: one line per scenario, then a table per scenario and host type."""
    lines = [f"planned against: {result.planned_against}", ""]
    rows = [("growth", "status", "hosts", "cost", "bound", "gap", "time")]
    for s in result.scenarios:
        rows.append((f"{s.growth:g}", s.status, "-" if s.hosts is None else str(s.hosts),
                     _num(s.cost, 6), _num(s.bound, 6),
                     "-" if s.gap is None else f"{100 * s.gap:.2f}%", f"{s.seconds:.1f}s"))
    lines += table(rows)
    if any(s.per_type for s in result.scenarios):
        lines += ["", "use: load / the hosts' full capacity; of planned: load / the capacity "
                      "planned against"]
    for s in result.scenarios:
        lines.append("")
        if s.reason:
            lines.append(f"growth {s.growth:g}: {s.status}: {s.reason}")
        if not s.per_type:
            continue
        res = list(s.per_type[0].utilisation)
        head = ("type", "hosts", "cost", *[f"use {r}" for r in res],
                *[f"of planned {r}" for r in res], "bottleneck", *[f"stranded {r}" for r in res])
        body = [head]
        for t in s.per_type:
            body.append((t.type, f"{t.hosts}/{s.max_hosts.get(t.type, 0)}", _num(t.cost, 6),
                         *[f"{100 * t.utilisation[r]:.1f}%" for r in res],
                         *[f"{100 * t.utilisation_of_planned.get(r, 0.0):.1f}%" for r in res],
                         t.bottleneck or "-", *[_num(t.stranded[r]) for r in res]))
        lines.append(f"growth {s.growth:g} per host type (hosts used / hosts allowed):")
        lines += table(body)
        if s.n_plus_one is not None:
            lines.append(f"n+1: {json.dumps(s.n_plus_one)}")
        if s.current is not None:
            lines.append(f"current: {json.dumps(s.current)}")
        if s.autoscaler is not None:
            a = s.autoscaler
            lines.append(f"autoscaler (first fit decreasing onto the cheapest type): {a['hosts']} "
                         f"hosts, cost {_num(a['cost'], 6)}")
    return "\n".join(lines)


def _g(x: float | None) -> str:
    return "-" if x is None else f"{x:g}"


def consolidate_lines(d: dict[str, Any]) -> list[str]:
    """``vbp consolidate``'s report: a row per budget and per autoscaler, the last answer's changes."""
    r0 = d["results"][0]
    lines = [f"snapshot {d['path']}: {d['nodes']} nodes, cost {_g(r0['cost_before'])}"
             f"{'' if d['priced'] else ' (nodes counted: no prices)'}; {d['pods']} pods "
             f"({d['daemon_pods']} DaemonSet pods, {len(r0['pinned'])} pinned, "
             f"{len(r0['placed']) + len(r0['unplaced'])} pending)"]
    rows = [("max moves", "by", "status", "cost", "nodes", "bound", "gap", "moves", "waves", "time")]
    for r in d["results"]:
        rows.append(("all" if r["max_moves"] is None else str(r["max_moves"]), "vbp", r["status"],
                     _g(r["cost_after"]), _g(r["nodes_after"]), _g(r["bound"]),
                     "-" if r["gap"] is None else f"{100 * r['gap']:.2f}%", str(r["moves"]),
                     str(len(r["waves"])), f"{r['seconds']:.1f}s"))
        rows += [("", b["name"], "", _g(b["cost_after"]), str(b["nodes_after"]), "", "",
                  str(b["moves"]), "", "") for b in r["baselines"]]
    lines += table(rows)
    r = d["results"][-1]
    if r["cost_after"] is not None:
        best = min([b["cost_after"] for b in r["baselines"]] or [r["cost_after"]])
        lines.append(f"autoscalers {_g(best)}, vbp {_g(r['cost_after'])}, no plan below {_g(r['bound'])}")
    if r["reason"]:
        lines.append(f"{r['status']}: {r['reason']}")
    lines += [f"remove {n}" for n in r["removed"]] + [f"add    {a['node']} ({a['type']})" for a in r["added"]]
    for k, wave in enumerate(r["waves"]):
        for i in wave:
            e = r["evictions"][i]
            lines.append(f"wave {k + 1}: {e['namespace']}/{e['pod']}: {e['from']} -> {e['to']}")
    lines += [f"pending {p['pod']} -> {p['node']}" for p in r["placed"]]
    lines += [f"cannot place {p['pod']}: {p['reason']}" for p in r["unplaced"]]
    return lines


SHOWN = ("cpu", "memory", "pods")
"""The resources of a snapshot's per-node table (others are in the JSON)."""


def snapshot_lines(facts: dict[str, Any]) -> list[str]:
    """``vbp info``'s text for a snapshot."""
    f = facts
    types = ", ".join(f"{n} {t}" for t, n in f["types"].items())
    rows = [
        ("nodes", f"{f['nodes']:,} ({types}); {len(f['cordoned_nodes'])} cordoned"),
        ("pods", f"{f['pods']:,} running or pending ({f['daemon_pods']:,} DaemonSet pods), "
                 f"{len(f['pending']):,} pending, {f['finished_pods']:,} finished (hold nothing)"),
        ("pinned", f"{len(f['pinned']):,} pods stay where they run"
                   + (" (listed below)" if f["pinned"] else "")),
        ("budgets", "; ".join(f"{b['budget']} allows {b['allowed']} at once" for b in f["budgets"])
         or "none"),
        ("resources", ", ".join(f["resource_names"])),
        ("objects", ", ".join(f"{n:,} {k}" for k, n in f["objects"].items())),
    ]
    if f["unplaceable"]:
        rows.append(("unplaceable", f"{len(f['unplaceable'])} pending pods fit on no node (listed below)"))
    width = max(len(k) for k, _ in rows)
    out = [f"{k.ljust(width)}  {v}" for k, v in rows]
    rows_n = [["node", "type"] + [f"{r} req/alloc" for r in SHOWN]]
    for n in f["per_node"]:
        cells = [n["node"] + (" (cordoned)" if n["cordoned"] else ""), n["type"]]
        for r in SHOWN:
            cells.append(f"{_amount(r, n['requested'][r])}/{_amount(r, n['allocatable'][r])}")
        rows_n.append(cells)
    out += ["", *table(rows_n)]
    out += [f"  pending: {x}" for x in f["pending"]]
    for what, key in (("pinned", "pinned"), ("pending, fits nowhere", "unplaceable")):
        out += [f"  {what}: {x['pod']}: {x['reason']}" for x in f[key]]
    out += [f"  ignored: {x}" for x in f["ignored"]]
    return out


def _amount(resource: str, value: float) -> str:
    return f"{value:.3g}" if resource != "pods" else f"{value:g}"


__all__ = ["SHOWN", "allocation_cells", "allocation_columns", "allocation_head", "comparison_lines",
           "consolidate_lines", "info_lines", "plan_text", "snapshot_lines", "table"]
