"""Consolidating a running cluster: which nodes to remove (and which to add), proven.

A room of its own because its model is not a plan's: the hosts are the cluster's *own* nodes,
each kept or removed at its price, pods already run somewhere (a move is a pod that leaves its
node, and there is a budget of them), some pods are pinned, cordoned nodes take no new pod, and
the answer is judged against where the pods run now. :mod:`solvers.plan` plans host *types* with
counts; a plan on a running cluster read from Kubernetes uses this room with nodes that cost
nothing (already paid).

Lives here: the CP-SAT model of a consolidation, whole or on a neighbourhood of hosts
(:mod:`~solvers.consolidate.model`), the proven lower bound (:mod:`~solvers.consolidate.bound`),
the search: a start from the running cluster, node drains, large neighbourhood search over nodes
and the front of (cost, moves) it keeps (:mod:`~solvers.consolidate.search`), and the front door
:func:`~solvers.consolidate.solve.consolidate` (:mod:`~solvers.consolidate.solve`). The problem and
the answer are :mod:`packing.cluster`.

May import: packing, solvers.base, solvers.result.
"""
