#!/usr/bin/env bash
# Set up (or reuse) .venv from the project's own files, then lint and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
ruff check packing policies solvers vbp tests benchmarks examples
python -m pytest -q -n 2 "$@"
