"""Bounds that take a model of their own: the rule-aware LP and the GPU allocation bounds.

Lives here: the host-kinds LP with its certificate (:mod:`~solvers.bounds.rule_bounds`), the
configuration LP on GPU allocation (:mod:`~solvers.bounds.gpu_config`) and the FGD protocol's
offline bounds (:mod:`~solvers.bounds.gpu_bound`). Cheap bounds live in
:mod:`packing.feasibility.bounds`.

May import: packing, solvers.base, solvers.result, solvers.exact.
"""
