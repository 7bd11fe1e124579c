#!/usr/bin/env bash
# Chromium for toolwarden's inspector end-to-end test (test/inspector-e2e.test.ts), from Debian.
#
#   bash scripts/chromium.sh          install /usr/bin/chromium when missing; print its version
#   bash scripts/chromium.sh path     print the executable's path (exit 1 when missing)
#
# The test drives it with playwright-core (executablePath /usr/bin/chromium); no tool downloads
# a browser. Installing needs root (or passwordless sudo) and apt-get, as on a fresh CI machine.
set -euo pipefail

readonly CHROMIUM=/usr/bin/chromium

log() { printf 'chromium.sh: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

install_chromium() {
  log "Chromium is not installed; installing it with apt-get"
  command -v apt-get >/dev/null 2>&1 || die "this machine has no apt-get; install Chromium so that $CHROMIUM exists"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo=(sudo -n)
    else
      die "installing Chromium needs root: run 'apt-get update && apt-get install -y chromium' as root"
    fi
  fi
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium
}

case "${1:-install}" in
  install)
    [ -x "$CHROMIUM" ] || install_chromium
    [ -x "$CHROMIUM" ] || die "apt-get finished but $CHROMIUM is missing"
    "$CHROMIUM" --headless --no-sandbox --disable-gpu --version 2>/dev/null || "$CHROMIUM" --version
    ;;
  path)
    [ -x "$CHROMIUM" ] || exit 1
    printf '%s\n' "$CHROMIUM"
    ;;
  *)
    printf 'usage: %s [install|path]\n' "$0" >&2
    exit 2
    ;;
esac
