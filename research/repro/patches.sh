#!/usr/bin/env bash
# Invariant patch features (encoder.patch, docs/math.md §10) on digits and
# clothes, against the whole-image encoders of the two papers:
#
#  * mroueh: Mroueh et al. 2015 Fig. 2 protocol (MNIST, 1,000 training images
#    per class, local invariance to rotations ±20° and shifts ±3 pixels;
#    paper: CDF pooling 98.97 %), with research/results/mnist.md's held-out
#    protocol: test on images 50,000 .. 59,999 of the file (never used for a
#    choice of settings), training and the 2,000 validation rows that choose
#    λ drawn per class from images 0 .. 49,999. The patch encoder with CDF
#    pooling of its template responses over a local group acting on the
#    patches (rotations uniform ±20°) and over positions (regions), and with
#    the soft threshold.
#  * rotmnist / rotfashion: Raj et al. 2017 Table 2 protocol (every image
#    rotated by a uniform angle; 12,000 train, 2,000 validation, 10,000 test)
#    on MNIST and on Fashion-MNIST (Debian's dataset-fashion-mnist, read from
#    where the trainer knows it): the patch encoder (quarter turns of
#    patches, one region: exactly invariant to quarter turns of the image)
#    against LGIKA-RF (rotated_fashion_rf.textproto, and its MNIST twin).
#  * LEVERS=1: the lever study of research/results/patches.md, on the tuning split
#    only (train per class from images 0 .. 39,999, test on 48,000 .. 49,999).
#
# Every run is one invariant-train under /usr/bin/time -v (wall time, peak
# RSS), featurize and solve seconds from its report.json. Each finished run
# replaces its row of research/results/patches.csv (keyed by experiment and
# label; the other rows are kept), so an interrupted plan is resumed by
# running what has no row yet (RUNS / SKIP_DONE=1); then the tables of
# research/results/patches.md between its "patches.csv" markers are regenerated
# (research/repro/patches/table.sh); the prose around them is kept.
#
# Usage: research/repro/patches.sh MNIST_DIR   (train-{images-idx3,labels-idx1}-ubyte.gz)
#   RUNS="mroueh rotmnist rotfashion"  experiments of the default plan (~40 min idle 2-core)
#   LEVERS=1                           also the lever study (~1.5 h)
#   HEAVY=1                            also the heavier rows (more templates, 2nd layers)
#   SKIP_DONE=1                        skip runs that already have a row
#   THREADS=0                          featurizing threads (0: all cores)
#   LOGS=DIR                           keep each run's config, log and time -v output
set -euo pipefail
if [[ $# -ne 1 || ! -d "$1" ]]; then
  echo "usage: $0 MNIST_DIR   (a folder of train-{images-idx3,labels-idx1}-ubyte[.gz])" >&2
  exit 2
fi
MNIST_DIR="$(cd "$1" && pwd)"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=research/repro/lib/timed_train.sh
source "$ROOT/research/repro/lib/timed_train.sh"
BUILD="${BUILD:-$ROOT/build}"
OUT="${OUT:-$ROOT/research/results}"
RUNS="${RUNS-mroueh rotmnist rotfashion}"
LEVERS="${LEVERS:-0}"
HEAVY="${HEAVY:-0}"
SKIP_DONE="${SKIP_DONE:-0}"
THREADS="${THREADS:-0}"
CSV="$OUT/patches.csv"
mkdir -p "$OUT"
# shellcheck source=research/repro/lib/build.sh
source "$ROOT/research/repro/lib/build.sh"
repro_build invariant-train
export OPENBLAS_NUM_THREADS=1
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
LOGS="${LOGS:-$WORK/logs}"
mkdir -p "$LOGS"
split() { "$ROOT/research/repro/mnist/split_idx.sh" "$MNIST_DIR" "$WORK" "$@"; }

HEADER="experiment,label,method,per_class_or_train,k,stride,templates,r,patch_group,response,bins,range,pool_grid,whiten,second_layer,feature_dim,train_rows,test_rows,test_accuracy,validation_accuracy,lambda,featurize_s,solve_s,wall_s,peak_rss_mib,load1_before,date_utc"
[[ -f "$CSV" ]] || echo "$HEADER" >"$CSV"

has_row() { awk -F, -v e="$1" -v l="$2" '$1 == e && $2 == l { f = 1 } END { exit !f }' "$CSV"; }

# train EXPERIMENT LABEL CONFIG CSV-MIDDLE: one invariant-train run, its row
# (experiment, label, CSV-MIDDLE, then the measured fields) replacing any row
# with the same experiment and label.
train() {
  local exp=$1 label=$2 cfg=$3 mid=$4 name load0 date0 rss wall rep row
  name="$(echo "$exp-$label" | tr -c 'A-Za-z0-9_.\n-' '_')"
  cp "$cfg" "$LOGS/$name.textproto"
  timed_train "$name" "$cfg" "$WORK/models" "$LOGS" "$exp / $label" || return 1
  row=$(jq -r --arg e "$exp" --arg l "$label" --arg mid "$mid" --arg w "$wall" --arg rss "$rss" \
    --arg l0 "$load0" --arg d "$date0" \
    '. as $rep | ([.validation_curve[] | select(.lambda == $rep.lambda) | .value] | first) as $val |
     [$e, $l, $mid, .feature_dim, .rows.train, .rows.test, .test.accuracy, $val, .lambda,
      .seconds.featurize, .seconds.solve, $w, $rss, $l0, $d] | map(tostring) | join(",")' "$rep")
  { head -n1 "$CSV"
    tail -n+2 "$CSV" | awk -F, -v e="$exp" -v l="$label" '!($1 == e && $2 == l)'
    echo "$row"; } >"$CSV.tmp"
  mv "$CSV.tmp" "$CSV"
  echo "$row" >&2
  rm -rf "$WORK/models/$name"
  "$ROOT/research/repro/patches/table.sh" "$CSV" "$OUT/patches.md"
}

# Groups acting on k × k patches (the bank holds g⁻¹·w_j: placement on the
# templates), and on whole 28 × 28 images.
ROT20='rotation { uniform { low: -0.3490658503988659 high: 0.3490658503988659 } }'
patch_group() { # k kind
  case "$2" in
    rot20) echo "image { height: $1 width: $1 channels: 1 $ROT20 }" ;;
    rot360) echo "image { height: $1 width: $1 channels: 1 rotation { uniform { low: 0 high: 6.283185307179586 } } stratified_rotation: true }" ;;
    turns) echo "dihedral { height: $1 width: $1 channels: 1 turns: true } enumerate: true" ;;
    d4) echo "dihedral { height: $1 width: $1 channels: 1 turns: true flips: true } enumerate: true" ;;
    none) echo "identity { dim: $(($1 * $1)) }" ;;
    *) echo "unknown patch group $2" >&2; exit 2 ;;
  esac
}
LOCAL="image { height: 28 width: 28 channels: 1 $ROT20 translation_x { uniform { low: -3 high: 3 } } translation_y { uniform { low: -3 high: 3 } } }"

# patch_encoder k stride m r group response n range pool whiten
patch_encoder() {
  local k=$1 st=$2 m=$3 r=$4 grp=$5 resp=$6 n=$7 s=$8 pool=$9 wh=${10} body g rfield=""
  case "$resp" in
    CDF) body="response: RESPONSE_CDF num_bins: $n range: $s" ;;
    THRESHOLD) body="response: RESPONSE_THRESHOLD threshold: $s" ;;
    *) echo "unknown response $resp" >&2; exit 2 ;;
  esac
  g="$(patch_group "$k" "$grp")"
  [[ -n "$g" ]] && g="group { $g }"
  case "$grp" in rot20 | rot360 | none) rfield="num_group_elements: $r" ;; esac
  cat <<EOT
encoder {
  patch { patch_size: $k stride: $st num_templates: $m $rfield $body pool_grid: $pool
          template_kind: TEMPLATE_DATA kmeans_iterations: 10 normalize_patches: true whiten: $wh }
  $g
  input_shape: [ 28, 28, 1 ]
  seed: 24
}
EOT
}

# mroueh_run EXPERIMENT LABEL POOL TEST PER_CLASS k stride m r group response n range pool whiten [second-layer]
mroueh_run() {
  local exp=$1 label=$2 pool=$3 test=$4 pc=$5 cfg second="${16:-}"
  shift 5
  [[ "$SKIP_DONE" == 1 ]] && has_row "$exp" "$label" && return 0
  cfg="$WORK/cfg.textproto"
  cat >"$cfg" <<EOT
description: "$exp: patch $label"
data { idx { train_images: "$WORK/$pool-images.idx" train_labels: "$WORK/$pool-labels.idx"
             test_images: "$WORK/$test-images.idx" test_labels: "$WORK/$test-labels.idx" } }
split { per_class_train: $pc validation: 2000 seed: 1 }
$(patch_encoder "$@")
$second
learner { kind: RIDGE task: TASK_CLASSIFICATION extend_lambda_grid: true }
certificate { num_points: 20 }
EOT
  train "$exp" "$label" "$cfg" \
    "patch,$pc,$1,$2,$3,$4,$5,$6,$7,$8,$9,${10},$(sed -n 's/.*num_features: \([0-9]*\).*/\1/p' <<<"$second")"
}

# rotated_run EXPERIMENT LABEL DATA-TEXT METHOD ENCODER-TEXT CSV-FIELDS (k..second)
rotated_run() {
  local exp=$1 label=$2 data=$3 method=$4 enc=$5 fields=$6 cfg
  [[ "$SKIP_DONE" == 1 ]] && has_row "$exp" "$label" && return 0
  cfg="$WORK/cfg.textproto"
  cat >"$cfg" <<EOT
description: "$exp: $label"
data { $data rotated { enabled: true seed: 3 } }
split { train: 12000 validation: 2000 test: 10000 seed: 1 }
$enc
learner { kind: RIDGE task: TASK_CLASSIFICATION extend_lambda_grid: true }
certificate { num_points: 20 }
EOT
  train "$exp" "$label" "$cfg" "$method,12000,$fields"
}
MNIST_DATA="idx { train_images: \"$MNIST_DIR/train-images-idx3-ubyte.gz\" train_labels: \"$MNIST_DIR/train-labels-idx1-ubyte.gz\" }"
FASHION_DATA="fashion_mnist {}"
# LGIKA-RF as rotated_fashion_rf.textproto (s, r given), l2-normalised input.
lgika() { # s r
  cat <<EOT
preprocess { l2_normalize: true }
encoder {
  random_fourier { num_features: $1 num_group_elements: $2 sigma: 0.4 }
  group { image { height: 28 width: 28 channels: 1 rotation { uniform { low: 0 high: 6.283185307179586 } } stratified_rotation: true } placement: PLACEMENT_INPUT }
  seed: 5
}
EOT
}
rotated_pair() { # EXPERIMENT DATA-TEXT
  local exp=$1 data=$2
  # The patch encoder: 6 × 6 patches, 400 templates under quarter turns, one
  # region (train/configs/mnist_patch.textproto), threshold and CDF.
  rotated_run "$exp" "patch turns thr pool1" "$data" patch \
    "$(patch_encoder 6 1 400 4 turns THRESHOLD 0 0.25 1 true)" "6,1,400,4,turns,THRESHOLD,,0.25,1,true,"
  rotated_run "$exp" "patch turns thr pool2" "$data" patch \
    "$(patch_encoder 6 1 400 4 turns THRESHOLD 0 0.25 2 true)" "6,1,400,4,turns,THRESHOLD,,0.25,2,true,"
  rotated_run "$exp" "patch rot360 r8 thr pool1" "$data" patch \
    "$(patch_encoder 6 1 400 8 rot360 THRESHOLD 0 0.25 1 true)" "6,1,400,8,rot360,THRESHOLD,,0.25,1,true,"
  rotated_run "$exp" "patch turns thr pool1 m1600" "$data" patch \
    "$(patch_encoder 6 1 1600 4 turns THRESHOLD 0 0.25 1 true)" "6,1,1600,4,turns,THRESHOLD,,0.25,1,true,"
  # CDF pooling keeps each template's distribution of responses over the
  # positions and turns, not only its mean (5 numbers per template).
  rotated_run "$exp" "patch turns CDF n2 s1 pool1" "$data" patch \
    "$(patch_encoder 6 1 400 4 turns CDF 2 1 1 true)" "6,1,400,4,turns,CDF,2,1,1,true,"
  rotated_run "$exp" "LGIKA-RF s1000 r32" "$data" "LGIKA-RF" "$(lgika 1000 32)" ",,1000,32,image rot360,,,,,,"
  rotated_run "$exp" "raw RF s1000" "$data" "raw RF" \
    "$(lgika 1000 1 | sed 's/group { image.*/group { identity { dim: 784 } }/')" ",,1000,1,,,,,,,"
}

if [[ " $RUNS " == *" mroueh "* || "$LEVERS" == 1 ]]; then
  split 0 50000 pool
  split 50000 10000 heldout
fi
if [[ "$LEVERS" == 1 ]]; then
  split 0 40000 tunepool
  split 48000 2000 tunetest
  L() { mroueh_run levers "$@"; }
  # LEVERS_PLAN (research/repro/patches/levers.sh) lists the lever rows.
  source "$ROOT/research/repro/patches/levers.sh"
fi
for what in $RUNS; do
  case "$what" in
    mroueh)
      source "$ROOT/research/repro/patches/mroueh.sh" ;;
    rotmnist) rotated_pair rotmnist "$MNIST_DATA" ;;
    rotfashion) rotated_pair rotfashion "$FASHION_DATA" ;;
    *) echo "RUNS: unknown experiment '$what' (mroueh, rotmnist, rotfashion)" >&2; exit 2 ;;
  esac
done
echo "wrote $CSV and the tables of $OUT/patches.md"
