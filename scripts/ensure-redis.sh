#!/usr/bin/env bash
# The Redis tests (x402-pay/redis) start their own redis-server on a free loopback port. Runs before
# `npm test`: a no-op when redis-server is present; otherwise installs Debian's package when it can
# (root with apt-get), without starting the system service (the tests never use it), else says how
# and fails.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's redis-server for the Redis tests..."
  # policy-rc.d answering 101 keeps the package's scripts from starting the service.
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod +x "$policy"
    trap 'rm -f "$policy"' EXIT
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  exit 0
fi
echo "The Redis tests need redis-server: install it (Debian: sudo apt-get install redis-server)." >&2
exit 1
