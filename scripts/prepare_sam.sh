#!/usr/bin/env bash
# Install SAM (the `sam-js` package, run by node) where `ticktock` finds it: the own held-out engine of the
# `heldout-sam` suite (src/ticktock/scenarios/sam.py). Needs node and npm (Debian: nodejs, npm). Usage:
#   scripts/prepare_sam.sh [DIR]     (default: ~/.cache/ticktock/sam; set TICKTOCK_SAM=DIR/node_modules/sam-js
#                                     for any other DIR)
set -euo pipefail
dest=${1:-${TICKTOCK_DATA:+$(dirname "$TICKTOCK_DATA")/sam}}; dest=${dest:-$HOME/.cache/ticktock/sam}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "SAM needs node and npm (apt-get install nodejs npm)" >&2; exit 1
fi
mkdir -p "$dest"
npm install --silent --no-audit --no-fund --prefix "$dest" sam-js@0.3.1 >/dev/null
echo "SAM installed in $dest/node_modules/sam-js"
