#!/usr/bin/env bash
# A throwaway PostgreSQL for toolwarden's tests (the PostgreSQL RunStore contract suite, docs/durability.md).
#
#   bash scripts/postgres.sh start [DATA_DIR]   init (first time), start, create toolwarden_test,
#                                               wait until ready, print the connection string
#   bash scripts/postgres.sh stop  [DATA_DIR]   fast shutdown; no-op when not running
#   bash scripts/postgres.sh status [DATA_DIR]  exit 0 when running (prints the connection string)
#   bash scripts/postgres.sh url   [DATA_DIR]   print the connection string only
#
# Environment: PGPORT (default 54329), PG_DATA_DIR (same as the DATA_DIR argument), PG_BIN (the
# directory holding initdb/pg_ctl; default: newest /usr/lib/postgresql/*/bin).
#
# The cluster listens on 127.0.0.1 only (no Unix socket), trusts local connections (user
# `postgres`, no password) and runs with fsync off: it is for tests, never for data you keep.
# `start` is idempotent. PostgreSQL refuses to run as root, so as root the server runs as the
# `postgres` system user. When PostgreSQL is not installed, `start` installs it with apt-get
# (as root, or through passwordless sudo), as on a fresh CI machine.
set -euo pipefail

readonly DATABASE=toolwarden_test
readonly SUPERUSER=postgres
PORT="${PGPORT:-54329}"
DEFAULT_DATA_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/toolwarden/pg"
# As root the server runs as `postgres`, which cannot enter a 0700 home such as /root; then the
# default moves to a directory that user can reach. An explicitly given directory is never moved.
ROOT_FALLBACK_DATA_DIR=/var/tmp/toolwarden/pg

log() { printf 'postgres.sh: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

is_root() { [ "$(id -u)" -eq 0 ]; }

# Runs a command as the user that owns the cluster: `postgres` when we are root, else ourselves.
# From / so that the server user never needs access to the caller's working directory.
as_owner() {
  if is_root; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

find_pg_bin() {
  if [ -n "${PG_BIN:-}" ]; then
    [ -x "$PG_BIN/initdb" ] || die "PG_BIN=$PG_BIN has no initdb"
    printf '%s\n' "$PG_BIN"
    return 0
  fi
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
    printf '%s\n' "$dir"
    return 0
  fi
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir
    return 0
  fi
  if command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
    return 0
  fi
  return 1
}

install_postgres() {
  log "PostgreSQL is not installed; installing it with apt-get"
  local sudo=()
  if ! is_root; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo=(sudo -n)
    else
      die "PostgreSQL is missing and installing it needs root: run 'apt-get install -y postgresql' as root"
    fi
  fi
  command -v apt-get >/dev/null 2>&1 || die "PostgreSQL is missing and this machine has no apt-get"
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql
}

ensure_pg_bin() {
  if ! PG_BIN="$(find_pg_bin)"; then
    install_postgres
    PG_BIN="$(find_pg_bin)" || die "PostgreSQL was installed but initdb was not found"
  fi
  if is_root; then
    id postgres >/dev/null 2>&1 || die "running as root needs a 'postgres' system user to own the server"
  fi
}

# Sets DATA_DIR from the argument, PG_DATA_DIR or the default; applies the root fallback.
resolve_data_dir() {
  local given="${1:-${PG_DATA_DIR:-}}"
  if [ -n "$given" ]; then
    DATA_DIR="$given"
    DATA_DIR_GIVEN=1
  else
    DATA_DIR="$DEFAULT_DATA_DIR"
    DATA_DIR_GIVEN=0
  fi
  case "$DATA_DIR" in
    /*) ;;
    *) DATA_DIR="$PWD/$DATA_DIR" ;;
  esac
}

# The topmost directory of $1 that does not exist yet (what `mkdir -p` would create first).
first_missing_dir() {
  local dir="$1" missing=""
  while [ ! -e "$dir" ]; do
    missing="$dir"
    dir="$(dirname "$dir")"
  done
  printf '%s\n' "$missing"
}

# Creates DATA_DIR for the server user; as root, checks that `postgres` can reach it.
prepare_data_dir() {
  local created
  created="$(first_missing_dir "$DATA_DIR")"
  mkdir -p "$DATA_DIR"
  if is_root; then
    chown postgres:postgres "$DATA_DIR"
    if ! as_owner test -w "$DATA_DIR"; then
      # Leave no trace of the directories made for nothing.
      [ -z "$created" ] || find "$created" -depth -type d -empty -delete 2>/dev/null || true
      if [ "$DATA_DIR_GIVEN" -eq 1 ]; then
        die "the postgres user cannot write $DATA_DIR (a parent directory is closed to it); choose another directory"
      fi
      log "the postgres user cannot reach $DATA_DIR; using $ROOT_FALLBACK_DATA_DIR instead"
      DATA_DIR="$ROOT_FALLBACK_DATA_DIR"
      mkdir -p "$DATA_DIR"
      chown postgres:postgres "$DATA_DIR"
    fi
  fi
  chmod 0700 "$DATA_DIR"
}

# The data dir actually in use: as root the default may live at the fallback from an earlier start.
locate_existing_data_dir() {
  if [ ! -f "$DATA_DIR/PG_VERSION" ] && [ "$DATA_DIR_GIVEN" -eq 0 ] && is_root &&
    [ -f "$ROOT_FALLBACK_DATA_DIR/PG_VERSION" ]; then
    DATA_DIR="$ROOT_FALLBACK_DATA_DIR"
  fi
}

init_cluster() {
  [ -f "$DATA_DIR/PG_VERSION" ] && return 0
  log "initializing a cluster in $DATA_DIR"
  as_owner "$PG_BIN/initdb" --pgdata="$DATA_DIR" --username="$SUPERUSER" --auth=trust \
    --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  # TCP on loopback only, no Unix socket; durability traded for speed (a test cluster).
  as_owner tee -a "$DATA_DIR/postgresql.conf" >/dev/null <<'EOF'

# --- toolwarden test cluster (scripts/postgres.sh) ---
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
EOF
}

is_running() {
  [ -f "$DATA_DIR/PG_VERSION" ] && as_owner "$PG_BIN/pg_ctl" status --pgdata="$DATA_DIR" >/dev/null 2>&1
}

# The port of the running server (line 4 of postmaster.pid), else the configured one.
running_port() {
  local pid_port
  pid_port="$(as_owner sed -n 4p "$DATA_DIR/postmaster.pid" 2>/dev/null || true)"
  printf '%s\n' "${pid_port:-$PORT}"
}

connection_string() { printf 'postgres://%s@127.0.0.1:%s/%s\n' "$SUPERUSER" "$1" "$DATABASE"; }

wait_ready() {
  local port="$1" tries=60
  until "$PG_BIN/pg_isready" --host=127.0.0.1 --port="$port" --timeout=2 >/dev/null 2>&1; do
    tries=$((tries - 1))
    [ "$tries" -gt 0 ] || die "PostgreSQL on 127.0.0.1:$port did not become ready; see $DATA_DIR/postgres.log"
    sleep 0.5
  done
}

ensure_database() {
  local port="$1" exists
  exists="$("$PG_BIN/psql" --host=127.0.0.1 --port="$port" --username="$SUPERUSER" --dbname=postgres \
    --no-psqlrc --tuples-only --no-align \
    --command="SELECT 1 FROM pg_database WHERE datname = '$DATABASE'")"
  if [ "$exists" != "1" ]; then
    "$PG_BIN/createdb" --host=127.0.0.1 --port="$port" --username="$SUPERUSER" "$DATABASE"
  fi
}

cmd_start() {
  resolve_data_dir "${1:-}"
  ensure_pg_bin
  locate_existing_data_dir
  if is_running; then
    local port
    port="$(running_port)"
    [ "$port" = "$PORT" ] || log "already running on port $port (not $PORT)"
    wait_ready "$port"
    ensure_database "$port"
    connection_string "$port"
    return 0
  fi
  prepare_data_dir
  init_cluster
  log "starting PostgreSQL on 127.0.0.1:$PORT (data: $DATA_DIR)"
  if ! as_owner "$PG_BIN/pg_ctl" start --pgdata="$DATA_DIR" --log="$DATA_DIR/postgres.log" \
    --wait --timeout=60 -o "-p $PORT" >/dev/null; then
    as_owner tail -n 20 "$DATA_DIR/postgres.log" >&2 || true
    die "PostgreSQL did not start (is port $PORT taken?)"
  fi
  wait_ready "$PORT"
  ensure_database "$PORT"
  connection_string "$PORT"
}

cmd_stop() {
  resolve_data_dir "${1:-}"
  PG_BIN="$(find_pg_bin)" || {
    log "PostgreSQL is not installed; nothing to stop"
    return 0
  }
  locate_existing_data_dir
  if ! is_running; then
    log "not running ($DATA_DIR)"
    return 0
  fi
  as_owner "$PG_BIN/pg_ctl" stop --pgdata="$DATA_DIR" --mode=fast --wait >/dev/null
  log "stopped ($DATA_DIR)"
}

cmd_status() {
  resolve_data_dir "${1:-}"
  PG_BIN="$(find_pg_bin)" || {
    log "PostgreSQL is not installed"
    return 1
  }
  locate_existing_data_dir
  if is_running; then
    connection_string "$(running_port)"
    return 0
  fi
  log "not running ($DATA_DIR)"
  return 1
}

main() {
  local command="${1:-}"
  shift || true
  case "$command" in
    start) cmd_start "$@" ;;
    stop) cmd_stop "$@" ;;
    status) cmd_status "$@" ;;
    url) connection_string "$PORT" ;;
    *)
      printf 'usage: %s start|stop|status|url [DATA_DIR]\n' "$0" >&2
      exit 2
      ;;
  esac
}

main "$@"
