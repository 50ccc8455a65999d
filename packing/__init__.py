"""vbp's shared model: instances, placements, the one feasibility checker, metrics and files.

Importing ``packing`` never imports torch.
"""

from packing.checker import Violation, check, is_feasible
from packing.errors import InputError, Problem
from packing.instance_file import load_instance, save_instance
from packing.model import UNPLACED, App, HostType, Instance, Placement, Request, Rule
from packing.placement_file import load_placement, save_placement

__all__ = [
    "UNPLACED", "App", "HostType", "InputError", "Instance", "Placement", "Problem", "Request",
    "Rule", "Violation", "check", "is_feasible", "load_instance", "load_placement",
    "save_instance", "save_placement",
]
