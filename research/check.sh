#!/usr/bin/env bash
# check.sh: runs every reproduction once on a small case, each into its own
# folder under OUT_DIR (never into research/results/), and says which ran.
# A check that a script still runs end to end against today's product, not a
# reproduction: the numbers of a small case mean nothing.
#
#   research/check.sh [--build=DIR] [--out=DIR] [--mnist=DIR] [--cifar=DIR] [--fsdd=DIR]
#
# --build   the build tree (default REPO/build); INVARIANT_BUILD_RESEARCH is
#           turned on in it and the research targets built (research/repro/lib/build.sh)
# --out     where the outputs go (default a new /tmp/research-check.XXXXXX)
# --mnist, --cifar, --fsdd   data folders for the scripts that need them (MNIST
#           IDX files, CIFAR-10 binary batches, FSDD recordings); without one,
#           that script is listed as "not run (no data)" and the check goes on
# Exits 1 when a script that was run fails or writes nothing.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
OUT_DIR=""
MNIST="" CIFAR="" FSDD=""
for arg in "$@"; do
  case "$arg" in
    --build=*) BUILD="${arg#--build=}" ;;
    --out=*) OUT_DIR="${arg#--out=}" ;;
    --mnist=*) MNIST="${arg#--mnist=}" ;;
    --cifar=*) CIFAR="${arg#--cifar=}" ;;
    --fsdd=*) FSDD="${arg#--fsdd=}" ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "check: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
[[ -n "$OUT_DIR" ]] || OUT_DIR="$(mktemp -d /tmp/research-check.XXXXXX)"
mkdir -p "$OUT_DIR"
export BUILD BUILD_DIR="$BUILD"
# shellcheck source=research/repro/lib/build.sh
source "$ROOT/research/repro/lib/build.sh"
repro_build invariant-train invariant-repro-xperm invariant-repro-kernel-approx \
  invariant-repro-torus invariant-repro-discrepancy invariance-figure || exit 1

FAILED=0
# run NAME EXPECTED_FILE COMMAND...: runs COMMAND with OUT set to OUT_DIR/NAME.
run() {
  local name="$1" expect="$2"
  shift 2
  local out="$OUT_DIR/$name" start
  mkdir -p "$out"
  start=$(date +%s)
  if OUT="$out" RESULTS="$out" LOGS="$out/logs" "$@" >"$out/log" 2>&1 && [[ -s "$out/$expect" ]]; then
    echo "check: $name ok ($(( $(date +%s) - start )) s, $out/$expect)"
  else
    echo "check: $name FAILED (log: $out/log)"
    FAILED=1
  fi
}
skip() { echo "check: $1 not run (no data: pass $2)"; }

R="$ROOT/research/repro"
run xperm xperm.md bash "$R/xperm.sh" --seeds=1 --sizes=5 --curve_templates=1 \
  --grid_bins=1 --grid_templates=1 --grid_seeds=1 --group_counts=1 --discrepancy_points=10
run kernel_approx kernel_approx.md env POINTS=24 SEEDS=1 S_VALUES=16,64 GROUP_COUNTS=20 \
  DATASETS=xperm bash "$R/kernel_approx.sh"
run torus torus.md env TORUS_SKIP_BUILD=1 bash "$R/torus.sh" "$BUILD" --dim=3 --seeds=1 \
  --n_list=50 --levels=1,2 --spec_only_n_list= --etas=0.3 --lambdas=1 --validation_points=20 \
  --moment_points=1000 --test_points=20
run coulomb coulomb.md env SIZES=100 SPLITS=1 RF_SIGMAS=10000 NOISY_SIGMAS=10 CDF_RANGES=100 \
  bash "$R/coulomb.sh" "$BUILD"
run coulomb_paper coulomb_paper.md env S=200 R=4 FOLDS=3 METHODS=raw_rf \
  bash "$R/coulomb_paper.sh" "$BUILD"
run fashion fashion.md env SIZES=100 NYS_SIZES= CDF_SIZES= SECOND= R_SWEEP= bash "$R/fashion.sh"
run invariance_figure invariance.svg bash "$ROOT/research/invariance_figure/make_figure.sh"
if [[ -n "$MNIST" ]]; then
  run mnist mnist.md env FIG2=0 RAJ=1 RAJ_S=200 RAJ_R=2 bash "$R/mnist.sh" "$MNIST"
  # patches.sh has no size knobs: its smallest experiment, as published (minutes).
  run patches patches.md env RUNS=mroueh bash "$R/patches.sh" "$MNIST"
else
  skip mnist --mnist=DIR
  skip patches --mnist=DIR
fi
if [[ -n "$CIFAR" ]]; then
  run cifar cifar.csv env RUNS=rf S=500 R=2 S2=500 bash "$R/cifar.sh" "$CIFAR"
else
  skip cifar --cifar=DIR
fi
if [[ -n "$CIFAR" ]]; then
  # The served check only, on 300 + 100 CIFAR photos (the MNIST argument is not read).
  run image_files image_files.md env RUNS=folder FOLDER_SPLIT=300,100 \
    bash -c "bash '$R/image_files.sh' '${MNIST:-none}' '$CIFAR' \"\$OUT\""
else
  skip image_files --cifar=DIR
fi
if [[ -n "$FSDD" ]]; then
  run spoken_digits spoken_digits.md env PROTOCOLS=standard METHODS=plain_rf \
    bash "$R/spoken_digits.sh" "$FSDD"
else
  skip spoken_digits --fsdd=DIR
fi
echo "check: outputs in $OUT_DIR"
exit $FAILED
