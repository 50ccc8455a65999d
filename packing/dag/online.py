"""Online container shapes from Alibaba v2018 ``container_meta`` digests (the derived folder).

``container_cpuReq_cpuLim.csv`` (``containerID, container_cpuLim, container_cpuReq``, 100 = 1 core) and
``container_memReq.csv`` (``containerID, container_memReq``, normalised 0..100) are joined by
``containerID`` (2 containers of the trace request 0 memory: skipped); memory is converted to GB
with :data:`packing.dag.loader.MEM_GB_PER_UNIT`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from packing.dag.loader import MEM_GB_PER_UNIT
from packing.errors import InputError, Problem, input_error
from packing.loaders.tables import CsvReader

CPU_FILE, MEM_FILE = "container_cpuReq_cpuLim.csv", "container_memReq.csv"


def load_online_shapes(folder: str | Path) -> np.ndarray:
    """Every online container's request ``(cores, GB)``, shape ``(N, 2)`` (rows in file order).

    Raises:
        InputError: a missing file, a malformed row, or containers without both requests.
    """
    d = Path(folder)
    if not (d / CPU_FILE).is_file() or not (d / MEM_FILE).is_file():
        raise input_error(str(d), "", f"expected {CPU_FILE} and {MEM_FILE} in the folder")
    rc = CsvReader(d / CPU_FILE, ("containerID", "container_cpuLim", "container_cpuReq"), header=True)
    cpu: dict[str, float] = {}
    for line, row in rc.rows():
        v = rc.number(line, "container_cpuReq", row["container_cpuReq"])
        if v is not None and v <= 0:
            rc.bad(line, "container_cpuReq", "must be > 0")
        elif v is not None:
            cpu[row["containerID"].strip()] = v / 100.0
    rc.raise_if_bad()
    rm = CsvReader(d / MEM_FILE, ("containerID", "container_memReq"), header=True)
    out: list[tuple[float, float]] = []
    for line, row in rm.rows():
        v = rm.number(line, "container_memReq", row["container_memReq"])
        if v is not None and v < 0:
            rm.bad(line, "container_memReq", "must be >= 0")
        elif v is not None and v > 0 and row["containerID"].strip() in cpu:
            out.append((cpu[row["containerID"].strip()], v * MEM_GB_PER_UNIT))
    rm.raise_if_bad()
    if not out:
        raise InputError([Problem(str(d), "", "no container has both a CPU and a memory request")])
    return np.array(out, dtype=np.float64)


__all__ = ["load_online_shapes"]
