#!/usr/bin/env bash
# Jaeger v2 as a local test peer for toolwarden's telemetry (docs/telemetry.md: "verified against a real
# Jaeger, OTLP in, Jaeger's query API out").
#
#   bash scripts/jaeger.sh install        build Jaeger v2 with Go from the Go module proxy (cached)
#   bash scripts/jaeger.sh start [dir]    start it on 127.0.0.1 with in-memory storage; wait healthy
#   bash scripts/jaeger.sh stop [dir]     stop the instance started from [dir]
#   bash scripts/jaeger.sh status         exit 0 when the query API answers
#   bash scripts/jaeger.sh config         print the config `start` writes (with the UI folder it serves)
#
# Why a Go build: Jaeger has no npm or Debian package (FACTS.md "Test peers"). Everything comes
# from the Go module proxy; nothing of Jaeger is copied into this repository (builds happen in a
# temp dir) and there is no other source.
#
# Which version, in order:
#   1. the commit of release v2.20.0 (798e4b0f...), whose go.mod has no replace directive. Its v2
#      tags are not valid module versions (the module path has no /v2), so it is fetched by
#      commit. The module proxy of our build machines refuses it: `403 Forbidden: This module
#      version is not available.` (by hash and as v1.76.1-0.20260720033334-798e4b0fcf22).
#   2. module version v1.76.0, the newest the proxy serves (its @v/list: v1.42.0, v1.61.0,
#      v1.62.0, v1.76.0). Jaeger tags each release twice; v1.76.0's cmd/jaeger is the same
#      "Jaeger backend v2" (OTel-collector based, all-in-one, OTLP in, /api/traces out). Its
#      go.mod has a replace directive (sarama), which `go install pkg@version` refuses; built as a
#      dependency of a throwaway module the directive does not apply, and the build needs none.
# In both cases a throwaway module `go get`s the version and builds ./cmd/jaeger from the module
# cache (`go install .../cmd/jaeger@...` cannot work: the proxy answers 403, not 404, for the
# non-module path cmd/jaeger, so go never falls back to the root module). Jaeger's own go.sum is
# copied in first: the dependencies' checksums come from it (Jaeger itself is checked against
# the checksum database), because the checksum database here does not know every one of them.
#
# Environment (all optional):
#   JAEGER_BIN               binary path                      default $HOME/go/bin/jaeger
#   JAEGER_DIR               state dir (pid, log, config)      default $TMPDIR/toolwarden-jaeger, or [dir]
#   JAEGER_OTLP_GRPC_PORT    OTLP/gRPC receiver                default 4317
#   JAEGER_OTLP_HTTP_PORT    OTLP/HTTP receiver                default 4318
#   JAEGER_QUERY_PORT        query HTTP API (/api/traces)      default 16686
#   JAEGER_QUERY_GRPC_PORT   query gRPC API                    default 16685
#   JAEGER_HEALTH_PORT       health check (/status)            default 13133
#   JAEGER_METRICS_PORT      Jaeger's own Prometheus metrics   default 8888
#   JAEGER_SAMPLING_HTTP_PORT / JAEGER_SAMPLING_GRPC_PORT      default 5778 / 5779
#   JAEGER_EXPVAR_PORT / JAEGER_ZPAGES_PORT                    default 27777 / 27778
#   JAEGER_START_TIMEOUT     seconds to wait for healthy       default 30
#   JAEGER_UI_ASSETS         a Jaeger UI build to serve (a folder with index.html; a relative path is
#                            taken from the current directory). Default: ../shared/jaeger-ui/build
#                            beside this repository when it exists, else none. `none` serves none.
#
# The UI: the Go module carries only a placeholder page (`/trace/<id>` shows "UI assets not
# embedded"); the real UI is jaeger-ui's build, served from disk through the query extension's
# `ui.assets_path`. Use the UI release paired with the Jaeger you run (v1.76.0 here):
# https://github.com/jaegertracing/jaeger-ui/releases/download/v1.76.0/assets.tar.gz holds it as
# `packages/jaeger-ui/build/`; the `jaegertracing/jaeger` image embeds it. README "Tracing in Jaeger".
# Every listener binds 127.0.0.1 (the generated config lists them all; nothing binds 0.0.0.0).
set -euo pipefail

# Candidates, preferred first: "<module version or commit> <version reported by the binary>".
readonly JAEGER_CANDIDATES=(
  "798e4b0fcf22609e381df764a01461affd813e1e v2.20.0"
  "v1.76.0 v1.76.0"
)
readonly JAEGER_MODULE=github.com/jaegertracing/jaeger
readonly HOST=127.0.0.1
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly REPO_ROOT

JAEGER_BIN=${JAEGER_BIN:-$HOME/go/bin/jaeger}
OTLP_GRPC_PORT=${JAEGER_OTLP_GRPC_PORT:-4317}
OTLP_HTTP_PORT=${JAEGER_OTLP_HTTP_PORT:-4318}
QUERY_PORT=${JAEGER_QUERY_PORT:-16686}
QUERY_GRPC_PORT=${JAEGER_QUERY_GRPC_PORT:-16685}
HEALTH_PORT=${JAEGER_HEALTH_PORT:-13133}
METRICS_PORT=${JAEGER_METRICS_PORT:-8888}
SAMPLING_HTTP_PORT=${JAEGER_SAMPLING_HTTP_PORT:-5778}
SAMPLING_GRPC_PORT=${JAEGER_SAMPLING_GRPC_PORT:-5779}
EXPVAR_PORT=${JAEGER_EXPVAR_PORT:-27777}
ZPAGES_PORT=${JAEGER_ZPAGES_PORT:-27778}
START_TIMEOUT=${JAEGER_START_TIMEOUT:-30}

log() { printf 'jaeger.sh: %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}

# --- install -------------------------------------------------------------------------------------

# The version $JAEGER_BIN reports when it is one of the candidates we build, else nothing.
installed_version() {
  [[ -x $JAEGER_BIN ]] || return 1
  local info candidate
  info=$("$JAEGER_BIN" version 2>/dev/null) || return 1
  for candidate in "${JAEGER_CANDIDATES[@]}"; do
    local ref=${candidate% *} version=${candidate#* }
    if [[ $info == *"\"gitCommit\":\"$ref\""* && $info == *"\"gitVersion\":\"$version\""* ]]; then
      printf '%s' "$version"
      return 0
    fi
  done
  return 1
}

# Builds one candidate through the module proxy into $3. Prints go's error and returns 1 when the
# proxy refuses it. Runs where `set -e` does not apply, so every step checks its own status.
build_candidate() {
  local work=$1 ref=$2 out=$3 version=$4
  rm -rf "$work/mod" && mkdir -p "$work/mod" && cd "$work/mod" || return 1
  go mod init toolwarden.local/jaeger-build >/dev/null 2>&1 || return 1
  log "go get $JAEGER_MODULE@$ref (module proxy: $(go env GOPROXY))"
  if ! GOFLAGS=-mod=mod go get "$JAEGER_MODULE@$ref" 2>"$work/proxy.err"; then
    log "the module proxy did not serve $JAEGER_MODULE@$ref:"
    sed 's/^/    /' "$work/proxy.err" >&2
    return 1
  fi
  local dir
  dir=$(go list -m -f '{{.Dir}}' "$JAEGER_MODULE") || return 1
  # Jaeger's go.sum vouches for its dependencies (see the header).
  cat "$dir/go.sum" >>go.sum || return 1
  log "building $JAEGER_MODULE/cmd/jaeger $version from the module cache (minutes on 2 cores)"
  local v=$JAEGER_MODULE/internal/version
  CGO_ENABLED=0 GOFLAGS="-buildvcs=false -mod=mod" go build -trimpath \
    -ldflags "-X $v.commitSHA=$ref -X $v.latestVersion=$version" \
    -o "$out" "$JAEGER_MODULE/cmd/jaeger"
}

cmd_install() {
  command -v go >/dev/null || die "go not found on PATH; install Go (Debian golang or go.dev) first"
  local current
  if current=$(installed_version); then
    log "$JAEGER_BIN is already Jaeger $current; nothing to do"
    return 0
  fi
  local work started=$SECONDS
  work=$(mktemp -d "${TMPDIR:-/tmp}/jaeger-build.XXXXXX")
  # shellcheck disable=SC2064 # expand $work now
  trap "rm -rf '$work'" EXIT
  mkdir -p "$(dirname "$JAEGER_BIN")"
  local tmp_bin=$JAEGER_BIN.build.$$ candidate
  for candidate in "${JAEGER_CANDIDATES[@]}"; do
    local ref=${candidate% *} version=${candidate#* }
    # Subshell: build_candidate cds.
    if (build_candidate "$work" "$ref" "$tmp_bin" "$version"); then
      mv -f "$tmp_bin" "$JAEGER_BIN"
      current=$(installed_version) || die "$JAEGER_BIN was built but does not report $version ($ref)"
      log "installed $JAEGER_BIN (Jaeger $current) in $((SECONDS - started)) s"
      return 0
    fi
    rm -f "$tmp_bin"
    log "Jaeger $version ($ref) could not be built from the module proxy; trying the next candidate"
  done
  die "no Jaeger candidate could be built from the Go module proxy: see the errors above"
}

# --- start / stop --------------------------------------------------------------------------------

# The absolute path of the UI build to serve, or nothing. Dies on a folder that is not a UI build:
# Jaeger would start and answer every page with a 404, which is worse than the placeholder.
ui_assets() {
  local dir=${JAEGER_UI_ASSETS-}
  if [[ -z $dir ]]; then
    dir=$REPO_ROOT/../shared/jaeger-ui/build
    [[ -f $dir/index.html ]] || return 0
  fi
  [[ $dir == none ]] && return 0
  [[ -f $dir/index.html ]] || die "JAEGER_UI_ASSETS=$dir is not a Jaeger UI build (no index.html in it)"
  (cd "$dir" && pwd -P)
}

state_dir() { printf '%s' "${1:-${JAEGER_DIR:-${TMPDIR:-/tmp}/toolwarden-jaeger}}"; }

# Jaeger's all-in-one default (cmd/jaeger/internal/all-in-one.yaml at v2.20.0) changed so:
# - every listener written out on 127.0.0.1 (the default says localhost, and leaves the query
#   extension on its own default ":16686", i.e. all interfaces);
# - the jaeger/zipkin receivers, the gRPC health check and the AI/MCP query features are off
#   (toolwarden only speaks OTLP);
# - a metrics pipeline into the `nop` exporter, so an app exporting traces and metrics to one
#   OTLP endpoint gets 200 for /v1/metrics instead of 404 (Jaeger stores no metrics).
# - `enable_tracing: false`: v1.76.0 traces its own query API to localhost:4317 by default, and on
#   SIGTERM waits for that exporter (about 10 s, past `stop`'s limit); off, it stops in about 2 s;
# - the UI build from `ui_assets`, when there is one.
write_config() { # prints it
  local assets ui=''
  assets=$(ui_assets) || exit 1
  if [[ -n $assets ]]; then
    ui=$'\n    ui:\n      assets_path: "'"$assets"'"'
  fi
  cat <<YAML
# Generated by scripts/jaeger.sh; every listener is on $HOST.
service:
  extensions: [jaeger_storage, jaeger_query, remote_sampling, healthcheckv2, expvar, zpages]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
    metrics:
      receivers: [otlp]
      exporters: [nop]
  telemetry:
    metrics:
      level: detailed
      readers:
        - pull:
            exporter:
              prometheus:
                host: "$HOST"
                port: $METRICS_PORT
    logs:
      level: info

extensions:
  jaeger_query:
    storage:
      traces: some_storage
    http:
      endpoint: "$HOST:$QUERY_PORT"
    grpc:
      endpoint: "$HOST:$QUERY_GRPC_PORT"
    enable_tracing: false$ui

  jaeger_storage:
    backends:
      some_storage:
        memory:
          max_traces: 100000

  remote_sampling:
    file:
      path:
      default_sampling_probability: 1
      reload_interval: 1s
    http:
      endpoint: "$HOST:$SAMPLING_HTTP_PORT"
    grpc:
      endpoint: "$HOST:$SAMPLING_GRPC_PORT"

  healthcheckv2:
    use_v2: true
    http:
      endpoint: "$HOST:$HEALTH_PORT"

  expvar:
    endpoint: "$HOST:$EXPVAR_PORT"

  zpages:
    endpoint: "$HOST:$ZPAGES_PORT"

receivers:
  otlp:
    protocols:
      grpc:
        endpoint: "$HOST:$OTLP_GRPC_PORT"
      http:
        endpoint: "$HOST:$OTLP_HTTP_PORT"

processors:
  batch:

exporters:
  jaeger_storage_exporter:
    trace_storage: some_storage
  nop:
YAML
}

# The query API answering is what the tests need; /api/services is cheap and always present.
query_api_up() { curl -fs -o /dev/null --max-time 2 "http://$HOST:$QUERY_PORT/api/services"; }
health_up() { curl -fs -o /dev/null --max-time 2 "http://$HOST:$HEALTH_PORT/status"; }

# True when the pid file names a live process running $JAEGER_BIN (guards against pid reuse).
pid_alive() {
  [[ -s $1 ]] || return 1
  local pid
  pid=$(cat "$1")
  kill -0 "$pid" 2>/dev/null || return 1
  [[ $(readlink "/proc/$pid/exe" 2>/dev/null || echo "$JAEGER_BIN") == "$(readlink -f "$JAEGER_BIN")"* ]]
}

cmd_start() {
  local dir
  dir=$(state_dir "${1:-}")
  local pid_file=$dir/jaeger.pid log_file=$dir/jaeger.log config=$dir/jaeger-config.yaml
  if query_api_up && health_up; then
    log "a Jaeger is already healthy on $HOST:$QUERY_PORT; nothing to do"
    return 0
  fi
  if pid_alive "$pid_file"; then
    die "pid $(cat "$pid_file") from $pid_file is running but not healthy; run: bash scripts/jaeger.sh stop $dir"
  fi
  [[ -x $JAEGER_BIN ]] || die "$JAEGER_BIN not found; run: bash scripts/jaeger.sh install"
  mkdir -p "$dir"
  write_config >"$config"
  log "starting $JAEGER_BIN --config $config (log $log_file)"
  rm -f "$pid_file"
  # Own session (setsid), so Ctrl-C in the caller's terminal does not reach it; the inner shell
  # records its pid and execs Jaeger, so the pid file names Jaeger whether or not setsid forks.
  # shellcheck disable=SC2016 # $$ and $1.. belong to the inner shell
  setsid bash -c 'echo $$ >"$1"; exec "$2" --config "$3"' jaeger \
    "$pid_file" "$JAEGER_BIN" "$config" >"$log_file" 2>&1 </dev/null &
  local deadline=$((SECONDS + START_TIMEOUT))
  until [[ -s $pid_file ]]; do
    ((SECONDS < deadline)) || die "no pid file $pid_file after ${START_TIMEOUT}s"
    sleep 0.1
  done
  local pid
  pid=$(cat "$pid_file")
  until query_api_up && health_up; do
    # Plain liveness here: for a moment the pid is still the inner bash, not $JAEGER_BIN.
    if ! kill -0 "$pid" 2>/dev/null; then
      log "Jaeger exited during startup; last lines of $log_file:"
      tail -n 30 "$log_file" >&2
      rm -f "$pid_file"
      exit 1
    fi
    if ((SECONDS >= deadline)); then
      log "Jaeger not healthy after ${START_TIMEOUT}s; last lines of $log_file:"
      tail -n 30 "$log_file" >&2
      kill "$pid" 2>/dev/null || true
      rm -f "$pid_file"
      exit 1
    fi
    sleep 0.3
  done
  log "Jaeger $(installed_version || echo '(unknown version)') healthy (pid $pid): OTLP http://$HOST:$OTLP_HTTP_PORT," \
    "grpc $HOST:$OTLP_GRPC_PORT, query http://$HOST:$QUERY_PORT/api/traces"
  local assets
  assets=$(ui_assets)
  if [[ -n $assets ]]; then
    log "UI: http://$HOST:$QUERY_PORT/ (from $assets)"
  else
    log "no UI assets (JAEGER_UI_ASSETS unset and no ../shared/jaeger-ui/build): the query API only"
  fi
}

cmd_stop() {
  local dir
  dir=$(state_dir "${1:-}")
  local pid_file=$dir/jaeger.pid
  if ! pid_alive "$pid_file"; then
    rm -f "$pid_file"
    log "no Jaeger running from $dir"
    return 0
  fi
  local pid
  pid=$(cat "$pid_file")
  kill "$pid"
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "pid $pid did not exit after SIGTERM; sending SIGKILL"
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pid_file"
  log "stopped Jaeger (pid $pid)"
}

cmd_status() {
  if query_api_up; then
    log "Jaeger query API answers on http://$HOST:$QUERY_PORT"
  else
    log "no Jaeger query API on http://$HOST:$QUERY_PORT"
    return 1
  fi
}

case ${1:-} in
install) cmd_install ;;
start) cmd_start "${2:-}" ;;
stop) cmd_stop "${2:-}" ;;
status) cmd_status ;;
config) write_config ;;
*)
  echo "usage: bash scripts/jaeger.sh install | start [dir] | stop [dir] | status | config" >&2
  exit 2
  ;;
esac
