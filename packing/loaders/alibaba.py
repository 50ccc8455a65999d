"""Alibaba cluster traces: the v2018 machine table and the v2020 PAI GPU machine table.

Both give hosts only (no apps): use them as the cluster for generated or replayed workloads.

* v2018 ``machine_meta.csv`` (no header): ``machine_id, time_stamp, failure_domain_1,
  failure_domain_2, cpu_num, mem_size, status``, one row per machine event. Each distinct machine
  is one host, with the capacity of its latest row (largest ``time_stamp``; ties: the later row).
  Resources ``("cpu", "mem")``: cores, and memory normalised to 0..100 as in the trace.
* v2020 ``pai_machine_spec.csv`` (no header): ``machine, gpu_type, cap_cpu, cap_mem, cap_gpu``.
  Resources ``("cpu", "mem")`` (cores, GB); ``cap_gpu`` cards per host with
  ``gpu_resources = ("gpu_milli",)``, 1000 per card, and ``gpu_model = gpu_type``.

Identical hosts are grouped into host types that keep the machine ids as ``host_names``.
"""

from __future__ import annotations

from pathlib import Path

from packing.loaders.tables import CsvReader, fmt_num, group_hosts
from packing.model.instance import Instance
from packing.model.validation import MAX_GPUS, reported_as

V2018_COLUMNS = ("machine_id", "time_stamp", "failure_domain_1", "failure_domain_2", "cpu_num",
                 "mem_size", "status")
V2020_COLUMNS = ("machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu")


def load_machine_meta(path: str | Path, name: str | None = None) -> Instance:
    """Load the v2018 ``machine_meta.csv`` as hosts (no apps).

    Args:
        path: the CSV file.
        name: instance name (default ``"alibaba-v2018-machines"``).

    Raises:
        InputError: a malformed row (naming line and column).
    """
    rd = CsvReader(path, V2018_COLUMNS)
    latest: dict[str, tuple[float, tuple[float, float]]] = {}
    for line, row in rd.rows():
        m = rd.name(line, "machine_id", row["machine_id"])
        ts = rd.number(line, "time_stamp", row["time_stamp"])
        cpu = rd.number(line, "cpu_num", row["cpu_num"])
        mem = rd.number(line, "mem_size", row["mem_size"])
        if mem is not None and mem > 100:
            rd.bad(line, "mem_size", f"is normalised to 0..100, got {row['mem_size']!r}")
            mem = None
        if m is None or ts is None or cpu is None or mem is None:
            continue
        old = latest.get(m)
        if old is None or ts >= old[0]:
            latest[m] = (ts, (cpu, mem))
    rd.require_rows("one line per machine event: " + ", ".join(V2018_COLUMNS))
    rd.raise_if_bad()
    hosts = [(m, cap, 0, None) for m, (_, cap) in latest.items()]
    types = group_hosts(hosts, lambda cap, g, mo: f"{fmt_num(cap[0])}c-mem{fmt_num(cap[1])}")
    with reported_as(str(path)):
        return Instance(name or "alibaba-v2018-machines", ("cpu", "mem"), types, (),
                        meta={"source": "alibaba-v2018", "path": Path(path).name})


def load_pai_machine_spec(path: str | Path, name: str | None = None) -> Instance:
    """Load the v2020 ``pai_machine_spec.csv`` as GPU hosts (no apps).

    Args:
        path: the CSV file.
        name: instance name (default ``"alibaba-gpu-v2020-machines"``).

    Raises:
        InputError: a malformed row (naming line and column).
    """
    rd = CsvReader(path, V2020_COLUMNS)
    hosts: list[tuple[str, tuple[float, ...], int, str | None]] = []
    seen: set[str] = set()
    for line, row in rd.rows():
        m = rd.name(line, "machine", row["machine"])
        gtype = row["gpu_type"].strip() or None
        cpu = rd.number(line, "cap_cpu", row["cap_cpu"])
        mem = rd.number(line, "cap_mem", row["cap_mem"])
        gpus = rd.integer(line, "cap_gpu", row["cap_gpu"])
        if gpus is not None and gpus > MAX_GPUS:
            rd.bad(line, "cap_gpu", f"at most {MAX_GPUS} GPU cards per machine are supported, "
                   f"got {gpus}")
            gpus = None
        if m is not None and m in seen:
            rd.bad(line, "machine", f"duplicate machine {m!r}")
            continue
        if m is None or cpu is None or mem is None or gpus is None:
            continue
        seen.add(m)
        hosts.append((m, (cpu, mem), gpus, gtype))
    rd.require_rows("one line per machine: " + ", ".join(V2020_COLUMNS))
    rd.raise_if_bad()

    def type_name(cap: tuple[float, ...], gpus: int, model: str | None) -> str:
        base = f"{fmt_num(cap[0])}c-{fmt_num(cap[1])}g"
        return f"{model or 'gpu'}x{gpus}-{base}" if gpus else f"cpu-{base}"

    types = group_hosts(hosts, type_name, gpu_capacity=(1000.0,))
    with reported_as(str(path)):
        return Instance(name or "alibaba-gpu-v2020-machines", ("cpu", "mem"), types, (),
                        gpu_resources=("gpu_milli",),
                        meta={"source": "alibaba-gpu-v2020", "path": Path(path).name})
