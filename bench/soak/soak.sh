#!/usr/bin/env bash
# Soak and chaos run of invariant-server: bench/soak/soak.sh [minutes=30]
#
# Starts build/bin/invariant-server on loopback over a private models
# directory (model "soak", reloaded, and model "steady", never touched) and,
# every minute:
#   * valid load: invariant-loadgen unary Predict (open loop), invariant-loadgen
#     StreamPredict (bidirectional streams), bench/soak/chaos.py (unary, streams,
#     OIP ModelInfer, bad requests, bad streams, cancellations, 1 ms deadlines);
#   * a hot reload: a new version of "soak" copied into the models directory
#     (staged under a dot-name, then renamed into place) and a SIGHUP;
#   * every 5th minute also a corrupt version (which must be refused while the
#     previous one keeps serving);
#   * a SIGHUP storm (50 signals in about a second).
# At the end of each minute it samples the server's RSS, threads and open fds
# and writes them with the minute's p99 latencies and request counts to
# OUT/soak.csv; OUT/soak.png plots them (gnuplot). Counts by category and code
# are summed in OUT/summary.json.
#
# Fails (exit 1) when: the server exits; a valid request got anything but OK
# (a "lost" request) or a bad one got OK; or RSS, threads or fds grow without
# bound, i.e. after the warm-up minute the last minute exceeds the larger of the
# warm-up and the first half's maximum by more than the slack (RSS 25% + 64 MiB,
# threads 16, fds 32). Environment: BUILD (default build), OUT (default
# BUILD/soak), RATE (loadgen requests/s, default 100), MINUTE_SECONDS (length
# of a "minute", default 60; shorter for a smoke test of the script).
set -euo pipefail
cd "$(dirname "$0")/../.."
MINUTES=${1:-30}
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/soak}
RATE=${RATE:-100}
PERIOD=${MINUTE_SECONDS:-60}
LOAD_SECONDS=$((PERIOD - 5))
BIN=$BUILD/bin
for b in invariant-server invariant-loadgen; do
  [[ -x $BIN/$b ]] || { echo "soak: $BIN/$b missing (cmake --build $BUILD)" >&2; exit 2; }
done
[[ -d $BUILD/python/invariant_serve/_proto ]] ||
  { echo "soak: $BUILD/python not staged (cmake --build $BUILD --target invariant_python)" >&2; exit 2; }

rm -rf "$OUT" && mkdir -p "$OUT/minutes" "$OUT/models/soak/1" "$OUT/models/steady/1" "$OUT/bin"
# Private copies, so that a rebuild during the run does not swap the binaries.
cp "$BIN/invariant-server" "$BIN/invariant-loadgen" "$OUT/bin/"
cp -r "$BUILD/python" "$OUT/python"
BIN=$OUT/bin
FIXTURES=tests/fixtures/compat_models
GOOD_BUNDLE=$FIXTURES/xperm_cdf/1/model.bundle
cp "$GOOD_BUNDLE" "$OUT/models/soak/1/model.bundle"
cp "$FIXTURES/torus_spectral/1/model.bundle" "$OUT/models/steady/1/model.bundle"

$BIN/invariant-server --models="$OUT/models" --host=127.0.0.1 --port=0 --metrics_port=0 \
  --http_port=0 --version_policy=latest:2 --poll_seconds=10 --removal_grace_seconds=2 \
  >"$OUT/server.stdout" 2>"$OUT/server.stderr" &
SERVER=$!
cleanup() {
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 300); do
  grep -q "invariant-server ready" "$OUT/server.stdout" 2>/dev/null && break
  kill -0 "$SERVER" 2>/dev/null || { echo "soak: server exited at startup" >&2; cat "$OUT/server.stderr" >&2; exit 1; }
  sleep 0.1
done
PORT=$(sed -n 's/.*invariant-server ready grpc_port=\([0-9]*\).*/\1/p' "$OUT/server.stdout")
[[ -n $PORT ]] || { echo "soak: server not ready" >&2; exit 1; }
TARGET=127.0.0.1:$PORT
HTTP_PORT=$(sed -n 's/.*http_port=\([0-9]*\).*/\1/p' "$OUT/server.stdout")
echo "soak: server pid $SERVER on $TARGET, $MINUTES minutes, output in $OUT"

alive() { kill -0 "$SERVER" 2>/dev/null; }
stage_version() {  # stage_version VERSION SOURCE_BYTES_FILE
  local staging="$OUT/models/soak/.staging-$1"
  mkdir -p "$staging" && cp "$2" "$staging/model.bundle" && mv "$staging" "$OUT/models/soak/$1"
}
head -c 4096 /dev/urandom >"$OUT/corrupt.bundle"

echo "minute,rss_mib,threads,fds,unary_p99_us,stream_p99_us,chaos_valid_p99_us,sent,ok,lost,bad_accepted,versions" >"$OUT/soak.csv"
version=1
failed=0
for minute in $(seq 1 "$MINUTES"); do
  dir=$OUT/minutes/$minute
  mkdir -p "$dir"
  $BIN/invariant-loadgen --target="$TARGET" --model=soak --duration="$LOAD_SECONDS" --rate="$RATE" \
    --concurrency=8 --batch=4 --json_out="$dir/unary.json" >"$dir/unary.log" 2>&1 &
  unary=$!
  $BIN/invariant-loadgen --target="$TARGET" --model=steady --duration="$LOAD_SECONDS" --rate=$((RATE / 4)) \
    --concurrency=2 --mode=stream --method=featurize --json_out="$dir/stream.json" \
    >"$dir/stream.log" 2>&1 &
  stream=$!
  /usr/bin/python3 bench/soak/chaos.py --target="$TARGET" --model=soak --seconds="$LOAD_SECONDS" \
    --http_port="$HTTP_PORT" --python_path="$OUT/python" --seed="$minute" --out="$dir/chaos.json" >"$dir/chaos.log" 2>&1 &
  chaos=$!
  sleep $((PERIOD / 4))
  version=$((version + 1))
  stage_version "$version" "$GOOD_BUNDLE"
  kill -HUP "$SERVER"
  if ((minute % 5 == 0)); then
    sleep $((PERIOD / 12))
    version=$((version + 1))
    stage_version "$version" "$OUT/corrupt.bundle"
    kill -HUP "$SERVER"
  fi
  sleep $((PERIOD / 6))
  for _ in $(seq 50); do kill -HUP "$SERVER" 2>/dev/null || true; sleep 0.02; done
  wait "$unary" || true
  wait "$stream" || true
  wait "$chaos" || true
  if ! alive; then
    echo "soak: minute $minute: the server exited" >&2
    failed=1
    break
  fi
  rss_kib=$(awk '/^VmRSS/ {print $2}' "/proc/$SERVER/status")
  threads=$(awk '/^Threads/ {print $2}' "/proc/$SERVER/status")
  fds=$(ls "/proc/$SERVER/fd" | wc -l)
  versions=$(ls "$OUT/models/soak" | grep -c '^[0-9]' || true)
  /usr/bin/python3 bench/soak/analyze.py minute --dir="$dir" --minute="$minute" --rss_kib="$rss_kib" \
    --threads="$threads" --fds="$fds" --versions="$versions" >>"$OUT/soak.csv"
  tail -n 1 "$OUT/soak.csv"
done

/usr/bin/python3 bench/soak/analyze.py verdict --out="$OUT" --minutes="$MINUTES" || failed=1
if command -v gnuplot >/dev/null; then
  gnuplot -e "csv='$OUT/soak.csv'; png='$OUT/soak.png'" bench/soak/soak.gnuplot || true
fi
grep -c "SIGHUP" "$OUT/server.stderr" | sed 's/^/soak: SIGHUPs logged by the server: /'
exit "$failed"
