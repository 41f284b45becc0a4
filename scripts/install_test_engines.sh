#!/usr/bin/env bash
# The speech engines whose tests skip without them (tests/test_engines.py, tests/test_connected_speech.py):
# festival with its kdl and Italian pc diphone voices and flite, from Debian's main component; Pico and MBROLA's us2
# voice only where apt already offers them (contrib and non-free: this script never changes apt's sources;
# scripts/prepare_voices.sh does, for a GPU kit). Installs nothing that is already there. Called by `make test`.
set -euo pipefail
sudo=$([ "$(id -u)" = 0 ] || echo sudo)
want="festival festvox-kdlpc16k festvox-itapc16k flite"
missing() { for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done; }
offered() { for p in "$@"; do apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [0-9]' && echo "$p"; done; }
needed() { missing $want $(offered libttspico-utils mbrola-us2); }  # mbrola comes with its voice
# where apt offers no Pico or MBROLA, their absence alone does not send every run to apt-get update
[ -z "$(needed)" ] && exit 0
$sudo apt-get update -qq
get=$(needed)  # asked again: the update may offer what it did not before
[ -z "$get" ] || $sudo apt-get install -y -qq $get >/dev/null
