#!/usr/bin/env bash
# What the augmentation chain needs on a GPU machine without package access (`train base --config retrain`):
# the room bank (simulated here with pyroomacoustics, which needs scipy: neither travels) and pyworld's source
# with a pure-Python Cython to build it there (pyworld publishes no Linux wheels; gpu_env.sh builds it when the
# machine has a compiler, and `train base` stops at once, saying so, when it cannot import it), and a wheel of it
# built here for the GPU machine's Python 3.12 where this machine has one (PYTHON312, else python3.12 or a pyenv
# 3.12), which gpu_env.sh tries first. Needs the augment extra here (pip install -e '.[augment]'). Usage:
#   scripts/prepare_augment.sh .gpu-augment
set -euo pipefail
dest=${1:?destination folder}
python -c "import pyroomacoustics" 2>/dev/null || {
  echo "prepare_augment.sh: the room bank is simulated with pyroomacoustics: pip install -e '.[augment]' first" >&2; exit 1; }
mkdir -p "$dest"
TICKTOCK_ROOMS="$dest/rooms.npz" python -c "from ticktock.scenarios.rooms import make_rooms, rooms_path; make_rooms(rooms_path())"
python -m pip download -q --no-deps --no-binary=:all: --no-build-isolation -d "$dest" "pyworld==0.3.5"
python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --platform any -d "$dest" "cython>=3,<3.3" || \
  python -m pip download -q --no-deps -d "$dest" --no-binary=:none: "cython>=3,<3.3"
# pyworld's __init__ imports pkg_resources, which a Python 3.12 venv need not have: setuptools (< 81 still ships it)
python -m pip download -q --no-deps --only-binary=:all: -d "$dest" "setuptools<81"
py312=${PYTHON312:-}
for c in python3.12 "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python3.12; do  # a pyenv shim may not run
  [ -z "$py312" ] && "$c" -c "import sys" 2>/dev/null && py312=$c
done
if [ -n "$py312" ]; then
  "$py312" -m pip wheel -q --no-deps -w "$dest" "$dest"/pyworld-*.tar.gz || echo "no pyworld wheel: built there instead" >&2
fi
du -sh "$dest"
