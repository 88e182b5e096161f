#!/usr/bin/env bash
# The λ path at paper scale (issue 25): the ridge solve of the trainer's
# nine-value grid (1e-8 .. 1) on the accumulated sums of N = 10,000 rows, per
# solver, at each D, in one process per D so that the solvers' times are
# measured back to back (compare them within a line pair: the machine is
# shared). Prints the benchmark's lines (solve seconds, build seconds, peak
# resident memory per solver, weight gap to the first solver)
# (peak_gib: the process's VmHWM during that solver, reset before it through
# /proc/self/clear_refs, so the sums are included; GNU time's figure would
# be reset too, hence not used).
#
# A D may be given as D:N to set N for it (else $ROWS, default 10,000).
# dual_band solves from the kept rows (N × D floats) instead of the sums;
# gram_s on the header line is the accumulation of the sums alone, which the
# trainer pays for every primal solver and not for dual_band. With DUAL_ALONE=1
# dual_band is also run in a process of its own (its peak then holds the rows
# only, no sums).
#
#   bench/solver/lambda_path.sh "2000 8000 14000 16000" cholesky,band
#   bench/solver/lambda_path.sh 2000 eigen,cholesky,band
#   DUAL_ALONE=1 bench/solver/lambda_path.sh "8000:5000 14000:10000" cholesky,band,dual_band
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
DS="${1:-2000 8000 14000 16000}"
SOLVERS="${2:-cholesky,band}"
REPEAT="${REPEAT:-1}"
for dn in $DS; do
  d="${dn%%:*}"
  n="${ROWS:-10000}"
  [[ "$dn" == *:* ]] && n="${dn##*:}"
  for _ in $(seq "$REPEAT"); do
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    "$BUILD/bin/invariant-bench-lambda-path" --features="$d" --rows="$n" --solvers="$SOLVERS"
    if [[ "${DUAL_ALONE:-0}" == 1 ]]; then
      echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
      "$BUILD/bin/invariant-bench-lambda-path" --features="$d" --rows="$n" --solvers=dual_band
    fi
  done
done
