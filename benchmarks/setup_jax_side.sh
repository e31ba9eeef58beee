#!/bin/sh
# Creates benchmarks/.jaxvenv: JAX 0.10.2 (with optax and flax) in its own virtual environment,
# for the benchmarks' side-by-side JAX runs. pyjax never imports jax; the benchmarks run JAX in
# a subprocess with this interpreter (or with $JAX_PYTHON, when set). Run by hand:
#     sh benchmarks/setup_jax_side.sh
set -e
here=$(cd "$(dirname "$0")" && pwd)
python3 -m venv "$here/.jaxvenv"
"$here/.jaxvenv/bin/pip" install -q jax==0.10.2 jaxlib==0.10.2 numpy==2.4.6 ml_dtypes==0.7.0 \
    optax==0.2.8 flax==0.12.8
echo "JAX side ready: $here/.jaxvenv/bin/python"
