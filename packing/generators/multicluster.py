"""The EADE-DDPG multi-cluster GPU scenario: N clusters of P GPU nodes and a FIFO stream of K tasks.

Sources (read from folders the caller names; nothing is read at import time or from a fixed path):

* **nodes** — ``pai_machine_spec.csv`` of Alibaba cluster-trace-gpu-v2020 (no header; columns
  ``machine, gpu_type, cap_cpu, cap_mem, cap_gpu``: cores, GB, cards). ``N * P`` machines of the
  chosen GPU type(s) are drawn without replacement (with replacement when the table has fewer),
  shuffled, and dealt to the clusters ``c00, c01, ...`` in blocks of ``P``.
* **tasks** — an ``openb_pod_list_*.csv`` of Alibaba cluster-trace-gpu-v2023 (``cpu_milli``,
  ``memory_mib``, ``num_gpu``, ``gpu_milli``). ``K`` pods are drawn without replacement (with
  replacement when fewer are eligible) and arrive in the drawn order, one request each at times
  ``0, 1, ..., K - 1``, never departing (a FIFO stream).

The EADE-DDPG paper uses P4 cards, which the public machine table does not have (its types are CPU,
MISC, P100, T4, V100, V100M32). The default is **T4** (96 cores, 512 GB, 2 cards per node): the
inference card that succeeded the P4, and the only other inference type in the table.

Model
    Host resources ``("cpu_milli", "memory_mib")``: ``cap_cpu * 1000`` and ``cap_mem * 1024``.
    Two GPU resources per card, ``("gpu_mem", "gpu_core")``: the card's memory in MiB
    (:data:`CARD_MEMORY_MIB`, from the vendors' data sheets: the machine table has no memory column)
    and its compute as 1000 milli-GPU. A task asks for ``gpu_core = gpu_milli`` on one card and
    ``gpu_mem = round(gpu_milli / 1000 * card memory)`` MiB: the openb trace has no GPU-memory
    column, so the memory share is taken equal to the compute share (documented assumption; the two
    GPU resources are then proportional on a single card type). A whole-card task
    (``gpu_milli = 1000``) asks for the full card. With ``max_gpus_per_task=1`` (default, the paper's
    "a task's GPU share fits in one card") only pods with ``num_gpu == 1`` are eligible; with a
    larger value, multi-card pods (always whole cards in openb) are eligible too and take whole
    cards; ``cpu_only=True`` adds the ``num_gpu == 0`` pods.

    Tasks with the same four demands share one :class:`packing.model.instance.App` (names ``s000, s001, ...``
    in order of first arrival), so exact solvers see few apps; the request stream keeps one request
    per task. ``meta`` records the sources, the seed, the GPU type(s) and the offered load.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from packing.io.documents import read_text_limited
from packing.model.instance import App, HostType, Instance, Request

RESOURCES = ("cpu_milli", "memory_mib")
"""Host resources of the scenario."""

GPU_RESOURCES = ("gpu_mem", "gpu_core")
"""Per-card GPU resources: memory (MiB) and compute (milli-GPU, 1000 per card)."""

CARD_MEMORY_MIB: dict[str, int] = {
    "T4": 16384, "P100": 16384, "V100": 16384, "V100M32": 32768, "MISC": 12288,
}
"""Memory per card by v2020 GPU type (data sheets: T4, P100, V100 16 GB; V100M32 32 GB; MISC =
K40m/K80/M60, taken as 12 GB)."""

CARD_CORE = 1000
"""``gpu_core`` capacity of one card (milli-GPU, the openb unit)."""

MACHINE_FILE = "pai_machine_spec.csv"
DEFAULT_PODS = "openb_pod_list_default.csv"


def _resolve(path: str | Path, name: str, subdirs: Sequence[str]) -> Path:
    p = Path(path)
    if p.is_file():
        return p
    for sub in subdirs:
        q = p / sub / name if sub else p / name
        if q.is_file():
            return q
    raise FileNotFoundError(f"{p}: no {name} (looked in {', '.join(str(p / s) for s in subdirs)})")


def machine_file(path: str | Path) -> Path:
    """``pai_machine_spec.csv`` in ``path`` (the file itself, the v2020 folder, or a data root)."""
    return _resolve(path, MACHINE_FILE, ("", "alibaba-gpu-v2020"))


def pod_file(path: str | Path, pods: str = DEFAULT_PODS) -> Path:
    """The pod list ``pods`` in ``path`` (the file, the v2023 ``csv`` folder, its parent, or a root)."""
    return _resolve(path, pods, ("", "csv", "alibaba-gpu-v2023/csv"))


def read_machines(path: str | Path) -> list[tuple[str, str, float, float, int]]:
    """Rows ``(machine, gpu_type, cap_cpu, cap_mem, cap_gpu)`` of the machine table.

    Raises:
        ValueError: a row that does not have five fields or whose numbers do not parse.
    """
    f = machine_file(path)
    out = []
    with io.StringIO(read_text_limited(f), newline="") as fh:
        for i, row in enumerate(csv.reader(fh), 1):
            if not row:
                continue
            if len(row) != 5:
                raise ValueError(f"{f}: line {i}: expected 5 fields, got {len(row)}")
            try:
                out.append((row[0], row[1], float(row[2]), float(row[3]), int(row[4])))
            except ValueError as e:
                raise ValueError(f"{f}: line {i}: {e}") from None
    return out


def read_pods(path: str | Path, pods: str = DEFAULT_PODS) -> list[tuple[int, int, int, int]]:
    """Rows ``(cpu_milli, memory_mib, num_gpu, gpu_milli)`` of a pod list (header required).

    Raises:
        ValueError: a missing column or a number that does not parse.
    """
    f = pod_file(path, pods)
    out = []
    with io.StringIO(read_text_limited(f), newline="") as fh:
        reader = csv.DictReader(fh)
        need = ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
        missing = [c for c in need if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{f}: missing column(s) {', '.join(missing)}")
        for i, row in enumerate(reader, 2):
            try:
                out.append(tuple(int(float(row[c])) for c in need))
            except (TypeError, ValueError) as e:
                raise ValueError(f"{f}: line {i}: {e}") from None
    return out  # type: ignore[return-value]


def generate_multicluster(machines: str | Path, pods: str | Path, *, clusters: int = 16, nodes: int = 4,
                          tasks: int = 220, seed: int = 0, gpu_types: Sequence[str] = ("T4",),
                          pod_list: str = DEFAULT_PODS, max_gpus_per_task: int = 1,
                          cpu_only: bool = False, name: str | None = None) -> Instance:
    """The seeded multi-cluster scenario (see the module docstring).

    Args:
        machines: the v2020 machine table (file, its folder, or a data root holding ``alibaba-gpu-v2020``).
        pods: the openb pod list (file, the v2023 ``csv`` folder, or a root holding ``alibaba-gpu-v2023``).
        clusters: N, clusters.
        nodes: P, GPU nodes per cluster.
        tasks: K, tasks in the stream.
        seed: seed of the owned generator (nodes and tasks are drawn from independent streams).
        gpu_types: machine types to draw from (``gpu_type`` column).
        pod_list: file name of the pod list when ``pods`` is a folder.
        max_gpus_per_task: most cards one task may ask for (1: the paper's setting).
        cpu_only: also draw pods without GPU demand.
        name: instance name (default ``mc-{N}x{P}-{K}-s{seed}``).

    Returns:
        An :class:`Instance` with ``N * P`` hosts in clusters ``c00 ..``, one request per task.

    Raises:
        ValueError: bad sizes, no machine of the types, no eligible pod, unknown card memory.
    """
    if clusters < 1 or nodes < 1 or tasks < 1:
        raise ValueError("clusters, nodes and tasks must be >= 1")
    unknown = [t for t in gpu_types if t not in CARD_MEMORY_MIB]
    if unknown:
        raise ValueError(f"no card memory known for GPU type(s) {unknown}; known: {sorted(CARD_MEMORY_MIB)}")
    rng_nodes, rng_tasks = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    rows = [r for r in read_machines(machines) if r[1] in gpu_types and r[4] > 0]
    if not rows:
        raise ValueError(f"no GPU machine of type(s) {list(gpu_types)} in {machine_file(machines)}")
    n_hosts = clusters * nodes
    pick = rng_nodes.choice(len(rows), size=n_hosts, replace=n_hosts > len(rows))
    host_types: list[HostType] = []
    for c in range(clusters):
        shapes: dict[tuple[str, float, float, int], int] = {}
        for i in pick[c * nodes:(c + 1) * nodes]:
            _, gt, cpu, mem, ng = rows[int(i)]
            shapes[(gt, cpu, mem, ng)] = shapes.get((gt, cpu, mem, ng), 0) + 1
        for j, ((gt, cpu, mem, ng), cnt) in enumerate(sorted(shapes.items())):
            host_types.append(HostType(
                f"c{c:02d}-{gt}-{j}", (cpu * 1000.0, mem * 1024.0), cnt, cluster=f"c{c:02d}", gpus=ng,
                gpu_capacity=(float(CARD_MEMORY_MIB[gt]), float(CARD_CORE)), gpu_model=gt))
    card_mem = min(CARD_MEMORY_MIB[t] for t in gpu_types)
    eligible = [p for p in read_pods(pods, pod_list)
                if (1 <= p[2] <= max_gpus_per_task or (cpu_only and p[2] == 0))
                and (p[2] <= 1 or p[3] >= CARD_CORE)]
    if not eligible:
        raise ValueError("no eligible pod in the pod list")
    draw = rng_tasks.choice(len(eligible), size=tasks, replace=tasks > len(eligible))
    shape_app: dict[tuple[int, int, int, int], int] = {}
    counts: list[int] = []
    stream: list[int] = []
    for i in draw:
        p = eligible[int(i)]
        a = shape_app.setdefault(p, len(shape_app))
        if a == len(counts):
            counts.append(0)
        counts[a] += 1
        stream.append(a)
    apps = []
    for (cpu_m, mem_m, ng, gm), a in shape_app.items():
        nm = f"s{a:03d}"
        if ng == 0:
            apps.append(App(nm, (float(cpu_m), float(mem_m)), counts[a]))
        elif ng == 1 and gm < CARD_CORE:
            share = (float(round(gm / CARD_CORE * card_mem)), float(gm))
            apps.append(App(nm, (float(cpu_m), float(mem_m)), counts[a], gpu_cards=1, gpu_per_card=share))
        else:
            apps.append(App(nm, (float(cpu_m), float(mem_m)), counts[a], gpu_cards=ng, gpu_whole=True))
    requests = tuple(Request(float(t), f"s{a:03d}", 1) for t, a in enumerate(stream))
    offered = sum(max(p[2], 0) * (p[3] if p[2] == 1 else CARD_CORE) for p in (eligible[int(i)] for i in draw))
    cards = sum(t.count * t.gpus for t in host_types)
    meta: dict[str, Any] = {
        "generator": "multicluster", "seed": seed, "clusters": clusters, "nodes": nodes, "tasks": tasks,
        "gpu_types": list(gpu_types), "machines": machine_file(machines).name,
        "pods": pod_file(pods, pod_list).name,
        "offered_gpu_load": round(offered / (CARD_CORE * cards), 4) if cards else None,
    }
    return Instance(name or f"mc-{clusters}x{nodes}-{tasks}-s{seed}", RESOURCES, tuple(host_types),
                    tuple(apps), gpu_resources=GPU_RESOURCES, requests=requests, meta=meta)


def is_multicluster(inst: Instance) -> bool:
    """Whether ``inst`` is a scenario of :func:`generate_multicluster` (compared on tasks deployed)."""
    return isinstance(inst.meta, dict) and inst.meta.get("generator") == "multicluster"


__all__ = ["CARD_CORE", "CARD_MEMORY_MIB", "GPU_RESOURCES", "RESOURCES", "generate_multicluster",
           "is_multicluster", "machine_file", "pod_file", "read_machines", "read_pods"]
