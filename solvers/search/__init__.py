"""Heuristic search: first fit, constructions and local searches that find packings (no proofs).

Lives here: first-fit decreasing (:mod:`~solvers.search.greedy`), shaped construction for large
instances (:mod:`~solvers.search.spread`), the tabu search and ejection chains
(:mod:`~solvers.search.tabu`, :mod:`~solvers.search.repack`), time-aware balancing
(:mod:`~solvers.search.curves`) and whether compiled code runs without compiling
(:mod:`~solvers.search.jit`).

May import: packing, solvers.base, solvers.result.
"""
