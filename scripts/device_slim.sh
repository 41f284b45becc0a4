#!/usr/bin/env bash
# Leave tracked files out of what a device call copies (it copies the working tree's tracked and unignored
# files: 64 MiB in all), for calls that carry much else (the retraining: festival, the augmentation, a stage's
# checkpoint). `on PATH...` untracks the paths in the index only and ignores them locally (.git/info/exclude);
# the files stay on disk. `off` restores every path. While on, a pre-commit hook refuses to commit (a commit
# would delete them from the repository). `size` prints what a call would copy, with the given carry paths.
#   scripts/device_slim.sh on src/ticktock/assets/ticktock-tiny-side-channel/model.safetensors
#   scripts/device_slim.sh size .gpu-espeak .whl .gpu-festival .gpu-augment
#   scripts/device_slim.sh off
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
git_dir=$(git rev-parse --git-dir); list=$git_dir/ticktock-slim; hook=$git_dir/hooks/pre-commit
case ${1:?on PATH...|off|size [CARRY...]} in
  on) shift
      for p in "$@"; do
        git ls-files --error-unmatch -- "$p" >/dev/null  # only tracked paths
        git rm -q --cached -- "$p"; echo "/$p" >> "$git_dir/info/exclude"; echo "$p" >> "$list"
      done
      mkdir -p "$git_dir/hooks"
      printf '#!/bin/sh\nif [ -s "%s" ]; then echo "device_slim is on: run scripts/device_slim.sh off first" >&2; exit 1; fi\n' \
        "$list" > "$hook" && chmod +x "$hook" ;;
  off) [ -f "$list" ] || exit 0
       while read -r p; do
         git reset -q -- "$p"; grep -vxF "/$p" "$git_dir/info/exclude" > "$git_dir/exclude.tmp" || true
         mv "$git_dir/exclude.tmp" "$git_dir/info/exclude"
       done < "$list"
       rm -f "$list" ;;
  size) shift
        { git ls-files -z --cached --others --exclude-standard; for c in "$@"; do find "$c" -type f -print0; done; } |
          du -cb --files0-from=- | tail -1 |
          awk '{m = $1 / 1048576; printf "%.1f MiB of 64%s\n", m, (m > 63.5 ? " (a call was refused at 63.6: slim more)" : "")}' ;;
  *) echo "unknown step $1 (on|off|size)" >&2; exit 2 ;;
esac
