"""Exhaustive search for tiny instances (test helper): the fewest hosts and the least cost.

Feasibility is the checker's: the search prunes with the predicates of
:mod:`packing.feasibility.predicates` on a copy of the instance whose capacities are a little larger
(``LOOSEN`` relative, far above float rounding), so that no placement the checker accepts is
pruned because of the order its loads are summed in, and every complete placement is then
judged by :func:`packing.feasibility.checker.check` on the instance itself.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.model.instance import Instance, Placement
from packing.model.topology import violations

LOOSEN = 4e-9
"""Relative capacity added for pruning (above the checker's tolerance plus float rounding)."""


def _loosened(inst: Instance) -> Instance:
    """``inst`` with every host and card capacity raised by ``LOOSEN * max(1, |cap|)``."""
    def up(values: tuple[float, ...]) -> tuple[float, ...]:
        return tuple(float(v) + LOOSEN * max(1.0, abs(float(v))) for v in values)

    types = tuple(dataclasses.replace(t, capacity=up(t.capacity), gpu_capacity=up(t.gpu_capacity))
                  for t in inst.host_types)
    return inst.replace(host_types=types)


def brute_force(inst: Instance) -> tuple[float, float, Placement | None]:
    """``(min hosts, min cost, a min-hosts placement)`` over all placements of every container.

    Tries every host (empty hosts of one type only once: they are identical) and every choice
    of GPU cards; ``(inf, inf, None)`` when nothing places every container. A placement counts
    only when :func:`packing.feasibility.checker.check` accepts it on ``inst``. Topology rules: domain caps
    prune through the mask; spreads are left out of the mask (it is the simulator's online rule)
    and every complete placement is checked against them as a final state, with
    :func:`packing.model.topology.violations` and the hosts their keys allow (and by the checker).
    """
    spread_apps = [i for i, a in enumerate(inst.apps) if a.spreads]
    free = inst
    ok_type = None
    if spread_apps:
        free = inst.replace(apps=tuple(dataclasses.replace(a, spreads=()) for a in inst.apps))
        ok_type = inst.type_allowed
    st = ClusterState(_loosened(free))
    order = [int(a) for a in inst.container_app]
    host_of = [-1] * len(order)
    cards: list[tuple[int, ...]] = [()] * len(order)
    best: list = [math.inf, math.inf, None]

    def rec(j: int) -> None:
        if j == len(order):
            if spread_apps:
                hs = np.array(host_of)
                counts = np.zeros((inst.n_apps, inst.n_hosts), dtype=np.int64)
                for i in spread_apps:
                    mine = hs[inst.offsets[i] : inst.offsets[i + 1]]
                    if ok_type is not None and not ok_type[i, inst.host_type_of[mine]].all():
                        return
                    counts[i] = np.bincount(mine, minlength=inst.n_hosts)
                if any(True for _ in violations(inst, counts, st.n_on > 0)):
                    return
            used = st.used_hosts()
            n, cost = int(used.sum()), float(inst.host_cost[used].sum())
            if n >= best[0] and cost >= best[1]:
                return
            p = Placement.from_arrays(inst, np.array(host_of), cards)
            if check(inst, p, require_all=True):
                return
            if n < best[0]:
                best[0] = n
                best[2] = p
            best[1] = min(best[1], cost)
            return
        a = order[j]
        ok = st.mask(a)
        seen_empty: set[int] = set()
        for h in range(inst.n_hosts):
            if not ok[h]:
                continue
            t = int(inst.host_type_of[h])
            if st.n_on[h] == 0:
                if t in seen_empty:
                    continue
                seen_empty.add(t)
            k = int(inst.gpu_cards[a])
            choices = list(itertools.combinations(st.cards_fitting(a, h).tolist(), k)) if k \
                else [()]
            for cs in choices:
                st.place(a, h, cs)
                host_of[j], cards[j] = h, tuple(cs)
                rec(j + 1)
                st.remove(a, h, cs)
                host_of[j], cards[j] = -1, ()

    rec(0)
    return best[0], best[1], best[2]
