#!/usr/bin/env bash
# The system programs the tests use, installed from Debian when missing. Runs before `npm test`:
#   chromium      the browser tests drive it through puppeteer-core (or set CHROMIUM_PATH)
#   firefox-esr   the same browser tests in Firefox, over WebDriver BiDi (or set FIREFOX_PATH)
#   redis-server  the Redis tests (x402-pay/redis) start their own on a free loopback port
#   tmux          the command-line tests run `x402-pay` in a real terminal
# Present ones are left alone. Missing ones are installed in one apt-get run when it can (root with
# apt-get), without starting any service the packages bring; else it says how and fails.
set -euo pipefail
missing=()
if ! { [ -n "${CHROMIUM_PATH:-}" ] && [ -x "${CHROMIUM_PATH}" ]; } && ! command -v chromium >/dev/null 2>&1; then missing+=(chromium); fi
if ! { [ -n "${FIREFOX_PATH:-}" ] && [ -x "${FIREFOX_PATH}" ]; } && ! command -v firefox-esr >/dev/null 2>&1; then missing+=(firefox-esr); fi
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's ${missing[*]} for the tests..."
  # policy-rc.d answering 101 keeps the packages' scripts from starting a service (redis-server's).
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod +x "$policy"
    trap 'rm -f "$policy"' EXIT
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
echo "The tests need ${missing[*]}: install them (Debian: sudo apt-get install ${missing[*]}), or set CHROMIUM_PATH / FIREFOX_PATH for the browsers." >&2
exit 1
