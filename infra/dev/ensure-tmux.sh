#!/usr/bin/env bash
# Makes sure tmux is installed: the CLI's end-to-end tests (test/cli/ats-terminal.e2e-spec.ts) run
# `ats` in a real pseudo-terminal through it. Installs the Debian package when it is missing.
set -euo pipefail

if ! command -v tmux >/dev/null 2>&1; then
  echo "installing tmux" >&2
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get install -y -q tmux >&2 || { $SUDO apt-get update -q >&2 && $SUDO apt-get install -y -q tmux >&2; }
fi
tmux -V >&2
