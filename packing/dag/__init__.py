"""DAG batch jobs (Alibaba v2018 ``batch_task``): model, loader, generator, partition and engine.

The stepwise DAG engine that runs stages' tasks in carved containers (:mod:`packing.dag.engine`).

May import: packing.errors, packing.model, packing.feasibility, packing.loaders.
"""

from __future__ import annotations

from packing.dag.model import DAG_RESOURCES, Job, Stage, Workload, check_acyclic, make_workload

__all__ = ["DAG_RESOURCES", "Job", "Stage", "Workload", "check_acyclic", "make_workload"]
