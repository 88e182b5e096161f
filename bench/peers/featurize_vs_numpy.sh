#!/usr/bin/env bash
# invariant-train's featurize stage against numpy's LGIKA-RF featurize of the
# same shape, in one run. invariant-train trains rotated_fashion_rf with the
# rotations on the templates (the 32,000 × 784 bank numpy multiplies by) and
# reports its featurize rate (report.json featurize_rows_per_second: the
# rows the feature map computed over its own time, the Gram accumulation
# apart in report.json accumulate); then
# bench/peers/peer_server.py featurizes the same number of rows from that
# bundle with numpy (OpenBLAS, all cores), in chunks of 256 rows as
# invariant-train does, plus the same count in one batch of 4,096.
#
# Usage: bench/peers/featurize_vs_numpy.sh   (REPEATS=3)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
PY=/usr/bin/python3
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
sed 's/placement: PLACEMENT_INPUT/placement: PLACEMENT_TEMPLATES/' \
  "$ROOT/train/configs/rotated_fashion_rf.textproto" >"$WORK/templates.textproto"
grep -q PLACEMENT_TEMPLATES "$WORK/templates.textproto"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "${REPEATS:-3}"); do
  "$BUILD/bin/invariant-train" --config="$WORK/templates.textproto" --models="$WORK/models" \
    --name=m >/dev/null 2>"$WORK/train.err"
  report="$(ls -d "$WORK"/models/m/*/ | sort -V | tail -1)report.json"
  rows=$("$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['rows']['train'])" "$report")
  ours=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['featurize_rows_per_second'])" "$report")
  bundle="$(dirname "$report")/model.bundle"
  numpy256=$("$PY" "$ROOT/bench/peers/peer_server.py" featurize --bundle="$bundle" --rows="$rows" --batch=256 |
    sed -n 's/.*rows_per_second=\([0-9.]*\).*/\1/p')
  numpy4k=$("$PY" "$ROOT/bench/peers/peer_server.py" featurize --bundle="$bundle" --rows="$rows" --batch=4096 |
    sed -n 's/.*rows_per_second=\([0-9.]*\).*/\1/p')
  "$PY" -c "import sys; o,a,b=map(float,sys.argv[1:4]); print(f'run {sys.argv[4]}: rows={sys.argv[5]} invariant-train {o:,.0f} rows/s; numpy chunks of 256 {a:,.0f} rows/s ({o/a:.2f}x); numpy chunks of 4096 {b:,.0f} rows/s ({o/b:.2f}x)')" \
    "$ours" "$numpy256" "$numpy4k" "$i" "$rows"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
