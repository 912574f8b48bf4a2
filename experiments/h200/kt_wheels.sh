#!/bin/sh
# experiments/h200/kt_wheels.sh -- download into experiments/h200/kt_wheels/
# (git-ignored) the wheels that kt_compare.py needs on the GPU machine and
# that its image lacks: Kernel Tuner 1.5.0 and its requirements (the
# versions of experiments/kt_compare/requirements-lock.txt) for CPython
# 3.12 on x86-64 Linux. The image already holds numpy, scipy, pandas,
# scikit-learn, matplotlib, packaging, attrs, wrapt, typing-extensions and
# cuda-bindings (Kernel Tuner's "nvcuda" backend imports cuda.bindings).
# Run from anywhere with network access; about 16 MB. On the GPU machine:
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
#     --upgrade --target /tmp/site experiments/h200/kt_wheels/*.whl
#   export PYTHONPATH=/tmp/site
set -eu
cd "$(dirname "$0")"
mkdir -p kt_wheels
for p in kernel_tuner==1.5.0 jsonschema==4.26.0 jsonschema-specifications==2025.9.1 \
         referencing==0.37.0 rpds-py==2026.9.1 python-constraint2==2.9.0 xmltodict==1.0.4 \
         pymoo==0.6.2 autograd==1.9.1 cma==4.5.0 alive-progress==3.3.0 about-time==4.2.1 \
         graphemeu==0.7.2 Deprecated==1.3.1 moocore==0.3.2 cffi==2.1.1 pycparser==3.12 \
         platformdirs==4.14.8; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 -d kt_wheels "$p"
done
ls kt_wheels
