#!/bin/sh
# Create the virtualenv for run_kt.py: Kernel Tuner 1.5.0 (pinned) from PyPI.
# Usage: sh experiments/kt_compare/setup.sh   (from anywhere; idempotent)
set -e
cd "$(dirname "$0")"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet -r requirements-lock.txt   # kernel_tuner==1.5.0 + the exact dependency versions used
.venv/bin/python -c "from importlib.metadata import version; print('kernel_tuner', version('kernel_tuner'))"
