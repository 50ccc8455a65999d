"""Rollout teachers for EADE-M ``distil`` in the card model: tasks deployed and ms per decision.

The card model of :mod:`policies.card_rollout` (free milli per card; CPU and memory never bind in
the default multi-cluster scenario) replays a whole stream in a few ms and reproduces the simulator
exactly on validation streams 50-59: ``mc-cardmix`` 159.0 and ``mc-rollout`` 161.1 (same futures,
same seeds). So teacher variants can be compared here before one is distilled:

* ``rollout:K`` -- :class:`policies.card_rollout.RolloutLabeler` (one-step rollout of ``mc-cardmix``,
  options fresh/fit/drop) on ``K`` futures from the size distribution of the training streams
  (``--sizes 10``: :data:`~policies.card_rollout.TRAIN_SIZES`, what ``mc-rollout`` uses; default
  ``--sizes 90``: seeds 0-49 and 60-99, what ``bench_eade_distil.py`` trains with);
* ``lindrop`` -- ``mc-cardmix`` that drops (WAITs on) a task of at least
  :data:`~policies.card_rollout.BIG` milli when the free share left after it, summed over all cards,
  is below ``a * r + b`` milli (``r`` tasks still to come); ``a``, ``b`` are grid-searched on the
  training streams (``--grid``), never on validation;
* ``lindrop-rollout:K`` -- the one-step rollout whose base policy is ``lindrop``;
* ``nested:K1:K2`` -- a two-step rollout: each option is scored on ``K1`` futures in which the *next*
  task is decided by the one-step rollout on ``K2`` inner futures (the same inner futures for every
  inner decision), then ``mc-cardmix`` continues.

    python benchmarks/bench_teachers.py --eval 50-59 --teachers rollout:32,rollout:128,lindrop
    python benchmarks/bench_teachers.py --grid              # fit lindrop's (a, b) on training streams

Held-out streams 100-109 are refused. Needs ../shared/data (or ``--data``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_eade_distil import seed_list  # noqa: E402 - the same seed-list syntax

from packing.generators.multicluster import generate_multicluster  # noqa: E402
from packing.sim.engine import arrivals  # noqa: E402
from policies.card_rollout import BIG, FULL, TRAIN_SIZES, option_values, options, task_milli  # noqa: E402
from policies.cluster_heuristics import MIX_THETA  # noqa: E402

TRAIN = [*range(0, 50), *range(60, 100)]
HELD_OUT = range(100, 110)
LINDROP = (275, 6000)
"""``(a, b)`` of ``lindrop`` from ``--grid`` on training streams 0-49, 60-99 (160.08 there)."""


def stream_shares(data: str, seeds: list[int]) -> dict[int, np.ndarray]:
    """Card share (milli) of every task in arrival order, ``{seed: shape (220,)}``, default scenario."""
    out = {}
    for s in seeds:
        inst = generate_multicluster(data, data, clusters=16, nodes=4, tasks=220, seed=s)
        out[s] = np.array([task_milli(inst, int(a)) for a in arrivals(inst).app], dtype=np.int64)
    return out


def base_batch(free: np.ndarray, seqs: np.ndarray, drop: tuple[float, float] | None = None,
               theta: float = MIX_THETA, big: int = BIG) -> np.ndarray:
    """``mc-cardmix`` (``drop=None``) or ``lindrop`` (``drop=(a, b)``) on ``B`` streams; tasks placed.

    Args:
        free: free milli per card, shape ``(B, n_cards)`` (not modified).
        seqs: task shares in milli, shape ``(B, L)``; task ``t`` has ``L - t - 1`` tasks after it.
        drop: ``(a, b)``: drop a task of at least ``big`` milli when the summed free milli after it is
            below ``a * (L - t - 1) + b``; ``None``: never drop.
        theta: ``mc-cardmix``'s share of entirely free cards above which the emptiest card is taken.
        big: smallest share (milli) that may be dropped.

    Returns:
        Tasks placed, shape ``(B,)``.
    """
    free = np.array(free, dtype=np.int64)
    b, n = free.shape
    placed = np.zeros(b, dtype=np.int64)
    rows = np.arange(b)
    top = np.iinfo(np.int64).max
    length = seqs.shape[1]
    for t in range(length):
        s = seqs[:, t]
        fit = free >= s[:, None]
        ok = fit.any(axis=1) & (s > 0)
        if drop is not None:
            ok &= ~((s >= big) & (free.sum(axis=1) - s < drop[0] * (length - t - 1) + drop[1]))
        fresh = (free == FULL).sum(axis=1) > theta * n
        key = np.where(fresh[:, None], -free, free - s[:, None])
        c = np.where(fit, key, top).argmin(axis=1)
        free[rows[ok], c[ok]] -= s[ok]
        placed += ok
    return placed


class Teacher:
    """A teacher in the card model.

    ``k > 0``: one-step rollout over fresh/fit/drop on ``k`` futures drawn from ``sizes`` (seeded by
    ``seed``), base ``mc-cardmix`` (``drop=None``) or ``lindrop`` (``drop=(a, b)``); ties keep
    ``mc-cardmix``'s option. ``k == 0``: the base rule itself.
    """

    def __init__(self, sizes: list[tuple[int, int]], k: int, drop: tuple[float, float] | None, seed: int
                 ) -> None:
        table = np.asarray(sizes, dtype=np.float64)
        self.vals, self.p = table[:, 0].astype(np.int64), table[:, 1] / table[:, 1].sum()
        self.k, self.drop = k, drop
        self.rng = np.random.default_rng(seed)

    def choose(self, free: np.ndarray, s: int, rem: int) -> int | None:
        """Card index for a task of ``s`` milli with ``rem`` tasks after it; ``None`` = not placed."""
        opts, base = options(free, s, MIX_THETA)
        if not opts:
            return None
        card = dict(opts)
        if self.k == 0:
            if self.drop is not None and s >= BIG and free.sum() - s < self.drop[0] * rem + self.drop[1]:
                return None
            return card[base]
        if len(opts) == 1 or rem <= 0:
            return card[base]
        fut = self.vals[self.rng.choice(len(self.p), size=(self.k, rem), p=self.p)]
        val = option_values(free, s, opts, fut, lambda f, q: base_batch(f, q, self.drop))
        names = [o for o, _ in opts]
        j = int(np.argmax(val))
        if val[j] <= val[names.index(base)] + 1e-9:
            return card[base]
        return None if opts[j][1] < 0 else opts[j][1]


class Nested(Teacher):
    """``nested:K1:K2`` (see the module docstring); ties keep ``mc-cardmix``'s option at both levels."""

    def __init__(self, sizes: list[tuple[int, int]], k1: int, k2: int, seed: int) -> None:
        super().__init__(sizes, k1, None, seed)
        self.k2 = k2

    def choose(self, free: np.ndarray, s: int, rem: int) -> int | None:
        """Card index for a task of ``s`` milli with ``rem`` tasks after it; ``None`` = not placed."""
        opts, base = options(free, s, MIX_THETA)
        if not opts or len(opts) == 1 or rem <= 1:
            return super().choose(free, s, rem)
        fut = self.vals[self.rng.choice(len(self.p), size=(self.k, rem), p=self.p)]
        inner = self.vals[self.rng.choice(len(self.p), size=(self.k2, rem - 1), p=self.p)]
        groups: list[tuple[int, int, list[tuple[np.ndarray, float, bool]]]] = []
        for i, (_, c) in enumerate(opts):
            f = free.copy()
            if c >= 0:
                f[c] -= s
            for k in range(self.k):
                n1 = int(fut[k, 0])
                o2, b2 = options(f, n1, MIX_THETA)
                g = []
                for nm, c2 in o2:
                    f2 = f.copy()
                    if c2 >= 0:
                        f2[c2] -= n1
                    g.append((f2, float(c2 >= 0), nm == b2))
                groups.append((i, k, g or [(f, 0.0, True)]))
        rows = [st for _, _, g in groups if len(g) > 1 for st, _, _ in g]
        ival = np.zeros(0)
        if rows:
            got = base_batch(np.repeat(np.stack(rows), self.k2, axis=0), np.tile(inner, (len(rows), 1)))
            ival = got.reshape(len(rows), self.k2).mean(axis=1)
        pos = 0
        chosen: list[tuple[int, int, np.ndarray, float]] = []
        for i, k, g in groups:
            j = 0
            if len(g) > 1:
                v = [ival[pos + j] + g[j][1] for j in range(len(g))]
                pos += len(g)
                bj = next(j for j in range(len(g)) if g[j][2])
                j = int(np.argmax(v))
                j = bj if v[j] <= v[bj] + 1e-9 else j
            chosen.append((i, k, g[j][0], g[j][1]))
        cont = base_batch(np.stack([c[2] for c in chosen]), np.stack([fut[c[1], 1:] for c in chosen]))
        val = np.array([float(c >= 0) for _, c in opts])
        for (i, _, _, now), v in zip(chosen, cont, strict=True):
            val[i] += (v + now) / self.k
        names = [o for o, _ in opts]
        j = int(np.argmax(val))
        if val[j] <= val[names.index(base)] + 1e-9:
            return dict(opts)[base]
        return None if opts[j][1] < 0 else opts[j][1]


def play(seq: np.ndarray, teacher: Teacher, n_cards: int = 128) -> int:
    """Tasks ``teacher`` places on one stream (shares ``seq``, shape ``(L,)``) in the card model."""
    free = np.full(n_cards, FULL, dtype=np.int64)
    n = 0
    for t, s in enumerate(seq):
        c = teacher.choose(free, int(s), len(seq) - t - 1) if s > 0 else -1
        if c is None:
            continue
        if c >= 0:
            free[c] -= s
        n += 1
    return n


def size_table(shares: dict[int, np.ndarray], seeds: list[int]) -> list[tuple[int, int]]:
    """``(milli, count)`` of the GPU tasks of ``seeds``."""
    v, c = np.unique(np.concatenate([shares[s] for s in seeds]), return_counts=True)
    return [(int(a), int(b)) for a, b in zip(v, c, strict=True) if a > 0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--eval", default="50-59")
    ap.add_argument("--teachers", default="cardmix,lindrop,rollout:32,rollout:128")
    ap.add_argument("--sizes", default="90", choices=("10", "90"))
    ap.add_argument("--rng", type=int, default=0, help="added to the stream seed for the futures' seed")
    ap.add_argument("--grid", action="store_true", help="grid-search lindrop's (a, b) on training streams")
    args = ap.parse_args()
    eval_seeds = seed_list(args.eval)
    if set(eval_seeds) & set(HELD_OUT):
        ap.error("held-out streams 100-109 are not for teacher selection")
    shares = stream_shares(args.data, sorted(set(TRAIN) | set(eval_seeds)))
    if args.grid:
        tr = np.stack([shares[s] for s in TRAIN])
        grid = [(float(base_batch(np.full((len(tr), 128), FULL), tr, (a, b)).mean()), a, b)
                for a in range(150, 451, 25) for b in range(0, 12001, 1000)]
        for m, a, b in sorted(grid, reverse=True)[:5]:
            print(f"lindrop a={a} b={b}: training streams {m:.2f}")
        return
    sizes = list(TRAIN_SIZES) if args.sizes == "10" else size_table(shares, TRAIN)
    for spec in args.teachers.split(","):
        name, *ks = spec.split(":")
        drop = LINDROP if name.startswith("lindrop") else None
        kk = int(ks[0]) if name.endswith("rollout") else 0

        def make(seed: int, name: str = name, ks: list[str] = ks, kk: int = kk,
                 drop: tuple[float, float] | None = drop) -> Teacher:
            if name == "nested":
                return Nested(sizes, int(ks[0]), int(ks[1]), seed)
            return Teacher(sizes, kk, drop, seed)

        t0 = time.perf_counter()
        got = [play(shares[s], make(s + args.rng)) for s in eval_seeds]
        ms = 1000 * (time.perf_counter() - t0) / sum(len(shares[s]) for s in eval_seeds)
        print(f"{spec}: {np.mean(got):.2f} {got} {ms:.2f} ms/decision", flush=True)


if __name__ == "__main__":
    main()
