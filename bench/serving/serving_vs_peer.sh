#!/usr/bin/env bash
# Serving vs peer: invariant-server against a Python grpcio + numpy server of
# the same model (bench/peers/peer_server.py: thread pool, no batching), both
# driven by build/bin/invariant-loadgen in one run, plus the in-process
# all-core sgemm of the same bank (numpy's OpenBLAS, batch 64) as the
# reference. Rows:
#   1 caller,  batch 1   p50 latency (Predict)
#   1 caller,  batch 64  rows/s
#   64 callers, batch 1  rows/s
# Both servers answer the same rows with the same scores first (check).
# The peer multiplies by the whole transformed bank, so the comparison uses
# rotated_fashion_rf trained with the rotations on the templates (a 32,000 ×
# 784 bank, as the peer expects); the shipped config, which rotates the input
# instead (PLACEMENT_INPUT), is measured on invariant-server alone in two extra
# rows, and so is the template model with a bf16 bank; the last row is numpy's
# one pass over the float bank at batch 1: the peer's compute per batch-1
# call, bound by memory bandwidth (ours: invariant-bench-encoders BM_PackedDot).
#
# Usage: bench/serving/serving_vs_peer.sh   (MODELS=dir with rotated_fashion_rf/1/model.bundle
#        to skip training; SECONDS_PER_RUN=5; OUT=file for the markdown table)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
PY=/usr/bin/python3
NAME=rotated_fashion_rf_templates  # the peer's model
SHIPPED=rotated_fashion_rf          # the shipped config (input placement)
RUN_SECONDS="${SECONDS_PER_RUN:-5}"
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

MODELS="${MODELS:-$BUILD/bench_models}"
BUNDLE="$MODELS/$NAME/1/model.bundle"
train() { # name config
  [[ -f "$MODELS/$1/1/model.bundle" ]] && return 0
  echo "training $1 ($2) into $MODELS" >&2
  "$BUILD/bin/invariant-train" --config="$2" --models="$MODELS" --name="$1" \
    >"$WORK/train.log" 2>&1 || { cat "$WORK/train.log"; exit 1; }
}
sed 's/placement: PLACEMENT_INPUT/placement: PLACEMENT_TEMPLATES/' \
  "$ROOT/train/configs/$SHIPPED.textproto" >"$WORK/$NAME.textproto"
grep -q PLACEMENT_TEMPLATES "$WORK/$NAME.textproto"
train "$NAME" "$WORK/$NAME.textproto"
train "$SHIPPED" "$ROOT/train/configs/$SHIPPED.textproto"
# The same template model with a bf16 bank (encoder.bank_dtype): half the
# bytes per request, summed in float in the same order.
sed 's/  seed: 5/  seed: 5\n  bank_dtype: BANK_DTYPE_BF16/' "$WORK/$NAME.textproto" >"$WORK/${NAME}_bf16.textproto"
grep -q BANK_DTYPE_BF16 "$WORK/${NAME}_bf16.textproto"
train "${NAME}_bf16" "$WORK/${NAME}_bf16.textproto"

wait_ready() { # log-file pattern
  for _ in $(seq 600); do
    if grep -q "$2" "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "not ready: $1" >&2; cat "$1" >&2; return 1
}

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
"$BUILD/bin/invariant-server" --models="$MODELS" --host=127.0.0.1 --port=0 --metrics_port=-1 \
  --poll_seconds=0 >"$WORK/server.out" 2>"$WORK/server.err" &
PIDS+=($!)
wait_ready "$WORK/server.out" "invariant-server ready"
OURS="127.0.0.1:$(sed -n 's/.*grpc_port=\([0-9]*\).*/\1/p' "$WORK/server.out")"

"$PY" "$ROOT/bench/peers/peer_server.py" serve --bundle="$BUNDLE" --name="$NAME" \
  >"$WORK/peer.out" 2>"$WORK/peer.err" &
PIDS+=($!)
wait_ready "$WORK/peer.out" "peer ready"
PEER="127.0.0.1:$(sed -n 's/.*port=\([0-9]*\).*/\1/p' "$WORK/peer.out")"

"$PY" "$ROOT/bench/peers/peer_server.py" check --bundle="$BUNDLE" --name="$NAME" \
  --targets="$OURS,$PEER"

load() { # target concurrency batch json [model]
  "$BUILD/bin/invariant-loadgen" --target="$1" --model="${5:-$NAME}" --concurrency="$2" \
    --batch="$3" --duration="$RUN_SECONDS" --json_out="$4" >/dev/null
}
for who in ours peer; do
  target=$OURS; [[ $who == peer ]] && target=$PEER
  load "$target" 1 1 "$WORK/$who-1x1.json"
  load "$target" 1 64 "$WORK/$who-1x64.json"
  load "$target" 64 1 "$WORK/$who-64x1.json"
done
load "$OURS" 1 1 "$WORK/shipped-1x1.json" "$SHIPPED"
load "$OURS" 64 1 "$WORK/shipped-64x1.json" "$SHIPPED"
load "$OURS" 1 1 "$WORK/bf16-1x1.json" "${NAME}_bf16"
load "$OURS" 64 1 "$WORK/bf16-64x1.json" "${NAME}_bf16"
"$PY" "$ROOT/bench/peers/peer_server.py" sgemm --bundle="$BUNDLE" --batch=64 \
  --seconds="$RUN_SECONDS" >"$WORK/sgemm.txt"
# numpy's pass over the 100 MB bank at batch 1: the peer's compute per call.
"$PY" "$ROOT/bench/peers/peer_server.py" sgemm --bundle="$BUNDLE" --batch=1 \
  --seconds="$RUN_SECONDS" >"$WORK/sgemv.txt"

"$PY" - "$WORK" "$(nproc)" "${OUT:-}" "$LOAD_BEFORE" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PYEOF'
import json, pathlib, re, sys
work, cores, out = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
load_before, load_after = sys.argv[4], sys.argv[5]
r = lambda who, run: json.loads((work / f"{who}-{run}.json").read_text())
sgemm = float(re.search(r"rows_per_second=([0-9.]+)", (work / "sgemm.txt").read_text()).group(1))
rows = []
o, p = r("ours", "1x1")["latency_us"]["p50"] / 1000, r("peer", "1x1")["latency_us"]["p50"] / 1000
rows.append(("1 caller, batch 1, p50 latency", f"{o:.2f} ms", f"{p:.2f} ms", f"{o / p:.2f}× the peer's"))
o, p = r("ours", "1x64")["rows_per_second"], r("peer", "1x64")["rows_per_second"]
rows.append(("1 caller, batch 64, rows/s", f"{o:,.0f}", f"{p:,.0f}", f"{o / p:.2f}× the peer"))
o, p = r("ours", "64x1")["rows_per_second"], r("peer", "64x1")["rows_per_second"]
rows.append(("64 callers, batch 1, rows/s", f"{o:,.0f}", f"{p:,.0f}",
             f"{o / p:.1f}× the peer; {100 * o / sgemm:.0f} % of sgemm"))
fails = {w: sum(r(w, run)["requests"]["failed"] for run in ("1x1", "1x64", "64x1")) for w in ("ours", "peer")}
for extra in ("shipped", "bf16"):
    fails["ours"] += sum(r(extra, run)["requests"]["failed"] for run in ("1x1", "64x1"))
lines = ["| load | invariant-server | Python grpcio + numpy peer | ratio |", "|---|---|---|---|"]
lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
peer_p50 = r("peer", "1x1")["latency_us"]["p50"] / 1000
peer_64 = r("peer", "64x1")["rows_per_second"]
for extra, label in (("shipped", "shipped input placement"), ("bf16", "template model, bf16 bank")):
    o = r(extra, "1x1")["latency_us"]["p50"] / 1000
    lines.append(f"| {label}: 1 caller, batch 1, p50 latency | {o:.2f} ms | | {o / peer_p50:.2f}× the peer's |")
    o = r(extra, "64x1")["rows_per_second"]
    lines.append(f"| {label}: 64 callers, batch 1, rows/s | {o:,.0f} | | "
                 f"{o / peer_64:.1f}× the peer; {100 * o / sgemm:.0f} % of sgemm |")
lines.append(f"| in-process all-core sgemm X·Bankᵀ, batch 64 (numpy OpenBLAS, {cores} cores) | {sgemm:,.0f} rows/s | | reference |")
sgemv = float(re.search(r"rows_per_second=([0-9.]+)", (work / "sgemv.txt").read_text()).group(1))
lines.append(f"| in-process one pass over the float bank, batch 1 (numpy OpenBLAS) | {1000 / sgemv:.2f} ms | | "
             f"the peer's compute per batch-1 call; its p50 is {peer_p50 * sgemv / 1000:.2f}× it |")
lines.append(f"\nFailed requests: invariant-server {fails['ours']}, peer {fails['peer']}. "
             f"Load average (1/5/15 min) before: {load_before}; after: {load_after}.")
text = "\n".join(lines)
print(text)
if out:
    pathlib.Path(out).write_text(text + "\n")
PYEOF
