"""Reports: comparison rows, run tables and plots built from runs.

Lives here: one summary row per policy against an optimum (:mod:`~packing.report.comparison`), the
run table of ``vbp sweep`` (:mod:`~packing.report.run_table`), plots
(:mod:`~packing.report.plots`, matplotlib imported only when plotting) and the text reports of
``vbp info``, ``simulate``, ``gpu-frag``, ``plan`` and ``consolidate`` (:mod:`~packing.report.text`).

May import: packing.errors, packing.model, packing.io, packing.feasibility, packing.sim, packing.gpu.
"""
