"""Feasibility: the one piece of code that decides whether a placement is allowed, and what follows.

Lives here: the predicates and the cluster state (:mod:`~packing.feasibility.predicates`), their
compiled form over all hosts (:mod:`~packing.feasibility.kernels`), the independent checker every
placement goes through (:mod:`~packing.feasibility.checker`), cheap lower bounds
(:mod:`~packing.feasibility.bounds`), explanations of infeasibility
(:mod:`~packing.feasibility.explain`), the one metrics module (:mod:`~packing.feasibility.metrics`) and the
rules of changing a running placement (:mod:`~packing.feasibility.transition`: pinned containers,
closed hosts, a move budget).

May import: packing.errors, packing.model.
"""
