"""Alibaba GPU trace v2023 ("openb", the FGD paper's cluster): a node list and a pod list.

Files (CSV with a header), in a folder or its ``csv/`` subfolder::

    openb_node_list_all_node.csv   sn, cpu_milli, memory_mib, gpu, model      (nodes="all")
    openb_node_list_gpu_node.csv   the same, GPU nodes only                    (nodes="gpu")
    openb_pod_list_<name>.csv      name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec,
                                   qos, pod_phase, creation_time, deletion_time, scheduled_time

The ``multigpu*`` pod lists have only ``name, cpu_milli, memory_mib, num_gpu, gpu_milli``: without
times, pod ``i`` arrives at time ``i`` and never leaves; without ``gpu_spec`` any card model fits.

Model:

* resources ``("cpu_milli", "memory_mib")``; GPU cards with ``gpu_resources = ("gpu_milli",)``,
  1000 per card.
* host types: nodes grouped by (cpu, memory, cards, model), ``host_names`` = ``sn``,
  ``gpu_model`` = ``model``.
* apps: pods grouped by identical (cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec), in order
  of first appearance. ``num_gpu >= 1`` with ``gpu_milli == 1000``: whole cards
  (``gpu_whole=True``, ``gpu_cards = num_gpu``); ``gpu_milli < 1000``: a share of each of its
  ``num_gpu`` cards (in the trace only ``num_gpu == 1``); ``num_gpu == 0``: no GPU.
  ``gpu_spec`` ``"A|B"`` gives ``gpu_models = ("A", "B")``.
* requests: one per pod (count 1), ``time = creation_time``, ``end = deletion_time`` (``None``
  when empty), sorted by creation time (stable, so ties keep the file order).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from packing.errors import InputError, Problem
from packing.loaders.tables import CsvReader, fmt_num, group_hosts
from packing.model.instance import App, HostType, Instance, Request
from packing.model.validation import MAX_GPUS, reported_as

RESOURCES = ("cpu_milli", "memory_mib")
GPU_RESOURCES = ("gpu_milli",)
CARD = 1000.0
"""gpu_milli of one whole card."""

NODE_FILES = {"all": "openb_node_list_all_node.csv", "gpu": "openb_node_list_gpu_node.csv"}
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
               "pod_phase", "creation_time", "deletion_time", "scheduled_time")
POD_OPTIONAL = ("gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time",
                "scheduled_time")


def find_folder(path: str | Path) -> Path | None:
    """The folder holding the openb node lists (``path`` or ``path/csv``), or ``None``."""
    p = Path(path)
    for d in (p, p / "csv"):
        if d.is_dir() and any(d.glob("openb_node_list_*.csv")):
            return d
    return None


def pod_list_file(data: str | Path, pods: str, option: str = "--pods") -> tuple[Path, str]:
    """The pod list a name or file stands for, and its short name.

    Args:
        data: the openb folder (or its parent, see :func:`find_folder`).
        pods: a pod list name (``default``: ``openb_pod_list_default.csv`` in ``data``'s folder)
            or an ``openb_pod_list_<name>.csv`` file (a bare file name is looked up in the
            current folder, then in ``data``'s folder).
        option: the option or field to name in errors.

    Returns:
        ``(path of the pod list, its name)``, e.g. ``(.../openb_pod_list_default.csv, "default")``.

    Raises:
        InputError: no such file or name (listing the names available), a file not named
            ``openb_pod_list_*.csv``, or ``data`` is not an openb folder.
    """
    p = Path(pods)
    if p.suffix.lower() == ".csv":
        if not p.is_file() and p.name == pods:  # a bare file name: the one in DATA's folder
            folder = find_folder(data)
            if folder is not None and (folder / pods).is_file():
                p = folder / pods
        if not p.is_file():
            raise InputError([Problem(pods, option, "no such pod list file (in the current folder or "
                                      "in DATA's folder)")])
        if not p.name.startswith("openb_pod_list_"):
            raise InputError([Problem(pods, option, "expected a file named openb_pod_list_<name>.csv")])
        return p, p.stem.removeprefix("openb_pod_list_")
    folder = find_folder(data)
    if folder is None:
        raise InputError([Problem(str(data), "", "not an openb folder: no openb_node_list_*.csv in it or "
                                  "in its csv/ subfolder")])
    f = folder / f"openb_pod_list_{pods}.csv"
    if not f.is_file():
        have = sorted(x.stem.removeprefix("openb_pod_list_") for x in folder.glob("openb_pod_list_*.csv"))
        raise InputError([Problem(str(f), option, f"no pod list {pods!r}; available: "
                                  f"{', '.join(have) or 'none'}")])
    return f, pods


def load_openb(path: str | Path, nodes: str = "all", pods: str | None = "default",
               name: str | None = None) -> Instance:
    """Load the openb cluster and a pod list.

    Args:
        path: the data-set folder, its ``csv/`` subfolder, a node list file (hosts only, unless
            ``pods`` names a list beside it) or a pod list file (nodes from the same folder).
        nodes: ``"all"`` (1,523 nodes) or ``"gpu"`` (the 1,213 GPU nodes).
        pods: the pod list ``openb_pod_list_<pods>.csv``; ``None`` loads the nodes only.
        name: instance name (default ``"openb-<pods>"``).

    Raises:
        InputError: a file is missing or malformed.
    """
    p = Path(path)
    if nodes not in NODE_FILES:
        raise InputError([Problem(str(p), "nodes", f"expected 'all' or 'gpu', got {nodes!r}")])
    node_file: Path
    pod_file: Path | None
    if p.is_file():
        folder = p.parent
        if p.name.startswith("openb_pod_list_"):
            pod_file, node_file = p, folder / NODE_FILES[nodes]
            pods = p.stem.removeprefix("openb_pod_list_")
        else:
            node_file, pod_file = p, None
            pods = None
    else:
        found = find_folder(p)
        if found is None:
            raise InputError([Problem(str(p), "", "not an openb folder: no "
                                      "openb_node_list_*.csv in it or in its csv/ subfolder")])
        node_file = found / NODE_FILES[nodes]
        pod_file = None if pods is None else found / f"openb_pod_list_{pods}.csv"
        if pod_file is not None and not pod_file.is_file():
            have = sorted(f.stem.removeprefix("openb_pod_list_")
                          for f in found.glob("openb_pod_list_*.csv"))
            raise InputError([Problem(str(pod_file), "pods", f"no pod list {pods!r}; available: "
                                      f"{', '.join(have) or 'none'}")])
    host_types = read_nodes(node_file)
    apps: tuple[App, ...] = ()
    requests: tuple[Request, ...] = ()
    if pod_file is not None:
        apps, requests = read_pods(pod_file)
    meta = {"source": "alibaba-gpu-v2023", "nodes": node_file.name}
    if pod_file is not None:
        meta["pods"] = pod_file.name
    default = f"openb-{pods}" if pod_file is not None else node_file.stem
    with reported_as(str(p)):
        return Instance(name or default, RESOURCES, host_types, apps,
                        gpu_resources=GPU_RESOURCES, requests=requests, meta=meta)


def read_nodes(path: str | Path) -> tuple[HostType, ...]:
    """Host types from an openb node list (grouped by cpu, memory, cards and model)."""
    rd = CsvReader(path, NODE_COLUMNS, header=True, optional=("model",))
    hosts: list[tuple[str, tuple[float, ...], int, str | None]] = []
    seen: set[str] = set()
    for line, row in rd.rows():
        sn = rd.name(line, "sn", row["sn"])
        cpu = rd.number(line, "cpu_milli", row["cpu_milli"])
        mem = rd.number(line, "memory_mib", row["memory_mib"])
        gpu = rd.integer(line, "gpu", row["gpu"])
        if gpu is not None and gpu > MAX_GPUS:
            rd.bad(line, "gpu", f"at most {MAX_GPUS} GPU cards per node are supported, got {gpu}")
            gpu = None
        model = row["model"].strip() or None
        if sn is not None and sn in seen:
            rd.bad(line, "sn", f"duplicate node {sn!r}")
            continue
        if sn is None or cpu is None or mem is None or gpu is None:
            continue
        seen.add(sn)
        hosts.append((sn, (cpu, mem), gpu, model))
    rd.require_rows("one line per node: " + ", ".join(NODE_COLUMNS))
    rd.raise_if_bad()

    def type_name(cap: tuple[float, ...], gpus: int, model: str | None) -> str:
        base = f"{fmt_num(cap[0] / 1000)}c-{fmt_num(cap[1] / 1024)}g"
        return f"{model or 'gpu'}x{gpus}-{base}" if gpus else f"cpu-{base}"

    return group_hosts(hosts, type_name, gpu_capacity=(CARD,))


def read_pods(path: str | Path) -> tuple[tuple[App, ...], tuple[Request, ...]]:
    """Apps (pods grouped by shape) and the request stream of an openb pod list."""
    rd = CsvReader(path, POD_COLUMNS, header=True, optional=POD_OPTIONAL)
    keys: dict[tuple[float, float, int, float, str], int] = {}
    apps: list[App] = []
    counts: list[int] = []
    reqs: list[tuple[float, int, int, float | None]] = []  # (time, row, app, end)
    for line, row in rd.rows():
        timed = "creation_time" in rd.present
        rd.name(line, "name", row["name"])
        cpu = rd.number(line, "cpu_milli", row["cpu_milli"])
        mem = rd.number(line, "memory_mib", row["memory_mib"])
        ng = rd.integer(line, "num_gpu", row["num_gpu"])
        if ng is not None and ng > MAX_GPUS:
            rd.bad(line, "num_gpu", f"at most {MAX_GPUS} GPU cards are supported, got {ng}")
            ng = None
        gm = rd.number(line, "gpu_milli", row["gpu_milli"])
        spec = row["gpu_spec"].strip()
        if ng is not None and gm is not None:
            if ng > 0 and not 0 < gm <= CARD:
                rd.bad(line, "gpu_milli", f"must be in 1..{CARD:g} for a pod with GPUs, "
                       f"got {row['gpu_milli']!r}")
                gm = None
            elif ng == 0 and gm != 0:
                rd.bad(line, "gpu_milli", f"must be 0 for a pod without GPUs (num_gpu 0), "
                       f"got {row['gpu_milli']!r}")
                gm = None
        t: float | None = float(len(reqs))
        end: float | None = None
        if timed:
            t = rd.number(line, "creation_time", row["creation_time"], minimum=None)
            if row["deletion_time"].strip():
                end = rd.number(line, "deletion_time", row["deletion_time"], minimum=None)
                if end is not None and t is not None and end < t:
                    rd.bad(line, "deletion_time", f"{row['deletion_time']} is before "
                           f"creation_time {row['creation_time']}")
                    end = None
        if cpu is None or mem is None or ng is None or gm is None or t is None:
            continue
        key = (cpu, mem, ng, gm, spec)
        a = keys.get(key)
        if a is None:
            a = keys[key] = len(apps)
            apps.append(_app(key))
            counts.append(0)
        counts[a] += 1
        reqs.append((t, len(reqs), a, end))
    rd.require_rows("one line per pod")
    rd.raise_if_bad()
    reqs.sort(key=lambda r: (r[0], r[1]))
    out_apps = tuple(dataclasses.replace(app, count=c) for app, c in zip(apps, counts, strict=True))
    requests = tuple(Request(t, out_apps[a].name, 1, end) for t, _, a, end in reqs)
    return out_apps, requests


def _app(key: tuple[float, float, int, float, str]) -> App:
    cpu, mem, ng, gm, spec = key
    name = f"{fmt_num(cpu)}m-{fmt_num(mem)}Mi"
    models = tuple(s for s in spec.split("|") if s) if spec else ()
    if ng == 0:
        return App(name, (cpu, mem), 0)
    whole = gm == CARD
    name += f"-{ng}gpu" if whole else f"-{ng}x{fmt_num(gm)}mgpu"
    if models:
        name += "-" + "|".join(models)
    return App(name, (cpu, mem), 0, gpu_cards=ng, gpu_per_card=() if whole else (gm,),
               gpu_whole=whole, gpu_models=models)
