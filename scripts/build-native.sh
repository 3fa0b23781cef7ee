#!/usr/bin/env bash
# Builds the sandbox service's native helper (native/ats-fswatch.c, the fanotify change detector)
# into dist/native/ats-fswatch. Does nothing when the binary is newer than its source. Without gcc
# it says so and leaves no binary: the service then checkpoints with a full walk (slower, correct).
set -euo pipefail
cd "$(dirname "$0")/.."
src=native/ats-fswatch.c
out=dist/native/ats-fswatch
if [[ -x "$out" && "$out" -nt "$src" && "$out" -nt "$0" ]]; then exit 0; fi
if ! command -v gcc >/dev/null; then
  echo "build-native: gcc is missing (Debian package \"gcc\"); $out not built, checkpoints walk the whole workspace" >&2
  exit 0
fi
mkdir -p "$(dirname "$out")"
# Built beside its final name: a half-written binary is never run.
gcc -O2 -Wall -Wextra -Werror -o "$out.tmp" "$src"
mv -f "$out.tmp" "$out"
