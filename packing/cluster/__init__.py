"""The running cluster: nodes, pods and disruption budgets read from Kubernetes, and consolidating it.

Lives here: a cluster snapshot as plain data (:mod:`~packing.cluster.snapshot`: nodes, pods,
PodDisruptionBudgets, exact requests and allocatable in base units), the budgets' arithmetic
(:mod:`~packing.cluster.budgets`), the consolidation problem a snapshot and host offers give
(:mod:`~packing.cluster.problem`: apps, pinned pods, the nodes' free capacity, new node types, the
instance every answer is checked on), the answer (:mod:`~packing.cluster.answer`: removed nodes,
evictions, waves), the order of evictions that respects every budget (:mod:`~packing.cluster.waves`)
and the drain plan a person runs (:mod:`~packing.cluster.drain`). Reading a snapshot from files is
:mod:`packing.loaders.snapshot`; solving a consolidation is :mod:`solvers.consolidate`.

May import: packing.errors, packing.model, packing.feasibility, packing.io, packing.plan.
"""
