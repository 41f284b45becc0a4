#!/usr/bin/env bash
# Wheels for a GPU machine without package access (Python 3.12, x86-64; scripts/gpu_env.sh installs them).
#   scripts/prepare_wheels.sh .whl          what every run needs: soundfile and its cffi
#   scripts/prepare_wheels.sh .whl-bench bench   what benchmarks, memory runs and the GPU tests add: jiwer (WER),
#                                                websockets (the server's tests)
# Two folders, so a training call, which carries the most, need not carry the benchmarks' wheels.
set -euo pipefail
dest=${1:?destination folder}; set=${2:-run}
case $set in
  run) pkgs="soundfile cffi pycparser typing_extensions" ;;
  bench) pkgs="jiwer rapidfuzz click websockets" ;;
  *) echo "unknown wheel set $set (run|bench)" >&2; exit 2 ;;
esac
# each package named, without its dependencies: the GPU machine has numpy (torch brings it), whose wheel would take
# a quarter of what a call may carry
# shellcheck disable=SC2086
python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 --platform any -d "$dest" $pkgs
du -sh "$dest"
