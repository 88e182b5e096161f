#!/usr/bin/env bash
# Spoken digits: Mroueh, Voinea, Poggio 2015 §6 (Fig. 3, TIDIGITS) on the
# Free Spoken Digit Dataset. Log-frequency spectrograms (64 bins) of 1 s
# clips; the audio group G = pitch shifts uniform in ±400 cents, tempo
# changes (log-normal, σ = 0.35) and time shifts of ±8 frames, applied to the
# input (docs/math.md §9). Compares, all RIDGE classifiers with λ chosen on
# validation:
#   plain_rf, lgika_rf    random Fourier features (r = 1), LGIKA-RF over G
#                         (r = 40)
#   plain_cdf, cdf        CDF pooling (r = 1) and over G (r = 20), templates
#                         drawn from the training clips
#     (these four on 256-sample frames every 128: 64 × 61, rows centred and
#     L2-normalised)
#   tf_patch              the patch encoder on the spectrogram as a 64 × 62
#                         image (128-sample frames every 128): 512 templates
#                         of 56 bins × 8 frames, 8 bins of zero padding along
#                         frequency, pooled over every frequency position and
#                         6 time segments (docs/math.md §11); no centring
#   tf_patch_tempo        the same with tempo-warped copies of every template
#                         (factors 0.8, 1, 1.25: r = 3)
#   tf_patch_cq           tf_patch on the constant-Q spectrogram (Gaussian
#                         bands of CQ_SIGMA octaves) translated so that its
#                         centroid sits on the middle bin (align_frequency:
#                         docs/math.md §9), pooled over 8 time segments
#   tf_patch_cqt          tf_patch_cq with the content's frames stretched
#                         over the clip (align_time: tempo normalisation,
#                         docs/math.md §9), patches of 48 bins × 8 frames
#                         without padding read at stride 2 (9 × 28
#                         positions: 0.16× the products)
#   tf_patch_cqt_bands    tf_patch_cqt's front end; 384 templates of 32 bins
#                         × 8 frames with 4 bins of padding at stride 2
#                         (21 × 28 positions), pooled in 2 frequency bands ×
#                         4 time segments: the shipped config
# under three protocols:
#   standard   takes 0-4 of every speaker are the test set (200 clips), the
#              rest train (1,600) + validation (200); the Fig. 3 analogue
#              ("sweep") sweeps the patch encoder's CDF response, templates M
#              × bins N, here ("cdf_sweep": the old sweep of CDF pooling over
#              G, not run by default)
#   loso       leave-one-speaker-out (split.leave_one_group_out, λ by an
#              inner leave-one-speaker-out of the 3 training speakers)
#   mismatch   train on 3 speakers (1,350 + 150 validation), test on the 4th
#              as recorded, shifted UP and shifted DOWN by a seeded random
#              300-600 cents per clip (sox pitch), every speaker held out in
#              turn (one training per test set)
#   voices     the training-voices curve (not run by default): every speaker
#              held out in turn, trained on every non-empty set of the others
#              (1 voice to all of them; all their clips, 500 a speaker as
#              FSDD has, 10 % for validation),
#              tested on the held-out speaker as recorded; how accuracy on
#              a voice never heard grows with the voices heard
# Every run is one `invariant-train` under /usr/bin/time -v; the rows
# (accuracy, λ, invariance discrepancy against G, featurize time, wall time,
# peak RSS, front end) go to research/results/spoken_digits.csv, then
# research/repro/spoken_digits/report.py writes research/results/spoken_digits.md and
# research/repro/plot.sh the figure research/results/spoken_digits.png. The
# standard-split models are also certified (`invariant-train certify`)
# against pitch shifts alone (±400 cents) and, the patch models, against the
# enumerated integer shifts (±4 bins × ±8 frames, and ±4 bins alone) when the
# trainer accepts `enumerate: true` for an audio group (else the column says
# "refused").
#
# Usage: research/repro/spoken_digits.sh DATA_DIR [OUT_DIR]
#   DATA_DIR  the FSDD recordings folder (digit_speaker_take.wav); never
#             written, and nothing from it is committed
#   OUT_DIR   where the manifests, shifted clips, configs, models and logs go
#             (default: a new folder build/spoken_digits.XXXXXX); kept, and
#             the shifted clips in it are reused by the next run
# Environment:
#   BUILD_DIR  the build with bin/invariant-train (default REPO/build; build
#              it with `cmake --build build --target invariant-train`)
#   RESULTS    where the .md/.csv/.png go (default REPO/research/results)
#   PROTOCOLS  "standard sweep loso mismatch" (default; also cdf_sweep, voices; the
#              Markdown covers what was run)
#   SWEEP_M="64 128 256 512" SWEEP_N="2 4 8"   the patch CDF sweep
#   CDF_SWEEP_M="50 100 200 400 800" CDF_SWEEP_N="5 10 20"   cdf_sweep
#   LOSO_M="100 400"   CDF templates of the LOSO cdf runs
#   METHODS    the methods run by standard, loso and mismatch (default
#              "plain_rf lgika_rf plain_cdf cdf tf_patch tf_patch_tempo
#              tf_patch_cq tf_patch_cqt tf_patch_cqt_bands")
#   CQ_SIGMA   tf_patch_cq's band width in octaves (default 0.0833 = 1/12)
#   HELD_OUT   mismatch and voices speakers held out (default: every speaker)
#   THREADS    featurizing threads (default 0: all cores)
#   APPEND=1   append to the existing CSV instead of starting it anew (to run
#              the protocols in several calls; the Markdown covers the CSV)
# Needs sox, python3 and /usr/bin/time; gnuplot for the PNG.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/research/repro/spoken_digits"
[[ $# -ge 1 && $# -le 2 ]] || { sed -n '/^# Usage:/,/^# Needs/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
DATA="$(cd "$1" && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build}"
TRAIN="$BUILD/bin/invariant-train"
RESULTS="${RESULTS:-$ROOT/research/results}"
PROTOCOLS="${PROTOCOLS:-standard sweep loso mismatch}"
SWEEP_M="${SWEEP_M-64 128 256 512}"
SWEEP_N="${SWEEP_N-2 4 8}"
CDF_SWEEP_M="${CDF_SWEEP_M-50 100 200 400 800}"
CDF_SWEEP_N="${CDF_SWEEP_N-5 10 20}"
LOSO_M="${LOSO_M-100 400}"
METHODS="${METHODS:-plain_rf lgika_rf plain_cdf cdf tf_patch tf_patch_tempo tf_patch_cq tf_patch_cqt tf_patch_cqt_bands}"
APPEND="${APPEND:-0}"
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
# 50 takes of 10 digits per speaker, 90 % of them training rows.
expected_train=$(( ${#SPEAKERS[@]} * 450 ))
[[ "$n_std_train" -eq "$expected_train" ]] || {
  echo "standard.csv: $n_std_train train rows, expected $expected_train (${#SPEAKERS[@]} speakers)" >&2
  exit 1
}

# ---- Config pieces ----
# Two front ends: 256-sample frames (64 × 61) for the random-feature and CDF
# methods, 128-sample frames (64 × 62) for the patch encoder; G and the
# certificate groups follow the frame count.
front_end() { # frame_length [more fields]
  echo "front_end { sample_rate: 8000 clip_seconds: 1.0 trim_silence: true frame_length: $1 hop_length: 128 min_frequency: 100 bins_per_octave: 12 frequency_bins: 64 subtract_frequency_mean: true compression_gain: 10 max_clip_seconds: 10 ${2:-} }"
}
CQ_SIGMA="${CQ_SIGMA:-0.0833}"
# The front end's extra fields of a method: the constant-Q bank and the
# alignment for tf_patch_cq, and the tempo normalisation for tf_patch_cqt(_bands),
# nothing for the others.
front_end_of() { # method
  case "$1" in
    tf_patch_cq) echo "filterbank: FILTERBANK_CONSTANT_Q bandwidth_octaves: $CQ_SIGMA align_frequency: true" ;;
    tf_patch_cqt|tf_patch_cqt_bands) echo "filterbank: FILTERBANK_CONSTANT_Q bandwidth_octaves: $CQ_SIGMA align_frequency: true align_time: true" ;;
  esac
  return 0
}
G_LAW='pitch_cents { uniform { low: -400 high: 400 } } tempo { log_normal { log_mean: 0 log_stddev: 0.35 } } time_shift { uniform { low: -8 high: 8 } }'
group_g() { # frames
  echo "group { audio { frequency_bins: 64 frames: $1 bins_per_octave: 12 $G_LAW } placement: PLACEMENT_INPUT }"
}
group_pitch() { # frames: pitch shifts alone
  echo "group { audio { frequency_bins: 64 frames: $1 bins_per_octave: 12 pitch_cents { uniform { low: -400 high: 400 } } } placement: PLACEMENT_INPUT }"
}
group_enum() { # frames: every integer pitch-bin shift in ±4 × frame shift in ±8
  echo "group { audio { frequency_bins: 64 frames: $1 bins_per_octave: 12 pitch_cents { uniform { low: -400 high: 400 } } time_shift { uniform { low: -8 high: 8 } } } enumerate: true placement: PLACEMENT_INPUT }"
}
group_enum_pitch() { # frames: every integer pitch-bin shift in ±4 alone
  echo "group { audio { frequency_bins: 64 frames: $1 bins_per_octave: 12 pitch_cents { uniform { low: -400 high: 400 } } } enumerate: true placement: PLACEMENT_INPUT }"
}
G61="$(group_g 61)"
IDENTITY='group { identity { dim: 3904 } }'
PATCH_COMMON='patch_height: 56 patch_width: 8 pad_rows: 8 pool_rows: 1 pool_cols: 6 whiten: true kmeans_iterations: 10 normalize_patches: true'
SPLIT_STANDARD='split { train: 1600 validation: 200 seed: 1 }'
SPLIT_LOSO='split { leave_one_group_out: true seed: 1 }'
SPLIT_MISMATCH='split { train: 1350 validation: 150 seed: 1 }'

# The encoder of a method: plain_rf, lgika_rf, plain_cdf, cdf (M, N),
# tf_patch, tf_patch_cq, tf_patch_cqt, tf_patch_cqt_bands, tf_patch_tempo,
# tf_patch_cdf (M, N).
encoder() { # method templates bins
  case "$1" in
    plain_rf) echo "random_fourier { num_features: 1500 num_group_elements: 1 sigma: 1.0 } $IDENTITY" ;;
    lgika_rf) echo "random_fourier { num_features: 1500 num_group_elements: 40 sigma: 1.0 } $G61" ;;
    plain_cdf) echo "cdf { num_templates: $2 num_group_elements: 1 num_bins: $3 range: 1.0 template_kind: TEMPLATE_DATA } $IDENTITY" ;;
    cdf) echo "cdf { num_templates: $2 num_group_elements: 20 num_bins: $3 range: 1.0 template_kind: TEMPLATE_DATA } $G61" ;;
    tf_patch) echo "patch { $PATCH_COMMON num_templates: 512 num_group_elements: 1 response: RESPONSE_THRESHOLD } group { identity { dim: 448 } }" ;;
    tf_patch_cq) echo "patch { ${PATCH_COMMON/pool_cols: 6/pool_cols: 8} num_templates: 512 num_group_elements: 1 response: RESPONSE_THRESHOLD } group { identity { dim: 448 } }" ;;
    tf_patch_cqt) local p=${PATCH_COMMON/patch_height: 56/patch_height: 48}
      p=${p/pad_rows: 8/stride: 2}
      echo "patch { ${p/pool_cols: 6/pool_cols: 8} num_templates: 512 num_group_elements: 1 response: RESPONSE_THRESHOLD } group { identity { dim: 384 } }" ;;
    tf_patch_cqt_bands) local p=${PATCH_COMMON/patch_height: 56/patch_height: 32}
      p=${p/pad_rows: 8/pad_rows: 4 stride: 2}
      p=${p/pool_rows: 1/pool_rows: 2}
      echo "patch { ${p/pool_cols: 6/pool_cols: 4} num_templates: 384 num_group_elements: 1 response: RESPONSE_THRESHOLD } group { identity { dim: 256 } }" ;;
    tf_patch_tempo) echo "patch { $PATCH_COMMON num_templates: 512 num_group_elements: 3 response: RESPONSE_THRESHOLD tempo_factors: [0.8, 1.0, 1.25] } group { identity { dim: 448 } }" ;;
    tf_patch_cdf) echo "patch { $PATCH_COMMON num_templates: $2 num_group_elements: 1 response: RESPONSE_CDF num_bins: $3 range: 2.0 } group { identity { dim: 448 } }" ;;
    *) echo "unknown method $1" >&2; exit 2 ;;
  esac
}
r_of() { case "$1" in plain_*|tf_patch|tf_patch_cq|tf_patch_cqt|tf_patch_cqt_bands|tf_patch_cdf) echo 1 ;; lgika_rf) echo 40 ;; tf_patch_tempo) echo 3 ;; *) echo 20 ;; esac; }
is_patch() { [[ "$1" == tf_patch* ]]; }
frames_of() { if is_patch "$1"; then echo 62; else echo 61; fi; }
frame_length_of() { if is_patch "$1"; then echo 128; else echo 256; fi; }
# CDF methods carry M and N in their names and rows; the patch methods their M.
templates_of() { case "$1" in tf_patch|tf_patch_tempo|tf_patch_cq|tf_patch_cqt) echo 512 ;; tf_patch_cqt_bands) echo 384 ;; *cdf) echo "$2" ;; *) echo "" ;; esac; }
bins_of() { case "$1" in *cdf) echo "$2" ;; *) echo "" ;; esac; }

CSV="$RESULTS/spoken_digits.csv"
if [[ "$APPEND" != 1 || ! -s "$CSV" ]]; then
  python3 "$HERE/collect.py" --header >"$CSV"
fi
# The pairs certificates of the mismatch models (relative mean discrepancy
# over the held-out speaker's recorded and shifted clips).
PAIRS_CSV="$RESULTS/spoken_digits_pairs.csv"
if [[ "$APPEND" != 1 || ! -s "$PAIRS_CSV" ]]; then
  echo "method,held_out,direction,relative_mean_discrepancy" >"$PAIRS_CSV"
fi
# The last commit touching the trainer's sources, recorded with every row (the
# binary is taken as built from it unless a source file under core/, train/
# or proto/ is newer than the binary: then a warning and a "?" after it).
BINARY="$(git -C "$ROOT" log -1 --format=%h -- core train proto 2>/dev/null || echo unknown)"
if [[ -n "$(cd "$ROOT" && find core train proto -newer "$TRAIN" \( -name '*.cc' -o -name '*.h' -o -name '*.proto' \) -print -quit)" ]]; then
  echo "spoken_digits.sh: sources newer than $TRAIN: rebuild it" >&2
  BINARY="$BINARY?"
fi

# One training: config, /usr/bin/time -v, the CSV row(s). Every model is
# certified against G (50 test clips × 16 elements), the plain ones too; the
# standard-split ones also against pitch shifts alone and, the patch ones,
# the enumerated integer shifts, pitch × time and pitch alone
# (`invariant-train certify`, same 50 clips).
run() { # protocol method templates bins held_out test_set manifest split
  local protocol=$1 method=$2 m=$3 n=$4 held=$5 test_set=$6 manifest=$7 split=$8
  local name="$protocol-$method" frames fl pre="preprocess { center: true l2_normalize: true }"
  frames=$(frames_of "$method")
  fl=$(frame_length_of "$method")
  is_patch "$method" && pre=""  # per-pixel centring is not shift-invariant
  [[ "$method" == *cdf ]] && name+="-m$m-n$n"
  [[ "$held" != - ]] && name+="-$held-$test_set"
  local cfg="$OUT_DIR/configs/$name.textproto"
  cat >"$cfg" <<EOF
description: "FSDD spoken digits ($protocol): $method${m:+ m=$m n=$n}, held out: $held ($test_set)"
data { audio { manifest: "$manifest" $(front_end "$fl" "$(front_end_of "$method")") } }
$split
$pre
encoder { $(encoder "$method" "$m" "$n") seed: 11 }
learner { kind: RIDGE task: TASK_CLASSIFICATION extend_lambda_grid: true }
certificate { num_points: 50 num_group_elements: 16 $(group_g "$frames") }
EOF
  rm -rf "$OUT_DIR/models/$name"
  echo "== $name" >&2
  /usr/bin/time -v -o "$OUT_DIR/logs/$name.time" "$TRAIN" --config="$cfg" \
    --models="$OUT_DIR/models" --name="$name" --threads="$THREADS" \
    >"$OUT_DIR/logs/$name.log" 2>&1 || { cat "$OUT_DIR/logs/$name.log" >&2; exit 1; }
  local certs=() cq_tag=""
  [[ "$method" == tf_patch_cq* ]] && cq_tag=" cq"
  if [[ "$protocol" == standard ]]; then
    local kinds="pitch"
    is_patch "$method" && kinds+=" enum enum_pitch"
    for kind in $kinds; do
      local ccfg="$OUT_DIR/configs/$name.cert-$kind.textproto" group
      case $kind in
        pitch) group=$(group_pitch "$frames") ;;
        enum) group=$(group_enum "$frames") ;;
        enum_pitch) group=$(group_enum_pitch "$frames") ;;
      esac
      sed '/^certificate /d' "$cfg" >"$ccfg"
      echo "certificate { num_points: 50 num_group_elements: 16 $group }" >>"$ccfg"
      # A refusal (e.g. an audio group that cannot be enumerated) is recorded, not fatal.
      "$TRAIN" certify --config="$ccfg" --model="$OUT_DIR/models/$name/1" --threads="$THREADS" \
        >"$OUT_DIR/logs/$name.cert-$kind.json" 2>"$OUT_DIR/logs/$name.cert-$kind.err" || true
      certs+=("--cert-$kind=$OUT_DIR/logs/$name.cert-$kind")
    done
  fi
  # The mismatch models trained for the recorded test set are certified on
  # the real pairs (held-out clip, its sox-shifted copy), up and down.
  if [[ "$protocol" == mismatch && "$test_set" == plain ]]; then
    for direction in up down; do
      "$TRAIN" certify --model="$OUT_DIR/models/$name/1" --threads="$THREADS" \
        --pairs="$M/pairs_${held}_$direction.csv" >"$OUT_DIR/logs/$name.pairs-$direction.json" \
        2>"$OUT_DIR/logs/$name.pairs-$direction.err" || { cat "$OUT_DIR/logs/$name.pairs-$direction.err" >&2; exit 1; }
      python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); print(",".join(sys.argv[2:] + [str(c["relative_mean_discrepancy"])]))' \
        "$OUT_DIR/logs/$name.pairs-$direction.json" "$method" "$held" "$direction" >>"$PAIRS_CSV"
    done
  fi
  python3 "$HERE/collect.py" "$OUT_DIR/models/$name/1/report.json" "$OUT_DIR/logs/$name.time" \
    "$protocol" "$method" "$(templates_of "$method" "$m")" "$(bins_of "$method" "$n")" \
    "$(r_of "$method")" "$held" "$test_set" "$name" "$fl/128 64x$frames${cq_tag}" "$BINARY" \
    ${certs[@]+"${certs[@]}"} | tee -a "$CSV" >&2
}
has() { [[ " $METHODS " == *" $1 "* ]]; }

# The methods of standard, loso and mismatch (CDF at M = 400, N = 10).
each_method() { # protocol held_out test_set manifest split
  for method in $METHODS; do
    case "$method" in
      plain_cdf|cdf) run "$1" "$method" 400 10 "$2" "$3" "$4" "$5" ;;
      *) run "$1" "$method" "" "" "$2" "$3" "$4" "$5" ;;
    esac
  done
}

for protocol in $PROTOCOLS; do
  case "$protocol" in
    standard)
      each_method standard - "takes 0-4" "$M/standard.csv" "$SPLIT_STANDARD" ;;
    sweep)
      for n in $SWEEP_N; do
        for m in $SWEEP_M; do
          run standard tf_patch_cdf "$m" "$n" - "takes 0-4" "$M/standard.csv" "$SPLIT_STANDARD"
        done
      done ;;
    cdf_sweep)
      for n in $CDF_SWEEP_N; do
        for m in $CDF_SWEEP_M; do
          # standard already ran M = 400, N = 10
          [[ "$m/$n" == 400/10 && " $PROTOCOLS " == *" standard "* ]] && has cdf && continue
          run standard cdf "$m" "$n" - "takes 0-4" "$M/standard.csv" "$SPLIT_STANDARD"
        done
      done ;;
    loso)
      for method in $METHODS; do
        case "$method" in
          plain_cdf) run loso plain_cdf 400 10 - speaker "$M/all.csv" "$SPLIT_LOSO" ;;
          cdf) for m in $LOSO_M; do run loso cdf "$m" 10 - speaker "$M/all.csv" "$SPLIT_LOSO"; done ;;
          *) run loso "$method" "" "" - speaker "$M/all.csv" "$SPLIT_LOSO" ;;
        esac
      done ;;
    mismatch)
      # test sets: plain (as recorded), up (mismatch_<S>_shifted.csv), down
      for held in $HELD_OUT; do
        each_method mismatch "$held" plain "$M/mismatch_${held}_plain.csv" "$SPLIT_MISMATCH"
        each_method mismatch "$held" up "$M/mismatch_${held}_shifted.csv" "$SPLIT_MISMATCH"
        each_method mismatch "$held" down "$M/mismatch_${held}_down.csv" "$SPLIT_MISMATCH"
      done ;;
    voices)
      # test_set: the training voices, V1+V2...; 450 clips a voice train, 50 validate
      for held in $HELD_OUT; do
        for manifest in "$M"/voices_"$held"_*.csv; do
          voices=${manifest##*/voices_"$held"_}
          voices=${voices%.csv}
          k=$(($(tr -cd + <<<"$voices" | wc -c) + 1))
          each_method voices "$held" "$voices" "$manifest" \
            "split { train: $((450 * k)) validation: $((50 * k)) seed: 1 }"
        done
      done ;;
    *) echo "unknown protocol $protocol (standard, sweep, cdf_sweep, loso, mismatch, voices)" >&2; exit 2 ;;
  esac
done
# With APPEND=1 the total and the first load average carry over (OUT_DIR/run_totals).
T_PREV=0
if [[ "$APPEND" == 1 && -s "$OUT_DIR/run_totals" ]]; then
  read -r T_PREV LOAD_BEFORE <"$OUT_DIR/run_totals"
fi
T_TOTAL=$((T_PREV + $(date +%s) - T_START))
echo "$T_TOTAL $LOAD_BEFORE" >"$OUT_DIR/run_totals"
echo "total: ${T_TOTAL} s" >&2

# ---- Markdown and figure ----
python3 "$HERE/report.py" "$CSV" "$RESULTS/spoken_digits.md" "$RESULTS/spoken_digits_plot.csv" \
  "$T_TOTAL" "$LOAD_BEFORE" "$(cut -d' ' -f1 /proc/loadavg)" "$M/shifts.csv" "$PAIRS_CSV"
if [[ -s "$RESULTS/spoken_digits_plot.csv" ]]; then
  "$ROOT/research/repro/plot.sh" -x templates -y accuracy_pct -g bins -l x -K "bottom right" \
    -t "FSDD spoken digits, standard split: spectrogram patches pooled over every pitch shift, CDF response" \
    -X "templates M (features: 6 M (2N + 1))" -Y "test accuracy (%)" \
    "$RESULTS/spoken_digits_plot.csv" "$RESULTS/spoken_digits.png" || true
fi
rm -f "$RESULTS/spoken_digits_plot.csv"
echo "wrote $RESULTS/spoken_digits.md and $RESULTS/spoken_digits.csv" >&2
