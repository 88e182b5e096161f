#!/usr/bin/env bash
# CIFAR-10 at the settings of Raj et al. 2017, Table 3: plain random Fourier
# features ("Original (RF)") and LGIKA-RF (the local affine law of §4.3), each
# with one layer (s = 10,000 frequencies, r = 50 group draws) and with a
# second layer of 30,000 random Fourier frequencies on top, trained by
# build/bin/invariant-train from train/configs/cifar_rf.textproto and
# cifar_lgika.textproto. Every run is timed by /usr/bin/time -v (wall time,
# peak resident memory) and by the trainer's report.json (featurize and
# solve seconds).
#
# Each finished run replaces its row of research/results/cifar.csv (keyed by
# method, s, r, s2, σ and σ2; the other rows are kept), then the table of
# research/results/cifar.md between its "cifar.csv" markers is regenerated from
# the CSV (research/repro/cifar/table.sh); the rest of cifar.md is prose kept as
# it is. So the plan can be run piece by piece, and an interrupted plan is
# resumed by running the runs that have no row yet.
#
# Usage: research/repro/cifar.sh CIFAR10_DIR      (folder of data_batch_N.bin[.gz])
#   RUNS="rf lgika rf2 lgika2"   which runs, in this order (default all four);
#     also "patch": train/configs/cifar_patch.textproto (PATCH_M=3200
#     templates, no group on patches, the features averaged over the image
#     and its left-right mirror: method "patch+image-mirror"), "patch_plain":
#     the same without the image mirror (method "patch"), and "patch_mirror":
#     without it, each template pooled with its mirror on patches (r = 2)
#     (research/results/cifar.md, "Patch features"); "patch_all": "patch" on all
#     50,000 images (43,000 to train, 2,000 for λ, 5,000 held out; the
#     primal band solver; method "patch+image-mirror@50k"; research/results/
#     cifar.md, "All 50,000 images")
#   S=10000 R=50 S2=30000        first-layer frequencies, group draws, second layer
#   SIGMA=1.0 SIGMA2=0.8         bandwidths of the first and second layer
#   THREADS=0                    featurizing threads (0: all cores)
#   LOGS=runs                    where each run's config, log and time -v output go
#   TWO_LAYER_GIB=19             a two-layer run waits until this much memory is
#                                available (MemAvailable), polling every 30 s
#   SWEEP=1: the bandwidth sweep instead (validation accuracy at small s):
#     SWEEP_SIGMAS="0.5 0.7 1.0 1.4" at S (use S=1000 R=10), then SWEEP_SIGMAS2
#     for the second layer of RF at S2 (use S2=3000).
# Examples:
#   S=1000 R=10 S2=3000 research/repro/cifar.sh "$CIFAR10_DIR"      (minutes)
#   nice -n 5 research/repro/cifar.sh "$CIFAR10_DIR"                  (paper scale)
#   RUNS=lgika2 nice -n 5 research/repro/cifar.sh "$CIFAR10_DIR"      (one run)
#
# Memory: one-layer runs keep the 15,000 × 20,000 training features and solve
# the dual (N × N kernel; about 3 GB); two-layer runs have 60,000 features, so
# the D × D Gram (29 GB) is out of reach and they are solved by the dual band
# path too (RIDGE_SOLVER_DUAL_BAND: 15,000 × 60,000 floats, then doubles,
# plus the 15,000² kernel and the 2.4 GB of second-layer frequencies: 17 GB
# peak measured; on a machine shared with other jobs the kernel's OOM killer
# stopped one such run, hence TWO_LAYER_GIB). Sharding (invariant-train
# --shard=i/n, then `reduce --shards=n`) spreads the featurization of the
# one-layer runs over processes or machines; it forms the 20,000² Gram
# (3.2 GB) instead of the dual, and is not usable for the two-layer runs.
# See research/results/cifar.md, "Sharding".
set -euo pipefail
if [[ $# -ne 1 || ! -d "$1" ]]; then
  echo "usage: $0 CIFAR10_DIR   (a folder of data_batch_N.bin[.gz])" >&2
  exit 2
fi
DATA="$(cd "$1" && pwd)"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=research/repro/lib/timed_train.sh
source "$ROOT/research/repro/lib/timed_train.sh"
BUILD="${BUILD:-$ROOT/build}"
OUT="${OUT:-$ROOT/research/results}"
CONFIGS="$ROOT/train/configs"
RUNS="${RUNS-rf lgika rf2 lgika2}"
S="${S:-10000}"
R="${R:-50}"
S2="${S2:-30000}"
PATCH_M="${PATCH_M:-3200}"
SIGMA="${SIGMA:-1.0}"
SIGMA2="${SIGMA2:-0.8}"
THREADS="${THREADS:-0}"
LOGS="${LOGS:-$ROOT/runs}"
TWO_LAYER_GIB="${TWO_LAYER_GIB:-19}"
CSV="$OUT/cifar.csv"
mkdir -p "$OUT" "$LOGS"
# shellcheck source=research/repro/lib/build.sh
source "$ROOT/research/repro/lib/build.sh"
repro_build invariant-train
export OPENBLAS_NUM_THREADS=1

HEADER="method,templates,r,second_layer_s2,sigma,sigma2,feature_dim,train_rows,test_rows,test_accuracy,validation_accuracy,lambda,solver,featurize_s,solve_s,wall_s,peak_rss_mib,id_mean_rel,threads,load1_before,date_utc"
[[ -f "$CSV" ]] || echo "$HEADER" >"$CSV"

# A config from shipped config $2: the data folder, s, r and σ replaced, the
# description and any second layer / solver given.
make_config() { # file shipped description s r sigma s2 sigma2 method
  local second=""
  if [[ "$2" == cifar_patch.textproto ]]; then
    # The shipped patch config (s = its templates m) on the same split as the
    # other runs; method "patch": without the average over the image mirror;
    # r = 2: each template pooled with its left-right mirror (the dihedral
    # group of flips on patches) instead of no group.
    sed -e "s|CIFAR10_DIR|$DATA|" -e "s|^description: .*|description: \"$3\"|" \
      -e "s/num_templates: [0-9]*/num_templates: $4/" "$CONFIGS/$2" >"$1"
    if [[ "$9" == patch ]]; then
      sed -i '/^    image_group {$/,/^    }$/d' "$1"
      if grep -q image_group "$1"; then
        echo "cifar.sh: could not remove image_group from $2 (is it still a 4-line block?)" >&2
        exit 1
      fi
    fi
    if [[ "$9" == *@50k ]]; then
      # All 50,000 images (issue 34): 4,300 of each class to train, 2,000
      # to choose λ, the other 5,000 held out; the primal band path, which
      # centres and reduces its Gram in place (a D × D matrix of doubles:
      # 5.2 GB at 25,600 features, 11.8 GB at 38,400), where the dual's
      # 43,000² kernel and centred rows would not fit in 24 GB.
      sed -i -e "s/^split { .* }$/split { per_class_train: 4300 validation: 2000 seed: 1 }/" \
        -e "s/RIDGE_SOLVER_DUAL_BAND/RIDGE_SOLVER_BAND/" "$1"
    fi
    if (($5 == 2)); then
      sed -i -e "/^    num_group_elements: 1$/d" -e "s/^  group { identity .*/  group { dihedral \
{ height: 6 width: 6 channels: 3 flips: true } enumerate: true }/" "$1"
    fi
    return
  fi
  if (($7 > 0)); then
    second="second_layer { num_features: $7 sigma: $8 seed: 13 }"
  fi
  sed -e "s|CIFAR10_DIR|$DATA|" -e "s|^description: .*|description: \"$3\"|" \
    -e "s/num_features: [0-9]*/num_features: $4/" \
    -e "s/num_group_elements: [0-9]* sigma: [0-9.]*/num_group_elements: $5 sigma: $6/" \
    "$CONFIGS/$2" >"$1"
  if (($7 > 0)); then
    # 2·s2 features: more than the training rows, so the dual (N × N).
    sed -i 's/extend_lambda_grid: true/extend_lambda_grid: true ridge_solver: RIDGE_SOLVER_DUAL_BAND/' "$1"
    echo "$second" >>"$1"
  fi
}

run() { # method shipped-config s r sigma s2 sigma2
  local name cfg rep row key load0 date0 rss wall
  name="$(echo "$1-s$3-r$4-sig$5-s2_$6-sig2_$7" | tr -c 'A-Za-z0-9_.\n-' '_')"
  cfg="$LOGS/$name.textproto"
  make_config "$cfg" "$2" "$1, s=$3, r=$4, σ=$5, s2=$6, σ2=$7" "$3" "$4" "$5" "$6" "$7" "$1"
  if (($6 > 0)); then # ~17 GB peak: wait for the memory rather than be OOM-killed
    local avail
    while avail=$(awk '/MemAvailable/ { printf "%d", $2 / 1048576 }' /proc/meminfo) &&
      ((avail < TWO_LAYER_GIB)); do
      echo "waiting for memory: ${avail} GiB available, ${TWO_LAYER_GIB} wanted" >&2
      sleep 30
    done
  fi
  timed_train "$name" "$cfg" "$LOGS/models" "$LOGS" "$1 s=$3 r=$4 σ=$5 s2=$6 σ2=$7" || return 1
  row=$(jq -r --arg m "$1" --arg t "$3" --arg r "$4" --arg s2 "$6" --arg sg "$5" \
    --arg sg2 "$( (($6 > 0)) && echo "$7" || echo "")" --arg wall "$wall" --arg rss "$rss" \
    --arg th "$THREADS" --arg l0 "$load0" --arg d "$date0" \
    '. as $rep | ([.validation_curve[] | select(.lambda == $rep.lambda) | .value] | first) as $val |
     [$m, $t, $r, $s2, $sg, $sg2, .feature_dim, .rows.train, .rows.test, .test.accuracy, $val,
      .lambda, .solver.kind, .seconds.featurize, .seconds.solve, $wall, $rss,
      .invariance.relative_mean_discrepancy, $th, $l0, $d] | map(tostring) | join(",")' "$rep")
  key="$(echo "$row" | cut -d, -f1-6)"
  { head -n1 "$CSV"
    tail -n+2 "$CSV" | awk -F, -v k="$key" '{ split(k, f, ","); same = 1
      for (i = 1; i <= 6; ++i) if ($i != f[i]) same = 0
      if (!same) print }'
    echo "$row"; } >"$CSV.tmp"
  mv "$CSV.tmp" "$CSV"
  echo "$row" >&2
  rm -rf "$LOGS/models/$name" # second-layer models hold 2.4 GB of frequencies
  "$ROOT/research/repro/cifar/table.sh" "$CSV" "$OUT/cifar.md"
}

if [[ -n "${SWEEP:-}" ]]; then
  for sg in ${SWEEP_SIGMAS-0.5 0.7 1.0 1.4}; do
    run "RF" cifar_rf.textproto "$S" 1 "$sg" 0 0
    run "LGIKA-RF" cifar_lgika.textproto "$S" "$R" "$sg" 0 0
  done
  for sg2 in ${SWEEP_SIGMAS2-0.3 0.5 0.8}; do
    run "RF" cifar_rf.textproto "$S" 1 "$SIGMA" "$S2" "$sg2"
  done
  echo "wrote $CSV and the table of $OUT/cifar.md"
  exit 0
fi

for what in $RUNS; do
  case "$what" in
    rf) run "RF" cifar_rf.textproto "$S" 1 "$SIGMA" 0 0 ;;
    lgika) run "LGIKA-RF" cifar_lgika.textproto "$S" "$R" "$SIGMA" 0 0 ;;
    rf2) run "RF" cifar_rf.textproto "$S" 1 "$SIGMA" "$S2" "$SIGMA2" ;;
    lgika2) run "LGIKA-RF" cifar_lgika.textproto "$S" "$R" "$SIGMA" "$S2" "$SIGMA2" ;;
    patch) run "patch+image-mirror" cifar_patch.textproto "$PATCH_M" 1 0 0 0 ;;
    patch_plain) run "patch" cifar_patch.textproto "$PATCH_M" 1 0 0 0 ;;
    patch_mirror) run "patch" cifar_patch.textproto "$PATCH_M" 2 0 0 0 ;;
    patch_all) run "patch+image-mirror@50k" cifar_patch.textproto "$PATCH_M" 1 0 0 0 ;;
    *)
      echo "RUNS: unknown run '$what' (rf, lgika, rf2, lgika2, patch, patch_plain, patch_mirror, patch_all)" >&2
      exit 2
      ;;
  esac
done
echo "wrote $CSV and the table of $OUT/cifar.md"
