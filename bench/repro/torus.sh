#!/usr/bin/env bash
# Reproduces Soleymani et al. (ICML 2025) §6: Spec-Avg vs von Mises KRR on the
# torus [-1,1)^10 with the sign-flip group {±1}^10, seeds 1..10, plus the
# fit-time table (sign flips vs permutations, d = 6..12).
# Outputs docs/results/torus.{md,csv,png}, torus_timing.csv, torus_curves.dat.
# The PNG needs gnuplot (apt-get install -y gnuplot-nox); without it the
# script says so and skips the plot. Default run: a few minutes on one core.
#
# Usage: bench/repro/torus.sh [BUILD_DIR] [extra invariant-repro-torus flags]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${1:-$ROOT/build}"
shift || true
OUT="$ROOT/docs/results"
mkdir -p "$OUT"
if [[ ! -f "$BUILD/build.ninja" && ! -f "$BUILD/Makefile" ]]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$BUILD" -j2 --target invariant-repro-torus
# One BLAS thread: the fit times in the report are single-core.
OPENBLAS_NUM_THREADS=1 "$BUILD/bin/invariant-repro-torus" --out_dir="$OUT" "$@"
if command -v gnuplot >/dev/null 2>&1; then
  gnuplot "$OUT/torus.gp" && echo "wrote $OUT/torus.png"
else
  echo "gnuplot not found: skipped $OUT/torus.png (apt-get install -y gnuplot-nox)"
fi
