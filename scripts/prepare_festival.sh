#!/usr/bin/env bash
# Fetch festival and its voices as Debian packages for a GPU machine without package access (scripts/gpu_env.sh
# unpacks them with dpkg -x, as it does espeak-ng). Usage, from the project root:
#   scripts/prepare_festival.sh .gpu-festival [train|train-catalan|heldout]
# train: festival's training voices that fit the 64 MiB a run may carry once the shipped side channel's weights are
# left out of it (scripts/device_slim.sh), beside Pico and MBROLA (scripts/prepare_voices.sh): the English kdl
# (diphones), Finnish mv and Italian pc (diphone voices, also spoken through kdl's English front end);
# scenarios/voices.py lists all of them; train-catalan: those and Catalan ona (an HTS voice reading English, 6.1 MB,
# in stages 1-2 and n1-n3); heldout: kdl alone, for `heldout-festival-kdl`.
# ARCTIC-based voices and flite are never fetched: they never enter training. The folder is ignored by git.
set -euo pipefail
dest=${1:?destination folder}; set=${2:-train}
case $set in
  train) voices="festvox-kdlpc16k festvox-suopuhe-common festvox-suopuhe-mv festlex-ifd festvox-itapc16k" ;;
  train-catalan) voices="festvox-kdlpc16k festival-ca festvox-ca-ona-hts festvox-suopuhe-common festvox-suopuhe-mv
         festlex-ifd festvox-itapc16k" ;;
  heldout) voices="festvox-kdlpc16k" ;;
  *) echo "unknown voice set $set (train|train-catalan|heldout)" >&2; exit 2 ;;
esac
mkdir -p "$dest" && cd "$dest"
apt-get update -qq >/dev/null 2>&1 || true
# shellcheck disable=SC2086
apt-get download festival libestools2.5 festlex-cmu festlex-poslex libtinfo6 libgomp1 $voices 2>/dev/null
# festival links ALSA and PulseAudio for playback, which it never does when writing files: stand-ins that
# define the symbols (and symbol versions) it binds at load time spare the whole audio stack.
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
dpkg -x libestools2.5_*.deb "$tmp"
syms=$(readelf --dyn-syms -W "$tmp"/usr/lib/x86_64-linux-gnu/libestbase.so.2.5 | awk '$7=="UND"{print $8}')
stub() {  # stub LIBRARY PREFIX: every imported symbol PREFIX*@VERSION as a function returning -1
  local lib=$1 prefix=$2 list
  list=$(grep "^$prefix" <<<"$syms")
  sed 's/@.*//; s/.*/int &(void) { return -1; }/' <<<"$list" > "$tmp/stub.c"
  { for v in $(sed 's/.*@//' <<<"$list" | sort -u); do echo "$v { global: $(grep "@$v\$" <<<"$list" | sed 's/@.*/;/' | tr '\n' ' ') };"; done; } > "$tmp/stub.map"
  gcc -shared -fPIC -Wl,--version-script="$tmp/stub.map" -Wl,-soname,"$lib" -o "$lib" "$tmp/stub.c"
}
stub libasound.so.2 snd_
stub libpulse-simple.so.0 pa_
du -sh .
