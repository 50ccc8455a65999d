#!/usr/bin/env bash
# Set up (or reuse) .venv from the project's own files, then run the main job:
# compare the online policies against the proven optimum on the built-in Sigma-like instance.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
# the learned agents need torch: pinned to the CPU build (any other version pulls CUDA)
python -m pip install --quiet --disable-pip-version-check -e ".[rl]" torch==2.13.0
# compile the solvers' search code into numba's disk cache once (about 20 s the first time)
python -m solvers.exact.warmup > /dev/null || echo "solvers.exact.warmup: the search code is not cached; solves compile it first"
vbp compare "$@"
