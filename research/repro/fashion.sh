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
# Outputs research/results/fashion.{md,csv}, fashion_plot.csv and fashion.png
# (through research/repro/plot.sh when gnuplot is installed).
#
# Usage: research/repro/fashion.sh            (the default plan, ~17 min on one core)
#   SIZES="500 1000" NYS_SIZES=500 CDF_SIZES=100 SECOND= R_SWEEP= research/repro/fashion.sh
#
# PAPER=1: the paper-scale runs instead (Raj et al.'s Rotated MNIST settings:
# s = 7,000, r = 100 rotations from a von Mises law, κ = 0.2, second layer),
# one training at a time, each under /usr/bin/time -v for its peak memory,
# Cholesky ridge solver, learner.extend_lambda_grid. Each finished run
# replaces its row in research/results/fashion_paper.csv (other rows are kept, so
# the plan can be run piece by piece), then the "Paper scale" section of
# research/results/fashion.md is regenerated from that CSV by
# research/repro/fashion_paper_report.sh (+ research/notes/fashion_paper.md).
#   PAPER=1 research/repro/fashion.sh                       (raw RF, LGIKA-RF, 2nd layer)
#   PAPER=1 PAPER_RUNS="raw lgika" PAPER_S=1000 research/repro/fashion.sh
#   PAPER=1 PAPER_RUNS="raw2" PAPER_S2=10000 PAPER_SIGMA2=1.0 research/repro/fashion.sh
# (runs: raw, lgika, second = LGIKA-RF + 2nd layer, raw2 = raw RF + 2nd layer;
# a row is keyed by method, s, r, law, s2 and σ2)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=research/repro/lib/timed_train.sh
source "$ROOT/research/repro/lib/timed_train.sh"
BUILD="${BUILD:-$ROOT/build}"
OUT="${OUT:-$ROOT/research/results}"
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
# shellcheck source=research/repro/lib/build.sh
source "$ROOT/research/repro/lib/build.sh"
repro_build invariant-train invariant-repro-discrepancy
export OPENBLAS_NUM_THREADS=1
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
LEARNER_EXTRA="" # extra learner fields (PAPER mode)

# The invariance discrepancy of model NAME (trained from CFG) under 16 random
# rotations and under 90°/180°/270°, on 200 test points: sets idmax idmean
# idrel agree (random) and id90max id90mean agree90 (fixed angles).
discrepancies() { # name cfg
  local bundle="$WORK/models/$1/1/model.bundle" id
  id=$("$BUILD/bin/invariant-repro-discrepancy" --bundle="$bundle" --config="$2" --points=200 \
    --elements=16)
  read -r idmax idmean idrel agree <<<"$id"
  id=$("$BUILD/bin/invariant-repro-discrepancy" --bundle="$bundle" --config="$2" --points=200 \
    --fixed_angles_deg=90,180,270)
  read -r id90max id90mean _ agree90 <<<"$id"
}

# A config: the data / split / preprocess / learner / certificate lines of a
# shipped config, a description, and the given encoder (+ second layer) text.
make_config() { # file shipped description encoder-text
  {
    echo "description: \"$3\""
    # whole top-level blocks, also when they span lines (the raw config's certificate)
    awk '/^(data|split|preprocess|learner|certificate)/ { on = 1; depth = 0 }
      on { print; depth += gsub(/{/, "{") - gsub(/}/, "}"); if (depth <= 0) on = 0 }' "$CONFIGS/$2" |
      sed "s/^learner {/learner { $LEARNER_EXTRA/"
    echo "$4"
  } >"$1"
}
ROT='group { image { height: 28 width: 28 channels: 1 rotation { uniform { low: 0 high: 6.283185307179586 } } } }'
IDENTITY='group { identity { dim: 784 } }'

if [[ -n "${PAPER:-}" ]]; then
  PAPER_S="${PAPER_S:-7000}"             # s of raw RF and LGIKA-RF
  PAPER_R="${PAPER_R:-100}"              # rotations per frequency
  PAPER_KAPPA="${PAPER_KAPPA:-0.2}"      # von Mises concentration (mean 0)
  PAPER_S2="${PAPER_S2:-8000}"           # second-layer frequencies (2·s2 features)
  PAPER_SIGMA2="${PAPER_SIGMA2:-0.4}"    # second-layer bandwidth
  PAPER_RUNS="${PAPER_RUNS-raw lgika second}"
  THREADS="${THREADS:-1}"                # featurizing threads (BLAS: one)
  PCSV="$OUT/fashion_paper.csv"
  # AUTO: Cholesky per λ up to 20,000 features, conjugate gradients on the
  # rows above (a 17,000 second layer has 34,000 features).
  PAPER_SOLVER="${PAPER_SOLVER:-AUTO}"
  LEARNER_EXTRA="ridge_solver: RIDGE_SOLVER_$PAPER_SOLVER extend_lambda_grid: true "
  VM="group { image { height: 28 width: 28 channels: 1 rotation { von_mises { mean: 0 kappa: $PAPER_KAPPA } } } placement: PLACEMENT_INPUT }"
  HEADER="method,templates,r,rotation_law,second_layer_s2,feature_dim,test_accuracy,validation_accuracy,lambda,lambda_tried_min,lambda_tried_max,lambda_warnings,id_rot_max,id_rot_mean,label_agreement,id90_mean,label_agreement90,id_own_mean,featurize_s,solve_s,wall_s,peak_rss_mib,load1_before,load1_after,threads,date_utc,second_layer_sigma"
  [[ -f "$PCSV" ]] || echo "$HEADER" >"$PCSV"
  paper_run() { # method templates r law s2 shipped-config encoder-text
    local name cfg rep id row key
    name="$(echo "paper-$1-$2-r$3-$5" | tr -c 'A-Za-z0-9_\n-' '_')"
    cfg="$WORK/$name.textproto"
    make_config "$cfg" "$6" "$1, s=$2, r=$3, $4, s2=$5" "$7"
    local load0 date0
    load0=$(cut -d' ' -f1 /proc/loadavg)
    date0=$(date -u +%Y-%m-%dT%H:%MZ)
    echo "[$date0] $1 s=$2 r=$3 $4 s2=$5 (load $load0)" >&2
    /usr/bin/time -v -o "$WORK/$name.time" "$BUILD/bin/invariant-train" --config="$cfg" \
      --models="$WORK/models" --name="$name" --threads="$THREADS" \
      >/dev/null 2>"$WORK/$name.log" || { cat "$WORK/$name.log" "$WORK/$name.time"; return 1; }
    local load1 rss wall
    load1=$(cut -d' ' -f1 /proc/loadavg)
    rss=$(time_v_rss_mib "$WORK/$name.time")
    wall=$(time_v_wall_s "$WORK/$name.time")
    rep="$WORK/models/$name/1/report.json"
    discrepancies "$name" "$cfg"
    row=$(jq -r --arg m "$1" --arg t "$2" --arg r "$3" --arg law "$4" --arg s2 "$5" \
      --arg a "$idmax" --arg b "$idmean" --arg g "$agree" --arg i "$id90mean" --arg j "$agree90" \
      --arg wall "$wall" --arg rss "$rss" --arg l0 "$load0" --arg l1 "$load1" \
      --arg th "$THREADS" --arg d "$date0" --arg sg "$( (($5 > 0)) && echo "$PAPER_SIGMA2")" \
      '. as $rep | ([.validation_curve[] | select(.lambda == $rep.lambda) | .value] | first) as $val |
       [$m, $t, $r, $law, $s2, .feature_dim, .test.accuracy, $val, .lambda,
        ([.validation_curve[].lambda] | min), ([.validation_curve[].lambda] | max),
        (.warnings | map(select(test("lambda"))) | length),
        $a, $b, $g, $i, $j, .invariance.mean_discrepancy, .seconds.featurize, .seconds.solve,
        $wall, $rss, $l0, $l1, $th, $d, $sg] | map(tostring) | join(",")' "$rep")
    key="$1,$2,$3,$4,$5," # and σ2 (column 27): a rerun replaces its row
    { head -n1 "$PCSV"
      tail -n+2 "$PCSV" | awk -F, -v k="$key" -v sg="$(echo "$row" | cut -d, -f27)" \
        'index($0, k) != 1 || $27 != sg'
      echo "$row"; } >"$WORK/p.csv"
    mv "$WORK/p.csv" "$PCSV"
    echo "$row" >&2
    rm -rf "$WORK/models/$name"
    "$ROOT/research/repro/fashion_paper_report.sh" --splice "$PCSV" "$OUT/fashion.md"
  }
  VMLAW="von Mises κ=$PAPER_KAPPA"
  for what in $PAPER_RUNS; do
    case "$what" in
      raw) paper_run "raw RF" "$PAPER_S" 1 "identity" 0 rotated_fashion_raw_rf.textproto \
        "encoder { random_fourier { num_features: $PAPER_S num_group_elements: 1 sigma: $SIGMA } $IDENTITY seed: 5 }" ;;
      lgika) paper_run "LGIKA-RF" "$PAPER_S" "$PAPER_R" "$VMLAW" 0 rotated_fashion_rf.textproto \
        "encoder { random_fourier { num_features: $PAPER_S num_group_elements: $PAPER_R sigma: $SIGMA } $VM seed: 5 }" ;;
      second) paper_run "LGIKA-RF+2nd" "$PAPER_S" "$PAPER_R" "$VMLAW" "$PAPER_S2" rotated_fashion_rf.textproto \
        "encoder { random_fourier { num_features: $PAPER_S num_group_elements: $PAPER_R sigma: $SIGMA } $VM seed: 5 }
second_layer { num_features: $PAPER_S2 sigma: $PAPER_SIGMA2 seed: 13 }" ;;
      raw2) paper_run "raw RF+2nd" "$PAPER_S" 1 "identity" "$PAPER_S2" rotated_fashion_raw_rf.textproto \
        "encoder { random_fourier { num_features: $PAPER_S num_group_elements: 1 sigma: $SIGMA } $IDENTITY seed: 5 }
second_layer { num_features: $PAPER_S2 sigma: $PAPER_SIGMA2 seed: 13 }" ;;
      *) echo "PAPER_RUNS: unknown run '$what' (raw, lgika, second, raw2)" >&2; exit 2 ;;
    esac
  done
  echo "wrote $PCSV and the paper-scale section of $OUT/fashion.md"
  exit 0
fi

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
  discrepancies "$name" "$cfg"
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
  "$ROOT/research/repro/fashion_report.sh" "$CSV" >"$OUT/fashion.md"
NOTES="$ROOT/research/notes/fashion.md"
if [[ -f "$NOTES" ]]; then cat "$NOTES" >>"$OUT/fashion.md"; fi
if [[ -f "$OUT/fashion_paper.csv" ]]; then # the PAPER=1 section, kept
  "$ROOT/research/repro/fashion_paper_report.sh" --splice "$OUT/fashion_paper.csv" "$OUT/fashion.md"
fi

# Plot: accuracy vs feature count, one line per method at r = R (raw RF: r = 1).
awk -F, -v R="$R" 'NR == 1 || $3 == R || $3 == 1 { print $1 "," $4 "," (NR == 1 ? "accuracy_pct" : 100 * $5) }' \
  "$CSV" >"$OUT/fashion_plot.csv"
"$ROOT/research/repro/plot.sh" -x feature_dim -y accuracy_pct -g method -l x \
  -t "Rotated Fashion-MNIST (Raj et al. 2017 protocol), RLS test accuracy (r = $R)" \
  -X "features (RF: 2s, Nystrom: s, CDF: 21m, 2nd layer: 2 s2)" -Y "test accuracy (%)" \
  "$OUT/fashion_plot.csv" "$OUT/fashion.png" || true
echo "wrote $OUT/fashion.md and $OUT/fashion.csv"
