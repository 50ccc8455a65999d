"""An independent optimum for small plans: its own CP-SAT model on integer data, one variable per host.

Nothing from vbp is used: host types are ``(capacity ints, cost as a Fraction, count)``, apps are
``(demand ints, replicas, max_per_host or None)``, rules ``(a, b, k)`` by app index.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from ortools.sat.python import cp_model


def optimum(types: Sequence[tuple[Sequence[int], Fraction, int]],
            apps: Sequence[tuple[Sequence[int], int, int | None]],
            rules: Sequence[tuple[int, int, int]] = (), time_limit: float = 20.0
            ) -> tuple[Fraction | None, list[int] | None]:
    """The least total cost (hosts when every cost is 1) and the hosts used per type.

    Returns:
        ``(None, None)`` when no placement exists.
    """
    m = cp_model.CpModel()
    scale = 1
    for _cap, cost, _n in types:
        scale = scale * cost.denominator // _gcd(scale, cost.denominator)
    hosts = []  # (type, y, x per app, present per app)
    for t, (cap, _cost, n) in enumerate(types):
        prev = None
        for _ in range(n):
            y = m.new_bool_var("")
            if prev is not None:
                m.add(prev >= y)  # symmetry: use the first hosts of a type first
            prev = y
            xs, zs = [], []
            for _d, r, per in apps:
                ub = r if per is None else min(r, per)
                x = m.new_int_var(0, ub, "")
                z = m.new_bool_var("")
                m.add(x <= ub * z)
                m.add(x >= z)
                m.add(z <= y)
                xs.append(x)
                zs.append(z)
            for j, c in enumerate(cap):
                m.add(sum(d[j] * x for (d, _r, _p), x in zip(apps, xs, strict=True)) <= c)
            for a, b, k in rules:
                rb = apps[b][1]
                m.add(xs[b] <= k + rb * (1 - zs[a]))
            hosts.append((t, y, xs))
    for i, (_d, r, _p) in enumerate(apps):
        m.add(sum(h[2][i] for h in hosts) == r)
    m.minimize(sum(int(types[t][1] * scale) * y for t, y, _ in hosts))
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = time_limit
    s.parameters.num_workers = 2
    st = s.solve(m)
    if st == cp_model.INFEASIBLE:
        return None, None
    assert st == cp_model.OPTIMAL, "the oracle did not finish; use a smaller case"
    used = [0] * len(types)
    for t, y, _ in hosts:
        used[t] += int(s.value(y))
    return Fraction(round(s.objective_value)) / scale, used


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a
