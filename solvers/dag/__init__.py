"""DAG jobs: carving hosts into a partition's container types, solved.

Lives here: :mod:`~solvers.dag.carving` (a proven sweep and a fixed cluster). The DAG model, engine
and bounds are :mod:`packing.dag`.

May import: packing, solvers.base, solvers.result, solvers.search, solvers.
"""
