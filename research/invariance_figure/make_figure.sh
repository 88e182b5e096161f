#!/usr/bin/env bash
# Draws research/results/invariance.svg (and .csv): mean relative movement of pixels,
# plain random Fourier features and LGIKA-RF features of 20 Fashion-MNIST test
# images under rotation. Needs build/bin/{invariant-train,invariance-figure}
# (invariance-figure is a research target: -DINVARIANT_BUILD_RESEARCH=ON).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${BUILD_DIR:-$REPO/build}/bin"
OUT="${OUT:-$REPO/research/results}"
mkdir -p "$OUT"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
for m in raw_rf lgika_rf; do
  "$BIN/invariant-train" --config="$REPO/research/invariance_figure/$m.textproto" \
    --models="$WORK" --name="$m" >/dev/null
done
"$BIN/invariance-figure" --raw_model="$WORK/raw_rf/1/model.bundle" \
  --invariant_model="$WORK/lgika_rf/1/model.bundle" \
  --svg="$OUT/invariance.svg" --csv="$OUT/invariance.csv"
echo "wrote $OUT/invariance.svg"
