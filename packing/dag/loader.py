"""Load Alibaba v2018 ``batch_task`` records with DAG-encoding task names into a :class:`Workload`.

A data folder holds one or more ``batch_task*.csv`` files with a header and the upstream columns
``task_name, instance_num, job_name, task_type, status, start_time, end_time, plan_cpu, plan_mem``
(extra columns are allowed; ``task_type`` may be empty). See the staged folder's SOURCE.txt.

* ``task_name`` encodes the DAG: letters, the stage id, then ``_<id>`` per parent (``J3_1_2`` = stage
  3 after stages 1 and 2). A ``_Stg<k>`` suffix and a trailing ``_`` (names truncated upstream) are
  ignored. The letters carry no dependency meaning.
* Units: ``plan_cpu`` 100 = 1 core -> cores; ``plan_mem`` is normalised (100 = one 96-core host's
  memory) -> GB with :data:`MEM_GB_PER_UNIT` (5.12: 100 = 512 GB, an inference from the dominant
  4c8g / 8c16g container shapes, not documented by Alibaba).
* Duration of one task: ``"span"`` (default) = ``end_time - start_time`` of the stage (upstream
  columns), at least :data:`MIN_DURATION`; ``"instance"`` = the per-instance mean from the ERDOS extra
  column (``erdos_duration`` / ``erdos_actual_duration``) when it is a number > 0, else the span.
* Whole jobs are kept or skipped: a job with a task that is not ``Terminated`` (no reliable span, and
  possibly empty plan fields) is skipped and counted in ``meta["skipped"]``; a job present in two files
  is kept from the first file (``meta["duplicates"]``).
* Malformed data is an :class:`~packing.errors.InputError` naming file, line, column and reason: a
  bad name, a non-number, an unknown parent id, a duplicate stage id, a cycle (named by job).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Literal

from packing.dag.model import Job, Stage, Workload, check_acyclic, make_workload
from packing.errors import InputError, Problem, input_error
from packing.loaders.tables import CsvReader

COLUMNS = ("task_name", "instance_num", "job_name", "task_type", "status", "start_time", "end_time",
           "plan_cpu", "plan_mem")
"""The upstream ``batch_task.csv`` columns every file must have (in its header)."""

EXTRA_DURATION_COLUMNS = ("erdos_duration", "erdos_actual_duration")
"""Per-instance mean duration columns (ERDOS extras) used by ``duration="instance"``."""

MEM_GB_PER_UNIT = 5.12
"""GB per normalised memory unit (100 units = 512 GB; see the module docstring)."""

MIN_DURATION = 1.0
"""Shortest task duration in seconds (the trace has 1-second resolution; spans of 0 become 1)."""

_NAME = re.compile(r"^([A-Za-z]+)(\d+)((?:_\d+)*)(?:_Stg\d+)?_?$")

Duration = Literal["span", "instance"]


def parse_task_name(name: str) -> tuple[int, tuple[int, ...]] | None:
    """``(stage id, parent ids)`` of a DAG task name, or None when it does not encode a DAG.

    >>> parse_task_name("J3_1_2")
    (3, (1, 2))
    >>> parse_task_name("M9_Stg4")
    (9, ())
    """
    m = _NAME.match(name.strip())
    if m is None:
        return None
    parents = tuple(int(x) for x in m.group(3).split("_") if x)
    return int(m.group(2)), parents


def _files(folder: Path) -> list[Path]:
    if folder.is_file():
        return [folder]
    if not folder.is_dir():
        raise input_error(str(folder), "", "no such file or folder")
    files = sorted(folder.glob("batch_task*.csv"))
    if not files:
        raise input_error(str(folder), "", "no batch_task*.csv file in the folder (expected files laid "
                          "out like alibaba-v2018-batch-dag: a header with " + ", ".join(COLUMNS) + ")")
    return files


def load_dag_csv(path: str | Path, *, duration: Duration = "span", skip_jobs: frozenset[str] = frozenset(),
                 ) -> tuple[list[Job], dict[str, int]]:
    """Read one file: its complete, finished jobs, and counts of what was skipped.

    Args:
        path: a ``batch_task*.csv`` file with a header.
        duration: ``"span"`` or ``"instance"`` (see the module docstring).
        skip_jobs: job names to ignore (already read from another file).

    Returns:
        ``(jobs in first-appearance order, {"unfinished": n, "duplicates": n, "rows": n})``.

    Raises:
        InputError: malformed rows (up to 20 problems, each with line and column), or a cycle.
    """
    rd = CsvReader(path, COLUMNS, header=True)
    # per job: (line, stage id, parent ids, name, n_tasks, cpu, mem, duration, start_time)
    rows: dict[str, list[tuple[int, int, tuple[int, ...], str, int, float, float, float, float]]] = {}
    unfinished: set[str] = set()
    dup: set[str] = set()
    for line, row in rd.rows():
        job = row["job_name"].strip()
        if not job:
            rd.bad(line, "job_name", "is empty")
            continue
        if job in skip_jobs:
            dup.add(job)
            continue
        status = row["status"].strip()
        if status not in ("Terminated", "Running", "Failed", "Waiting", "Ready", "Cancelled", "Interrupted"):
            rd.bad(line, "status", f"unknown status {status!r}")
            continue
        if status != "Terminated":
            unfinished.add(job)
            continue
        parsed = parse_task_name(row["task_name"])
        if parsed is None:
            rd.bad(line, "task_name", f"{row['task_name']!r} does not encode a DAG stage (expected letters, "
                   "the stage id, then _<parent id> per parent, e.g. J3_1_2)")
            continue
        n = rd.integer(line, "instance_num", row["instance_num"])
        start = rd.number(line, "start_time", row["start_time"])
        end = rd.number(line, "end_time", row["end_time"])
        cpu = rd.number(line, "plan_cpu", row["plan_cpu"])
        mem = rd.number(line, "plan_mem", row["plan_mem"])
        if n is not None and n < 1:
            rd.bad(line, "instance_num", f"must be >= 1, got {row['instance_num']!r}")
            n = None
        for col, v in (("plan_cpu", cpu), ("plan_mem", mem)):
            if v is not None and v <= 0:
                rd.bad(line, col, f"must be > 0, got {row[col]!r}")
        if start is not None and end is not None and end < start:
            rd.bad(line, "end_time", f"{row['end_time']!r} is before start_time {row['start_time']!r}")
            continue
        if n is None or start is None or end is None or cpu is None or mem is None or cpu <= 0 or mem <= 0:
            continue
        span = max(end - start, MIN_DURATION)
        dur = span
        if duration == "instance":
            for c in EXTRA_DURATION_COLUMNS:
                try:
                    x = float(row.get(c, "") or "nan")
                except ValueError:
                    x = math.nan
                if math.isfinite(x) and 0 < x <= span + 1:
                    dur = max(x, MIN_DURATION)
                    break
        sid, parents = parsed
        rows.setdefault(job, []).append((line, sid, parents, row["task_name"].strip(), n, cpu / 100.0,
                                         mem * MEM_GB_PER_UNIT, dur, start))
    rd.require_rows("one line per task: " + ", ".join(COLUMNS))
    rd.raise_if_bad()
    jobs: list[Job] = []
    src = str(path)
    for job, recs in rows.items():
        if job in unfinished:
            continue
        ids: dict[int, int] = {}
        for k, r in enumerate(recs):
            if r[1] in ids:
                raise input_error(src, f"line {r[0]}, column task_name",
                                  f"job {job} has stage id {r[1]} twice "
                                  f"(also line {recs[ids[r[1]]][0]})")
            ids[r[1]] = k
        stages = []
        for r in recs:
            for p in r[2]:
                if p not in ids:
                    raise input_error(src, f"line {r[0]}, column task_name", f"{r[3]!r}: parent {p} is not a "
                                      f"stage of job {job} (its stages: {sorted(ids)})")
            stages.append(Stage(r[3], r[4], (r[5], r[6]), float(r[7]), tuple(ids[p] for p in r[2])))
        jb = Job(job, min(r[8] for r in recs), tuple(stages))
        check_acyclic(jb, src)
        jobs.append(jb)
    counts = {"unfinished": len(unfinished), "duplicates": len(dup), "rows": rd.n_rows}
    return jobs, counts


def load_dag_folder(path: str | Path, *, duration: Duration = "span", shift: bool = True) -> Workload:
    """Load every ``batch_task*.csv`` of a folder (or one file) as one workload.

    Args:
        path: a folder laid out like ``alibaba-v2018-batch-dag`` or a single CSV file.
        duration: ``"span"`` (default) or ``"instance"`` (see the module docstring).
        shift: make arrivals relative to the first job (the first job arrives at 0).

    Returns:
        The workload; ``meta`` has ``files``, ``skipped`` (``{"unfinished": n, "duplicates": n}``),
        ``rows`` and the units.

    Raises:
        InputError: a missing folder, no CSV, or malformed rows (file, line, column, reason).
    """
    if duration not in ("span", "instance"):
        raise input_error("duration", "", f"must be 'span' or 'instance', got {duration!r}")
    p = Path(path)
    seen: set[str] = set()
    jobs: list[Job] = []
    skipped = {"unfinished": 0, "duplicates": 0}
    n_rows = 0
    for f in _files(p):
        got, counts = load_dag_csv(f, duration=duration, skip_jobs=frozenset(seen))
        jobs += got
        seen.update(j.name for j in got)
        skipped["unfinished"] += counts["unfinished"]
        skipped["duplicates"] += counts["duplicates"]
        n_rows += counts["rows"]
    if not jobs:
        raise InputError([Problem(str(p), "", "no complete, finished job in the data")])
    w = make_workload(p.name, jobs, str(p), {
        "files": [f.name for f in _files(p)], "skipped": skipped, "rows": n_rows, "duration": duration,
        "units": {"cpu": "cores (plan_cpu / 100)", "mem": f"GB (plan_mem x {MEM_GB_PER_UNIT})"}})
    return w.shifted() if shift else w


def is_dag_folder(path: str) -> bool:
    """Whether ``path`` is a folder holding ``batch_task*.csv`` files (a DAG data folder)."""
    p = Path(path)
    return p.is_dir() and any(p.glob("batch_task*.csv"))


__all__ = ["COLUMNS", "MEM_GB_PER_UNIT", "MIN_DURATION", "load_dag_csv", "is_dag_folder",
           "load_dag_folder", "parse_task_name"]
