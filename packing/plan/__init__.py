"""Capacity planning: demand and host offers as model transforms, and what a plan says.

Lives here: demand, host offers, headroom, reserve, growth and usage
(:mod:`~packing.plan.model`), a plan's result per scenario and per host type
(:mod:`~packing.plan.result`) and a plan written as Kubernetes objects
(:mod:`~packing.plan.k8s_out`). Solving a plan is :mod:`solvers.plan`.

May import: packing.errors, packing.model, packing.io, packing.feasibility.
"""
