"""Seeded random instances, optionally with a planted (known) optimum.

Demands live on a grid: one *unit* is ``1 / UNITS`` of a base host's capacity on each resource,
so planted hosts can be filled exactly. Host type 0 is the base (largest) type with
``host_capacity``; further types are halves, quarters, ... of it, with costs ``scale ** 0.9``
(small hosts are cheaper per host, dearer per unit of capacity).

Shapes (``binding``)
    ``"cpu"``: CPU is the binding resource; every other resource asks for a fraction
    ``rho in [0.2, 0.8]`` (per app) of the container's CPU share, so it has slack.
    ``"two"``: CPU and memory both bind: apps come in complementary pairs ``(x, y)`` and
    ``(y, x)``, so the totals of both are equal; further resources are slack as above.
    ``"none"``: every resource is drawn independently; no resource is designed to bind.

Planted optimum (``planted=True``, PuLP's bin-packing test idea, with an owned RNG)
    ``k`` base hosts are filled exactly on the binding resource(s) with containers of the apps
    (every app at least once), until there are ``n_containers`` (the last host may add a few
    more); the apps are then shuffled and renamed. The total binding demand is ``k`` times the
    largest capacity, so no placement uses fewer than ``k`` hosts: ``meta["planted_optimum"]``
    is ``k`` (in hosts, not cost). Caps, rules and exclusions are only added where the planted
    packing keeps them (caps and rule ``k`` are the largest counts it shows; exclusions join apps
    it never puts together).

Hosts available
    ``ceil(reference / tightness)`` hosts of every type, where ``reference`` is the number of
    base hosts a known packing uses: the planted ``k``, or a first-fit-decreasing packing built
    with :class:`packing.feasibility.predicates.ClusterState` (so rules and caps are respected). With
    ``tightness=1`` and one type, the instance offers exactly the hosts of the known packing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from packing.feasibility.predicates import ClusterState
from packing.model.instance import UNPLACED, App, HostType, Instance, Placement, Rule

UNITS = 100
"""Grid units per base host capacity on each resource."""

RESOURCE_NAMES = ("cpu", "mem", "disk", "net")
"""Names of the first resources; further ones are ``r4``, ``r5``, ..."""

Binding = Literal["cpu", "two", "none"]


def _resource_names(n: int) -> tuple[str, ...]:
    return tuple(RESOURCE_NAMES[i] if i < len(RESOURCE_NAMES) else f"r{i}" for i in range(n))


def _capacity(host_capacity: float | Sequence[float], n_resources: int) -> np.ndarray:
    cap = np.broadcast_to(np.asarray(host_capacity, dtype=np.float64), (n_resources,)).copy()
    if (cap <= 0).any():
        raise ValueError("host_capacity must be positive")
    return cap


def _shapes(rng: np.random.Generator, n_apps: int, n_resources: int, binding: Binding,
            size: tuple[float, float], filler: bool) -> np.ndarray:
    """Demand of each app in grid units, shape ``(n_apps, n_resources)`` (integers >= 1).

    With ``filler``, app 0 has one unit on every binding resource (planting needs it to close
    a host exactly).
    """
    lo = max(1, round(size[0] * UNITS))
    hi = max(lo, round(size[1] * UNITS))
    u = np.zeros((n_apps, n_resources), dtype=np.int64)
    if binding == "none":
        u[:] = rng.integers(lo, hi + 1, size=(n_apps, n_resources))
        return u
    cpu = rng.integers(lo, hi + 1, size=n_apps)
    if binding == "two":
        # app 0 and an unpaired last app are self-complementary (x, x); the others come in
        # complementary pairs: app j has (x, y), app j + 1 has (y, x), for j = 1, 3, 5, ...
        other = rng.integers(lo, hi + 1, size=n_apps)
        if filler:
            cpu[0] = 1
        other[0] = cpu[0]
        for j in range(1, n_apps - 1, 2):
            cpu[j + 1], other[j + 1] = other[j], cpu[j]
        if n_apps % 2 == 0:
            other[n_apps - 1] = cpu[n_apps - 1]
        u[:, 0], u[:, 1] = cpu, other
        first_slack = 2
    else:
        if filler:
            cpu[0] = 1
        u[:, 0] = cpu
        first_slack = 1
    for r in range(first_slack, n_resources):
        rho = rng.uniform(0.2, 0.8, size=n_apps)
        u[:, r] = np.maximum(1, np.floor(u[:, 0] * rho)).astype(np.int64)
    return u


def _plant(rng: np.random.Generator, units: np.ndarray, n_containers: int, binding: Binding
           ) -> list[list[int]]:
    """Fill base hosts exactly on the binding resources; returns the apps on each host.

    For ``"two"``, a complementary pair is placed together (a *block*), so both resources fill
    at the same rate; app 0 (``(1, 1)``) closes a host.
    """
    n_apps = len(units)
    if binding == "two":
        # blocks as paired by _shapes: each uses as much CPU as memory
        blocks = [[0]] + [[j, j + 1] for j in range(1, n_apps - 1, 2)]
        if n_apps % 2 == 0 and n_apps > 1:
            blocks.append([n_apps - 1])
        size = [int(units[b, 0].sum()) for b in blocks]
    else:
        blocks = [[a] for a in range(n_apps)]
        size = [int(units[a, 0]) for a in range(n_apps)]
    size_arr = np.array(size)
    pending = list(rng.permutation(len(blocks)))  # every block at least once
    hosts: list[list[int]] = []
    placed = 0
    while pending or placed < n_containers:
        rem, host = UNITS, []
        while rem > 0:
            if pending and size[pending[-1]] <= rem:
                b = pending.pop()
            else:
                ok = np.flatnonzero(size_arr <= rem)
                b = int(rng.choice(ok))
            host.extend(blocks[b])
            rem -= size[b]
        hosts.append(host)
        placed += len(host)
    return hosts


def _ffd(inst: Instance, base_hosts: int) -> tuple[int, np.ndarray, list[tuple[int, ...]]]:
    """First-fit decreasing onto the first ``base_hosts`` hosts (type 0), by ClusterState.

    Returns:
        ``(hosts used, host per container, cards per container)``; hosts used is ``-1`` when
        some container did not fit.
    """
    st = ClusterState(inst)
    size = (inst.demand / np.maximum(inst.type_capacity[0], 1e-12)).max(axis=1)
    host_of = np.full(inst.n_containers, UNPLACED, dtype=np.int64)
    used = 0
    for a in np.argsort(-size, kind="stable"):
        for j in range(int(inst.offsets[a]), int(inst.offsets[a + 1])):
            ok = np.flatnonzero(st.mask(int(a))[:base_hosts])
            if not len(ok):
                return -1, host_of, []
            h = int(ok[0])
            st.place(int(a), h)
            host_of[j] = h
            used = max(used, h + 1)
    return used, host_of, [()] * inst.n_containers


def generate_random_packed(
    n_apps: int,
    n_containers: int,
    *,
    n_resources: int = 2,
    binding: Binding = "cpu",
    rule_density: float = 0.0,
    exclusion_density: float = 0.0,
    cap_fraction: float = 0.0,
    tightness: float = 1.0,
    host_capacity: float | Sequence[float] = 100.0,
    n_host_types: int = 1,
    item_size: tuple[float, float] = (0.02, 0.3),
    planted: bool = False,
    seed: int = 0,
) -> tuple[Instance, Placement]:
    """A random instance and a known feasible packing of it (see :func:`generate_random`).

    Returns:
        ``(instance, packing)``: the packing places every container on the base hosts; when
        ``planted`` it is the planted optimum.
    """
    if n_apps < 1 or n_containers < n_apps:
        raise ValueError("need n_apps >= 1 and n_containers >= n_apps")
    if n_resources < 1 or (binding == "two" and n_resources < 2):
        raise ValueError("binding='two' needs n_resources >= 2; every instance needs one")
    if binding not in ("cpu", "two", "none"):
        raise ValueError(f"binding must be 'cpu', 'two' or 'none', got {binding!r}")
    if planted and binding == "none":
        raise ValueError("planting needs a binding resource: use binding='cpu' or 'two'")
    if not 0 < tightness <= 1:
        raise ValueError("tightness must be in (0, 1]")
    if not (0 <= rule_density <= 1 and 0 <= exclusion_density <= 1 and 0 <= cap_fraction <= 1):
        raise ValueError("densities and cap_fraction must be in [0, 1]")
    if not 0 < item_size[0] <= item_size[1] <= 1:
        raise ValueError("item_size must satisfy 0 < low <= high <= 1")
    if n_host_types < 1:
        raise ValueError("n_host_types must be at least 1")
    params: dict[str, Any] = {
        "n_apps": n_apps, "n_containers": n_containers, "n_resources": n_resources,
        "binding": binding, "rule_density": rule_density, "exclusion_density": exclusion_density,
        "cap_fraction": cap_fraction, "tightness": tightness,
        "host_capacity": np.asarray(host_capacity, dtype=np.float64).tolist(),
        "n_host_types": n_host_types, "item_size": list(item_size), "planted": planted,
    }
    rng = np.random.default_rng(seed)
    names = _resource_names(n_resources)
    cap = _capacity(host_capacity, n_resources)
    unit = cap / UNITS
    units = _shapes(rng, n_apps, n_resources, binding, item_size, filler=planted)

    # which apps go where (planted), and the app counts
    planted_hosts: list[list[int]] = []
    if planted:
        planted_hosts = _plant(rng, units, n_containers, binding)
        counts = np.bincount(np.concatenate([np.array(h) for h in planted_hosts]),
                             minlength=n_apps)
        keep = np.flatnonzero(counts > 0)
    else:
        counts = 1 + rng.multinomial(n_containers - n_apps, np.full(n_apps, 1 / n_apps))
        keep = np.arange(n_apps)
    order = keep[rng.permutation(len(keep))]  # shuffle, then name apps in the new order
    new_of = {int(a): i for i, a in enumerate(order)}
    app_names = [f"app{i}" for i in range(len(order))]
    n_kept = len(order)
    per_host = np.zeros((len(planted_hosts), n_kept), dtype=np.int64)
    for h, host in enumerate(planted_hosts):
        for a in host:
            per_host[h, new_of[a]] += 1

    # caps
    caps: list[int | None] = [None] * n_kept
    for i in np.flatnonzero(rng.random(n_kept) < cap_fraction):
        caps[i] = int(per_host[:, i].max()) if planted else int(rng.integers(1, 5))

    # rules <A, B, k> over ordered pairs, exclusions over unordered pairs
    def sample_pairs(density: float, ordered: bool) -> list[tuple[int, int]]:
        n_pairs = n_kept * (n_kept - 1) // (1 if ordered else 2)
        want = int(rng.binomial(n_pairs, density)) if n_pairs else 0
        if want == 0:
            return []
        if want > n_pairs // 2:  # dense: enumerate
            allp = [(a, b) for a in range(n_kept) for b in range(n_kept)
                    if a != b and (ordered or a < b)]
            idx = rng.choice(len(allp), size=want, replace=False)
            return [allp[i] for i in sorted(idx)]
        out: set[tuple[int, int]] = set()
        while len(out) < want:
            a, b = (int(x) for x in rng.integers(0, n_kept, size=2))
            if a != b:
                out.add((a, b) if ordered else (min(a, b), max(a, b)))
        return sorted(out)

    together = np.zeros((n_kept, n_kept), dtype=np.int64)  # max count of B on a host with A
    if planted:
        for h in range(len(planted_hosts)):
            on = np.flatnonzero(per_host[h])
            together[np.ix_(on, on)] = np.maximum(together[np.ix_(on, on)], per_host[h, on])
    rules = []
    for a, b in sample_pairs(rule_density, ordered=True):
        k = int(together[a, b]) if planted else int(rng.integers(0, 4))
        rules.append(Rule(app_names[a], app_names[b], k))
    exclusions = []
    for a, b in sample_pairs(exclusion_density, ordered=False):
        if planted and (together[a, b] or together[b, a]):
            continue  # the planted packing puts them together: no exclusion
        exclusions.append((app_names[a], app_names[b]))

    apps = tuple(
        App(app_names[i], tuple(float(x) for x in units[a] * unit), int(counts[a]),
            max_per_host=caps[i])
        for i, a in enumerate(int(x) for x in order)
    )
    scales = [2.0 ** -t for t in range(n_host_types)]

    def build(n_per_type: int) -> Instance:
        types = tuple(
            HostType(f"h{t}", tuple(float(x) for x in np.floor(cap * s * 1e6) / 1e6),
                     n_per_type, cost=round(s ** 0.9, 4))
            for t, s in enumerate(scales))
        return Instance(f"random-{seed}", names, types, apps, tuple(rules), tuple(exclusions),
                        meta=meta)

    meta: dict[str, Any] = {"generator": "random", "seed": seed, "params": params}
    if planted:
        k = len(planted_hosts)
        host_of = np.full(sum(int(c) for c in counts[order]), UNPLACED, dtype=np.int64)
        tmp = build(k)
        nxt = tmp.offsets[:-1].copy()
        for h, host in enumerate(planted_hosts):
            for a in host:
                host_of[nxt[new_of[a]]] = h
                nxt[new_of[a]] += 1
        ref = k
        meta["planted_optimum"] = k
    else:
        pool = max(16, min(n_containers, 4 * math.ceil(
            float((counts[:, None] * units).sum(axis=0).max()) / UNITS) + n_apps))
        while True:
            tmp = build(pool)
            ref, host_of, _ = _ffd(tmp, pool)
            if ref >= 0:
                break
            if pool >= n_containers:  # pragma: no cover - one container per host always fits
                raise RuntimeError("first-fit found no packing")
            pool = min(n_containers, 2 * pool)
    meta["reference_hosts"] = ref
    inst = build(math.ceil(ref / tightness - 1e-9))
    return inst, Placement.from_arrays(inst, host_of)


def generate_random(
    n_apps: int,
    n_containers: int,
    *,
    n_resources: int = 2,
    binding: Binding = "cpu",
    rule_density: float = 0.0,
    exclusion_density: float = 0.0,
    cap_fraction: float = 0.0,
    tightness: float = 1.0,
    host_capacity: float | Sequence[float] = 100.0,
    n_host_types: int = 1,
    item_size: tuple[float, float] = (0.02, 0.3),
    planted: bool = False,
    seed: int = 0,
) -> Instance:
    """A seeded random instance (see the module docstring for the construction).

    Args:
        n_apps: number of apps (planted: apps that end up with no container are dropped, rare).
        n_containers: number of containers (planted: at least this many; the last planted host
            may add a few).
        n_resources: number of resources (``cpu``, ``mem``, ``disk``, ``net``, ``r4``...).
        binding: ``"cpu"``, ``"two"`` (CPU and memory) or ``"none"``.
        rule_density: probability that an ordered pair of apps ``(A, B)`` gets a rule
            ``<A, B, k>`` (random ``k`` in 0..3; planted: the largest count of B the planted
            packing puts next to A).
        exclusion_density: probability that an unordered pair of apps is an exclusion pair
            (planted: only pairs the planted packing keeps apart).
        cap_fraction: fraction of apps with an anti-affinity cap (random 1..4; planted: the
            largest count per host in the planted packing).
        tightness: hosts a known packing uses / hosts offered per type, in ``(0, 1]``.
        host_capacity: capacity of the base host type, one number or one per resource.
        n_host_types: number of host types (capacities halve from one type to the next).
        item_size: range of a container's demand on the binding resource(s), as a fraction
            of the base capacity (on a grid of ``1 / UNITS``).
        planted: plant a known optimum (``meta["planted_optimum"]``).
        seed: seed of the generator's own RNG; the same arguments give an equal instance.

    Returns:
        The instance; ``meta`` records the parameters, the seed and ``reference_hosts``.
    """
    inst, _ = generate_random_packed(
        n_apps, n_containers, n_resources=n_resources, binding=binding,
        rule_density=rule_density, exclusion_density=exclusion_density,
        cap_fraction=cap_fraction, tightness=tightness, host_capacity=host_capacity,
        n_host_types=n_host_types, item_size=item_size, planted=planted, seed=seed)
    return inst


__all__ = ["RESOURCE_NAMES", "UNITS", "generate_random", "generate_random_packed"]
