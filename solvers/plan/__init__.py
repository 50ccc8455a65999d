"""Solving capacity plans: scenarios, host-count bounds, the running cluster and N+1.

Lives here: one scenario solved (:mod:`~solvers.plan.scenario`), a safe upper bound per host type
(:mod:`~solvers.plan.type_bounds`), planning on a running cluster with a move budget
(:mod:`~solvers.plan.incremental`, :mod:`~solvers.plan.current`) and surviving the loss of a host
(:mod:`~solvers.plan.failover`). The planning model is :mod:`packing.plan`.

May import: packing, solvers.base, solvers.search, solvers.exact, solvers.consolidate, solvers.
"""
