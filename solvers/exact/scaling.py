"""Exact integer scaling of demands and capacities: the capacity rule every integer model shares.

The checker (:func:`packing.feasibility.checker.check`) accepts a host when, per resource, its float load
satisfies :func:`packing.feasibility.predicates.fits`: ``load <= cap + TOL * max(1, |cap|)``. The integer
models (CP-SAT, CBC, the pricing DP and CP-SAT pricing, the exact cover) must decide the *same*
question, or at least never a stricter one: a model stricter than the checker can prove a bound
above the true optimum (a false "optimal").

Reading the data exactly
    Every float is read as the decimal with the fewest decimals (at most :data:`MAX_DECIMALS`)
    that converts back to it, i.e. the number the user wrote (``0.5000001`` is read as
    ``5000001 / 10**7``, not as the binary fraction nearest to it). Per column (resource), all
    demands and capacities share the denominator ``10**K`` (``K`` the most decimals in the
    column); the integers are then divided by their greatest common divisor ``g``.

The capacity rule
    Column ``c`` of a host type becomes the integer capacity
    ``floor((cap + slack + err) * 10**K / g)`` computed with :class:`fractions.Fraction` (no
    rounding), where ``slack`` is the checker's tolerance ``TOL * max(1, |cap|)`` and ``err`` =
    ``(n + 4) * 2**-52 * (|cap| + slack)`` covers the checker's own float rounding (``n`` the
    most addends of one load, i.e. the containers). Integer demands sum exactly, so a
    placement passes the integer row exactly when its decimal load is at most
    ``cap + slack + err``. Every placement the checker accepts does (its float load is within
    ``err`` of the decimal load), so **the model is never stricter than the checker**: its
    optimum and bounds are valid. It is looser by at most ``err`` (about ``1e-16 * n``
    relative): a placement whose load lies in that sliver would be rejected by the checker,
    which is why every solver checks what a model returns before it keeps it (and falls back
    to its incumbent when the check fails).

When no exact scaling fits
    When a value has no decimal reading with at most :data:`MAX_DECIMALS` decimals, or the
    integers would exceed the model's ``limit`` (total demand of the column plus the largest
    capacity; :data:`CPSAT_LIMIT` leaves CP-SAT ``2**6`` headroom below its ``2**62``, and
    :data:`CBC_LIMIT` keeps integers exact in CBC's doubles), the column is scaled by a power of
    two ``S`` (exact in floats) in one of two ways, and :attr:`IntRows.exact` is False:

    * ``"strict"`` (for solutions): demands rounded up, capacities rounded down without
      tolerance; every model solution is then feasible (and is checked anyway), but the model
      may miss solutions, so **no bound, infeasibility or optimality may be taken from it**;
    * ``"relaxed"`` (for bounds): demands rounded down, capacities (with tolerance and
      ``err``) rounded up; a relaxation, so bounds from it are valid, but its solutions must be
      checked (pricing uses this).

Coefficients CP-SAT can take
    CP-SAT's presolve multiplies coefficients of a constraint with one another; with
    coefficients above about ``3e9`` (``2**31.5``) those products leave 64 bits and the
    presolve can cut feasible solutions (with OR-Tools 9.15, an instance with ten-decimal
    demands, exactly scaled to coefficients near ``1e10``, is declared infeasible although
    first fit places it). Every CP-SAT model therefore gets integers of at most
    :data:`CPSAT_COEF_LIMIT`: :func:`shrink` divides a column whose exact (or relaxed)
    integers are larger by an integer ``q``, demands rounded down and capacities up. That is
    a relaxation (a load that fits the unshrunk row fits the shrunk one), so bounds,
    infeasibility and optimality proofs of the model stay valid, but its solutions must pass
    the checker, and ``exact`` becomes False for the column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal

import numpy as np

from packing.feasibility.predicates import TOL

MAX_DECIMALS = 30
"""Most decimals of a value read exactly."""

_SLOW_READS = 100_000
"""Most values per call read through :class:`decimal.Decimal` (those the float test cannot)."""

CPSAT_LIMIT = 2**56
"""Largest column total (demand of every container plus the largest capacity) CP-SAT gets."""

CBC_LIMIT = 2**53
"""Largest column total CBC gets (integers up to ``2**53`` are exact in doubles)."""

CPSAT_COEF_LIMIT = 2**31
"""Largest single integer (a demand, a capacity) a CP-SAT model gets (see :func:`shrink`)."""

APPROX_TOTAL = 2.0**40
"""Column total aimed at by the power-of-two scaling when no exact scaling fits."""

_TOL_Q = Fraction(TOL)  # the checker's tolerance, exactly as the float it is
_ULP = Fraction(1, 2**52)

Fallback = Literal["strict", "relaxed"]


@dataclass(frozen=True)
class IntRows:
    """Integer demands and capacities of some columns (resources) of an instance.

    Attributes:
        demand: integer demand per item and column, shape ``(n_items, n_cols)``.
        capacity: integer capacity per host type and column, tolerance included (see the
            module docstring), shape ``(n_types, n_cols)``.
        full: the capacity itself, without tolerance, shape ``(n_types, n_cols)``: the load of a
            GPU card taken whole (equal to ``capacity`` in ``"strict"`` columns).
        exact: whether every column was scaled exactly.
        exact_cols: per column, shape ``(n_cols,)``.
    """

    demand: np.ndarray
    capacity: np.ndarray
    full: np.ndarray
    exact: bool
    exact_cols: np.ndarray


def decimal_reading(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each float as ``m / 10**k`` with the fewest decimals ``k`` that converts back to it.

    Args:
        values: any shape; read element by element.

    Returns:
        ``(m, k)``: int64 arrays of the flattened values; ``k == -1`` where no reading with at
        most :data:`MAX_DECIMALS` decimals (and ``|m| < 2**53``) exists (non-finite values too).
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    m = np.zeros(v.shape, dtype=np.int64)
    k = np.full(v.shape, -1, dtype=np.int64)
    todo = np.isfinite(v)
    for p in range(min(MAX_DECIMALS, 17) + 1):
        if not todo.any():
            break
        idx = np.flatnonzero(todo)
        s = 10.0**p  # exact for p <= 22
        x = np.round(v[idx] * s)
        with np.errstate(invalid="ignore"):
            ok = (np.abs(x) < 2.0**53) & (x / s == v[idx])
        hit = idx[ok]
        m[hit] = x[ok].astype(np.int64)
        k[hit] = p
        todo[hit] = False
    rest = np.flatnonzero(todo)
    if 0 < len(rest) <= _SLOW_READS:  # e.g. 0.30000000000000004: 17 digits, m above 2**53
        for i in rest.tolist():
            dec = Decimal(repr(float(v[i])))
            exp = int(dec.as_tuple().exponent)
            kk = max(0, -exp)
            mm = int(dec.scaleb(kk))
            if kk <= MAX_DECIMALS and abs(mm) < 2**62:
                m[i], k[i] = mm, kk
    return m, k


def decimal_scale(values: np.ndarray, max_decimals: int = 9) -> int | None:
    """The least power of ten making every value an integer exactly (decimal reading), or ``None``."""
    _m, k = decimal_reading(values)
    if (k < 0).any() or (k > max_decimals).any():
        return None
    return 10 ** int(k.max(initial=0))


def _slack_q(cap_q: Fraction, slack: float | None, n_add: int, inside: bool = False
             ) -> Fraction:
    """Tolerance plus (``inside``: minus) the float-rounding allowance above ``cap_q`` (exact)."""
    s = _TOL_Q * max(Fraction(1), abs(cap_q)) if slack is None else Fraction(slack)
    err = (n_add + 4) * _ULP * (abs(cap_q) + s)
    return s - err if inside else s + err


def scale_columns(
    demand: np.ndarray,
    capacity: np.ndarray,
    counts: np.ndarray,
    *,
    limit: int = CPSAT_LIMIT,
    fallback: Fallback = "strict",
    slack: np.ndarray | None = None,
    n_add: int | None = None,
    inside: bool = False,
) -> IntRows:
    """Scale columns of demands and capacities to integers (see the module docstring).

    Args:
        demand: per item (app) and column, shape ``(n_items, n_cols)``, non-negative.
        capacity: per host type and column, shape ``(n_types, n_cols)``.
        counts: how many times each item is placed at most, shape ``(n_items,)``; items with
            count 0 do not decide the scale.
        limit: largest column total (``sum(demand * counts) + max(capacity)``) in integers.
        fallback: ``"strict"`` or ``"relaxed"`` for columns that cannot be scaled exactly.
        slack: allowed excess above each capacity, shape ``(n_types, n_cols)``; default the
            checker's tolerance ``TOL * max(1, |cap|)``.
        n_add: most addends of one load (for the float allowance); default ``sum(counts)``.
        inside: exact columns *subtract* the float allowance from the tolerance instead of
            adding it, so that every load the rows accept passes the checker whatever order
            its floats are summed in (stricter than the checker by the allowance: solutions
            only; use with ``fallback="strict"``).

    Returns:
        The :class:`IntRows`.
    """
    d = np.asarray(demand, dtype=np.float64)
    c = np.asarray(capacity, dtype=np.float64)
    n_items, n_cols = d.shape
    n_types = c.shape[0]
    counts = np.asarray(counts, dtype=np.int64)
    n_add = int(counts.sum()) if n_add is None else int(n_add)
    active = counts > 0
    out_d = np.zeros((n_items, n_cols), dtype=np.int64)
    out_c = np.zeros((n_types, n_cols), dtype=np.int64)
    out_f = np.zeros((n_types, n_cols), dtype=np.int64)
    exact_cols = np.zeros(n_cols, dtype=bool)
    for j in range(n_cols):
        sl = None if slack is None else slack[:, j]
        got = _exact_column(d[:, j], c[:, j], counts, active, limit, sl, n_add, inside)
        if got is not None:
            out_d[:, j], out_c[:, j], out_f[:, j] = got
            exact_cols[j] = True
        else:
            out_d[:, j], out_c[:, j], out_f[:, j] = _approx_column(
                d[:, j], c[:, j], counts, fallback, sl, n_add)
    return IntRows(out_d, out_c, out_f, bool(exact_cols.all()), exact_cols)


def _exact_column(d: np.ndarray, c: np.ndarray, counts: np.ndarray, active: np.ndarray,
                  limit: int, slack: np.ndarray | None, n_add: int, inside: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """One column scaled exactly, or ``None`` when no exact scaling fits ``limit``."""
    if (d < 0).any() or (c < 0).any():
        return None
    vals = np.concatenate([d[active], c])
    m, k = decimal_reading(vals)
    if (k < 0).any():
        return None
    big = int(k.max(initial=0))
    den = 10**big
    # magnitude first (in floats, with margin), so that the integer arithmetic cannot overflow
    total_f = float((d[active] * counts[active]).sum() + c.max(initial=0.0)) * den
    if not math.isfinite(total_f) or total_f > limit / 2:
        return None
    # every |value| * den < 2**62 now: exact in int64 (Python ints for the powers of ten)
    ints = np.array([int(mi) * 10 ** (big - int(ki)) for mi, ki in zip(m.tolist(), k.tolist(),
                                                                        strict=True)],
                    dtype=np.int64)
    g = int(np.gcd.reduce(ints)) if len(ints) else 0
    g = g if g > 0 else 1
    n_act = int(active.sum())
    dem = np.zeros(len(d), dtype=np.int64)
    dem[active] = ints[:n_act] // g
    if (~active).any():  # apps that are never placed: any consistent value, within range
        dem[~active] = np.minimum(np.ceil(d[~active] * den / g), limit).astype(np.int64)
    full = ints[n_act:] // g
    cap = np.zeros(len(c), dtype=np.int64)
    for t in range(len(c)):
        cap_q = Fraction(int(ints[n_act + t]), den)
        extra = _slack_q(cap_q, None if slack is None else float(slack[t]), n_add, inside)
        cap[t] = math.floor((cap_q + extra) * den / g)
    if int((dem[active] * counts[active]).sum()) + int(cap.max(initial=0)) > limit:
        return None
    return dem, cap, full.astype(np.int64)


def _approx_column(d: np.ndarray, c: np.ndarray, counts: np.ndarray, fallback: Fallback,
                   slack: np.ndarray | None, n_add: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One column scaled by a power of two, rounded the ``fallback`` way (module docstring)."""
    d = np.where(np.isfinite(d), np.maximum(d, 0.0), 0.0)
    c = np.where(np.isfinite(c), np.maximum(c, 0.0), 0.0)
    total = float((d * counts).sum() + c.max(initial=0.0))
    e = math.floor(math.log2(APPROX_TOTAL) - math.log2(total)) if total > 0 else 0  # no overflow
    e = max(-1000, min(e, 1000))
    s = 2.0**e
    if fallback == "strict":
        dem = np.ceil(d * s)
        cap = np.floor(c * s)
        return dem.astype(np.int64), cap.astype(np.int64), cap.astype(np.int64)
    dem = np.floor(d * s)
    full = np.floor(c * s)
    cap = np.zeros(len(c), dtype=np.int64)
    sq = Fraction(2) ** e
    for t in range(len(c)):
        cap_q = Fraction(float(c[t]))
        extra = _slack_q(cap_q, None if slack is None else float(slack[t]), n_add)
        cap[t] = math.ceil((cap_q + extra) * sq)
    return dem.astype(np.int64), cap, full.astype(np.int64)


def shrink(rows: IntRows, coef_limit: int = CPSAT_COEF_LIMIT, *,
           fallback: Fallback = "relaxed") -> IntRows:
    """Divide columns whose integers exceed ``coef_limit`` by an integer (module docstring).

    Column ``j`` with largest value ``M > coef_limit`` is divided by ``q = ceil(M / coef_limit)``.
    ``"relaxed"``: demands and whole-card loads (``full``) rounded down, capacities up; for any
    count vector ``n`` (shape ``(n_items,)``), ``n @ demand <= capacity`` implies the same of the
    shrunk integers, so the result is a relaxation of ``rows`` (only meaningful for rows that
    are exact or relaxed). ``"strict"``: demands rounded up, capacities down and a whole card
    filling its card; the shrunk rows then accept only what ``rows`` accept (solutions only).

    Args:
        rows: integer rows, demands ``(n_items, n_cols)``, capacities ``(n_types, n_cols)``.
        coef_limit: largest integer allowed.
        fallback: the direction of the rounding.

    Returns:
        The rows, unchanged where every integer is within the limit.
    """
    dem = rows.demand.copy()
    cap = rows.capacity.copy()
    full = rows.full.copy()
    exact_cols = rows.exact_cols.copy()
    for j in range(dem.shape[1]):
        top = max(int(np.abs(dem[:, j]).max(initial=0)), int(np.abs(cap[:, j]).max(initial=0)),
                  int(np.abs(full[:, j]).max(initial=0)))
        if top <= coef_limit:
            continue
        q = -(-top // coef_limit)
        if fallback == "relaxed":
            dem[:, j] = dem[:, j] // q
            full[:, j] = full[:, j] // q
            cap[:, j] = -(-cap[:, j] // q)
        else:
            dem[:, j] = -(-dem[:, j] // q)
            cap[:, j] = cap[:, j] // q
            full[:, j] = cap[:, j]
        exact_cols[j] = False
    return IntRows(dem, cap, full, bool(exact_cols.all()), exact_cols)


__all__ = ["CBC_LIMIT", "CPSAT_COEF_LIMIT", "CPSAT_LIMIT", "MAX_DECIMALS", "IntRows",
           "decimal_reading", "decimal_scale", "scale_columns", "shrink"]
