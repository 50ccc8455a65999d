"""Best-Fit throughput: 5,000 containers on 300 hosts, compiled kernel against a plain-numpy loop.

Run ``python benchmarks/bench_bestfit.py [--containers N] [--hosts H] [--seed S]``. It prints decisions per
second (one decision = one container placed or rejected, after scoring every host) for

* the compiled episode kernel (:mod:`policies.kernels`, the path ``simulate`` takes for BF), and
* a plain-numpy loop: ``ClusterState.mask`` + ``BestFit.scores`` + argmax per container,

and their ratio, both measured in the same run on the same instance and order. Both must produce the same
placement (checked).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from packing.checker import check
from packing.feasibility import ClusterState
from packing.model import App, HostType, Instance, Placement
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


def main(n_containers: int = 5000, n_hosts: int = 300, seed: int = 0, repeats: int = 5) -> dict[str, float]:
    inst = make_instance(n_containers, n_hosts, seed)
    seq = np.random.default_rng(seed).permutation(inst.container_app).astype(np.int64)
    kernels.episode(ClusterState(inst), seq[:10], kernels.BF, np.zeros(0), False)  # compile
    best = np.inf
    for _ in range(repeats):
        st = ClusterState(inst)
        t0 = time.perf_counter()
        fast, used = kernels.episode(st, seq, kernels.BF, np.zeros(0), False)
        best = min(best, time.perf_counter() - t0)
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
    res = {"containers": float(len(seq)), "hosts": float(n_hosts), "hosts_used": float(used[-1]),
           "rejected": float(np.sum(fast < 0)), "compiled_per_s": len(seq) / best,
           "numpy_per_s": len(seq) / t_np}
    res["ratio"] = res["compiled_per_s"] / res["numpy_per_s"]
    print(f"BF, {len(seq)} containers on {n_hosts} hosts ({int(used[-1])} used, "
          f"{int(res['rejected'])} rejected)")
    print(f"  compiled kernel: {res['compiled_per_s']:>12,.0f} decisions/s")
    print(f"  numpy loop:      {res['numpy_per_s']:>12,.0f} decisions/s")
    print(f"  ratio:           {res['ratio']:>12.1f}x")
    return res


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--containers", type=int, default=5000)
    ap.add_argument("--hosts", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    main(a.containers, a.hosts, a.seed, a.repeats)
