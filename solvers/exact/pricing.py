"""Placement patterns: what one host of a given type can hold, and the pricing problem over them.

A *pattern* for host type ``t`` is a count vector ``n`` of shape ``(n_apps,)``: ``n[a]``
containers of app ``a`` on one host of type ``t``. This module describes the patterns of a host
type as linear rows (:class:`TypeRows`), prices them (the bounded multi-dimensional knapsack with
conflicts of column generation: a fast greedy by dual density, and an exact CP-SAT model) and
turns per-host count matrices into a :class:`~packing.model.instance.Placement`.

What is modelled exactly and what is relaxed
--------------------------------------------
* Capacity per resource, the anti-affinity cap (:attr:`Instance.cap`) and every ``<A, B, k>``
  rule (exclusions included) are exact.
* GPU cards are modelled in aggregate, which is a *relaxation*: per GPU resource the total card
  load (``cards * share`` for shared cards, ``cards * card capacity`` for whole cards) is at most
  ``gpus * card capacity``; the number of cards that can hold no second container (whole cards
  and shares above half a card) is at most ``gpus``; a container needs ``gpu_cards <= gpus``, a
  share within one card, and a host type whose card model it accepts. Bounds computed from
  these rows are therefore valid; a pattern is only accepted as a column after its cards were
  actually assigned (:func:`pattern_placeable`), and placements get their cards from
  :meth:`packing.feasibility.predicates.ClusterState.choose_cards` and are verified by the checker.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from packing.feasibility.predicates import TOL, ClusterState, fits, over_cap, rule_broken
from packing.model.instance import UNPLACED, Instance, Placement
from solvers.base import Stop, run_cpsat
from solvers.exact.scaling import CBC_LIMIT, CPSAT_COEF_LIMIT, decimal_reading, scale_columns


@dataclass(frozen=True)
class TypeRows:
    """The linear description of the patterns of one host type.

    A count vector ``n`` (shape ``(n_apps,)``) is a pattern when ``n <= ub``, ``n @ rows <=
    capacity`` (with :func:`packing.feasibility.predicates.fits`) and no ``<A, B, k>`` rule is broken.

    Attributes:
        type_index: the host type.
        rows: load of one container per app on each row, shape ``(n_apps, n_rows)``; the first
            ``n_resources`` rows are the resources, then one per GPU resource (total card
            load) and one counting cards that hold a single container.
        capacity: capacity of each row, shape ``(n_rows,)``.
        ub: most containers of each app one host of the type can hold alone, shape
            ``(n_apps,)``; 0 where the app may not go. Never below what the checker allows.
        cost: cost of one host of the type.
        int_rows: the rows as integers (:mod:`solvers.exact.scaling`), shape ``(n_apps, n_rows)``.
        int_capacity: the row capacities as integers, tolerance included, shape ``(n_rows,)``.
            Exact scaling when ``exact``; otherwise a relaxation (demands rounded down,
            capacities up), so integer models over these rows never exclude a pattern the
            checker accepts: bounds from them hold either way.
        exact: whether the integer rows are the checker's rows exactly (up to the float
            allowance of :mod:`solvers.exact.scaling`).
    """

    type_index: int
    rows: np.ndarray
    capacity: np.ndarray
    ub: np.ndarray
    cost: float
    int_rows: np.ndarray | None = None
    int_capacity: np.ndarray | None = None
    exact: bool = False


def type_rows(instance: Instance, t: int, *, limit: int = CBC_LIMIT) -> TypeRows:
    """Describe the patterns of host type ``t`` (see the module docstring for GPU cards).

    Args:
        instance: the instance.
        t: the host type.
        limit: largest integer row total for exact scaling (:mod:`solvers.exact.scaling`).
    """
    inst = instance
    ht = inst.host_types[t]
    rows = [inst.demand]
    cap = [inst.type_capacity[t]]
    slack = [TOL * np.maximum(1.0, np.abs(inst.type_capacity[t]))]  # what fits() allows above
    allowed = inst.cap > 0
    k = inst.gpu_cards.astype(np.float64)
    gpu_apps = k > 0
    allowed &= ~gpu_apps | (inst.gpu_cards <= ht.gpus)
    if inst.type_allowed is not None:
        allowed &= inst.type_allowed[:, t]
    whole = np.array([a.gpu_whole for a in inst.apps], dtype=bool)
    gpu_rows = bool(inst.gpu_resources) and ht.gpus > 0
    if gpu_rows:
        card = inst.card_capacity[t]  # (n_gpu_res,)
        share = np.where(whole[:, None], card[None, :], inst.gpu_demand)
        share = np.where(np.isfinite(share), share, 0.0)  # (n_apps, n_gpu_res)
        allowed &= ~gpu_apps | np.asarray(fits(share, card[None, :])).all(axis=1)
        rows.append(k[:, None] * share)
        cap.append(ht.gpus * card)
        slack.append(ht.gpus * TOL * np.maximum(1.0, np.abs(card)))  # every card's tolerance
        # a card holds one container only when two of them do not fit on it (as fits() says)
        lonely = gpu_apps & (whole | (~np.asarray(fits(2.0 * share, card[None, :]))).any(axis=1))
        rows.append((k * lonely)[:, None])
        cap.append(np.array([float(ht.gpus)]))
        slack.append(np.array([0.5]))  # counts of cards: integers
    else:
        allowed &= ~gpu_apps
    r = np.concatenate(rows, axis=1) if len(rows) > 1 else rows[0].copy()
    c = np.concatenate(cap)
    sl = np.concatenate(slack)
    n = max(int(inst.n_containers), 1)
    # what one host may hold by the rows, never below what the checker accepts: the limit is
    # the capacity with the checker's tolerance and an allowance for float rounding
    lim = (c + sl) * (1.0 + (n + 8) * 2.0**-52)
    allowed &= (r <= lim[None, :]).all(axis=1)
    ub = np.minimum(inst.cap, inst.counts).astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_row = np.where(r > 0, np.floor(lim[None, :] / np.where(r > 0, r, 1.0)) + 1, np.inf)
    m = np.minimum(ub, per_row.min(axis=1, initial=np.inf)).astype(np.int64)
    for _ in range(3):  # step down to what the limit accepts (floating point at the boundary)
        bad = ~(m[:, None] * r <= lim[None, :]).all(axis=1) & (m > 0)
        m[bad] -= 1
    ub = np.where(allowed, np.maximum(m, 0), 0)
    int_r, int_c, exact = _int_rows(inst, t, ub, gpu_rows, whole, lonely if gpu_rows else None,
                                    limit)
    for a in (r, c, ub, int_r, int_c):
        a.setflags(write=False)
    return TypeRows(t, r, c, ub, float(ht.cost), int_r, int_c, exact)


def _int_rows(inst: Instance, t: int, ub: np.ndarray, gpu_rows: bool, whole: np.ndarray,
              lonely: np.ndarray | None, limit: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """The rows of :func:`type_rows` as integers: exact, or relaxed (see :class:`TypeRows`).

    Scaled column by column from the data (not from the products in the float rows, which
    need not have short decimals): resources, then per GPU resource ``cards * share`` (a whole
    card loads its capacity) against ``gpus`` cards of capacity with tolerance, then the
    lonely-card count.
    """
    res = scale_columns(inst.demand, inst.type_capacity[t:t + 1], inst.counts, limit=limit,
                        fallback="relaxed")
    cols = [res.demand]
    caps = [res.capacity[0]]
    exact = res.exact
    if gpu_rows:
        ht = inst.host_types[t]
        share = np.where(np.isinf(inst.gpu_demand), 0.0, inst.gpu_demand)
        per_card = inst.counts * inst.gpu_cards
        cards = scale_columns(share, inst.card_capacity[t:t + 1], per_card,
                              limit=limit // max(1, ht.gpus), fallback="relaxed",
                              n_add=int(per_card.sum()))
        exact &= cards.exact
        kc = inst.gpu_cards.astype(np.int64)[:, None]
        load = np.where(whole[:, None], cards.full[0][None, :], cards.demand)
        cols.append(kc * load)
        caps.append(ht.gpus * cards.capacity[0])
        assert lonely is not None
        cols.append((kc[:, 0] * lonely)[:, None].astype(np.int64))
        caps.append(np.array([ht.gpus], dtype=np.int64))
    return (np.concatenate(cols, axis=1).astype(np.int64),
            np.concatenate(caps).astype(np.int64), bool(exact))


def rows_violated(instance: Instance, tr: TypeRows, n: np.ndarray) -> bool:
    """Whether count vector ``n`` (shape ``(n_apps,)``) breaks a row, the cap or a rule."""
    if (n > tr.ub).any() or over_cap(n, instance.cap).any():
        return True
    if not np.asarray(fits(n @ tr.rows, tr.capacity)).all():
        return True
    ra, rb, rk = instance.rule_arrays
    return bool(len(ra) and rule_broken(n[ra], n[rb], rk).any())


def _fill_order(instance: Instance) -> np.ndarray:
    """App order for filling a host: whole-card apps, then more cards, bigger shares, others."""
    whole = np.array([a.gpu_whole for a in instance.apps], dtype=bool)
    share = np.where(np.isfinite(instance.gpu_demand), instance.gpu_demand, 0.0).sum(axis=1)
    return np.lexsort((-share, -instance.gpu_cards, ~whole))


def _fill(st: ClusterState, host: int, counts: np.ndarray, order: np.ndarray,
          host_of: np.ndarray | None, cards_of: list[tuple[int, ...]] | None,
          next_free: np.ndarray | None) -> None:
    """Put ``counts[a]`` containers of each app on ``host`` (cards by ``choose_cards``)."""
    inst = st.instance
    for a in order:
        for _ in range(int(counts[a])):
            cards = st.choose_cards(int(a), host)  # ValueError when no cards fit
            st.place(int(a), host, cards)
            if host_of is not None and cards_of is not None and next_free is not None:
                j = int(inst.offsets[a] + next_free[a])
                next_free[a] += 1
                host_of[j] = host
                cards_of[j] = cards


def single_host(instance: Instance, t: int) -> Instance:
    """The instance reduced to one host of type ``t`` (for checking one pattern)."""
    ht = instance.host_types[t]
    one = dataclasses.replace(ht, count=1, host_names=None)
    return instance.replace(host_types=(one,), initial=None, requests=())


def pattern_placeable(one_host: Instance, n: np.ndarray) -> bool:
    """Whether ``n`` containers (shape ``(n_apps,)``) really fit on the single host.

    Cards are chosen by :meth:`ClusterState.choose_cards` in :func:`_fill_order`, and the
    resulting state is judged by the shared predicates (through :meth:`ClusterState.mask`'s
    functions): this is the test a column must pass before it enters the master.
    """
    st = ClusterState(one_host)
    try:
        _fill(st, 0, n, _fill_order(one_host), None, None, None)
    except ValueError:
        return False
    if not np.asarray(fits(st.used, st.capacity)).all():
        return False
    if one_host.max_gpus and not np.asarray(
            fits(st.card_used, st.card_capacity[:, None, :])).all():
        return False
    ra, rb, rk = one_host.rule_arrays
    if over_cap(n, one_host.cap).any():
        return False
    return not (len(ra) and rule_broken(n[ra], n[rb], rk).any())


def placement_from_counts(instance: Instance, host_counts: np.ndarray) -> Placement:
    """Turn per-host app counts into a placement (containers in order, GPU cards chosen).

    Args:
        instance: the instance.
        host_counts: containers per host and app, shape ``(n_hosts, n_apps)``; column sums
            must not exceed the app counts (fewer leaves containers unplaced).

    Raises:
        ValueError: the counts exceed an app's containers, or a host's cards cannot be chosen.
    """
    inst = instance
    host_counts = np.asarray(host_counts, dtype=np.int64)
    if (host_counts.sum(axis=0) > inst.counts).any() or (host_counts < 0).any():
        raise ValueError("host counts exceed the app counts")
    st = ClusterState(inst)
    host_of = np.full(inst.n_containers, UNPLACED, dtype=np.int64)
    cards_of: list[tuple[int, ...]] = [()] * inst.n_containers
    next_free = np.zeros(inst.n_apps, dtype=np.int64)
    order = _fill_order(inst)
    for h in np.flatnonzero(host_counts.sum(axis=1)):
        _fill(st, int(h), host_counts[h], order, host_of, cards_of, next_free)
    return Placement.from_arrays(inst, host_of, cards_of if inst.max_gpus else None)


def counts_from_placement(instance: Instance, placement: Placement) -> np.ndarray:
    """Containers per host and app of a placement, shape ``(n_hosts, n_apps)``."""
    h = placement.host_array(instance)
    ok = h >= 0
    out = np.zeros((instance.n_hosts, instance.n_apps), dtype=np.int64)
    np.add.at(out, (h[ok], instance.container_app[ok]), 1)
    return out


def cost_unit(costs: np.ndarray) -> float | None:
    """The largest ``g`` with every cost an integer multiple of ``g`` (``None`` if none is found).

    Costs are read as the decimals they were written as (:func:`solvers.exact.scaling.decimal_reading`,
    at most nine decimals): any total cost is then a multiple of ``g``, so a lower bound ``L`` on
    it rounds up to ``ceil(L / g) * g``.
    """
    m, k = decimal_reading(np.asarray(costs, dtype=np.float64))
    if not len(m) or (k < 0).any() or (k > 9).any() or (m <= 0).any():
        return None
    big = int(k.max())
    ints = [int(mi) * 10 ** (big - int(ki)) for mi, ki in zip(m.tolist(), k.tolist(), strict=True)]
    if max(ints) >= 2**53:
        return None
    return float(math.gcd(*ints)) / 10**big


# ----------------------------------------------------------------------------------------------
# pricing
@dataclass(frozen=True)
class Priced:
    """The outcome of pricing one host type.

    Attributes:
        counts: the best pattern found, shape ``(n_apps,)``.
        value: its value ``duals @ counts``.
        bound: proven upper bound on the value of any pattern (``inf`` if unknown).
        optimal: whether ``counts`` is proven best (then ``bound == value`` up to rounding).
        others: further good patterns met during the search (value above ``threshold``).
    """

    counts: np.ndarray
    value: float
    bound: float
    optimal: bool
    others: tuple[np.ndarray, ...] = ()


def _room(tr: TypeRows, load: np.ndarray, a: int, most: int) -> int:
    """How many more containers of app ``a`` fit the rows on top of ``load`` (at most ``most``)."""
    r = tr.rows[a]
    pos = r > 0
    if pos.any():
        most = min(most, int(np.floor(((tr.capacity[pos] - load[pos]) / r[pos]).min() + 1e-9)) + 1)
    while most > 0 and not np.asarray(fits(load + most * r, tr.capacity)).all():
        most -= 1
    return max(most, 0)


def _fill_greedy(instance: Instance, tr: TypeRows, n: np.ndarray, order: np.ndarray,
                 ruled: np.ndarray) -> np.ndarray:
    """Add as many containers as fit to pattern ``n``, app by app in ``order`` (in place).

    Loads only grow, so an app that does not fit once never fits later: each step skips, in
    one vectorised test, to the next app that still takes one more container.
    """
    load = n @ tr.rows
    order = np.asarray(order, dtype=np.int64)
    while len(order):
        ok = (n[order] < tr.ub[order]) & np.asarray(
            fits(load[None, :] + tr.rows[order], tr.capacity[None, :])).all(axis=1)
        hits = np.flatnonzero(ok)
        if len(hits) == 0:
            break
        a = int(order[hits[0]])
        order = order[hits[0] + 1 :]
        m = _room(tr, load, a, int(tr.ub[a] - n[a]))
        if m > 0 and ruled[a]:  # rules: largest m keeping the pattern valid (monotone in m >= 1)
            base = int(n[a])
            lo, hi = 0, m
            while lo < hi:
                mid = (lo + hi + 1) // 2
                n[a] = base + mid
                if rows_violated(instance, tr, n):
                    hi = mid - 1
                else:
                    lo = mid
            n[a] = base
            m = lo
        n[a] += m
        load = load + m * tr.rows[a]
    return n


def _improve_swaps(instance: Instance, tr: TypeRows, duals: np.ndarray, n: np.ndarray,
                   order: np.ndarray, ruled: np.ndarray, passes: int = 30) -> np.ndarray:
    """1-for-1 exchanges that raise ``duals @ n`` (then refill), until none is left."""
    for _ in range(passes):
        load = n @ tr.rows
        sup = np.flatnonzero(n > 0)
        if len(sup) == 0:
            break
        # after[i, j] = load without one of sup[i], with one more of j
        after = load[None, None, :] - tr.rows[sup][:, None, :] + tr.rows[None, :, :]
        ok = np.asarray(fits(after, tr.capacity[None, None, :])).all(axis=2)
        ok &= (n < tr.ub)[None, :]
        gain = np.where(ok, duals[None, :] - duals[sup][:, None], -np.inf)
        gain[np.arange(len(sup)), sup] = -np.inf
        done = True
        for flat in np.argsort(-gain, axis=None)[:8]:
            i, j = np.unravel_index(flat, gain.shape)
            if gain[i, j] <= 1e-12:
                break
            trial = n.copy()
            trial[sup[i]] -= 1
            trial[j] += 1
            if not ruled[sup[i]] and not ruled[j] or not rows_violated(instance, tr, trial):
                n = _fill_greedy(instance, tr, trial, order, ruled)
                done = False
                break
        if done:
            break
    return n


def price_greedy(instance: Instance, tr: TypeRows, duals: np.ndarray, *,
                 rng: np.random.Generator | None = None, tries: int = 1) -> list[np.ndarray]:
    """Good patterns by dual density, each improved by 1-for-1 exchanges.

    The first try orders apps by ``dual / size`` with the size summed over the normalised rows;
    the second by the largest normalised row; further tries perturb the densities with ``rng``.

    Args:
        instance: the instance (for the cap and rules).
        tr: the host type's rows.
        duals: value of one container per app, shape ``(n_apps,)``.
        rng: generator for the perturbed tries (default: seeded with 0).
        tries: how many patterns to build.

    Returns:
        Distinct patterns, each of shape ``(n_apps,)``, valid for :func:`rows_violated` (the
        GPU cards are not yet assigned).
    """
    rng = np.random.default_rng(0) if rng is None else rng
    cap = np.where(tr.capacity > 0, tr.capacity, 1.0)
    rel = tr.rows / cap[None, :]
    cand = np.flatnonzero((duals > 1e-12) & (tr.ub > 0))
    ra, rb, _ = instance.rule_arrays
    ruled = np.zeros(instance.n_apps, dtype=bool)
    ruled[ra] = True
    ruled[rb] = True
    out: list[np.ndarray] = []
    seen: set[bytes] = set()
    for k in range(tries):
        size = (rel.max(axis=1) if k == 1 else rel.sum(axis=1)) + 1e-9
        dens = duals[cand] / size[cand]
        if k >= 2:
            dens = dens * rng.uniform(0.7, 1.3, len(cand))
        order = cand[np.argsort(-dens, kind="stable")]
        n = _fill_greedy(instance, tr, np.zeros(instance.n_apps, dtype=np.int64), order, ruled)
        n = _improve_swaps(instance, tr, duals, n, order, ruled)
        key = n.tobytes()
        if key not in seen:
            seen.add(key)
            out.append(n)
    return out


DP_CELLS = 400_000
"""Largest capacity grid (product over binding rows of ``capacity + 1``) priced by the NumPy DP."""
DP_DECISIONS = 40_000_000
"""Largest ``items x cells`` table of decisions the NumPy DP may keep."""
DP2_CELLS = 4_000_000
"""Largest grid of the compiled DP (at most two binding rows, decisions kept as bits)."""
DP2_DECISIONS = 600_000_000
"""Largest ``items x cells`` of the compiled DP (75 MB of decision bits)."""
BB_SECONDS = 0.1
"""Time limit of the branch and bound on grids above :data:`DP_CELLS` (:func:`price_dp`).

On Caprara-Toth classes 2 and 3 (capacity 1000 x 1000, 1.8-2.5 containers a host) it proves the
best pattern in 1-30 ms where the compiled DP takes 50-300 ms; on classes 1, 4 and 9 (more
containers a host) it proves nothing in 5 s, and the DP takes over after this limit.
"""


@dataclass
class PricingMemo:
    """What one column-generation run learned about its pricing (pass the same one each call).

    Attributes:
        branch_and_bound: whether :func:`price_dp` still tries the branch and bound first on
            large grids; cleared the first time it does not prove within :data:`BB_SECONDS`.
    """

    branch_and_bound: bool = True


def _compiled_loaded() -> bool:
    """Whether numba is in this process already (a compiled stage ran).

    Importing numba and loading its first function costs about a second of CPU in a new
    process; once that is paid, loading the compiled DP from numba's cache takes about 10 ms.
    """
    return "numba" in sys.modules


def binary_chunks(use: np.ndarray, ub: np.ndarray) -> list[tuple[int, int]]:
    """Each app's copies as 0/1 items of 1, 2, 4, ... copies (the rest last): ``(app, chunk)``.

    Args:
        use: the apps, shape ``(k,)``.
        ub: most copies of each app, shape ``(A,)``.
    """
    items: list[tuple[int, int]] = []
    for a in use.tolist():
        left, k = int(ub[a]), 1
        while left > 0:
            items.append((a, min(k, left)))
            left -= min(k, left)
            k *= 2
    return items

def price_dp(instance: Instance, tr: TypeRows, duals: np.ndarray,
             memo: PricingMemo | None = None) -> Priced | None:
    """Exact pricing on the integer capacity grid, when it applies.

    Applies when the rows are integral and no rule links two apps worth pricing. On grids of at
    most :data:`DP_CELLS` cells (the product over the rows that can bind of ``capacity + 1``) a
    DP in NumPy, or the compiled DP (:func:`solvers.exact.knapsack_jit.knapsack2`, at most two
    binding rows) once numba is in the process: both take the same decisions, so they return
    the same pattern. On larger grids of at most two binding rows and :data:`DP2_CELLS` cells,
    first a branch and bound (OR-Tools' multidimensional knapsack solver, :func:`_price_bb`, at
    most :data:`BB_SECONDS`, unless ``memo`` says it failed before), then the compiled DP.
    Multiplicities are split in binary chunks (1, 2, 4, ...), so the table has
    ``sum log2(ub)`` items.

    Returns:
        The best pattern (proven optimal; the branch and bound's ``bound`` may exceed its value
        by the rounding of the duals to integers), or ``None`` when no exact method here applies.
    """
    use = np.flatnonzero((duals > 1e-12) & (tr.ub > 0))
    ra, rb, _ = instance.rule_arrays
    if len(ra) and (np.isin(ra, use) & np.isin(rb, use)).any():
        return None
    if not tr.exact or tr.int_rows is None or tr.int_capacity is None:
        return None
    rows_i, cap_i = tr.int_rows[use], tr.int_capacity
    bind = np.flatnonzero(tr.ub[use] @ rows_i > cap_i)
    dims = tuple(int(c) + 1 for c in cap_i[bind])
    cells = int(np.prod(dims, dtype=np.float64)) if len(dims) else 1
    items = binary_chunks(use, tr.ub)
    if (cap_i[bind] < 0).any():
        return None
    w_of = {int(a): rows_i[i, bind] for i, a in enumerate(use)}
    small = cells <= DP_CELLS and cells * len(items) <= DP_DECISIONS
    compiled = len(bind) <= 2 and cells <= DP2_CELLS and cells * len(items) <= DP2_DECISIONS
    if small and not (compiled and _compiled_loaded()):
        return _numpy_dp(instance, duals, items, w_of, dims)
    if compiled and not small and (memo is None or memo.branch_and_bound):
        bb = _price_bb(instance, duals, items, w_of, [int(c) for c in cap_i[bind]])
        if bb is not None:
            return bb
        if memo is not None:
            memo.branch_and_bound = False
    if not compiled:
        return None
    from solvers.exact.knapsack_jit import knapsack2

    wk = np.array([[int(x) * k for x in w_of[a]] + [0] * (2 - len(bind)) for a, k in items],
                  dtype=np.int64).reshape(len(items), 2)
    c = [int(x) for x in cap_i[bind]] + [0] * (2 - len(bind))
    vals = np.array([k * float(duals[a]) for a, k in items])
    _, chosen = knapsack2(wk[:, 0].copy(), wk[:, 1].copy(), vals, c[0], c[1])
    n = np.zeros(instance.n_apps, dtype=np.int64)
    for (a, k), on in zip(items, chosen.tolist(), strict=True):
        if on:
            n[a] += k
    v = float(duals @ n)
    return Priced(n, v, v, True)


def _numpy_dp(instance: Instance, duals: np.ndarray, items: list[tuple[int, int]],
              w_of: dict[int, np.ndarray], dims: tuple[int, ...]) -> Priced:
    """The 0/1 knapsack DP over the grid ``dims`` in NumPy, item by item.

    An item is taken at a cell only when it raises the value there by more than ``1e-12`` (as in
    the compiled DP), and the pattern is read back from the last item to the first.
    """
    value = np.zeros(dims)
    take: list[np.ndarray | None] = []
    for a, k in items:
        w = tuple(int(x) * k for x in w_of[a])
        if any(wi >= d for wi, d in zip(w, dims, strict=True)):
            take.append(None)
            continue
        src = tuple(slice(0, d - wi) for wi, d in zip(w, dims, strict=True))
        dst = tuple(slice(wi, d) for wi, d in zip(w, dims, strict=True))
        cand = value[src] + k * float(duals[a])
        t = np.zeros(dims, dtype=bool)
        better = cand > value[dst] + 1e-12
        t[dst] = better
        value[dst] = np.where(better, cand, value[dst])
        take.append(t)
    n = np.zeros(instance.n_apps, dtype=np.int64)
    c = [d - 1 for d in dims]
    for (a, k), t in zip(reversed(items), reversed(take), strict=True):
        if t is not None and t[tuple(c)]:
            n[a] += k
            c = [ci - int(x) * k for ci, x in zip(c, w_of[a], strict=True)]
    v = float(duals @ n)
    return Priced(n, v, v, True)


def _price_bb(instance: Instance, duals: np.ndarray, items: list[tuple[int, int]],
              w_of: dict[int, np.ndarray], capacity: list[int],
              time_limit: float | None = None) -> Priced | None:
    """Branch and bound (OR-Tools' multidimensional knapsack solver) on the integer rows.

    The values are the duals scaled so that all items together are worth about ``2**50`` and
    rounded up, so the proven optimum of the integer problem, scaled back, bounds the value of
    every pattern from above. Returns ``None`` when the optimum is not proven within
    ``time_limit`` seconds (default :data:`BB_SECONDS`).
    """
    from ortools.algorithms.python import knapsack_solver

    worth = [k * float(duals[a]) for a, k in items]
    total = sum(worth)
    if not items or total <= 0:
        return None
    scale = 2.0**50 / total
    profits = [math.ceil(w * scale) for w in worth]
    weights = [[int(w_of[a][r]) * k for a, k in items] for r in range(len(capacity))]
    solver = knapsack_solver.KnapsackSolver(
        knapsack_solver.SolverType.KNAPSACK_MULTIDIMENSION_BRANCH_AND_BOUND_SOLVER, "pricing")
    solver.set_time_limit(BB_SECONDS if time_limit is None else time_limit)
    solver.init(profits, weights, capacity)
    best = solver.solve()
    if not solver.is_solution_optimal():
        return None
    n = np.zeros(instance.n_apps, dtype=np.int64)
    for i, (a, k) in enumerate(items):
        if solver.best_solution_contains(i):
            n[a] += k
    v = float(duals @ n)
    return Priced(n, v, max(v, best / scale), True)


def price_exact(instance: Instance, tr: TypeRows, duals: np.ndarray, *, time_limit: float = 10.0,
                seed: int = 0, workers: int = 1, threshold: float | None = None,
                keep: int = 8, stop: Stop | None = None, memo: PricingMemo | None = None) -> Priced:
    """The best pattern by CP-SAT: maximise ``duals @ n`` over the patterns of the host type.

    Small integral grids without rules go to :func:`price_dp`. Otherwise the knapsack rows are
    the integer rows of ``tr`` (exact when the data allow, otherwise relaxed; divided down, i.e.
    relaxed, where an integer exceeds :data:`solvers.exact.scaling.CPSAT_COEF_LIMIT`) and the duals
    are rounded up, so the reported ``bound`` is always a valid upper bound on the value of any
    pattern; the pattern itself is re-checked with :func:`rows_violated`.

    Args:
        instance: the instance.
        tr: the host type's rows.
        duals: value of one container per app, shape ``(n_apps,)``.
        time_limit: CP-SAT time limit in seconds.
        seed: CP-SAT random seed.
        workers: CP-SAT search workers.
        threshold: collect up to ``keep`` intermediate patterns worth more than this.
        keep: most patterns collected.
        stop: a stop request (:class:`solvers.base.StopFlag`): CP-SAT stops when it is set
            (the bound stays valid).
        memo: what earlier calls of the same column-generation run learned
            (:class:`PricingMemo`, for :func:`price_dp`).
    """
    dp = price_dp(instance, tr, duals, memo)
    if dp is not None:
        return dp
    from ortools.sat.python import cp_model  # only now: the DP needs none of it

    n_apps = instance.n_apps
    vals = np.maximum(duals, 0.0)
    use = np.flatnonzero((vals > 1e-12) & (tr.ub > 0))
    zero = np.zeros(n_apps, dtype=np.int64)
    if len(use) == 0:
        return Priced(zero, 0.0, 0.0, True)
    scale = 1e7 / float(vals[use].max())
    coef = np.ceil(vals * scale).astype(np.int64)
    if tr.int_rows is None or tr.int_capacity is None:  # pragma: no cover - type_rows sets them
        raise ValueError("TypeRows without integer rows")
    rows_i, cap_i, _exact = tr.int_rows[use], tr.int_capacity, tr.exact
    top = max(int(np.abs(rows_i).max(initial=0)), int(np.abs(cap_i).max(initial=0)))
    if top > CPSAT_COEF_LIMIT:  # CP-SAT's presolve may overflow: relax (solvers.exact.scaling.shrink)
        q = -(-top // CPSAT_COEF_LIMIT)
        rows_i, cap_i, _exact = rows_i // q, -(-cap_i // q), False
    m = cp_model.CpModel()
    x = {int(a): m.new_int_var(0, int(tr.ub[a]), f"n{a}") for a in use}
    for j in range(rows_i.shape[1]):
        terms = [(int(a), int(rows_i[i, j])) for i, a in enumerate(use) if rows_i[i, j]]
        if sum(int(tr.ub[a]) * w for a, w in terms) > cap_i[j]:
            m.add(sum(x[a] * w for a, w in terms) <= int(cap_i[j]))
    ra, rb, rk = instance.rule_arrays
    on: dict[int, Any] = {}
    for a, b, k in zip(ra.tolist(), rb.tolist(), rk.tolist(), strict=True):
        if a in x and b in x and tr.ub[b] > k:
            if a not in on:
                z = m.new_bool_var(f"on{a}")
                m.add(x[a] >= 1).only_enforce_if(z)
                m.add(x[a] == 0).only_enforce_if(~z)
                on[a] = z
            m.add(x[b] <= k).only_enforce_if(on[a])
    m.maximize(sum(int(coef[a]) * v for a, v in x.items()))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(0.01, float(time_limit))
    solver.parameters.num_search_workers = max(1, int(workers))
    solver.parameters.random_seed = int(seed)
    found: list[np.ndarray] = []
    order = list(x)

    class _Collect(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            if threshold is None or len(found) >= keep:
                return
            v = np.zeros(n_apps, dtype=np.int64)
            v[order] = [self.value(x[a]) for a in order]
            if float(duals @ v) > threshold:
                found.append(v)

    st = run_cpsat(solver, m, _Collect(), stop)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        bound = math.inf if st == cp_model.UNKNOWN else 0.0
        return Priced(zero, 0.0, bound, st == cp_model.INFEASIBLE)
    n = zero.copy()
    for a, v in x.items():
        n[a] = int(solver.value(v))
    while rows_violated(instance, tr, n):  # only after relaxed scaling: trim the largest load
        a = int(np.argmax(np.where(n > 0, (tr.rows / np.maximum(tr.capacity, 1e-12)).sum(1), -1)))
        n[a] -= 1
    bound = float(solver.best_objective_bound) / scale
    value = float(duals @ n)
    others = tuple(v for v in found if not rows_violated(instance, tr, v) and not (v == n).all())
    return Priced(n, value, max(bound, value), st == cp_model.OPTIMAL and _exact, others)


__all__ = [
    "Priced",
    "binary_chunks",
    "PricingMemo",
    "price_dp",
    "cost_unit",
    "TypeRows",
    "counts_from_placement",
    "pattern_placeable",
    "placement_from_counts",
    "price_exact",
    "price_greedy",
    "rows_violated",
    "single_host",
    "type_rows",
]
