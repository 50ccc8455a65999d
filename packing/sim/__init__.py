"""Simulation: the one engine, the policy contract, the simulator and the executors that run it.

Lives here: the stepwise engine (:mod:`~packing.sim.engine`), what a policy sees and returns
(:mod:`~packing.sim.policy`), the Cerebro-style simulator (:mod:`~packing.sim.simulator`), runs as
serialisable tasks with serial, process and Ray executors (:mod:`~packing.sim.evaluation`) and the
connection to an existing Ray cluster (:mod:`~packing.sim.ray_cluster`).

May import: packing.errors, packing.model, packing.feasibility.
"""
