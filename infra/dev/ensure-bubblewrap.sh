#!/usr/bin/env bash
# Makes sure bubblewrap (the default sandbox) is installed and works: installs the Debian package
# when bwrap is missing, then runs one command in a sandbox the way the service does.
set -euo pipefail

if ! command -v bwrap >/dev/null 2>&1; then
  echo "installing bubblewrap" >&2
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get install -y -q bubblewrap >&2 || { $SUDO apt-get update -q >&2 && $SUDO apt-get install -y -q bubblewrap >&2; }
fi
if ! bwrap --unshare-all --die-with-parent --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 -- /bin/true; then
  echo "bubblewrap is installed but cannot create a sandbox here (user namespaces disabled?)" >&2
  exit 1
fi
bwrap --version >&2
