#!/usr/bin/env bash
# The measurement that chose the audio front end: the same learner on raw
# waveforms instead of the log-frequency spectrogram (research/results/spoken_digits.md,
# "Why a spectrogram").
#
#   research/repro/spoken_digits_waveform.sh DATA_DIR [OUT_DIR]
#
# DATA_DIR holds FSDD-named WAV files (digit_speaker_take.wav, 8 kHz). Every
# clip is trimmed like the front end does (samples below 1 % of the peak at
# both ends dropped), peak-normalised and centred in 8,000 samples (1 s), and
# written as one CSV row; invariant-train's seeded split tests on 200 of the
# 2,000 rows (every speaker is heard in training, as in FSDD's standard
# split). On those rows it fits plain random Fourier
# features (1,500, identity group) and the same pooled over 20 cyclic time
# shifts of up to ±800 samples (±0.1 s) — the raw-waveform reading of
# Mroueh et al.'s time-shift pooling. Prints the test accuracy of each.
# Needs /usr/bin/python3 with numpy (deploy/install-deps.sh) and a built
# invariant-train (BUILD_DIR, default REPO/build).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="${1:?usage: $0 DATA_DIR [OUT_DIR]}"
OUT="${2:-$(mktemp -d)}"
BUILD_DIR="${BUILD_DIR:-$REPO/build}"
mkdir -p "$OUT"
/usr/bin/python3 - "$DATA" "$OUT" <<'PY'
import os, sys, wave, numpy as np
data, out = sys.argv[1], sys.argv[2]
names = sorted(f for f in os.listdir(data) if f.endswith('.wav'))
with open(os.path.join(out, 'clips.csv'), 'w') as f:
    f.write('label,' + ','.join('s%d' % i for i in range(8000)) + '\n')
    for name in names:
        w = wave.open(os.path.join(data, name))
        assert w.getframerate() == 8000 and w.getsampwidth() == 2, name
        x = np.frombuffer(w.readframes(w.getnframes()), '<i2').astype(np.float64) / 32768
        peak = np.abs(x).max()
        keep = np.nonzero(np.abs(x) >= 0.01 * peak)[0]
        x = x[keep[0]:keep[-1] + 1] / peak
        row = np.zeros(8000)
        n = min(8000, len(x))
        row[(8000 - n) // 2:(8000 - n) // 2 + n] = x[(len(x) - n) // 2:(len(x) - n) // 2 + n]
        f.write(name.split('_')[0] + ',' + ','.join('%.6g' % v for v in row) + '\n')
PY
for kind in plain shifts; do
  if [[ $kind == plain ]]; then
    enc='random_fourier { num_features: 1500 num_group_elements: 1 sigma: 1.0 } group { identity { dim: 8000 } }'
  else
    enc='random_fourier { num_features: 1500 num_group_elements: 20 sigma: 1.0 } group { cyclic_shift { length: 8000 max_shift: 800 } placement: PLACEMENT_INPUT }'
  fi
  cat > "$OUT/$kind.textproto" <<EOT
description: "FSDD raw waveforms, $kind"
data { csv { path: "$OUT/clips.csv" label_column: "label" } }
split { train: 1600 validation: 200 test: 200 seed: 1 }
preprocess { l2_normalize: true }
encoder { $enc seed: 3 }
learner { kind: RIDGE task: TASK_CLASSIFICATION extend_lambda_grid: true }
EOT
  rm -rf "$OUT/models_$kind"
  "$BUILD_DIR/bin/invariant-train" --config="$OUT/$kind.textproto" --models="$OUT/models_$kind" \
    --name=waveform >"$OUT/$kind.log" 2>&1
  echo "$kind: $(grep -E '^test accuracy' "$OUT/$kind.log")"
done
