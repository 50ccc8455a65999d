"""Reports: comparison rows, run tables and plots built from runs.

Lives here: one summary row per policy against an optimum (:mod:`~packing.report.comparison`), the
run table of ``vbp sweep`` (:mod:`~packing.report.run_table`), plots
(:mod:`~packing.report.plots`, matplotlib imported only when plotting), the text reports of
``vbp info``, ``simulate``, ``gpu-frag``, ``compare``, ``plan`` and ``consolidate``
(:mod:`~packing.report.text`) and the one rule for progress on stderr
(:mod:`~packing.report.progress`).

May import: packing.errors, packing.model, packing.io, packing.feasibility, packing.sim, packing.gpu.
"""
