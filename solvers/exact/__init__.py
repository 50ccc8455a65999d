"""Exact methods: models that prove, and the ``auto`` method that orders them.

Lives here: the CP-SAT model (:mod:`~solvers.exact.cpsat`, its size counted without OR-Tools in
:mod:`~solvers.exact.model_size`), column generation and its pricing
(:mod:`~solvers.exact.colgen`, :mod:`~solvers.exact.pricing`), arc flow and its pattern stages
(:mod:`~solvers.exact.arcflow`, :mod:`~solvers.exact.arcflow_patterns`,
:mod:`~solvers.exact.arcflow_partition`), the PuLP/CBC model (:mod:`~solvers.exact.pulp_model`,
:mod:`~solvers.exact.cbc_run`), exact cover, presolve and integer scaling, the CP-SAT
neighbourhood searches (:mod:`~solvers.exact.lns`, :mod:`~solvers.exact.rule_lns`), ``auto``
(:mod:`~solvers.exact.auto`), the optimum a comparison measures against
(:mod:`~solvers.exact.optimum`, :mod:`~solvers.exact.max_deployed`) and the compile warm-up
(``python -m solvers.exact.warmup``).

May import: packing, solvers.base, solvers.result, solvers.search, solvers.
"""
