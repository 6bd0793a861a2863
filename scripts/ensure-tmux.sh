#!/usr/bin/env bash
# The command-line tests run `x402-pay` in a real terminal (tmux) to see its progress as a person
# does. Runs before `npm test`: a no-op when tmux is present; otherwise installs Debian's package
# when it can (root with apt-get), else says how and fails.
set -euo pipefail
if command -v tmux >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's tmux for the command-line tests..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tmux >/dev/null
  exit 0
fi
echo "The command-line tests need tmux: install it (Debian: sudo apt-get install tmux)." >&2
exit 1
