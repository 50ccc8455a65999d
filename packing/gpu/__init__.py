"""GPU sharing: fragmentation as the FGD paper defines it, and the paper's protocol and numbers.

Lives here: node and cluster fragmentation (:mod:`~packing.gpu.fragmentation`), the FGD paper's
evaluation protocol on openb (:mod:`~packing.gpu.fgd_protocol`) and its published numbers
(:mod:`~packing.gpu.fgd_paper`).

May import: packing.errors, packing.model, packing.feasibility, packing.sim.
"""
