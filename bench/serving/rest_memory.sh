#!/usr/bin/env bash
# Peak memory of one large REST infer call: how much the server's resident
# set grows (peak, /proc/PID/status VmHWM after resetting it through
# /proc/PID/clear_refs) for one BODY_MIB infer body, then for PARALLEL of them
# at once, and where the resident set settles afterwards, against the
# server's resident set before the call. JSON and (with ENCODING=binary or
# both) Triton's binary tensor extension, same rows.
#
# The model is the quick start's (train/configs/default.textproto, 40 inputs),
# trained once into MODELS; the request asks for the "scores" output only, so
# the figure is the cost of taking the body in, not of a large answer.
#
# Usage: bench/serving/rest_memory.sh
# Environment: BUILD (default REPO/build), MODELS (default BUILD/bench_models),
#   BODY_MIB (15), PARALLEL (8), ENCODING (json | binary | both; default both).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
MODELS="${MODELS:-$BUILD/bench_models}"
BODY_MIB="${BODY_MIB:-15}"
PARALLEL="${PARALLEL:-8}"
ENCODING="${ENCODING:-both}"
for b in invariant-train invariant-server; do
  [[ -x "$BUILD/bin/$b" ]] || { echo "rest_memory: $BUILD/bin/$b missing (build it first)" >&2; exit 2; }
done
if [[ ! -f "$MODELS/default/1/model.bundle" ]]; then
  "$BUILD/bin/invariant-train" --config="$ROOT/train/configs/default.textproto" \
    --models="$MODELS" --name=default >/dev/null
fi
WORK="$(mktemp -d)"
trap 'kill "$SERVER_PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$BUILD/bin/invariant-server" --models="$MODELS" --host=127.0.0.1 --port=0 --metrics_port=-1 \
  --http_port=0 --http_max_body_bytes=$(((BODY_MIB + 1) << 20)) --max_queue_rows=1000000 \
  --max_request_rows=1000000 --max_queue_bytes=$((4 << 30)) \
  --http_max_inflight_bytes=$((PARALLEL * (BODY_MIB + 1) << 20)) \
  >"$WORK/ready" 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 600); do
  grep -q "http_port=" "$WORK/ready" 2>/dev/null && break
  sleep 0.1
done
PORT="$(grep -o 'http_port=[0-9]*' "$WORK/ready" | cut -d= -f2)"
[[ -n "$PORT" ]] || { echo "rest_memory: the server did not start" >&2; cat "$WORK/server.log" >&2; exit 1; }

/usr/bin/python3 - "$SERVER_PID" "$PORT" "$BODY_MIB" "$PARALLEL" "$ENCODING" <<'EOF'
import http.client, json, sys, threading, time
import numpy as np

pid, port, body_mib, parallel, encoding = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
DIM = 40

def status_kib(field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])

def reset_peak():
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")

def bodies():
    rng = np.random.default_rng(1)
    # JSON: rows until the body reaches BODY_MIB.
    per_row = len(json.dumps(rng.standard_normal(DIM).astype(np.float32).tolist())) + 1
    rows = int(body_mib * 2**20 / per_row)
    X = rng.standard_normal((rows, DIM)).astype(np.float32)
    out = {}
    if encoding in ("json", "both"):
        body = json.dumps({"inputs": [{"name": "input", "shape": [rows, DIM], "datatype": "FP32",
                                        "data": X.ravel().tolist()}],
                           "outputs": [{"name": "scores"}]}).encode()
        out["json"] = (body, {"Content-Type": "application/json"}, rows)
    if encoding in ("binary", "both"):
        raw = X.tobytes()
        header = json.dumps({"inputs": [{"name": "input", "shape": [rows, DIM], "datatype": "FP32",
                                          "parameters": {"binary_data_size": len(raw)}}],
                             "outputs": [{"name": "scores"}]}).encode()
        out["binary"] = (header + raw, {"Content-Type": "application/octet-stream",
                                         "Inference-Header-Content-Length": str(len(header))}, rows)
    return out

def call(body, headers, results, i):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    c.request("POST", "/v2/models/default/infer", body=body, headers=headers)
    r = c.getresponse()
    r.read()
    results[i] = r.status
    c.close()

warm = json.dumps({"inputs": [{"name": "input", "shape": [1, DIM], "datatype": "FP32",
                               "data": [0.0] * DIM}]}).encode()
call(warm, {}, [None], 0)
print("| encoding | body MiB | rows | calls at once | RSS before MiB | peak growth MiB | peak growth / body bytes | RSS after MiB | status |")
print("|---|---|---|---|---|---|---|---|---|")
for name, (body, headers, rows) in bodies().items():
    for n in (1, parallel):
        time.sleep(0.5)
        before = status_kib("VmRSS")
        reset_peak()
        results = [None] * n
        threads = [threading.Thread(target=call, args=(body, headers, results, i)) for i in range(n)]
        for t in threads: t.start()
        for t in threads: t.join()
        peak = status_kib("VmHWM")
        time.sleep(1.0)
        after = status_kib("VmRSS")
        growth = (peak - before) / 1024
        print(f"| {name} | {len(body) / 2**20:.1f} | {rows} | {n} | {before / 1024:.0f} | {growth:.0f} | "
              f"{growth * 2**20 / (n * len(body)):.2f}x | {after / 1024:.0f} | {sorted(set(results))} |")
EOF
