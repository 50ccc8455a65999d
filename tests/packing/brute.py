"""Exhaustive search for tiny instances (test helper): the fewest hosts and the least cost."""

from __future__ import annotations

import itertools
import math

from packing.feasibility import ClusterState
from packing.model import Instance, Placement


def brute_force(inst: Instance) -> tuple[float, float, Placement | None]:
    """``(min hosts, min cost, a min-hosts placement)`` over all placements of every container.

    Tries every host (empty hosts of one type only once: they are identical) and every choice
    of GPU cards; ``(inf, inf, None)`` when nothing places every container. Topology rules: the
    simulator's mask prunes (domain caps, spread relative to the counts so far) and every complete
    placement must keep them as a final state (:meth:`ClusterState.topology_broken`).
    """
    st = ClusterState(inst)
    order = [int(a) for a in inst.container_app]
    host_of = [-1] * len(order)
    cards: list[tuple[int, ...]] = [()] * len(order)
    best = [math.inf, math.inf, None]

    def rec(j: int) -> None:
        if j == len(order):
            if st.topology_broken():
                return
            used = st.used_hosts()
            n, cost = int(used.sum()), float(inst.host_cost[used].sum())
            if n < best[0]:
                best[0] = n
                best[2] = Placement.from_arrays(inst, __import__("numpy").array(host_of), cards)
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
