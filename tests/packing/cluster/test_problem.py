"""The consolidation problem of the fixture snapshot, by hand; transitions and waves on small cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packing.cluster.problem import build_problem, slot_bound
from packing.cluster.waves import plan_waves
from packing.feasibility.checker import check
from packing.feasibility.transition import check_transition
from packing.loaders.host_types import load_hosts
from packing.loaders.snapshot import read_snapshot

DATA = Path(__file__).resolve().parents[2] / "data" / "k8s-snapshots"
OFFERS = ["m5.large=2c8g:price=0.096", "m5.xlarge=4c16g:price=0.192", "g4dn.xlarge=4c16g1gpu:price=0.526"]


@pytest.fixture(scope="module")
def problem():
    return build_problem(read_snapshot(DATA / "cluster.yaml"), load_hosts(OFFERS))


def test_hosts_by_hand(problem) -> None:
    P = problem
    h = P.host_names.index("ip-10-0-1-11.ec2.internal")
    cpu = P.resources.index("cpu")
    assert P.capacity[h, cpu] == 3920 - 125  # allocatable less kube-proxy (100m) and aws-node (25m)
    assert P.daemon_load[h, P.resources.index("pods")] == 2
    assert P.price[h] == pytest.approx(0.192) and P.priced
    assert P.closed.tolist() == [n == "ip-10-0-2-22.ec2.internal" for n in P.host_names]
    assert P.cost_before == pytest.approx(1.198) and P.nodes_before == 6


def test_apps_by_hand(problem) -> None:
    P = problem
    by = {g.name: a for a, g in enumerate(P.apps)}
    assert set(by) == {"web", "api", "coredns", "cart", "search", "worker", "infer", "redis (pinned)",
                       "debug (pinned)", "ml-train (pinned)"}
    assert P.cap[by["api"]] == 1 and P.cap[by["web"]] == 3  # hostname anti-affinity on api only
    assert P.counts[by["search"]] == 1 and P.orig[by["search"]].sum() == 0  # Pending
    batch = P.host_names.index("ip-10-0-3-31.ec2.internal")
    assert P.allowed[by["worker"]].tolist() == [h == batch for h in range(P.n_hosts)]
    assert not P.allowed[by["web"], batch]  # the batch node's taint
    cordoned = P.host_names.index("ip-10-0-2-22.ec2.internal")
    assert P.limited[by["cart"], cordoned] and P.orig[by["cart"], cordoned] == 1
    assert P.keep.sum() == 2  # the nodes running pinned pods
    assert [v.kind for v in check(P.instance, P.instance.initial, require_all=True)] == ["unplaced"]


def test_transition_rules(problem) -> None:
    P = problem
    inst = P.instance
    by = {g.name: a for a, g in enumerate(P.apps)}
    before = P.assign(P.orig)
    x = P.orig.copy()
    cordoned = P.host_names.index("ip-10-0-2-22.ec2.internal")
    src = int(np.flatnonzero(P.orig[by["web"]])[0])
    x[by["web"], src] -= 1
    x[by["web"], cordoned] += 1  # a web pod onto the cordoned node
    pinned = np.repeat(P.pinned, P.counts)
    kinds = [v.kind for v in check_transition(inst, before, P.assign(x), fixed=pinned,
                                              closed=P.limited, max_moves=0)]
    assert kinds == ["closed_host", "moves"]
    y = P.orig.copy()
    r = by["redis (pinned)"]
    h = int(np.flatnonzero(P.orig[r])[0])
    y[r, h] -= 1
    y[r, (h + 1) % len(P.host_names)] += 1
    assert [v.kind for v in check_transition(inst, before, P.assign(y), fixed=pinned)] == ["fixed"]


def test_waves_split_what_a_budget_forbids_together(problem) -> None:
    P = problem
    by = {g.name: a for a, g in enumerate(P.apps)}
    web = by["web"]
    # every web pod to the other big node: three evictions, a budget of one at a time
    x = P.orig.copy()
    n2 = P.host_names.index("ip-10-0-1-12.ec2.internal")
    moved = int(x[web].sum() - x[web, n2])
    x[web] = 0
    x[web, n2] = P.counts[web]
    x[by["search"], P.host_names.index("ip-10-0-1-11.ec2.internal")] = 1
    w = plan_waves(P, x)
    web_budget = next(i for i, s in enumerate(P.budgets) if s.budget.name == "web")
    assert P.budgets[web_budget].allowed == 1 and not w.stuck
    evictions = [[k for k in wave if w.moves[k].src >= 0] for wave in w.waves]
    assert sum(len(e) for e in evictions) == moved == 2
    assert all(len(e) <= 1 for e in evictions)  # one web pod per wave


@pytest.mark.parametrize(("budgets", "stuck"), [(("one",), True), (("a", "b"), False)])
def test_a_swap_is_one_wave_unless_a_budget_forbids_it(tmp_path: Path, budgets, stuck: bool) -> None:
    import json

    from packing.generators.cluster import as_list, node_object, pdb_object, pod_object

    objs = [node_object(n, "m5.large", cores=1, gib=4, alloc=("1", "4Gi")) for n in ("n1", "n2")]
    for app, node in (("a", "n1"), ("b", "n2")):  # each node full with one pod
        objs.append(pod_object(f"{app}-x-1", "default", node, requests={"cpu": "1"},
                               owner=("ReplicaSet", f"{app}-x"),
                               labels={"app": app, "team": "t", "pod-template-hash": "x"}))
    objs += ([pdb_object("one", "default", {"team": "t"}, max_unavailable=1)] if budgets == ("one",)
             else [pdb_object(b, "default", {"app": b}, max_unavailable=1) for b in budgets])
    f = tmp_path / "c.json"
    f.write_text(json.dumps(as_list(objs)))
    P = build_problem(read_snapshot(f))
    x = P.orig[:, ::-1].copy()  # a to n2, b to n1
    w = plan_waves(P, x)
    assert all(s.allowed >= 1 for s in P.budgets)
    assert bool(w.stuck) == stuck and (stuck or [len(t) for t in w.waves] == [2])


def test_slot_bound_by_hand() -> None:
    # six pods of 1 core on 2-core hosts, three apart from the others: 3 hosts
    demand = np.array([[1000], [1000]])
    assert slot_bound(demand, np.array([3, 3]), np.array([True, True]), np.array([2000]),
                      np.array([3, 3]), []) == 3
    assert slot_bound(demand, np.array([3, 3]), np.array([True, True]), np.array([2000]),
                      np.array([1, 1]), [(0, 1)]) == 6  # one per host and apart: six
