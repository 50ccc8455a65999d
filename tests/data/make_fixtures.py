"""Derive the small loader fixtures in tests/data from the real data in ../shared/data.

Deterministic: the same input files give byte-identical fixtures. Run from the repository root::

    python tests/data/make_fixtures.py [--shared PATH]

Each fixture folder gets a SOURCE.txt naming the origin files and how they were cut.
"""

from __future__ import annotations

import argparse
import csv
import shutil
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SHARED = HERE.parents[2] / "shared" / "data"


def _read(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return [row for row in csv.reader(f) if row]


def _write(path: Path, rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerows(rows)


def _source(folder: Path, text: str) -> None:
    (folder / "SOURCE.txt").write_text(text.strip() + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------------------
TIANCHI_CORE = [
    # <app_4026, app_1384, 1> and <app_4026, app_2183, 1> are tight on machine_5688 (one of each)
    "app_4026", "app_1384", "app_2183",
    # <app_4026, app_6195, 1> is tight on machine_4215
    "app_6195",
    # <app_321, app_7009, 1> is tight on machine_5125
    "app_321", "app_7009",
    # a k = 0 cross rule between two small deployed apps: <app_2533, app_875, 0>
    "app_2533", "app_875",
    # self rows with k = 0 and k = 1 (caps 1 and 2 after the evaluator's +1)
    "app_6184", "app_4502", "app_5363",
]
TIANCHI_MACHINES = ["machine_5688", "machine_4215", "machine_5125"]
N_APPS, N_MACHINES, N_SMALL_MACHINES = 30, 20, 5


def tianchi(shared: Path, out: Path) -> None:
    src = shared / "alibaba-tianchi-2018"
    pre = "scheduling_preliminary_b_"
    names = {k: f"{pre}{k}_20180726.csv" for k in
             ("app_resources", "machine_resources", "instance_deploy", "app_interference")}
    apps_rows = _read(src / names["app_resources"])
    mach_rows = _read(src / names["machine_resources"])
    dep_rows = _read(src / names["instance_deploy"])
    rule_rows = _read(src / names["app_interference"])
    count = Counter(r[1] for r in dep_rows)
    on: dict[str, list[str]] = defaultdict(list)
    for _, a, m in dep_rows:
        if m:
            on[m].append(a)
    chosen = list(TIANCHI_CORE)
    # fill with the other small apps of the tight machines, in deploy order
    for m in TIANCHI_MACHINES:
        for a in on[m]:
            if len(chosen) < N_APPS and a not in chosen and count[a] <= 5:
                chosen.append(a)
    keep = set(chosen)
    machines = list(TIANCHI_MACHINES)
    for _, a, m in dep_rows:
        if a in keep and m and m not in machines and len(machines) < N_MACHINES - N_SMALL_MACHINES:
            machines.append(m)
    # a few of the small (32-core) machines: those hosting chosen apps first, then machine_1...
    small = [m for _, a, m in dep_rows if a in keep and m and int(m.split("_")[1]) <= 3000]
    small += [r[0] for r in mach_rows]
    for m in small:
        if len(machines) >= N_MACHINES:
            break
        if m not in machines:
            machines.append(m)
    mset = set(machines)
    folder = out / "tianchi_small"
    _write(folder / names["app_resources"], [r for r in apps_rows if r[0] in keep])
    _write(folder / names["machine_resources"], [r for r in mach_rows if r[0] in mset])
    _write(folder / names["instance_deploy"],
           [[i, a, m if m in mset else ""] for i, a, m in dep_rows if a in keep])
    _write(folder / names["app_interference"],
           [r for r in rule_rows if r[0] in keep and r[1] in keep])
    _source(folder, f"""
Cut from ../shared/data/alibaba-tianchi-2018 (Tianchi 2018 scheduling, preliminary set B) by
tests/data/make_fixtures.py. Same file names and formats as the original.
apps: {len(chosen)} apps: {', '.join(TIANCHI_CORE)} (chosen so that cross rules are tight in the
  initial deployment and self rows with k = 0 and 1 appear), then apps with at most 5 instances on
  {', '.join(TIANCHI_MACHINES)} in deploy order, up to {N_APPS}.
machines: {', '.join(TIANCHI_MACHINES)}, then machines hosting the chosen apps (deploy order),
  then 32-core machines, {N_MACHINES} in all, rows in the original order.
instance_deploy: every instance of the chosen apps in file order; machine_id blanked when the
  machine is not among the kept ones.
app_interference: every row whose two apps are both chosen, in file order.
""")


# ------------------------------------------------------------------------------------------------
OPENB_TYPES = [  # (cpu_milli, memory_mib, gpu, model): two nodes of each, in file order
    ("32000", "262144", "0", ""), ("96000", "393216", "8", "G2"), ("104000", "524288", "2", "T4"),
    ("16000", "122880", "2", "P100"), ("96000", "786432", "8", "V100M32"),
    ("8000", "32768", "1", "V100M16"), ("128000", "1048576", "1", "A10"),
    ("96000", "393216", "4", "T4"), ("96000", "524288", "0", ""), ("32000", "131072", "4", "V100M16"),
]


def openb(shared: Path, out: Path) -> None:
    src = shared / "alibaba-gpu-v2023" / "csv"
    nodes = _read(src / "openb_node_list_all_node.csv")
    head, body = nodes[0], nodes[1:]
    taken: Counter[tuple[str, ...]] = Counter()
    keep_nodes = []
    for r in body:
        key = tuple(r[1:5])
        if key in OPENB_TYPES and taken[key] < 2:
            taken[key] += 1
            keep_nodes.append(r)
    folder = out / "openb_small" / "csv"
    _write(folder / "openb_node_list_all_node.csv", [head] + keep_nodes)
    _write(folder / "openb_node_list_gpu_node.csv", [head] + [r for r in keep_nodes if r[3] != "0"])
    pods = _read(src / "openb_pod_list_gpuspec33.csv")
    phead, pbody = pods[0], pods[1:]
    col = {c: i for i, c in enumerate(phead)}

    def kind(r: list[str]) -> str:
        ng, gm, spec = int(r[col["num_gpu"]]), int(r[col["gpu_milli"]]), r[col["gpu_spec"]]
        if spec:
            return "spec"
        if ng == 0:
            return "cpu"
        if ng == 1:
            return "share" if gm < 1000 else "whole"
        return f"multi{ng}"

    quota = {"cpu": 10, "share": 12, "whole": 12, "multi2": 3, "multi4": 3, "multi8": 3, "spec": 8}
    used: Counter[str] = Counter()
    keep_pods = []
    for r in pbody:
        k = kind(r)
        if used[k] < quota[k]:
            used[k] += 1
            keep_pods.append(r)
    _write(folder / "openb_pod_list_default.csv", [phead] + keep_pods)
    mg = _read(src / "openb_pod_list_multigpu20.csv")
    _write(folder / "openb_pod_list_multigpu20.csv", mg[:11])
    _source(out / "openb_small", f"""
Cut from ../shared/data/alibaba-gpu-v2023/csv (Alibaba GPU trace v2023, "openb") by
tests/data/make_fixtures.py.
csv/openb_node_list_all_node.csv: the first two nodes (file order) of each of {len(OPENB_TYPES)}
  node shapes (cpu_milli, memory_mib, gpu, model), {len(keep_nodes)} nodes:
  {'; '.join('/'.join(t) for t in OPENB_TYPES)}.
csv/openb_node_list_gpu_node.csv: the GPU nodes of that cut.
csv/openb_pod_list_default.csv: {len(keep_pods)} pods taken, in file order, from
  openb_pod_list_gpuspec33.csv (same pods and columns as the default list, with gpu_spec filled
  for a third of the GPU pods): the first {quota['cpu']} CPU-only, {quota['share']} GPU-sharing
  (num_gpu 1, gpu_milli < 1000), {quota['whole']} whole single-GPU, 3 each of 2-, 4- and 8-GPU, and
  {quota['spec']} pods with a gpu_spec.
csv/openb_pod_list_multigpu20.csv: the header and first 10 pods of openb_pod_list_multigpu20.csv
  (no gpu_spec or time columns).
""")


# ------------------------------------------------------------------------------------------------
CT_FILES = ["CL_1_25_1.vbp", "CL_6_25_1.vbp"]


def caprara_toth(shared: Path, out: Path) -> None:
    src = shared / "caprara-toth-2d"
    folder = out / "caprara_toth_small"
    (folder / "instances").mkdir(parents=True, exist_ok=True)
    for f in CT_FILES:
        shutil.copyfile(src / "instances" / f, folder / "instances" / f)
    rows = _read(src / "optimal_values.csv")
    _write(folder / "optimal_values.csv", [rows[0]] + [r for r in rows[1:] if r[0] in CT_FILES])
    _source(folder, f"""
Copied from ../shared/data/caprara-toth-2d (Caprara & Toth 2001, 2-D vector packing, VPSolver
format) by tests/data/make_fixtures.py: instances/{' and instances/'.join(CT_FILES)} unchanged,
and the rows of optimal_values.csv for those files (with its header).
""")


# ------------------------------------------------------------------------------------------------
def alibaba(shared: Path, out: Path) -> None:
    rows = _read(shared / "alibaba-v2018" / "machine_meta.csv")
    events = Counter(r[0] for r in rows)
    first5 = list(dict.fromkeys(r[0] for r in rows))[:5]
    busiest = max(events, key=lambda m: (events[m], m))
    keep = set(first5) | {busiest}
    folder = out / "alibaba_v2018_small"
    _write(folder / "machine_meta.csv", [r for r in rows if r[0] in keep])
    _source(folder, f"""
Cut from ../shared/data/alibaba-v2018/machine_meta.csv (Alibaba cluster-trace-v2018) by
tests/data/make_fixtures.py: every row of the first five machines ({', '.join(first5)}) and of
the machine with the most rows ({busiest}, {events[busiest]} rows), in file order.
""")
    spec = _read(shared / "alibaba-gpu-v2020" / "pai_machine_spec.csv")
    taken: Counter[tuple[str, ...]] = Counter()
    keep_spec = []
    for r in spec:
        key = tuple(r[1:])
        if taken[key] < 2:
            taken[key] += 1
            keep_spec.append(r)
    folder = out / "alibaba_gpu_v2020_small"
    _write(folder / "pai_machine_spec.csv", keep_spec)
    _source(folder, f"""
Cut from ../shared/data/alibaba-gpu-v2020/pai_machine_spec.csv (Alibaba cluster-trace-gpu-v2020)
by tests/data/make_fixtures.py: the first two machines (file order) of each of the
{len(taken)} machine shapes (gpu_type, cap_cpu, cap_mem, cap_gpu), {len(keep_spec)} rows.
""")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared data folder")
    ap.add_argument("--out", type=Path, default=HERE, help="where to write the fixtures")
    args = ap.parse_args()
    tianchi(args.shared, args.out)
    openb(args.shared, args.out)
    caprara_toth(args.shared, args.out)
    alibaba(args.shared, args.out)


if __name__ == "__main__":
    main()
