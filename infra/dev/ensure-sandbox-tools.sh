#!/usr/bin/env bash
# Makes sure the host tools the sandbox and its escape suite use are installed, installing the
# Debian packages that are missing:
#   e2fsprogs  mkfs.ext4, for a filesystem of its own per workspace (the service falls back to a
#              watched folder without it, and says so);
#   strace     escape test 25 shows tracing is refused inside the sandbox;
#   gcc        escape test 35 builds a harmless LD_PRELOAD library, as an attacker would;
#   curl       the egress tests' client inside the sandbox (as an agent's pip or curl would be);
#   openssl    they make a throwaway certificate for the local HTTPS "internet";
#   python3    its urllib makes HTTPS requests through the proxy as pip's stack does (/usr/bin:
#              the sandbox sees only /usr, not a pyenv or a venv elsewhere).
set -euo pipefail

missing=()
command -v mkfs.ext4 >/dev/null 2>&1 || missing+=(e2fsprogs)
command -v strace >/dev/null 2>&1 || missing+=(strace)
command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
[ -x /usr/bin/python3 ] || missing+=(python3)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get install -y -q "${missing[@]}" >&2 || { $SUDO apt-get update -q >&2 && $SUDO apt-get install -y -q "${missing[@]}" >&2; }
fi
# Loop devices for the workspace filesystems: the kernel makes them on demand through loop-control.
[ -e /dev/loop-control ] || modprobe loop 2>/dev/null || echo "no /dev/loop-control: workspaces will be watched folders" >&2
mkfs.ext4 -V 2>&1 | sed -n 1p >&2
