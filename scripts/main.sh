#!/usr/bin/env bash
# Set up (or reuse) .venv from the project's own files, then run the main job:
# compare the online policies against the proven optimum on the built-in Sigma-like instance.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install --quiet --disable-pip-version-check --upgrade pip
python -m pip install --quiet --disable-pip-version-check -e .
vbp compare "$@"
