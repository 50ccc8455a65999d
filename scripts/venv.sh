#!/usr/bin/env bash
# Sourced by main.sh and test.sh: create (or reuse) .venv in the repository root and activate it.
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
. .venv/bin/activate
python -m pip install --quiet --disable-pip-version-check --upgrade pip
