"""Hypothesis strategies for small random instances and placements (reused across the tests).

``instances()`` draws general instances: several resources and host types (with costs, clusters,
GPU cards of one or two per-card resources and card models), apps with caps and GPU demand
(shared or whole cards, model constraints), rules including self-rules, exclusions, and
optionally an initial placement and a valid request stream (never more containers of an app
alive at once than its count). Sizes are small integers so that ties and
exact fills happen often. ``placements(inst)`` draws placements, feasible or not;
``placements(inst, bad=True)`` also names unknown apps, unknown hosts, wrong counts and
malformed GPU cards.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from packing.errors import InputError
from packing.model.instance import UNPLACED, App, HostType, Instance, Placement, Request, Rule

MODELS = ("A", "B")


@st.composite
def instances(
    draw: Any,
    *,
    max_apps: int = 4,
    max_types: int = 2,
    max_per_type: int = 3,
    max_resources: int = 2,
    max_count: int = 3,
    gpus: bool = True,
    rules: bool = True,
    initial: bool = False,
    requests: bool = False,
    max_value: int = 10,
) -> Instance:
    """A small random instance (see the module docstring)."""
    n_r = draw(st.integers(1, max_resources))
    resources = tuple(f"r{i}" for i in range(n_r))
    use_gpu = gpus and draw(st.booleans())
    gpu_res: tuple[str, ...] = ()
    if use_gpu:
        gpu_res = draw(st.sampled_from([("gpu_milli",), ("gpu_milli", "gpu_mem")]))
    n_t = draw(st.integers(1, max_types))
    types = []
    for t in range(n_t):
        cap = tuple(float(draw(st.integers(1, max_value))) for _ in resources)
        count = draw(st.integers(1 if t == 0 else 0, max_per_type))
        cost = float(draw(st.integers(1, 3)))
        cluster = draw(st.sampled_from([None, "c1", "c2"]))
        n_g, g_cap, model = 0, (), None
        if use_gpu and draw(st.booleans()):
            n_g = draw(st.integers(1, 3))
            g_cap = tuple(float(draw(st.integers(1, 4))) for _ in gpu_res)
            model = draw(st.sampled_from([None, *MODELS]))
        types.append(HostType(f"t{t}", cap, count, cost, cluster, n_g, g_cap, model))
    n_a = draw(st.integers(1, max_apps))
    names = [f"a{i}" for i in range(n_a)]
    apps = []
    for name in names:
        demand = tuple(float(draw(st.integers(0, max_value // 2 + 1))) for _ in resources)
        count = draw(st.integers(0, max_count))
        mph = draw(st.one_of(st.none(), st.integers(0, 3)))
        cards, per_card, whole, models = 0, (), False, ()
        if use_gpu and draw(st.booleans()):
            cards = draw(st.integers(1, 2))
            whole = draw(st.booleans())
            if not whole:
                per_card = tuple(float(draw(st.integers(0, 3))) for _ in gpu_res)
            models = tuple(draw(st.lists(st.sampled_from(MODELS), max_size=2, unique=True)))
        apps.append(App(name, demand, count, mph, cards, per_card, whole, models))
    rule_list: list[Rule] = []
    excl: list[tuple[str, str]] = []
    if rules:
        for a, b, k in draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names),
                                               st.integers(0, 2)), max_size=4)):
            rule_list.append(Rule(a, b, k))
        if n_a > 1:
            for a, b in draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names)),
                                      max_size=2)):
                if a != b:
                    excl.append((a, b))
    inst = Instance("hyp", resources, tuple(types), tuple(apps), tuple(rule_list), tuple(excl),
                    gpu_res)
    if initial and draw(st.booleans()):
        inst = inst.replace(initial=draw(placements(inst)))
    if requests:
        reqs = []
        for name, t, c, dur in draw(st.lists(st.tuples(
                st.sampled_from(names), st.integers(0, 100), st.integers(1, 3),
                st.one_of(st.none(), st.integers(0, 50))), max_size=4)):
            req = Request(float(t), name, c, None if dur is None else float(t + dur))
            try:  # keep the stream valid: never more containers alive than the app's count
                inst.replace(requests=(*reqs, req))
            except InputError:
                continue
            reqs.append(req)
        inst = inst.replace(requests=tuple(reqs))
    return inst


@st.composite
def placements(draw: Any, inst: Instance, *, bad: bool = False, p_unplaced: float = 0.25
               ) -> Placement:
    """A random placement of ``inst`` (every container on a random host or unplaced).

    GPU apps get distinct valid cards of their host when it has enough; with ``bad`` also
    wrong counts, unknown apps and hosts, and malformed card lists.
    """
    hosts: dict[str, tuple[int, ...]] = {}
    gpus: dict[str, tuple[tuple[int, ...], ...]] = {}
    top = inst.n_hosts + (2 if bad else 0)
    for app in inst.apps:
        n = app.count
        if bad and draw(st.integers(0, 9)) == 0:
            n = max(0, n + draw(st.sampled_from([-1, 1])))
        hs = []
        for _ in range(n):
            if top == 0 or draw(st.floats(0, 1)) < p_unplaced:
                hs.append(UNPLACED)
            else:
                hs.append(draw(st.integers(0, top - 1)))
        hosts[app.name] = tuple(hs)
        if app.gpu_cards or (bad and inst.max_gpus and draw(st.booleans())):
            cs = []
            for h in hs:
                if h == UNPLACED or h >= inst.n_hosts:
                    cs.append(())
                    continue
                n_cards = int(inst.host_gpus[h])
                if bad and draw(st.integers(0, 4)) == 0:
                    cs.append(tuple(draw(st.lists(st.integers(-1, n_cards + 1), max_size=3))))
                elif app.gpu_cards and n_cards >= app.gpu_cards:
                    cs.append(tuple(sorted(draw(st.lists(
                        st.integers(0, n_cards - 1), min_size=app.gpu_cards,
                        max_size=app.gpu_cards, unique=True)))))
                else:
                    cs.append(())
            if cs:  # files drop empty card lists, so keep the placement canonical
                gpus[app.name] = tuple(cs)
    if bad and draw(st.integers(0, 9)) == 0:
        hosts["ghost"] = (0,)
    return Placement(hosts, gpus)


@st.composite
def instance_and_placement(draw: Any, *, bad: bool = False, **kw: Any
                           ) -> tuple[Instance, Placement]:
    """An instance from :func:`instances` (keyword arguments) and a placement of it."""
    inst = draw(instances(**kw))
    return inst, draw(placements(inst, bad=bad))


def tiny_instances(**kw: Any) -> st.SearchStrategy[Instance]:
    """Instances small enough for brute force (at most 3 apps of 2 containers, 4 hosts)."""
    opts: dict[str, Any] = {"max_apps": 3, "max_types": 2, "max_per_type": 2, "max_count": 2}
    opts.update(kw)
    return instances(**opts)


__all__ = ["MODELS", "instance_and_placement", "instances", "placements", "tiny_instances"]
