"""Node selection (labels, selectors, node affinity, taints, tolerations) in every consumer.

Random small instances with non-integer demands (seven decimals) on labelled and tainted host
types: every exact method agrees with the brute-force optimum, every policy's and solver's
placement passes the checker, and no placement puts a container where
:func:`packing.model.selection.allowed` (evaluated here per container, not through the matrix) forbids.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from packing.feasibility import kernels
from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.model.instance import UNPLACED, App, HostType, Instance, Placement, Rule
from packing.model.selection import Requirement, Taint, Toleration, allowed
from packing.sim.simulator import sample_orders, simulate
from policies.registry import POLICIES, get_policy
from solvers import available, solve
from tests.packing.brute import brute_force  # noqa: E402

METHODS = ["auto", "cpsat", "pulp", "colgen"]
LIMIT = 3.0

TYPES = [  # (labels, taints)
    ((("disk", "ssd"), ("gen", "5"), ("zone", "a")), ()),
    ((("disk", "hdd"), ("gen", "3"), ("zone", "b")), (Taint("spot", "true", "NoExecute"),)),
    ((("disk", "hdd"), ("gen", "4"), ("zone", "a")), (Taint("dedicated", "db", "NoSchedule"),
                                                       Taint("noisy", "", "PreferNoSchedule"))),
]
SELECTIONS = [  # (node_selector, node_affinity)
    ((), None),
    ((("zone", "a"),), None),
    ((("disk", "hdd"),), None),
    ((), ((Requirement("gen", "Gt", ("3",)),),)),
    ((), ((Requirement("zone", "In", ("b",)),), (Requirement("disk", "NotIn", ("hdd",)),))),
    ((("zone", "a"),), ((Requirement("gen", "Lt", ("5",)), Requirement("disk", "Exists")),)),
]
TOLERATIONS = [
    (),
    (Toleration("", "Exists"),),
    (Toleration("dedicated", "Exists", "", "NoSchedule"),),
    (Toleration("spot", "Equal", "true"),),
    (Toleration("spot", "Equal", "false"),),
]


def random_instance(seed: int, restricted: bool = True) -> Instance:
    """2-3 labelled, tainted host types of capacity 1 (and 64), 4-7 containers of 7-decimal sizes."""
    rng = np.random.default_rng(seed)
    n_types = int(rng.integers(2, 4))
    two = rng.random() < 0.4
    caps = (1.0, 64.0) if two else (1.0,)
    types = tuple(HostType(f"t{t}", caps, int(rng.integers(1, 4)), labels=TYPES[t][0],
                           taints=TYPES[t][1]) for t in range(n_types))
    apps = []
    for i in range(int(rng.integers(3, 6))):
        size = round(float(rng.integers(15, 60)) / 100 + float(rng.integers(-2, 3)) * 1e-7, 7)
        dem = (size, float(rng.integers(1, 30))) if two else (size,)
        sel, aff = SELECTIONS[int(rng.integers(len(SELECTIONS)))] if restricted else ((), None)
        tol = TOLERATIONS[int(rng.integers(len(TOLERATIONS)))]
        apps.append(App(f"a{i}", dem, int(rng.integers(1, 3)), node_selector=sel,
                        node_affinity=aff, tolerations=tol))
    rules = (Rule("a0", "a1", 0),) if rng.random() < 0.3 else ()
    if rng.random() < 0.3:  # GPU cards on every type, shared by a restricted GPU app
        types = tuple(HostType(t.name, t.capacity, t.count, gpus=1, gpu_capacity=(1.0,),
                               labels=t.labels, taints=t.taints) for t in types)
        share = 0.5000001 if rng.random() < 0.5 else 0.4999999
        sel, aff = SELECTIONS[int(rng.integers(len(SELECTIONS)))]
        tol = TOLERATIONS[int(rng.integers(len(TOLERATIONS)))]
        apps.append(App("g", tuple(0.1 for _ in caps), 2, gpu_cards=1, gpu_per_card=(share,),
                        node_selector=sel, node_affinity=aff, tolerations=tol))
        return Instance(f"sel{seed}", ("cpu", "mem")[: len(caps)], types, tuple(apps), rules,
                        gpu_resources=("gpu",))
    return Instance(f"sel{seed}", ("cpu", "mem")[: len(caps)], types, tuple(apps), rules)


def naive_violations(inst: Instance, placement: Placement) -> list[str]:
    """Containers on a host type that :func:`allowed` forbids, found without the matrix."""
    out = []
    host_of = placement.host_array(inst)
    for j, h in enumerate(host_of.tolist()):
        if h == UNPLACED:
            continue
        app = inst.apps[int(inst.container_app[j])]
        t = inst.host_types[int(inst.host_type_of[h])]
        if not allowed(app.node_selector, app.node_affinity, app.tolerations, t.labels, t.taints):
            out.append(f"{app.name} on {t.name}")
    return out


def cases() -> list[tuple[Instance, float]]:
    """Feasible instances with their brute-force optimum; in most, the selection matters."""
    out = []
    seed = 0
    while len(out) < 10:
        inst = random_instance(seed)
        seed += 1
        if inst.n_containers > 8:
            continue
        opt, _, placement = brute_force(inst)
        if not np.isfinite(opt):
            continue
        assert placement is not None and check(inst, placement, require_all=True) == []
        assert naive_violations(inst, placement) == []
        out.append((inst, float(opt)))
    return out


CASES = cases()


def test_selection_matters_in_the_cases() -> None:
    """The optimum with node selection is above the optimum without it in some cases."""
    worse = 0
    for inst, opt in CASES:
        free = inst.replace(
            apps=tuple(dataclasses.replace(a, node_selector=(), node_affinity=None,
                                           tolerations=()) for a in inst.apps),
            host_types=tuple(dataclasses.replace(t, labels=(), taints=())
                             for t in inst.host_types))
        assert free.type_allowed is None
        free_opt = brute_force(free)[0]
        assert free_opt <= opt
        worse += free_opt < opt
    assert worse >= 2


def matrix(inst: Instance) -> np.ndarray:
    """``inst.type_allowed``, with ``None`` (no restriction) as all True."""
    m = inst.type_allowed
    return np.ones((inst.n_apps, len(inst.host_types)), dtype=bool) if m is None else m


def test_cases_include_gpu_cards() -> None:
    assert sum(inst.max_gpus > 0 for inst, _ in CASES) >= 2


def test_bounds_honour_the_matrix() -> None:
    from packing.feasibility.bounds import lower_bounds, per_host_max

    for inst, opt in CASES:
        assert lower_bounds(inst).best <= opt
        assert (per_host_max(inst)[~matrix(inst)] == 0).all()


def test_type_allowed_is_allowed_per_pair() -> None:
    for inst, _ in CASES:
        m = matrix(inst)
        assert m.shape == (inst.n_apps, len(inst.host_types))
        assert (inst.type_allowed is None) == bool(m.all())
        for i, a in enumerate(inst.apps):
            for t, ht in enumerate(inst.host_types):
                assert m[i, t] == allowed(a.node_selector, a.node_affinity, a.tolerations,
                                          ht.labels, ht.taints)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_exact_methods_against_brute_force(case: int) -> None:
    inst, opt = CASES[case]
    for method in METHODS:
        if not available(method):
            pytest.skip(f"{method} not importable")
        res = solve(inst, method, time_limit=LIMIT, workers=1)
        assert res.placement is not None, (method, res)
        assert check(inst, res.placement, require_all=True) == []
        assert naive_violations(inst, res.placement) == []
        assert res.bound <= opt + 1e-9, (method, res.bound, opt, res.proofs)
        assert res.objective >= opt - 1e-9, (method, res.objective, opt)
        if res.status == "optimal":
            assert res.objective == pytest.approx(opt), (method, res.objective, opt, res.proofs)


def test_arcflow_refuses_restricted_instances() -> None:
    from solvers.exact.arcflow import not_applicable

    inst = Instance("one", ("cpu",), (HostType("h", (1.0,), 3, taints=(Taint("k", "v"),)),),
                    (App("a", (0.5,), 2, tolerations=(Toleration("k", "Exists"),)),
                     App("b", (0.5,), 1)))
    assert "not modelled" in str(not_applicable(inst))
    # every app tolerates the taint: no restriction, and the arc-flow model applies
    tolerant = inst.replace(apps=inst.apps[:1])
    assert tolerant.type_allowed is None and not_applicable(tolerant) is None


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_policy_respects_the_matrix(name: str) -> None:
    for inst, _ in CASES[3:8]:  # two with GPU cards
        for order in sample_orders(inst, 2, seed=1):
            res = simulate(inst, get_policy(name), order, seed=0)
            assert check(inst, res.placement) == []
            assert naive_violations(inst, res.placement) == []


def test_masks_and_compiled_paths_honour_the_matrix() -> None:
    """Fresh and partly filled states: the mask is False on every forbidden host type, and the
    compiled mask (which covers restricted instances through feasible_gpu) equals it."""
    rng = np.random.default_rng(0)
    for inst, _ in CASES:
        st = ClusterState(inst)
        assert kernels.supports(st) == (inst.type_allowed is None and not inst.max_gpus)
        forbid = ~matrix(inst)[:, inst.host_type_of]  # (n_apps, n_hosts)
        for _ in range(4):
            for a in range(inst.n_apps):
                m = st.mask(a)
                assert not (m & forbid[a]).any()
                assert np.array_equal(kernels.fast_mask(st, a), m)
            a = int(rng.integers(inst.n_apps))
            ok = np.flatnonzero(st.mask(a))
            if len(ok):
                st.place(a, int(rng.choice(ok)))
