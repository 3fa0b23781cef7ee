#!/usr/bin/env bash
# Makes sure Debian's chromium is installed for the web console's browser tests
# (test/console/*.e2e-spec.ts drive it with playwright-core at /usr/bin/chromium): no browser is
# downloaded by npm, so the distribution's package is the one used.
set -euo pipefail

if ! [ -x /usr/bin/chromium ]; then
  echo "installing chromium" >&2
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core >&2 || { $SUDO apt-get update -q >&2 && $SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core >&2; }
fi
/usr/bin/chromium --version >&2
