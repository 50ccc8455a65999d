"""``vbp consolidate`` at scale: seeded clusters of 240 nodes and 2,400 nodes, unlimited moves.

The clusters come from :func:`packing.generators.cluster.generate_cluster` (kubectl-shaped JSON,
read back by the snapshot reader): five EC2 node types with their allocatable and prices, about a
third of the pods DaemonSet pods (kube-proxy, aws-node, node-exporter, fluent-bit on some
nodes), Deployments and StatefulSets of 1 to 12 replicas asking for about 45% of the nodes' CPU and
memory, spread by least-allocated scoring, PodDisruptionBudgets on some, a few pinned pods.

Measurements (``--size small``: 240 nodes, 1,600 pods; ``--size large``: 2,400 nodes, 16,000
pods), no move limit, ``--threads`` CP-SAT workers:

1. vbp (``vbp.consolidate``: the autoscalers' answers start the climb where their moves fit): cost
   before and after, the proven bound and gap, evictions and waves, seconds in all;
2. cluster-autoscaler's scale-down and Karpenter's consolidation (:mod:`policies.autoscalers`);
3. (small only, ``--independent SECONDS``) an independent model written here from the snapshot
   alone, not vbp's: one boolean per node kept and one count per app and node, capacity with
   the DaemonSets' load, pinned pods and pods a budget allows no disruption to where they run,
   node selection and taints, cordoned nodes keeping only their own pods; CP-SAT minimises the
   price of the nodes kept from the running cluster as its hint. Its best solution and its
   bound: vbp's cost is measured against that best.

Run::

    python benchmarks/bench_consolidate.py --size small --time-limit 300 --independent 900
    python benchmarks/bench_consolidate.py --size large --time-limit 600
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SIZES = {"small": (240, 1600), "large": (2400, 16000)}
"""Nodes and pods of each size."""
HOSTS = ("m5.large=2c8g:price=0.096", "m5.xlarge=4c16g:price=0.192", "m5.2xlarge=8c32g:price=0.384",
         "c5.2xlarge=8c16g:price=0.34", "r5.xlarge=4c32g:price=0.252")
"""The generator's node types with their EC2 on-demand prices."""


def independent_best(snap: Any, prices: dict[str, float], seconds: float,
                     threads: int) -> tuple[float, float]:
    """The independent model of the module docstring: ``(best cost, proven bound)``."""
    from ortools.sat.python import cp_model

    from packing.cluster.budgets import budget_state
    from packing.model.selection import allowed

    res = snap.resources
    pods = snap.pods
    blocked = {i for b in snap.budgets for i in budget_state(b, pods).pods
               if budget_state(b, pods).allowed == 0}
    fixed = {i for i, p in enumerate(pods) if not p.daemon and p.node is not None
             and (p.pinned or i in blocked)}
    groups: dict[Any, list[int]] = {}
    for i, p in enumerate(pods):
        if not p.daemon and i not in fixed:
            sig = (p.controller or p.key, tuple(p.request.get(r, 0) for r in res), p.node_selector,
                   p.node_affinity, p.tolerations)
            groups.setdefault(sig, []).append(i)
    m = cp_model.CpModel()
    y = {n.name: m.new_bool_var(n.name) for n in snap.nodes}
    load: dict[str, list[Any]] = {n.name: [] for n in snap.nodes}
    x: dict[tuple[int, str], Any] = {}
    hint: dict[tuple[int, str], int] = {}
    for g, (sig, members) in enumerate(groups.items()):
        p = pods[members[0]]
        here = {}
        for i in members:
            if pods[i].node is not None:
                here[pods[i].node] = here.get(pods[i].node, 0) + 1
        for n in snap.nodes:
            ok = allowed(p.node_selector, p.node_affinity, p.tolerations, n.labels, n.taints)
            if n.name in here or (ok and not n.unschedulable):
                ub = len(members) if not n.unschedulable else here.get(n.name, 0)
                x[g, n.name] = m.new_int_var(0, ub, "")
                hint[g, n.name] = here.get(n.name, 0)
                load[n.name].append((g, x[g, n.name], sig[1]))
        m.add(sum(x[g, n.name] for n in snap.nodes if (g, n.name) in x) == len(members))
    still = {n.name: [0] * len(res) for n in snap.nodes}  # DaemonSet and pinned load per node
    for i, q in enumerate(pods):
        if q.node is not None and (q.daemon or i in fixed):
            still[q.node] = [a + q.request.get(r, 0) for a, r in zip(still[q.node], res, strict=True)]
    for i in fixed:
        m.add(y[str(pods[i].node)] == 1)
    for n in snap.nodes:
        ds = still[n.name]
        for k, r in enumerate(res):
            terms = [d[k] * v for _g, v, d in load[n.name] if d[k]]
            if terms:
                m.add(sum(terms) <= (n.allocatable.get(r, 0) - ds[k]) * y[n.name])
    m.minimize(sum(round(1000 * prices[n.type]) * y[n.name] for n in snap.nodes))
    for k, v in x.items():
        m.add_hint(v, hint[k])
    for n in snap.nodes:
        m.add_hint(y[n.name], 1)
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = seconds
    s.parameters.num_workers = threads
    s.solve(m)
    return s.objective_value / 1000, s.best_objective_bound / 1000


def main() -> None:
    """Generate the cluster, run vbp, the baselines and (small) the independent model; print."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--time-limit", type=float, default=None, help="vbp's budget (300 s small, 600 s large)")
    ap.add_argument("--independent", type=float, default=0.0, help="seconds for the independent model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quiet", action="store_true", help="no line per rung of the ladder on stderr")
    args = ap.parse_args()

    import vbp
    from packing.cluster.problem import build_problem
    from packing.generators.cluster import as_list, generate_cluster
    from packing.loaders.host_types import load_hosts
    from packing.loaders.snapshot import read_snapshot
    from policies.autoscalers import cluster_autoscaler, karpenter

    nodes, pods = SIZES[args.size]
    limit = args.time_limit or (300.0 if args.size == "small" else 600.0)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; seed {args.seed}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cluster.json"
        path.write_text(json.dumps(as_list(generate_cluster(nodes, pods, seed=args.seed))))
        t = time.perf_counter()
        snap = read_snapshot(path)
        offers = load_hosts(list(HOSTS))
        P = build_problem(snap, offers)
        print(f"read and built: {len(snap.nodes)} nodes, {len(snap.pods)} pods "
              f"({sum(p.daemon for p in snap.pods)} DaemonSet, {sum(g.pinned for g in P.apps)} pinned "
              f"apps), {P.n_apps} apps, {len(snap.budgets)} budgets: {time.perf_counter() - t:.1f}s")
        t = time.perf_counter()
        (r,) = vbp.consolidate(path, list(HOSTS), max_moves=None, time_limit=limit,
                               threads=args.threads, seed=args.seed, baselines=False,
                               progress=None if args.quiet else lambda m: print(m, file=sys.stderr)
                               ).answers
        print(f"vbp: {r.status}  cost {r.cost_before:.3f} -> {r.cost_after:.3f}  bound {r.bound:.3f}  "
              f"gap {100 * (r.gap or 0):.2f}%  nodes {r.nodes_before} -> {r.nodes_after}  moves "
              f"{r.moves} in {len(r.waves)} waves  proofs {r.proofs}  {time.perf_counter() - t:.1f}s")
        for fn in (cluster_autoscaler, karpenter):
            t = time.perf_counter()
            o = fn(P, None)
            print(f"{o.name}: cost {o.cost_after:.3f}  nodes {o.nodes_after}  moves {o.moves}  "
                  f"{time.perf_counter() - t:.1f}s")
        if args.independent > 0:
            t = time.perf_counter()
            prices = {o.name: float(o.price or 1.0) for o in offers}
            best, bound = independent_best(snap, prices, args.independent, args.threads)
            print(f"independent model: best {best:.3f}  bound {bound:.3f}  "
                  f"({time.perf_counter() - t:.1f}s); vbp above its best by "
                  f"{100 * ((r.cost_after or 0) - best) / best:.2f}%")


if __name__ == "__main__":
    main()
