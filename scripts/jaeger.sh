#!/usr/bin/env bash
# Jaeger v2 as a local test peer for toolwarden's telemetry (SPEC §6: "verified against a real
# Jaeger, OTLP in, Jaeger's query API out").
#
#   bash scripts/jaeger.sh install        build Jaeger v2.20.0 with Go into $JAEGER_BIN (cached)
#   bash scripts/jaeger.sh start [dir]    start it on 127.0.0.1 with in-memory storage; wait healthy
#   bash scripts/jaeger.sh stop [dir]     stop the instance started from [dir]
#   bash scripts/jaeger.sh status         exit 0 when the query API answers
#
# Why a Go build: Jaeger has no npm or Debian package (FACTS.md "Test peers"). Its v2 tags are
# not valid Go module versions (module path has no /v2), so the build is pinned to the commit of
# v2.20.0, whose go.mod has no replace directive (needs Go >= 1.26.0).
#
# Where the source comes from, in order:
#   1. the Go module proxy: a throwaway module `go get`s github.com/jaegertracing/jaeger@<commit>
#      and builds its ./cmd/jaeger from the module cache. (`go install .../cmd/jaeger@<commit>`
#      cannot work: the proxy answers 403, not 404, for the non-module path cmd/jaeger, so go
#      never falls back to the root module.)
#   2. if the proxy refuses the module version itself -- the filtered proxy on our build machines
#      answers `403 Forbidden: This module version is not available.` for this commit, by hash
#      and as pseudo-version v1.76.1-0.20260720033334-798e4b0fcf22; it serves only tagged v1
#      releases -- git: $JAEGER_GIT, a local clone/mirror directory (read with `git archive`) or
#      a URL (shallow fetch of the commit), default the upstream GitHub repository. Dependencies
#      still come from the module proxy, checked against Jaeger's go.sum.
# Nothing of Jaeger is copied into this repository; builds happen in a temp dir.
#
# Environment (all optional):
#   JAEGER_BIN               binary path                      default $HOME/go/bin/jaeger
#   JAEGER_GIT               git source for fallback 2         default https://github.com/jaegertracing/jaeger.git
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
# Every listener binds 127.0.0.1 (the generated config lists them all; nothing binds 0.0.0.0).
set -euo pipefail

readonly JAEGER_VERSION=v2.20.0
readonly JAEGER_COMMIT=798e4b0fcf22609e381df764a01461affd813e1e
readonly JAEGER_COMMIT_DATE=2026-07-20T03:33:34Z # committer date of JAEGER_COMMIT, UTC
readonly JAEGER_MODULE=github.com/jaegertracing/jaeger
readonly HOST=127.0.0.1

JAEGER_BIN=${JAEGER_BIN:-$HOME/go/bin/jaeger}
JAEGER_GIT=${JAEGER_GIT:-https://github.com/jaegertracing/jaeger.git}
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

# True when $JAEGER_BIN exists and reports the pinned version and commit (set through -ldflags).
binary_is_current() {
  [[ -x $JAEGER_BIN ]] || return 1
  local info
  info=$("$JAEGER_BIN" version 2>/dev/null) || return 1
  [[ $info == *"\"gitCommit\":\"$JAEGER_COMMIT\""* && $info == *"\"gitVersion\":\"$JAEGER_VERSION\""* ]]
}

# go build flags matching upstream's Makefile (scripts/makefiles/BuildInfo.mk, BuildBinaries.mk).
go_build() {
  local out=$1 pkg=$2
  local v=$JAEGER_MODULE/internal/version
  CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath \
    -ldflags "-X $v.commitSHA=$JAEGER_COMMIT -X $v.latestVersion=$JAEGER_VERSION -X $v.date=$JAEGER_COMMIT_DATE" \
    -o "$out" "$pkg"
}

# The two build functions run where `set -e` does not apply (callers test their status), so every
# step checks its own status.

# Source 1: the module proxy. Prints go's error and returns 1 when the proxy refuses the module.
build_from_proxy() {
  local work=$1 out=$2
  mkdir -p "$work/mod" && cd "$work/mod" || return 1
  go mod init toolwarden.local/jaeger-build >/dev/null 2>&1 || return 1
  log "go get $JAEGER_MODULE@$JAEGER_COMMIT (module proxy: $(go env GOPROXY))"
  if ! go get "$JAEGER_MODULE@$JAEGER_COMMIT" 2>"$work/proxy.err"; then
    log "the module proxy did not serve $JAEGER_MODULE@$JAEGER_COMMIT:"
    sed 's/^/    /' "$work/proxy.err" >&2
    return 1
  fi
  log "building $JAEGER_MODULE/cmd/jaeger from the module cache (several minutes on 2 cores)"
  go_build "$out" "$JAEGER_MODULE/cmd/jaeger"
}

# Source 2: git at the pinned commit; dependencies from the module proxy, checked by go.sum.
build_from_git() {
  local work=$1 out=$2 src=$1/src
  mkdir -p "$src" || return 1
  if [[ -d $JAEGER_GIT ]]; then
    log "reading $JAEGER_COMMIT from the git directory $JAEGER_GIT"
    git -C "$JAEGER_GIT" archive "$JAEGER_COMMIT" >"$work/src.tar" || return 1
    tar -x -C "$src" -f "$work/src.tar" || return 1
  else
    log "fetching $JAEGER_COMMIT from $JAEGER_GIT"
    git -C "$src" init -q &&
      git -C "$src" fetch -q --depth 1 "$JAEGER_GIT" "$JAEGER_COMMIT" &&
      git -C "$src" checkout -q FETCH_HEAD &&
      rm -rf "$src/.git" || return 1
  fi
  if ! head -n 1 "$src/go.mod" | grep -qx "module $JAEGER_MODULE"; then
    log "$src/go.mod is not module $JAEGER_MODULE"
    return 1
  fi
  log "building ./cmd/jaeger (dependencies from $(go env GOPROXY); several minutes on 2 cores)"
  cd "$src" && go mod download && go_build "$out" ./cmd/jaeger
}

cmd_install() {
  command -v go >/dev/null || die "go not found on PATH; Jaeger $JAEGER_VERSION needs Go >= 1.26.0"
  if binary_is_current; then
    log "$JAEGER_BIN is already $JAEGER_VERSION ($JAEGER_COMMIT); nothing to do"
    return 0
  fi
  local work started=$SECONDS
  work=$(mktemp -d "${TMPDIR:-/tmp}/jaeger-build.XXXXXX")
  # shellcheck disable=SC2064 # expand $work now
  trap "rm -rf '$work'" EXIT
  mkdir -p "$(dirname "$JAEGER_BIN")"
  local tmp_bin=$JAEGER_BIN.build.$$
  # Subshells: the build functions cd.
  if ! (build_from_proxy "$work" "$tmp_bin"); then
    log "falling back to git source $JAEGER_GIT (set JAEGER_GIT to a local clone when offline)"
    if ! (build_from_git "$work" "$tmp_bin"); then
      rm -f "$tmp_bin"
      die "could not build Jaeger $JAEGER_VERSION ($JAEGER_COMMIT): see the errors above"
    fi
  fi
  mv -f "$tmp_bin" "$JAEGER_BIN"
  binary_is_current || die "$JAEGER_BIN was built but does not report $JAEGER_VERSION/$JAEGER_COMMIT"
  log "installed $JAEGER_BIN ($("$JAEGER_BIN" version 2>/dev/null)) in $((SECONDS - started)) s"
}

# --- start / stop --------------------------------------------------------------------------------

state_dir() { printf '%s' "${1:-${JAEGER_DIR:-${TMPDIR:-/tmp}/toolwarden-jaeger}}"; }

# Jaeger's all-in-one default (cmd/jaeger/internal/all-in-one.yaml at v2.20.0) changed so:
# - every listener written out on 127.0.0.1 (the default says localhost, and leaves the query
#   extension on its own default ":16686", i.e. all interfaces);
# - the jaeger/zipkin receivers, the gRPC health check and the AI/MCP query features are off
#   (toolwarden only speaks OTLP);
# - a metrics pipeline into the `nop` exporter, so an app exporting traces and metrics to one
#   OTLP endpoint gets 200 for /v1/metrics instead of 404 (Jaeger stores no metrics).
write_config() {
  cat >"$1" <<YAML
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
    resource:
      attributes:
        - name: service.name
          value: jaeger
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
  write_config "$config"
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
  log "Jaeger $JAEGER_VERSION healthy (pid $pid): OTLP http://$HOST:$OTLP_HTTP_PORT," \
    "grpc $HOST:$OTLP_GRPC_PORT, query http://$HOST:$QUERY_PORT/api/traces"
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
*)
  echo "usage: bash scripts/jaeger.sh install | start [dir] | stop [dir] | status" >&2
  exit 2
  ;;
esac
