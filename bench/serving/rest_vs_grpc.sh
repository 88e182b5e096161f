#!/usr/bin/env bash
# REST vs gRPC: the same invariant-server, the same model, the same tool
# (build/bin/invariant-loadgen), closed loop, for
#   gRPC unary            (invariant.v1 Predict / Featurize, protobuf)
#   OIP gRPC              (the Open Inference Protocol's ModelInfer, raw contents)
#   REST JSON             (POST /v2/models/{name}/infer, JSON tensors)
#   REST binary           (the same route, Triton's binary tensor extension)
# at each batch size of BATCHES. Prints one table: rows/s, p50 and p99
# latency, failed requests, TCP connections opened (REST: one per worker when
# the server keeps connections alive, one per request when it closes them)
# and each other row's rows/s as a ratio of the invariant.v1 gRPC row's at
# the same batch. Then, for the two protocol paths (OIP gRPC, REST binary),
# a second table: a call asking for the features and the scores together
# against one asking for the features alone (the cost ratio, time per row;
# both are one computation since the features are computed once).
# A run in which every request failed (e.g. REST binary against a server
# without the binary extension) is shown as failed with its first error; the
# script goes on and exits 0 as long as the gRPC rows succeeded.
#
# The model is the quick start's (train/configs/default.textproto), trained
# once into MODELS; the server listens on 127.0.0.1 with --port=0 and
# --http_port=0 (the ports come from its ready line).
#
# Usage: bench/serving/rest_vs_grpc.sh
# Environment: BUILD (default REPO/build, with invariant-train, -server and
#   -loadgen built), MODELS (default BUILD/bench_models; default/1 is trained
#   when missing), SECONDS_PER_RUN (10), CONCURRENCY (8), BATCHES ("1 64"),
#   METHOD (predict | featurize; default predict), OUT (also write the table
#   to this file), KEEP (a directory to keep the JSON reports and the server
#   log in).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
PY=/usr/bin/python3
RUN_SECONDS="${SECONDS_PER_RUN:-10}"
CONCURRENCY="${CONCURRENCY:-8}"
BATCHES="${BATCHES:-1 64}"
METHOD="${METHOD:-predict}"
MODELS="${MODELS:-$BUILD/bench_models}"
NAME=default
for b in invariant-train invariant-server invariant-loadgen; do
  [[ -x "$BUILD/bin/$b" ]] || { echo "rest_vs_grpc: $BUILD/bin/$b missing (build it first)" >&2; exit 2; }
done
[[ "$METHOD" == predict || "$METHOD" == featurize ]] \
  || { echo "rest_vs_grpc: METHOD: expected predict or featurize, got '$METHOD'" >&2; exit 2; }

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [[ -n "${KEEP:-}" ]]; then mkdir -p "$KEEP" && cp -r "$WORK"/. "$KEEP"/; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ ! -f "$MODELS/$NAME/1/model.bundle" ]]; then
  echo "training $NAME (train/configs/default.textproto) into $MODELS" >&2
  mkdir -p "$MODELS"
  "$BUILD/bin/invariant-train" --config="$ROOT/train/configs/default.textproto" \
    --models="$MODELS" --name="$NAME" --version=1 >"$WORK/train.log" 2>&1 \
    || { cat "$WORK/train.log" >&2; exit 1; }
fi

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
"$BUILD/bin/invariant-server" --models="$MODELS" --host=127.0.0.1 --port=0 --http_port=0 \
  --metrics_port=-1 --poll_seconds=0 >"$WORK/server.out" 2>"$WORK/server.log" &
SERVER_PID=$!
READY=""
for _ in $(seq 600); do
  READY="$(grep -m1 '^invariant-server ready' "$WORK/server.out" 2>/dev/null || true)"
  [[ -n "$READY" ]] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; echo "rest_vs_grpc: the server exited" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$READY" ]] || { cat "$WORK/server.log" >&2; echo "rest_vs_grpc: no ready line in 60 s" >&2; exit 1; }
GRPC_PORT="$(sed -n 's/.*grpc_port=\([0-9]*\).*/\1/p' <<<"$READY")"
HTTP_PORT="$(sed -n 's/.*http_port=\([0-9]*\).*/\1/p' <<<"$READY")"
[[ -n "$GRPC_PORT" && -n "$HTTP_PORT" ]] || { echo "rest_vs_grpc: cannot parse '$READY'" >&2; exit 1; }

# run NAME BATCH FLAGS...: one closed-loop run; its JSON report and exit code.
run() {
  local name="$1" batch="$2"
  shift 2
  local rc=0
  "$BUILD/bin/invariant-loadgen" --model="$NAME" --method="$METHOD" --concurrency="$CONCURRENCY" \
    --batch="$batch" --duration="$RUN_SECONDS" --json_out="$WORK/$name-$batch.json" "$@" \
    >"$WORK/$name-$batch.out" 2>"$WORK/$name-$batch.err" || rc=$?
  echo "$rc" >"$WORK/$name-$batch.rc"
  echo "  $name batch $batch: exit $rc" >&2
}
echo "invariant-loadgen: $METHOD, $CONCURRENCY workers, ${RUN_SECONDS} s per run, batches $BATCHES" >&2
for batch in $BATCHES; do
  run grpc "$batch" --protocol=grpc --target="127.0.0.1:$GRPC_PORT"
  run oip-grpc "$batch" --protocol=oip_grpc --target="127.0.0.1:$GRPC_PORT"
  run rest-json "$batch" --protocol=rest --rest_encoding=json --target="127.0.0.1:$HTTP_PORT"
  run rest-binary "$batch" --protocol=rest --rest_encoding=binary --target="127.0.0.1:$HTTP_PORT"
  if [[ "$METHOD" == predict ]]; then
    # The features alone and the features with the scores, on both protocol paths.
    for m in featurize featurize_predict; do
      run "oip-grpc-$m" "$batch" --protocol=oip_grpc --method="$m" --target="127.0.0.1:$GRPC_PORT"
      run "rest-binary-$m" "$batch" --protocol=rest --rest_encoding=binary --method="$m" \
        --target="127.0.0.1:$HTTP_PORT"
    done
  fi
done

"$PY" - "$WORK" "$BATCHES" "${OUT:-}" "$(nproc)" "$LOAD_BEFORE" "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "$CONCURRENCY" "$RUN_SECONDS" "$METHOD" <<'PYEOF'
import json, pathlib, sys
work, batches, out, cores, load_before, load_after, conc, secs, method = sys.argv[1:10]
work = pathlib.Path(work)
runs = (("grpc", "gRPC unary (protobuf)"), ("oip-grpc", "OIP gRPC ModelInfer (raw)"),
        ("rest-json", "REST JSON"), ("rest-binary", "REST binary tensors"))

def result(name, batch):
    rc = int((work / f"{name}-{batch}.rc").read_text())
    path = work / f"{name}-{batch}.json"
    report = json.loads(path.read_text()) if path.exists() else None
    if report is None or report["requests"]["ok"] == 0:
        err = (work / f"{name}-{batch}.err").read_text().strip().splitlines()
        why = err[-1] if err else f"exit {rc}"
        if report and report.get("error_messages"):
            code, message = sorted(report["error_messages"].items())[0]
            why = f"{code}: {message}"
        return None, why[:160]
    return report, None

lines = [f"| batch | protocol | rows/s | p50 (ms) | p99 (ms) | failed | connections | rows/s vs gRPC |",
         "|---|---|---|---|---|---|---|---|"]
grpc_failed = False
for batch in batches.split():
    base, _ = result("grpc", batch)
    grpc_failed |= base is None
    for name, label in runs:
        r, why = result(name, batch)
        if r is None:
            lines.append(f"| {batch} | {label} | failed | | | | | {why} |")
            continue
        ratio = "1" if name == "grpc" else (
            f"{r['rows_per_second'] / base['rows_per_second']:.2f}" if base else "")
        conns = "" if name == "grpc" else f"{r['connections']:,}"
        lines.append(f"| {batch} | {label} | {r['rows_per_second']:,.0f} | "
                     f"{r['latency_us']['p50'] / 1000:.2f} | {r['latency_us']['p99'] / 1000:.2f} | "
                     f"{r['requests']['failed']} | {conns} | {ratio} |")
if method == "predict":
    lines += ["", "| batch | protocol | features rows/s | features + scores rows/s | cost ratio |",
              "|---|---|---|---|---|"]
    for batch in batches.split():
        for name, label in (("oip-grpc", "OIP gRPC"), ("rest-binary", "REST binary")):
            alone, why_a = result(f"{name}-featurize", batch)
            both, why_b = result(f"{name}-featurize_predict", batch)
            if alone is None or both is None:
                lines.append(f"| {batch} | {label} | failed | | {why_a or why_b} |")
                continue
            ratio = alone["rows_per_second"] / both["rows_per_second"]
            lines.append(f"| {batch} | {label} | {alone['rows_per_second']:,.0f} | "
                         f"{both['rows_per_second']:,.0f} | {ratio:.2f} |")
lines.append(f"\n{method}, closed loop, {conc} workers, {secs} s per run, {cores} cores shared by "
             f"the server and the load generator. Load average (1/5/15 min) before: "
             f"{load_before}; after: {load_after}.")
text = "\n".join(lines)
print(text)
if out:
    pathlib.Path(out).write_text(text + "\n")
sys.exit(1 if grpc_failed else 0)
PYEOF
