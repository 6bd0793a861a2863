#!/usr/bin/env bash
# The browser tests drive a system Chromium through playwright-core (Playwright's own browser
# download cannot be used here). Runs before `npm test`: a no-op when Chromium is present (or
# CHROMIUM_PATH points at one); otherwise installs Debian's package when it can (root with apt-get),
# else says how and fails.
set -euo pipefail
if [ -n "${CHROMIUM_PATH:-}" ] && [ -x "${CHROMIUM_PATH}" ]; then exit 0; fi
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the browser tests..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  exit 0
fi
echo "The browser tests need Chromium: install it (Debian: sudo apt-get install chromium) or set CHROMIUM_PATH." >&2
exit 1
