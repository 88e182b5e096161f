#!/usr/bin/env bash
# What the request log costs: batch-1 Predict throughput of two
# invariant-servers on the same model, one with --access_log=off and one with
# --access_log=all writing to a file, driven by build/bin/invariant-loadgen
# (closed loop) over gRPC (invariant.v1) and REST (JSON), the two servers'
# runs ALTERNATED (ABBA) for ROUNDS rounds so both see the same machine.
# Prints the median rows/s of each and their ratio (the target: all >= 0.97 ·
# off), and the server's CPU time per call (user + system, from /proc) of
# each, the steadier figure on a small shared machine: at saturation the
# throughput is the cores over the CPU a call costs. And the lines the
# logging server wrote (each call once).
#
# Usage: bench/serving/access_log_cost.sh
# Environment: BUILD (default REPO/build, with invariant-train, -server and
#   -loadgen built), MODELS (default BUILD/bench_models; default/1 is trained
#   when missing), ROUNDS (6), SECONDS_PER_RUN (5), CONCURRENCY (8),
#   PROTOCOLS ("grpc rest"), SECOND_FLAGS (the second server's flags instead
#   of the log's: SECOND_FLAGS=--access_log=off measures the noise),
#   OUT (also write the table here).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
PY=/usr/bin/python3
ROUNDS="${ROUNDS:-6}"
RUN_SECONDS="${SECONDS_PER_RUN:-5}"
CONCURRENCY="${CONCURRENCY:-8}"
MODELS="${MODELS:-$BUILD/bench_models}"
NAME=default
for b in invariant-train invariant-server invariant-loadgen; do
  [[ -x "$BUILD/bin/$b" ]] || { echo "access_log_cost: $BUILD/bin/$b missing (build it first)" >&2; exit 2; }
done

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
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

# start MODE FLAGS...: a server; its ports in $WORK/MODE.ports ("GRPC HTTP").
start() {
  local mode="$1"
  shift
  "$BUILD/bin/invariant-server" --models="$MODELS" --host=127.0.0.1 --port=0 --http_port=0 \
    --metrics_port=-1 --poll_seconds=0 "$@" >"$WORK/$mode.out" 2>"$WORK/$mode.log" &
  PIDS+=($!)
  echo $! >"$WORK/$mode.pid"
  local ready=""
  for _ in $(seq 600); do
    ready="$(grep -m1 '^invariant-server ready' "$WORK/$mode.out" 2>/dev/null || true)"
    [[ -n "$ready" ]] && break
    sleep 0.1
  done
  [[ -n "$ready" ]] || { cat "$WORK/$mode.log" >&2; echo "access_log_cost: $mode not ready" >&2; exit 1; }
  echo "$(sed -n 's/.*grpc_port=\([0-9]*\).*/\1/p' <<<"$ready") $(sed -n 's/.*http_port=\([0-9]*\).*/\1/p' <<<"$ready")" \
    >"$WORK/$mode.ports"
}
start off --access_log=off
start all ${SECOND_FLAGS:---access_log=all --access_log_file="$WORK/access.log"}

# cpu_ticks PID: the process's user + system CPU time, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
  for protocol in ${PROTOCOLS:-grpc rest}; do
    order="off all"
    (( round % 2 == 0 )) && order="all off"  # ABBA: neither always runs first
    for mode in $order; do
      read -r grpc_port http_port <"$WORK/$mode.ports"
      port=$grpc_port
      extra=()
      if [[ $protocol == rest ]]; then port=$http_port; extra=(--rest_encoding=json); fi
      pid="$(cat "$WORK/$mode.pid")"
      cpu_before="$(cpu_ticks "$pid")"
      "$BUILD/bin/invariant-loadgen" --model="$NAME" --method=predict --protocol="$protocol" \
        --concurrency="$CONCURRENCY" --batch=1 --duration="$RUN_SECONDS" \
        --target="127.0.0.1:$port" --json_out="$WORK/$protocol-$mode-$round.json" "${extra[@]}" \
        >/dev/null 2>"$WORK/$protocol-$mode-$round.err"
      echo $(( $(cpu_ticks "$pid") - cpu_before )) >"$WORK/$protocol-$mode-$round.ticks"
    done
  done
  echo "  round $round of $ROUNDS done" >&2
done
sleep 1  # the writer's last lines
LINES="$(wc -l <"$WORK/access.log" 2>/dev/null || echo 0)"

"$PY" - "$WORK" "$ROUNDS" "${OUT:-}" "$LINES" "$(nproc)" "$LOAD_BEFORE" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" "$CONCURRENCY" "$RUN_SECONDS" <<'PYEOF'
import json, os, pathlib, statistics, sys
work, rounds, out, lines, cores, before, after, conc, secs = sys.argv[1:10]
work, rounds = pathlib.Path(work), int(rounds)
table = ["| protocol | rows/s, log off | rows/s, log all | all / off | server CPU µs a call, "
         "off | all | all / off |", "|---|---|---|---|---|---|---|"]
tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
requests = 0
for protocol, label in (("grpc", "gRPC invariant.v1 Predict"), ("rest", "REST JSON infer")):
    if not (work / f"{protocol}-off-1.json").exists():
        continue
    rate = {"off": [], "all": []}
    cpu = {"off": [], "all": []}
    for r in range(1, rounds + 1):
        for mode in ("off", "all"):
            report = json.loads((work / f"{protocol}-{mode}-{r}.json").read_text())
            assert report["requests"]["failed"] == 0
            ticks = int((work / f"{protocol}-{mode}-{r}.ticks").read_text())
            rate[mode].append(report["rows_per_second"])
            cpu[mode].append(ticks * tick_us / report["requests"]["ok"])
            requests += report["requests"]["ok"] if mode == "all" else 0
    m = {k: statistics.median(v) for k, v in rate.items()}
    c = {k: statistics.median(v) for k, v in cpu.items()}
    table.append(f"| {label} | {m['off']:,.0f} | {m['all']:,.0f} | {m['all'] / m['off']:.3f} | "
                 f"{c['off']:.1f} | {c['all']:.1f} | {c['all'] / c['off']:.3f} |")
table.append(f"\nBatch 1, closed loop, {conc} workers, {rounds} alternating rounds of {secs} s, "
             f"{cores} cores shared by both servers and the load generator. The logging server "
             f"wrote {int(lines):,} lines for {requests:,} calls. Load average before: {before}; "
             f"after: {after}.")
text = "\n".join(table)
print(text)
if out:
    pathlib.Path(out).write_text(text + "\n")
PYEOF
