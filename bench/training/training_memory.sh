#!/usr/bin/env bash
# The sharded training's memory estimate against what the processes hold:
# `invariant-train plan` (train/pipeline/training_memory.h) beside the peak
# resident set (GNU time's %M) of SHARDS shard processes and the reduce, run
# one after another on CONFIG. Prints one line per process: estimate, peak
# RSS, and their ratio (the estimate sizes a pod's memory limit, so ≥ 1 and
# close to it is the aim).
#
# Usage: bench/training/training_memory.sh CONFIG [SHARDS]
#   CONFIG: a TrainConfig whose data paths are filled in (e.g. sed the
#   CIFAR10_DIR placeholder of train/configs/cifar_rf.textproto).
# Environment: BUILD (default REPO/build, with invariant-train built),
#   WORK (default a temporary folder; the models and shard files go there).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
CONFIG="${1:?usage: training_memory.sh CONFIG [SHARDS]}"
SHARDS="${2:-4}"
TRAIN="$BUILD/bin/invariant-train"
[[ -x "$TRAIN" ]] || { echo "training_memory: $TRAIN missing (build it first)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "training_memory: /usr/bin/time missing (apt-get install time)" >&2; exit 2; }
WORK="${WORK:-$(mktemp -d)}"
mkdir -p "$WORK"
PLAN="$("$TRAIN" plan --config="$CONFIG" --shards="$SHARDS" 2>/dev/null)"
echo "plan: $PLAN"
field() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$PLAN" "$1"; }
report() {  # NAME ESTIMATE_BYTES PEAK_KB
  /usr/bin/python3 -c "import sys; e=int(sys.argv[2]); p=int(sys.argv[3])*1024; \
print(f'{sys.argv[1]:>8}: estimate {e/2**30:7.3f} GiB  peak RSS {p/2**30:7.3f} GiB  estimate/peak {e/p:5.3f}')" "$@"
}
for ((i = 0; i < SHARDS; i++)); do
  /usr/bin/time -f "%M" -o "$WORK/time.$i" "$TRAIN" --config="$CONFIG" --models="$WORK/models" \
    --name=bench --shard="$i/$SHARDS" >/dev/null 2>"$WORK/shard.$i.log"
  report "shard $i" "$(field shard_bytes)" "$(tail -1 "$WORK/time.$i")"
done
/usr/bin/time -f "%M" -o "$WORK/time.reduce" "$TRAIN" reduce --config="$CONFIG" \
  --models="$WORK/models" --name=bench --shards="$SHARDS" >"$WORK/reduce.out" 2>"$WORK/reduce.log"
report "reduce" "$(field reduce_bytes)" "$(tail -1 "$WORK/time.reduce")"
tail -1 "$WORK/reduce.out"
