#!/usr/bin/env bash
# The Temporal CLI's dev server as a local test peer for toolwarden/temporal (docs/temporal.md).
#
#   bash scripts/temporal.sh install       build the Temporal CLI with Go from the module proxy (cached)
#   bash scripts/temporal.sh start [--ui] [--ui-port N] [--db-filename FILE]
#                                          start `temporal server start-dev` on 127.0.0.1; wait until it answers.
#                                          --ui: serve the Web UI (http://127.0.0.1:$TEMPORAL_UI_PORT);
#                                          --db-filename: keep runs in that SQLite file across restarts
#                                          (default: in memory, gone at stop)
#   bash scripts/temporal.sh stop          stop it
#   bash scripts/temporal.sh status        exit 0 when its frontend port accepts connections
#
# Why a Go build: Temporal has no npm or Debian package, and the TypeScript SDK's time-skipping
# test server downloads a Java binary (FACTS.md "Test peers"). v1.5.1 is the newest CLI tag whose
# go.mod has no replace directive (`go install pkg@version` refuses those); it builds in ~10 min
# on a loaded 2-core machine, a ~250 MB binary (Temporal Server 1.29.1). `temporal --version`
# prints 0.0.0-DEV for a `go install` build, so the cache is checked with `go version -m`.
#
# Environment (all optional):
#   TEMPORAL_BIN      binary path                 default $HOME/go/bin/temporal
#   TEMPORAL_DIR      state dir (pid, log, HOME)  default $TMPDIR/toolwarden-temporal
#   TEMPORAL_PORT     frontend gRPC port          default 7233
#   TEMPORAL_UI       1: serve the Web UI          default 0 (headless); same as --ui
#   TEMPORAL_UI_PORT  Web UI port                 default 8233; same as --ui-port (implies --ui)
#   TEMPORAL_DB       SQLite file for the state   default none (in memory); same as --db-filename
#   TEMPORAL_START_TIMEOUT  seconds               default 60
#
# toolwarden's search attributes are registered at every start (docs/temporal.md §Visibility):
# ToolwardenStatus (Keyword: running, awaiting, completed, failed, canceled) and
# ToolwardenAwaiting (Keyword: clarification, confirmation, external_tools, backoff), so
#   temporal workflow list --query "ToolwardenAwaiting = 'clarification'"
# finds the runs waiting for a person's answer.
set -euo pipefail

readonly VERSION=v1.5.1
readonly MODULE=github.com/temporalio/cli
readonly HOST=127.0.0.1
TEMPORAL_BIN=${TEMPORAL_BIN:-$HOME/go/bin/temporal}
STATE=${TEMPORAL_DIR:-${TMPDIR:-/tmp}/toolwarden-temporal}
PORT=${TEMPORAL_PORT:-7233}
UI_PORT=${TEMPORAL_UI_PORT:-8233}
UI=${TEMPORAL_UI:-0}
[[ -n ${TEMPORAL_UI_PORT:-} ]] && UI=1
DB=${TEMPORAL_DB:-}
# Registered by `start` (workflow-types.ts SEARCH_ATTRIBUTES must match).
readonly SEARCH_ATTRIBUTES=(ToolwardenStatus=Keyword ToolwardenAwaiting=Keyword)
START_TIMEOUT=${TEMPORAL_START_TIMEOUT:-60}

log() { printf 'temporal.sh: %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}

installed() {
  [[ -x $TEMPORAL_BIN ]] && go version -m "$TEMPORAL_BIN" 2>/dev/null | grep -q "mod[[:space:]]*$MODULE[[:space:]]*$VERSION"
}

install() {
  if installed; then
    log "cached: $TEMPORAL_BIN ($MODULE $VERSION)"
    return
  fi
  command -v go >/dev/null || die "Go is needed to build the Temporal CLI (apt-get install golang, or go.dev)"
  log "building $MODULE/cmd/temporal@$VERSION from the Go module proxy (~10 min on 2 cores)"
  GOBIN=$(dirname "$TEMPORAL_BIN") go install "$MODULE/cmd/temporal@$VERSION"
  installed || die "built, but $TEMPORAL_BIN does not report $MODULE $VERSION"
}

listening() {
  (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null
}

start() {
  while (($#)); do
    case $1 in
      --ui) UI=1 ;;
      --ui-port) UI=1 UI_PORT=${2:?--ui-port needs a port} && shift ;;
      --db-filename) DB=${2:?--db-filename needs a file} && shift ;;
      *) die "start: unknown option $1 (--ui, --ui-port N, --db-filename FILE)" ;;
    esac
    shift
  done
  installed || die "no Temporal CLI at $TEMPORAL_BIN: run bash scripts/temporal.sh install"
  if listening; then
    log "already answering on $HOST:$PORT"
    return
  fi
  mkdir -p "$STATE/home"
  local args=(server start-dev --ip "$HOST" --port "$PORT" --ui-port "$UI_PORT" --log-level warn)
  if [[ $UI == 1 ]]; then args+=(--ui-ip "$HOST"); else args+=(--headless); fi
  if [[ -n $DB ]]; then
    mkdir -p "$(dirname "$DB")"
    args+=(--db-filename "$DB")
  fi
  local attribute
  for attribute in "${SEARCH_ATTRIBUTES[@]}"; do args+=(--search-attribute "$attribute"); done
  # HOME points at a temp folder: the dev server keeps no state of ours in the user's home.
  HOME="$STATE/home" nohup "$TEMPORAL_BIN" "${args[@]}" >"$STATE/server.log" 2>&1 &
  echo $! >"$STATE/pid"
  for ((i = 0; i < START_TIMEOUT * 4; i++)); do
    if listening; then
      log "Temporal dev server on $HOST:$PORT (pid $(cat "$STATE/pid"), log $STATE/server.log)"
      if [[ $UI == 1 ]]; then log "Web UI: http://$HOST:$UI_PORT"; fi
      if [[ -n $DB ]]; then log "state kept in $DB"; fi
      return 0
    fi
    kill -0 "$(cat "$STATE/pid")" 2>/dev/null || { cat "$STATE/server.log" >&2; die "the dev server exited"; }
    sleep 0.25
  done
  die "the dev server did not answer on $HOST:$PORT within ${START_TIMEOUT}s (log: $STATE/server.log)"
}

stop() {
  [[ -f $STATE/pid ]] || return 0
  local pid
  pid=$(cat "$STATE/pid")
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 40; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$STATE/pid"
}

case ${1:-} in
  install) install ;;
  start) start "${@:2}" ;;
  stop) stop ;;
  status) listening ;;
  *) die "usage: bash scripts/temporal.sh install|start [--ui] [--ui-port N] [--db-filename FILE]|stop|status" ;;
esac
