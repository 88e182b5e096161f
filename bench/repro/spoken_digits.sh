#!/usr/bin/env bash
# Spoken digits: Mroueh, Voinea, Poggio 2015 §6 (Fig. 3, TIDIGITS) on the
# Free Spoken Digit Dataset. Log-frequency spectrograms (64 bins × 61 frames)
# of 1 s clips; the audio group G = pitch shifts uniform in ±400 cents, tempo
# changes (log-normal, σ = 0.35) and time shifts of ±8 frames, applied to the
# input (docs/math.md §9). Compares plain random Fourier features (r = 1),
# LGIKA-RF over G (r = 40), plain CDF pooling (r = 1) and CDF pooling over G
# (r = 20, templates drawn from the training clips), all RIDGE classifiers
# with λ chosen on validation, under three protocols:
#   standard   takes 0-4 of every speaker are the test set (200 clips), the
#              rest train (1,600) + validation (200); the Fig. 3 analogue
#              sweeps CDF templates M × bins N here
#   loso       leave-one-speaker-out (split.leave_one_group_out, λ by an
#              inner leave-one-speaker-out of the 3 training speakers)
#   mismatch   train on 3 speakers (1,350 + 150 validation), test on the 4th
#              as recorded and shifted UP by a seeded random 300-600 cents
#              per clip (sox pitch), every speaker held out in turn
# Every run is one `invariant-train` under /usr/bin/time -v; the rows
# (accuracy, λ, invariance discrepancy against G, featurize time, wall time,
# peak RSS) go to docs/results/spoken_digits.csv, then
# bench/repro/spoken_digits/report.py writes docs/results/spoken_digits.md and
# bench/repro/plot.sh the figure docs/results/spoken_digits.png.
#
# Usage: bench/repro/spoken_digits.sh DATA_DIR [OUT_DIR]
#   DATA_DIR  the FSDD recordings folder (digit_speaker_take.wav); never
#             written, and nothing from it is committed
#   OUT_DIR   where the manifests, shifted clips, configs, models and logs go
#             (default: a new folder build/spoken_digits.XXXXXX); kept
# Environment:
#   BUILD_DIR  the build with bin/invariant-train (default REPO/build; build
#              it with `cmake --build build --target invariant-train`)
#   RESULTS    where the .md/.csv/.png go (default REPO/docs/results)
#   PROTOCOLS  "standard sweep loso mismatch" (default: all; the Markdown
#              covers what was run)
#   SWEEP_M="50 100 200 400 800" SWEEP_N="5 10 20" LOSO_M="100 400"
#   HELD_OUT   mismatch speakers held out (default: every speaker)
#   THREADS    featurizing threads (default 0: all cores)
# Needs sox, python3 and /usr/bin/time; gnuplot for the PNG.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/bench/repro/spoken_digits"
[[ $# -ge 1 && $# -le 2 ]] || { sed -n '24,38p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
DATA="$(cd "$1" && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build}"
TRAIN="$BUILD/bin/invariant-train"
RESULTS="${RESULTS:-$ROOT/docs/results}"
PROTOCOLS="${PROTOCOLS:-standard sweep loso mismatch}"
SWEEP_M="${SWEEP_M-50 100 200 400 800}"
SWEEP_N="${SWEEP_N-5 10 20}"
LOSO_M="${LOSO_M-100 400}"
THREADS="${THREADS:-0}"
[[ -x "$TRAIN" ]] || { echo "missing $TRAIN: build it first (cmake --build $BUILD --target invariant-train)" >&2; exit 1; }
for tool in sox python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "spoken_digits.sh: $tool not found" >&2; exit 1; }
done
if [[ $# -eq 2 ]]; then
  OUT_DIR="$2"
  mkdir -p "$OUT_DIR"
else
  mkdir -p "$BUILD"
  OUT_DIR="$(mktemp -d "$BUILD/spoken_digits.XXXXXX")"
fi
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
mkdir -p "$OUT_DIR/configs" "$OUT_DIR/models" "$OUT_DIR/logs" "$RESULTS"
echo "spoken_digits.sh: writing into $OUT_DIR" >&2
T_START=$(date +%s)
LOAD_BEFORE=$(cut -d' ' -f1 /proc/loadavg)

# ---- Manifests (and the shifted clips, made once per OUT_DIR) ----
mapfile -t SPEAKERS < <(python3 "$HERE/manifests.py" "$DATA" "$OUT_DIR" 1)
HELD_OUT="${HELD_OUT:-${SPEAKERS[*]}}"
M="$OUT_DIR/manifests"
n_std_train=$(grep -c ',train$' "$M/standard.csv")
[[ "$n_std_train" -eq 1800 ]] || { echo "standard.csv: $n_std_train train rows, expected 1800" >&2; exit 1; }

# ---- Config pieces ----
FRONT_END='front_end { sample_rate: 8000 clip_seconds: 1.0 trim_silence: true frame_length: 256 hop_length: 128 min_frequency: 100 bins_per_octave: 12 frequency_bins: 64 subtract_frequency_mean: true compression_gain: 10 max_clip_seconds: 10 }'
G='group { audio { frequency_bins: 64 frames: 61 bins_per_octave: 12 pitch_cents { uniform { low: -400 high: 400 } } tempo { log_normal { log_mean: 0 log_stddev: 0.35 } } time_shift { uniform { low: -8 high: 8 } } } placement: PLACEMENT_INPUT }'
IDENTITY='group { identity { dim: 3904 } }'
SPLIT_STANDARD='split { train: 1600 validation: 200 seed: 1 }'
SPLIT_LOSO='split { leave_one_group_out: true seed: 1 }'
SPLIT_MISMATCH='split { train: 1350 validation: 150 seed: 1 }'

# The encoder of a method: plain_rf, lgika_rf, plain_cdf, cdf (M, N).
encoder() { # method templates bins
  case "$1" in
    plain_rf) echo "random_fourier { num_features: 1500 num_group_elements: 1 sigma: 1.0 } $IDENTITY" ;;
    lgika_rf) echo "random_fourier { num_features: 1500 num_group_elements: 40 sigma: 1.0 } $G" ;;
    plain_cdf) echo "cdf { num_templates: $2 num_group_elements: 1 num_bins: $3 range: 1.0 template_kind: TEMPLATE_DATA } $IDENTITY" ;;
    cdf) echo "cdf { num_templates: $2 num_group_elements: 20 num_bins: $3 range: 1.0 template_kind: TEMPLATE_DATA } $G" ;;
  esac
}
r_of() { case "$1" in plain_*) echo 1 ;; lgika_rf) echo 40 ;; *) echo 20 ;; esac; }

CSV="$RESULTS/spoken_digits.csv"
python3 "$HERE/collect.py" --header >"$CSV"

# One training: config, /usr/bin/time -v, the CSV row(s). Every model is
# certified against G (50 test clips × 16 elements), the plain ones too.
run() { # protocol method templates bins held_out test_set manifest split
  local protocol=$1 method=$2 m=$3 n=$4 held=$5 test_set=$6 manifest=$7 split=$8
  local name="$protocol-$method"
  [[ "$method" == *cdf ]] && name+="-m$m-n$n"
  [[ "$held" != - ]] && name+="-$held-$test_set"
  local cfg="$OUT_DIR/configs/$name.textproto"
  cat >"$cfg" <<EOF
description: "FSDD spoken digits ($protocol): $method${m:+ m=$m n=$n}, held out: $held ($test_set)"
data { audio { manifest: "$manifest" $FRONT_END } }
$split
preprocess { center: true l2_normalize: true }
encoder { $(encoder "$method" "$m" "$n") seed: 11 }
learner { kind: RIDGE task: TASK_CLASSIFICATION extend_lambda_grid: true }
certificate { num_points: 50 num_group_elements: 16 $G }
EOF
  rm -rf "$OUT_DIR/models/$name"
  echo "== $name" >&2
  /usr/bin/time -v -o "$OUT_DIR/logs/$name.time" "$TRAIN" --config="$cfg" \
    --models="$OUT_DIR/models" --name="$name" --threads="$THREADS" \
    >"$OUT_DIR/logs/$name.log" 2>&1 || { cat "$OUT_DIR/logs/$name.log" >&2; exit 1; }
  python3 "$HERE/collect.py" "$OUT_DIR/models/$name/1/report.json" "$OUT_DIR/logs/$name.time" \
    "$protocol" "$method" "$m" "$n" "$(r_of "$method")" "$held" "$test_set" "$name" | tee -a "$CSV" >&2
}

for protocol in $PROTOCOLS; do
  case "$protocol" in
    standard)
      for method in plain_rf lgika_rf; do
        run standard "$method" "" "" - "takes 0-4" "$M/standard.csv" "$SPLIT_STANDARD"
      done
      run standard plain_cdf 400 10 - "takes 0-4" "$M/standard.csv" "$SPLIT_STANDARD" ;;
    sweep)
      for n in $SWEEP_N; do
        for m in $SWEEP_M; do
          run standard cdf "$m" "$n" - "takes 0-4" "$M/standard.csv" "$SPLIT_STANDARD"
        done
      done ;;
    loso)
      for method in plain_rf lgika_rf; do
        run loso "$method" "" "" - speaker "$M/all.csv" "$SPLIT_LOSO"
      done
      run loso plain_cdf 400 10 - speaker "$M/all.csv" "$SPLIT_LOSO"
      for m in $LOSO_M; do
        run loso cdf "$m" 10 - speaker "$M/all.csv" "$SPLIT_LOSO"
      done ;;
    mismatch)
      for held in $HELD_OUT; do
        for shift in plain shifted; do
          for method in plain_rf lgika_rf; do
            run mismatch "$method" "" "" "$held" "$shift" "$M/mismatch_${held}_$shift.csv" "$SPLIT_MISMATCH"
          done
          run mismatch plain_cdf 400 10 "$held" "$shift" "$M/mismatch_${held}_$shift.csv" "$SPLIT_MISMATCH"
          run mismatch cdf 400 10 "$held" "$shift" "$M/mismatch_${held}_$shift.csv" "$SPLIT_MISMATCH"
        done
      done ;;
    *) echo "unknown protocol $protocol (standard, sweep, loso, mismatch)" >&2; exit 2 ;;
  esac
done
T_TOTAL=$(($(date +%s) - T_START))
echo "total: ${T_TOTAL} s" >&2

# ---- Markdown and figure ----
python3 "$HERE/report.py" "$CSV" "$RESULTS/spoken_digits.md" "$RESULTS/spoken_digits_plot.csv" \
  "$T_TOTAL" "$LOAD_BEFORE" "$(cut -d' ' -f1 /proc/loadavg)" "$M/shifts.csv"
if [[ -s "$RESULTS/spoken_digits_plot.csv" ]]; then
  "$ROOT/bench/repro/plot.sh" -x templates -y accuracy_pct -g bins -l x -K "bottom right" \
    -t "FSDD spoken digits, standard split: CDF pooling over pitch, tempo and time shifts (r = 20)" \
    -X "templates M (features: M (2N + 1))" -Y "test accuracy (%)" \
    "$RESULTS/spoken_digits_plot.csv" "$RESULTS/spoken_digits.png" || true
  rm -f "$RESULTS/spoken_digits_plot.csv"
fi
echo "wrote $RESULTS/spoken_digits.md and $RESULTS/spoken_digits.csv" >&2
