"""Best-Fit throughput: 5,000 containers on 300 hosts; simulate, the bare compiled loop, and numpy.

Run ``python benchmarks/bench_bestfit.py [--containers N] [--hosts H] [--seed S]``. It prints decisions per
second (one decision = one container placed or rejected, after scoring every host) for

* ``simulate`` end to end (the engine: arrivals, state, the compiled kernel through the
  ``CompiledEpisode`` protocol, the result with its lazily built placement and trajectory; the
  checker is off, as it is a separate pass),
* the bare compiled Best-Fit loop over plain arrays (``policies.kernels.run_episode`` on freshly
  allocated ``used``/``count``/``n_on`` arrays: no engine, no result), and
* a plain-numpy loop: ``ClusterState.mask`` + ``BestFit.scores`` + argmax per container,

with the ratios simulate / bare loop (target: at least 0.9) and bare loop / numpy, all measured in the
same run on the same instance and order (best of ``--repeats``). All three must make the same decisions
(checked).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.model.instance import App, HostType, Instance, Placement
from packing.sim.simulator import simulate
from policies import kernels
from policies.base import Observation, choose
from policies.heuristics import BestFit


def make_instance(n_containers: int, n_hosts: int, seed: int) -> Instance:
    """Random 2-resource apps (cap 2..8, no rules) whose containers total about 90% of the hosts."""
    rng = np.random.default_rng(seed)
    n_apps = 100
    counts = rng.multinomial(n_containers - n_apps, np.ones(n_apps) / n_apps) + 1
    apps = []
    for a in range(n_apps):
        d = (float(rng.integers(1, 9)), float(rng.integers(2, 33)))
        apps.append(App(f"a{a}", d, int(counts[a]), max_per_host=int(rng.integers(2, 9))))
    return Instance("bench", ("cpu", "mem"), (HostType("h", (96.0, 512.0), n_hosts),), tuple(apps))


def numpy_loop(inst: Instance, seq: np.ndarray) -> np.ndarray:
    """Plain-numpy BF: the general path of the simulator without its bookkeeping."""
    st = ClusterState(inst)
    pol = BestFit()
    out = np.empty(len(seq), dtype=np.int64)
    empty = np.zeros(inst.n_apps, dtype=np.int64)
    for t, a in enumerate(seq):
        mask = st.mask(int(a))
        h = choose(pol.scores(Observation(st, int(a), float(t), t, empty), mask), mask)
        out[t] = h
        if h >= 0:
            st.place(int(a), h)
    return out


def bare_loop(inst: Instance, seq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The compiled Best-Fit loop over plain arrays: only what the kernel needs, allocated per run."""
    st = ClusterState(inst)  # for the read-only layout (rule tables, columns) only
    n_h, n_r = inst.n_hosts, inst.n_resources
    used = np.zeros((n_h, n_r))
    count = np.zeros((n_h, st.count.shape[1]), dtype=np.int32)
    n_on = np.zeros(n_h, dtype=np.int64)
    host_out = np.empty(len(seq), dtype=np.int64)
    used_out = np.empty(len(seq), dtype=np.int64)
    pending = np.bincount(seq, minlength=inst.n_apps).astype(np.int64)
    empty = np.zeros(0, dtype=np.int64)
    kernels.run_episode(kernels.BF, np.zeros(0), False, seq, inst.demand, inst.host_capacity, used,
                        count, n_on, st.col, inst.cap.astype(np.int64), *st.rule_tables,
                        inst.host_type_of, len(inst.host_types), host_out, used_out, pending,
                        np.zeros(inst.n_apps + 1, dtype=np.int64), empty)
    return host_out, used_out


def _best(fn: object, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - t0)
    return best


def main(n_containers: int = 5000, n_hosts: int = 300, seed: int = 0, repeats: int = 5) -> dict[str, float]:
    inst = make_instance(n_containers, n_hosts, seed)
    order = np.random.default_rng(seed).permutation(inst.n_containers).astype(np.int64)
    seq = inst.container_app[order].astype(np.int64)
    bare_loop(inst, seq[:10])  # compile
    simulate(inst, BestFit(), order, check_result=False)
    fast, used = bare_loop(inst, seq)
    best = _best(lambda: bare_loop(inst, seq), repeats)
    pol = BestFit()
    t_sim = _best(lambda: simulate(inst, pol, order, check_result=False), repeats)
    res = simulate(inst, pol, order, check_result=False)
    if not (res.compiled and np.array_equal(res.trajectory.host, fast)):
        raise SystemExit("simulate and the bare loop disagree")
    t0 = time.perf_counter()
    slow = numpy_loop(inst, seq)
    t_np = time.perf_counter() - t0
    if not np.array_equal(fast, slow):
        raise SystemExit("compiled and numpy paths disagree")
    host_of = np.full(inst.n_containers, -1, dtype=np.int64)
    nxt = inst.offsets[:-1].copy()
    for a, h in zip(seq, fast, strict=True):
        if h >= 0:
            host_of[nxt[a]] = h
            nxt[a] += 1
    if check(inst, Placement.from_arrays(inst, host_of)):
        raise SystemExit("infeasible placement")
    out = {"containers": float(len(seq)), "hosts": float(n_hosts), "hosts_used": float(used[-1]),
           "rejected": float(np.sum(fast < 0)), "compiled_per_s": len(seq) / best,
           "numpy_per_s": len(seq) / t_np, "simulate_per_s": len(seq) / t_sim}
    out["ratio"] = out["compiled_per_s"] / out["numpy_per_s"]
    out["simulate_ratio"] = out["simulate_per_s"] / out["compiled_per_s"]
    print(f"BF, {len(seq)} containers on {n_hosts} hosts ({int(used[-1])} used, "
          f"{int(out['rejected'])} rejected)")
    print(f"  simulate (engine):   {out['simulate_per_s']:>12,.0f} decisions/s")
    print(f"  bare compiled loop:  {out['compiled_per_s']:>12,.0f} decisions/s")
    print(f"  numpy loop:          {out['numpy_per_s']:>12,.0f} decisions/s")
    print(f"  simulate / bare:     {out['simulate_ratio']:>12.2f}x  (target >= 0.9)")
    print(f"  bare / numpy:        {out['ratio']:>12.1f}x")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--containers", type=int, default=5000)
    ap.add_argument("--hosts", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    main(a.containers, a.hosts, a.seed, a.repeats)
