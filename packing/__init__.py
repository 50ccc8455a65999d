"""vbp's shared model: instances, placements, the one feasibility checker, metrics and files.

The bottom layer, in rooms by concern; each room's docstring says what lives there and which
rooms it may import (``tests/test_layers.py`` holds every import to it):

* :mod:`packing.model`: the instance, validation, node selection, topology, quantities, host specs;
* :mod:`packing.io`: documents, fields, instance and placement files, atomic writes, built-ins;
* :mod:`packing.feasibility`: predicates, the checker, compiled kernels, cheap bounds, metrics;
* :mod:`packing.sim`: the engine, the policy contract, the simulator, executors and Ray;
* :mod:`packing.env`: the Gymnasium environment and its encoders, actions and rewards;
* :mod:`packing.plan`: the capacity-planning model, plan results, Kubernetes objects out;
* :mod:`packing.cluster`: a running Kubernetes cluster, its consolidation problem and answer;
* :mod:`packing.loaders`: data sets, Kubernetes manifests and cluster snapshots behind ``load_any``;
* :mod:`packing.generators`: seeded instance generators;
* :mod:`packing.gpu`: GPU fragmentation and the FGD paper's protocol and numbers;
* :mod:`packing.dag`: DAG batch jobs (model, engine, bounds);
* :mod:`packing.report`: comparison rows, run tables, plots.

The one file at the top that every room uses is :mod:`packing.errors` (the error family). This
face re-exports the names most users need. Importing ``packing`` never imports torch.
"""

from packing.errors import InputError, Problem
from packing.feasibility.checker import Violation, check, is_feasible
from packing.io.instance_file import load_instance, save_instance
from packing.io.placement_file import load_placement, save_placement
from packing.model.instance import UNPLACED, App, HostType, Instance, Placement, Request, Rule

__all__ = [
    "UNPLACED", "App", "HostType", "InputError", "Instance", "Placement", "Problem", "Request",
    "Rule", "Violation", "check", "is_feasible", "load_instance", "load_placement",
    "save_instance", "save_placement",
]
