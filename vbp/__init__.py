"""vbp's application layer: the command line and the orchestration that combines the libraries.

Layers (imports only point down)::

    vbp            CLI, compare / sweep orchestration          (imports all below)
    policies       heuristics, swarm, learned agents           (imports packing)
    solvers        CP-SAT, column generation, PuLP, auto       (imports packing)
    packing        model, files, loaders, feasibility, checker, metrics, engine, policy contract

``policies`` and ``solvers`` never import each other; ``packing`` imports neither.
"""

from vbp.consolidate import consolidate
from vbp.plan import plan

__all__ = ["consolidate", "plan"]
