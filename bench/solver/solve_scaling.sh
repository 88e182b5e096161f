#!/usr/bin/env bash
# Ridge solve time and peak memory against the number of features D, for the
# eigendecomposition path, the Cholesky path and conjugate gradients
# (learner.ridge_solver: eigen, cholesky, cg; CG from the rows when D > 2N,
# else from the Gram; cg_rows / cg_gram force one), on the
# plain random Fourier model of rotated Fashion-MNIST (12,000 training rows,
# 2,000 validation rows, the 9-value default λ grid; D = 2s).
#
#   bench/solver/solve_scaling.sh "1000:eigen 1000:cholesky 4000:eigen 4000:cholesky 8000:cholesky"
#   bench/solver/solve_scaling.sh "1000:cg 4000:cg 8000:cg 16000:cg"
#
# Prints one line per run: s, D, solver, seconds of the solve stage, the
# process's peak RSS (GNU time), test accuracy, λ, and for CG the largest
# iteration count and relative residual over the grid.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
RUNS="${1:-1000:eigen 1000:cholesky 4000:eigen 4000:cholesky}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $RUNS; do
  s=${run%%:*}
  solver=$(echo "${run##*:}" | tr a-z A-Z)
  source_line=""
  case "$solver" in
    CG_ROWS) solver=CG; source_line=" cg { source: SOURCE_ROWS }" ;;
    CG_GRAM) solver=CG; source_line=" cg { source: SOURCE_GRAM }" ;;
  esac
  name="s${s}_${run##*:}"
  cfg="$WORK/$name.textproto"
  sed -e "s/num_features: 1000/num_features: $s/" \
      -e "s/learner { kind: RIDGE task: TASK_CLASSIFICATION }/learner { kind: RIDGE task: TASK_CLASSIFICATION ridge_solver: RIDGE_SOLVER_$solver$source_line }/" \
      "$ROOT/train/configs/rotated_fashion_raw_rf.textproto" >"$cfg"
  grep -q "RIDGE_SOLVER_$solver" "$cfg"
  /usr/bin/time -f "%M" -o "$WORK/rss" "$BUILD/bin/invariant-train" --config="$cfg" \
    --models="$WORK/models" --name="$name" >/dev/null 2>"$WORK/err" || { cat "$WORK/err"; exit 1; }
  report="$WORK/models/$name/1/report.json"
  /usr/bin/python3 - "$report" "$s" "$solver" "$(cat "$WORK/rss")" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
cg = r.get("solver", {}).get("cg", [])
extra = (f" cg_max_iterations={max(c['iterations'] for c in cg)} "
         f"cg_max_residual={max(c['relative_residual'] for c in cg):.2g}") if cg else ""
print(f"s={sys.argv[2]} D={r['feature_dim']} solver={r['solver']['kind']} solve_seconds={r['seconds']['solve']:.1f} "
      f"featurize_seconds={r['seconds']['featurize']:.1f} "
      f"peak_rss_gib={int(sys.argv[4]) / 2**20:.2f} test_accuracy={r['test']['accuracy']:.4f} lambda={r['lambda']:g}{extra}")
PYEOF
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
