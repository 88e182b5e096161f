#!/usr/bin/env bash
# Draws docs/img/invariance.svg (and .csv): mean relative movement of pixels,
# plain random Fourier features and LGIKA-RF features of 20 Fashion-MNIST test
# images under rotation. Needs build/bin/{invariant-train,invariance-figure}.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${BUILD_DIR:-$REPO/build}/bin"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
for m in raw_rf lgika_rf; do
  "$BIN/invariant-train" --config="$REPO/bench/invariance_figure/$m.textproto" \
    --models="$WORK" --name="$m" >/dev/null
done
mkdir -p "$REPO/docs/img"
"$BIN/invariance-figure" --raw_model="$WORK/raw_rf/1/model.bundle" \
  --invariant_model="$WORK/lgika_rf/1/model.bundle" \
  --svg="$REPO/docs/img/invariance.svg" --csv="$REPO/docs/img/invariance.csv"
echo "wrote docs/img/invariance.svg"
