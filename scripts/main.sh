#!/usr/bin/env bash
# Set up (or reuse) .venv from the project's own files, then run the main job:
# compare the online policies against the proven optimum on the built-in Sigma-like instance.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
python -m pip install --quiet --disable-pip-version-check -e .
vbp compare "$@"
