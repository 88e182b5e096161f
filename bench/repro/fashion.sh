#!/usr/bin/env bash
# Rotated Fashion-MNIST with the Rotated MNIST protocol of Raj et al.
# (AISTATS 2017, §5): every image rotated by an angle uniform in [0, 2π),
# 12,000 training images, group = rotations. Compares plain random Fourier
# features (the non-invariant baseline), LGIKA-RF, LGIKA-Nyström, CDF pooling
# (Mroueh et al. 2015) and a second layer on LGIKA-RF, at several template
# counts, all trained by build/bin/invariant-train from configs derived from
# train/configs/rotated_fashion_*.textproto. Every model's invariance
# discrepancy is measured against the same group (rotations uniform in
# [0, 2π)) by build/bin/invariant-repro-discrepancy.
# Outputs docs/results/fashion.{md,csv}, fashion_plot.csv and fashion.png
# (through bench/repro/plot.sh when gnuplot is installed).
#
# Usage: bench/repro/fashion.sh            (the default plan, ~17 min on one core)
#   SIZES="500 1000" NYS_SIZES=500 CDF_SIZES=100 SECOND= R_SWEEP= bench/repro/fashion.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
OUT="$ROOT/docs/results"
CONFIGS="$ROOT/train/configs"
SIZES="${SIZES-500 1000 2000 4000}"    # s (random features) of raw RF and LGIKA-RF
NYS_SIZES="${NYS_SIZES-500 1000 2000}" # s (landmarks) of LGIKA-Nyström
CDF_SIZES="${CDF_SIZES-50 100 200}"    # m (CDF templates; 2n+1 = 21 features each)
R="${R:-32}"                           # rotations per template
R_SWEEP="${R_SWEEP-8 64 128}"          # extra r for LGIKA-RF at s = 1000
SECOND="${SECOND-1000:2000:0.4 2000:4000:0.4}" # LGIKA-RF s : 2nd-layer s2 : σ2
SIGMA="${SIGMA:-0.4}"                  # Gaussian bandwidth (inputs on the unit sphere)
CDF_RANGE="${CDF_RANGE:-0.15}"         # CDF range (centred unit inputs, sphere templates)
mkdir -p "$OUT"
flock /tmp/build.lock cmake --build "$BUILD" -j2 --target invariant-train invariant-repro-discrepancy
export OPENBLAS_NUM_THREADS=1
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# A config: the data / split / preprocess / learner / certificate lines of a
# shipped config, a description, and the given encoder (+ second layer) text.
make_config() { # file shipped description encoder-text
  {
    echo "description: \"$3\""
    grep -E '^(data|split|preprocess|learner|certificate)' "$CONFIGS/$2"
    echo "$4"
  } >"$1"
}
ROT='group { image { height: 28 width: 28 channels: 1 rotation { uniform { low: 0 high: 6.283185307179586 } } } }'
IDENTITY='group { identity { dim: 784 } }'

CSV="$OUT/fashion.csv"
echo "method,templates,r,feature_dim,test_accuracy,lambda,id_rot_max,id_rot_mean,id_rot_rel,label_agreement,id90_max,id90_mean,label_agreement90,id_own_max,featurize_s,rows_per_s,solve_s,total_s" >"$CSV"
printf '%-14s %6s %4s %6s %7s %9s %9s %7s\n' method s/m r dim acc% ID_rot agree% total_s
run() { # method templates r shipped-config encoder-text
  local name cfg start end rep id row
  name="$(echo "$1-$2-r$3" | tr -c 'A-Za-z0-9_\n-' '_')"
  cfg="$WORK/$name.textproto"
  make_config "$cfg" "$4" "$1, $2 templates, r=$3" "$5"
  start=$(date +%s.%N)
  "$BUILD/bin/invariant-train" --config="$cfg" --models="$WORK/models" --name="$name" \
    >/dev/null 2>"$WORK/$name.log" || { cat "$WORK/$name.log"; return 1; }
  end=$(date +%s.%N)
  rep="$WORK/models/$name/1/report.json"
  id=$("$BUILD/bin/invariant-repro-discrepancy" --bundle="$WORK/models/$name/1/model.bundle" \
    --config="$cfg" --points=200 --elements=16)
  read -r idmax idmean idrel agree <<<"$id"
  id=$("$BUILD/bin/invariant-repro-discrepancy" --bundle="$WORK/models/$name/1/model.bundle" \
    --config="$cfg" --points=200 --fixed_angles_deg=90,180,270)
  read -r id90max id90mean _ agree90 <<<"$id"
  row=$(jq -r --arg m "$1" --arg t "$2" --arg r "$3" --arg a "$idmax" --arg b "$idmean" \
    --arg c "$idrel" --arg g "$agree" \
    --arg h "$id90max" --arg i "$id90mean" --arg j "$agree90" --arg tot "$(echo "$end - $start" | bc)" \
    '[$m, $t, $r, .feature_dim, .test.accuracy, .lambda, $a, $b, $c, $g, $h, $i, $j,
      .invariance.max_discrepancy, .seconds.featurize, .featurize_rows_per_second,
      .seconds.solve, ($tot | tonumber)] | map(tostring) | join(",")' "$rep")
  echo "$row" >>"$CSV"
  echo "$row" | awk -F, '{printf "%-14s %6s %4s %6s %7.2f %9.3g %9.1f %7.0f\n", $1, $2, $3, $4, 100*$5, $7, 100*$10, $18}'
}

start_all=$(date +%s)
for s in $SIZES; do
  run "raw RF" "$s" 1 rotated_fashion_raw_rf.textproto \
    "encoder { random_fourier { num_features: $s num_group_elements: 1 sigma: $SIGMA } $IDENTITY seed: 5 }"
done
for s in $SIZES; do
  run "LGIKA-RF" "$s" "$R" rotated_fashion_rf.textproto \
    "encoder { random_fourier { num_features: $s num_group_elements: $R sigma: $SIGMA } $ROT seed: 5 }"
done
for r in $R_SWEEP; do
  run "LGIKA-RF" 1000 "$r" rotated_fashion_rf.textproto \
    "encoder { random_fourier { num_features: 1000 num_group_elements: $r sigma: $SIGMA } $ROT seed: 5 }"
done
for m in $CDF_SIZES; do
  run "CDF" "$m" "$R" rotated_fashion_cdf.textproto \
    "encoder { cdf { num_templates: $m num_group_elements: $R num_bins: 10 range: $CDF_RANGE template_kind: TEMPLATE_SPHERE } $ROT seed: 9 }"
done
for s in $NYS_SIZES; do
  run "LGIKA-Nystrom" "$s" "$R" rotated_fashion_rf.textproto \
    "encoder { nystrom { num_landmarks: $s num_group_elements: $R sigma: $SIGMA } $ROT seed: 7 }"
done
for spec in $SECOND; do
  IFS=: read -r s1 s2 sig2 <<<"$spec"
  run "LGIKA-RF+2nd" "$s1" "$R" rotated_fashion_rf.textproto \
    "encoder { random_fourier { num_features: $s1 num_group_elements: $R sigma: $SIGMA } $ROT seed: 5 }
second_layer { num_features: $s2 sigma: $sig2 seed: 13 }"
done
total=$(($(date +%s) - start_all))
echo "total: ${total} s"

# ---- Markdown report, computed from the CSV ----
SIZES="$SIZES" NYS_SIZES="$NYS_SIZES" CDF_SIZES="$CDF_SIZES" R="$R" R_SWEEP="$R_SWEEP" \
  SECOND="$SECOND" SIGMA="$SIGMA" CDF_RANGE="$CDF_RANGE" TOTAL="$total" \
  "$ROOT/bench/repro/fashion_report.sh" "$CSV" >"$OUT/fashion.md"
if [[ -f "$OUT/fashion_notes.md" ]]; then cat "$OUT/fashion_notes.md" >>"$OUT/fashion.md"; fi

# Plot: accuracy vs feature count, one line per method at r = R (raw RF: r = 1).
awk -F, -v R="$R" 'NR == 1 || $3 == R || $3 == 1 { print $1 "," $4 "," (NR == 1 ? "accuracy_pct" : 100 * $5) }' \
  "$CSV" >"$OUT/fashion_plot.csv"
"$ROOT/bench/repro/plot.sh" -x feature_dim -y accuracy_pct -g method -l x \
  -t "Rotated Fashion-MNIST (Raj et al. 2017 protocol), RLS test accuracy (r = $R)" \
  -X "features (RF: 2s, Nystrom: s, CDF: 21m, 2nd layer: 2 s2)" -Y "test accuracy (%)" \
  "$OUT/fashion_plot.csv" "$OUT/fashion.png" || true
echo "wrote $OUT/fashion.md and $OUT/fashion.csv"
