#!/usr/bin/env bash
# The quick start on a fresh Debian 12 machine, end to end:
#   1. install the Debian packages         (deploy/install-deps.sh --quickstart: the
#                                           build's packages and curl, nothing for tests)
#   2. configure and build the three binaries it runs (invariant-train,
#      invariant-server, invariant-client; cmake -G Ninja, Release, into build/);
#      the tests are built by the test command, deploy/test.sh
#   3. train the default model             (invariant-train, train/configs/default.textproto)
#   4. start invariant-server              (127.0.0.1, --port=${PORT:-0}, metrics and REST ports picked)
#   5. call it with invariant-client       (health, metadata, featurize, predict on a tiny CSV)
#   6. call the Open Inference Protocol's REST endpoint (/v2/models/default/infer, curl or python3)
#   7. print the invariant_rows_total lines of /metrics, then stop the server
#
#   deploy/quickstart.sh [--skip-deps] [--skip-build] [--workdir=DIR]
#
# --workdir=DIR   where models/ (and the example CSV and the server log) go;
#                 default: the repository root, where models/ and quickstart-*
#                 are ignored by git (.gitignore): the script writes nothing
#                 else outside build/.
# Environment: PORT (gRPC port, default 0 = a free one), BUILD_DIR (default
# REPO/build), JOBS (build parallelism, default 2), TRAIN_CONFIG (default
# train/configs/default.textproto).
#
# Idempotent: the build is incremental, and the model is trained once as
# version 1 of WORKDIR/models/default (a later run reuses it). Exits non-zero
# on the first failure; the server is always stopped on exit.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SKIP_DEPS=0
SKIP_BUILD=0
WORKDIR="$REPO"
for arg in "$@"; do
  case "$arg" in
    --skip-deps) SKIP_DEPS=1 ;;
    --skip-build) SKIP_BUILD=1 ;;
    --workdir=*) WORKDIR="${arg#--workdir=}" ;;
    -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "quickstart: unknown argument '$arg' (expected --skip-deps, --skip-build, --workdir=DIR)" >&2; exit 2 ;;
  esac
done
[[ -n "$WORKDIR" ]] || { echo "quickstart: --workdir: expected a directory, got ''" >&2; exit 2; }
mkdir -p "$WORKDIR"
WORKDIR="$(cd "$WORKDIR" && pwd)"
BUILD_DIR="${BUILD_DIR:-$REPO/build}"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$REPO/$BUILD_DIR"
JOBS="${JOBS:-2}"
TRAIN_CONFIG="${TRAIN_CONFIG:-$REPO/train/configs/default.textproto}"
MODELS="$WORKDIR/models"
BIN="$BUILD_DIR/bin"
CLIENT="$BIN/invariant-client"

step() { printf '\n==> %s\n' "$*"; }
die() { echo "quickstart: FAILED: $*" >&2; exit 1; }

SERVER_PID=""
RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/invariant-quickstart.XXXXXX")"
stop_server() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 150); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=""
}
cleanup() {
  stop_server
  rm -rf "$RUN_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 1. dependencies -----------------------------------------------------------
if [[ $SKIP_DEPS == 0 ]]; then
  step "installing Debian packages (deploy/install-deps.sh --quickstart)"
  bash "$REPO/deploy/install-deps.sh" --quickstart || die "deploy/install-deps.sh --quickstart"
fi

# --- 2. build ------------------------------------------------------------------
if [[ $SKIP_BUILD == 0 ]]; then
  step "configuring and building invariant-train, invariant-server, invariant-client into $BUILD_DIR (-j$JOBS)"
  # The Python package needs python3-grpcio and friends, which only the tests
  # use: a new build directory starts with it off, and deploy/test.sh turns it
  # on; a directory already configured keeps its choice (so a quick start
  # after the tests drops no test suite).
  PYTHON_OPTION=()
  grep -q '^INVARIANT_BUILD_PYTHON:' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null \
    || PYTHON_OPTION=(-DINVARIANT_BUILD_PYTHON=OFF)
  cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${PYTHON_OPTION[@]}" \
    || die "cmake configure"
  cmake --build "$BUILD_DIR" -j"$JOBS" --target invariant-train invariant-server invariant-client \
    || die "cmake build"
fi
for b in invariant-train invariant-server invariant-client; do
  [[ -x "$BIN/$b" ]] || die "$BIN/$b missing (build first, or drop --skip-build)"
done

# --- 3. train ------------------------------------------------------------------
if [[ -f "$MODELS/default/1/model.bundle" ]]; then
  step "default model: reusing $MODELS/default/1"
else
  step "training the default model ($TRAIN_CONFIG) into $MODELS/default/1"
  [[ -f "$TRAIN_CONFIG" ]] || die "training config $TRAIN_CONFIG missing"
  mkdir -p "$MODELS"
  "$BIN/invariant-train" --config="$TRAIN_CONFIG" --models="$MODELS" --name=default --version=1 \
    || die "invariant-train"
fi
[[ -f "$MODELS/default/1/model.bundle" ]] || die "no bundle at $MODELS/default/1/model.bundle"

# --- 4. serve ------------------------------------------------------------------
step "starting invariant-server (models $MODELS)"
SERVER_OUT="$RUN_DIR/server.out"
SERVER_LOG="$WORKDIR/quickstart-server.log"
"$BIN/invariant-server" --models="$MODELS" --host=127.0.0.1 --port="${PORT:-0}" --metrics_port=0 --http_port=0 \
  >"$SERVER_OUT" 2>"$SERVER_LOG" &
SERVER_PID=$!
READY=""
for _ in $(seq 1 600); do
  READY="$(grep -m1 '^invariant-server ready' "$SERVER_OUT" 2>/dev/null || true)"
  [[ -n "$READY" ]] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$SERVER_LOG" >&2; die "the server exited before its ready line"; }
  sleep 0.1
done
[[ -n "$READY" ]] || { tail -20 "$SERVER_LOG" >&2; die "no ready line within 60 s"; }
echo "$READY"
GRPC_PORT="$(sed -n 's/.*grpc_port=\([0-9]*\).*/\1/p' <<<"$READY")"
METRICS_PORT="$(sed -n 's/.*metrics_port=\([0-9]*\).*/\1/p' <<<"$READY")"
HTTP_PORT="$(sed -n 's/.*http_port=\([0-9]*\).*/\1/p' <<<"$READY")"
[[ -n "$GRPC_PORT" && -n "$METRICS_PORT" && -n "$HTTP_PORT" ]] || die "cannot parse the ready line '$READY'"
TARGET="127.0.0.1:$GRPC_PORT"

# --- 5. call it ----------------------------------------------------------------
step "invariant-client health --target=$TARGET"
"$CLIENT" health --target="$TARGET" || die "health"

step "invariant-client metadata default"
METADATA="$("$CLIENT" metadata default --target="$TARGET")" || die "metadata"
echo "$METADATA"
DIM="$(awk -F, '$1 == "input_dim" {print $2}' <<<"$METADATA")"
[[ "$DIM" =~ ^[0-9]+$ && "$DIM" -gt 0 ]] || die "metadata: no input_dim"

# Four example rows of the model's input_dim. When the rows split into blocks
# of 8 (the default Xperm model: 5 blocks of 8 symbols) every block is one-hot,
# like Xperm's data; otherwise the values are a fixed smooth pattern.
ROWS_CSV="$WORKDIR/quickstart-rows.csv"
awk -v d="$DIM" 'BEGIN {
  for (j = 0; j < d; j++) printf "%sx%d", (j ? "," : ""), j; printf "\n";
  for (r = 0; r < 4; r++) {
    for (j = 0; j < d; j++) {
      if (d % 8 == 0) { b = int(j / 8); v = ((j % 8) == ((r * 3 + b * (r + 1)) % 8)) ? 1 : 0 }
      else { v = sprintf("%.4f", sin(r + 0.37 * j)) }
      printf "%s%s", (j ? "," : ""), v
    }
    printf "\n"
  }
}' >"$ROWS_CSV"
echo "example rows: $ROWS_CSV (4 rows of $DIM)"

step "invariant-client featurize default --input=$ROWS_CSV (first 8 columns shown)"
FEATURES="$("$CLIENT" featurize default --target="$TARGET" --input="$ROWS_CSV")" || die "featurize"
cut -d, -f1-8 <<<"$FEATURES"
[[ "$(wc -l <<<"$FEATURES")" -eq 5 ]] || die "featurize: expected a header and 4 rows"

step "invariant-client predict default --input=$ROWS_CSV"
PREDICTIONS="$("$CLIENT" predict default --target="$TARGET" --input="$ROWS_CSV")" || die "predict"
echo "$PREDICTIONS"

# --- 6. the Open Inference Protocol over REST ------------------------------------
REST_URL="http://127.0.0.1:$HTTP_PORT/v2/models/default/infer"
REST_BODY="{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,$DIM],\"data\":[$(sed -n 2p "$ROWS_CSV")]}],\"outputs\":[{\"name\":\"predicted_class\"}]}"
step "POST $REST_URL (the first example row)"
post() {  # post URL BODY: curl when installed, else python3's urllib
  if command -v curl >/dev/null; then
    curl -fsS --max-time 10 -H 'Content-Type: application/json' -d "$2" "$1"
  else
    python3 -c 'import sys, urllib.request as u; print(u.urlopen(u.Request(sys.argv[1], data=sys.argv[2].encode(), method="POST"), timeout=10).read().decode())' "$1" "$2"
  fi
}
REST_REPLY="$(post "$REST_URL" "$REST_BODY")" || die "REST infer"
echo "$REST_REPLY"
REST_CLASS="$(sed -n 's/.*"name":"predicted_class","datatype":"BYTES","shape":\[1\],"data":\["\([^"]*\)"\].*/\1/p' <<<"$REST_REPLY")"
CLI_CLASS="$(sed -n 2p <<<"$PREDICTIONS" | cut -d, -f1)"
[[ -n "$REST_CLASS" && "$REST_CLASS" == "$CLI_CLASS" ]] \
  || die "REST predicted_class '$REST_CLASS' differs from invariant-client's '$CLI_CLASS'"
echo "REST predicted_class of row 1: $REST_CLASS (the same as invariant-client predict)"

# --- 7. metrics ----------------------------------------------------------------
step "invariant_rows_total from http://127.0.0.1:$METRICS_PORT/metrics"
scrape() {
  if command -v curl >/dev/null; then
    curl -fsS --max-time 10 "http://127.0.0.1:$METRICS_PORT/metrics"
  else  # bash's /dev/tcp: no extra package needed
    exec 3<>"/dev/tcp/127.0.0.1/$METRICS_PORT"
    printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    timeout 10 cat <&3
    exec 3<&-
  fi
}
METRICS="$(scrape)" || die "metrics scrape"
ROWS_LINES="$(grep '^invariant_rows_total' <<<"$METRICS" || true)"
[[ -n "$ROWS_LINES" ]] || die "no invariant_rows_total in /metrics"
echo "$ROWS_LINES"

# --- 8. the model page ---------------------------------------------------------
step "the model page, served at http://127.0.0.1:$HTTP_PORT/v2/models/default/versions/1/report"
PAGE_URL="http://127.0.0.1:$HTTP_PORT/v2/models/default/versions/1/report"
if [[ ! -f "$MODELS/default/1/report.html" ]]; then
  echo "no report.html: this model was trained before model pages (remove $MODELS/default to retrain)"
elif command -v curl >/dev/null; then
  PAGE="$(curl -fsS --max-time 10 "$PAGE_URL")" || die "GET $PAGE_URL"
  [[ "$PAGE" == *'<svg class="plot"'* ]] || die "the served model page has no plot"
  echo "served: $(wc -c <<<"$PAGE") bytes of HTML with its plots, the same as the file below"
fi

stop_server
step "quickstart: OK (server stopped; models in $MODELS)"
echo "The model page of the model it trained (open it in a browser):"
echo "  file://$MODELS/default/1/report.html"
echo "  or, while a server runs on these models, http://HOST:HTTP_PORT/v2/models/default/versions/1/report"
echo "  (every model: http://HOST:HTTP_PORT/v2/report)"
