#!/usr/bin/env bash
# The λ path at paper scale (issue 25): the ridge solve of the trainer's
# nine-value grid (1e-8 .. 1) on the accumulated sums of N = 10,000 rows, per
# solver, at each D, in one process per D so that the solvers' times are
# measured back to back (compare them within a line pair: the machine is
# shared). Prints the benchmark's lines (solve seconds, build seconds, peak
# resident memory per solver with the sums, weight gap to the first solver)
# and GNU time's peak for the whole process.
#
#   bench/solver/lambda_path.sh "2000 8000 14000 16000" cholesky,band
#   bench/solver/lambda_path.sh 2000 eigen,cholesky,band
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
DS="${1:-2000 8000 14000 16000}"
SOLVERS="${2:-cholesky,band}"
REPEAT="${REPEAT:-1}"
for d in $DS; do
  for _ in $(seq "$REPEAT"); do
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    /usr/bin/time -f "process peak_rss_gib=%M" "$BUILD/bin/invariant-bench-lambda-path" \
      --features="$d" --rows="${ROWS:-10000}" --solvers="$SOLVERS" 2>&1 |
      awk '/process peak_rss_gib=/ { split($2, a, "="); printf "process peak_rss_gib=%.2f\n", a[2] / 2^20; next } { print }'
  done
done
