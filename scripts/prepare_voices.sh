#!/usr/bin/env bash
# Fetch SVOX Pico (English) and MBROLA with some of its English voices for a GPU machine without package access
# (scripts/gpu_env.sh unpacks the folder). Both are in Debian's contrib and non-free components; if they are
# missing, this adds them to apt's sources, from the archive this machine already uses for `main`.
# Usage, from the project root:
#   scripts/prepare_voices.sh .gpu-voices [MBROLA_VOICE ...]     (default: us2; of us1 us2 us3 en1)
# Sizes (xz): Pico's English ~1.6 MB, each MBROLA voice 5-6 MB (the kit's 64 MiB budget: scripts/device_slim.sh size).
# The folder is ignored by git.
set -euo pipefail
dest=${1:?destination folder}; shift
voices=${*:-us2}
if ! apt-cache policy libttspico-utils 2>/dev/null | grep 'Candidate: [0-9]' >/dev/null; then  # no -q: pipefail
  release=$(. /etc/os-release && echo "$VERSION_CODENAME")
  archive=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v r="$release" '
    /^URIs:/ {u = $2} /^Suites:/ {for (i = 2; i <= NF; i++) if ($i == r) {print u; exit}}')
  [ -n "$archive" ] || archive=$(awk -v r="$release" '$1 == "deb" && $3 == r {print $2; exit}' /etc/apt/sources.list)
  [ -n "$archive" ] || { echo "no apt source for Debian $release's main archive to add contrib non-free to" >&2; exit 1; }
  printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: contrib non-free\nSigned-By: %s\n' "$archive" "$release" \
    /usr/share/keyrings/debian-archive-keyring.gpg > /etc/apt/sources.list.d/ticktock-voices.sources
  apt-get update -qq >/dev/null
fi
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -qq libttspico0 libttspico-data libttspico-utils libpopt0 mbrola \
   $(for v in $voices; do echo "mbrola-$v"; done) 2>/dev/null)
mkdir -p "$tmp/root" && for f in "$tmp"/*.deb; do dpkg -x "$f" "$tmp/root"; done
rm -f "$tmp"/root/usr/share/pico/lang/{de,es,fr,it}-*  # English only
mkdir -p "$dest" && rm -f "$dest"/voices.tar.*
tar -C "$tmp/root" -cJf "$dest/voices.tar.xz" usr/bin/pico2wave usr/bin/mbrola usr/share/pico/lang \
  $(cd "$tmp/root" && ls -d usr/lib/x86_64-linux-gnu/libttspico.so.0* lib/x86_64-linux-gnu/libpopt.so.0* \
      usr/lib/x86_64-linux-gnu/libpopt.so.0* 2>/dev/null) \
  $(for v in $voices; do echo "usr/share/mbrola/$v"; done)
ls -la "$dest"
