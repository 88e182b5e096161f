#!/usr/bin/env bash
# The results table of research/results/cifar.md from research/results/cifar.csv
# (research/repro/cifar.sh): replaces the lines between the markers
#   <!-- cifar.csv: begin -->  and  <!-- cifar.csv: end -->
# of MD, keeping the rest of the file (a missing MD is created bare). Raj et al.'s Table 3 accuracy is put
# beside the runs at the paper's sizes (s = 10,000; r = 50 for LGIKA-RF;
# second layer 30,000). Rows: the largest s first, then method, layers, σ.
# Usage: research/repro/cifar/table.sh CSV MD
set -euo pipefail
CSV="$1"
MD="$2"
if [[ ! -f "$MD" ]]; then # a fresh output folder: the bare table
  printf '# CIFAR-10 runs\n\n<!-- cifar.csv: begin -->\n<!-- cifar.csv: end -->\n' >"$MD"
fi
grep -q '^<!-- cifar.csv: begin -->$' "$MD" && grep -q '^<!-- cifar.csv: end -->$' "$MD" || {
  echo "$MD: no '<!-- cifar.csv: begin -->' / '<!-- cifar.csv: end -->' markers" >&2
  exit 1
}
TABLE="$(mktemp)"
trap 'rm -f "$TABLE"' EXIT
{
  echo "| method | layers | s | r | 2nd layer s2 | σ | σ2 | features | test acc. (ours) | Raj Table 3 | validation acc. | λ | solver | featurize s | solve s | wall s | peak RSS MiB | invariance discrepancy (rel.) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  tail -n+2 "$CSV" | sort -t, -k2,2nr -k1,1 -k4,4n -k5,5n -k6,6n | awk -F, '{
    layers = ($4 > 0) ? 2 : 1
    raj = "–"
    if ($2 == 10000 && ($4 == 0 || $4 == 30000) && (($1 == "RF" && $3 == 1) || ($1 == "LGIKA-RF" && $3 == 50))) {
      if ($1 == "RF") raj = (layers == 1) ? "61.02 %" : "62.79 %"
      else raj = (layers == 1) ? "64.19 %" : "67.32 %"
    }
    printf "| %s | %d | %s | %s | %s | %s | %s | %s | **%.2f %%** | %s | %.2f %% | %.3g | %s | %.1f | %.1f | %.0f | %s | %.3f |\n",
      $1, layers, $2, $3, ($4 > 0 ? $4 : "–"), $5, ($6 == "" ? "–" : $6), $7, 100 * $10, raj,
      100 * $11, $12, $13, $14, $15, $16, $17, $18
  }'
} >"$TABLE"
awk -v table="$TABLE" '
  /^<!-- cifar.csv: begin -->$/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /^<!-- cifar.csv: end -->$/ { skip = 0 }
  !skip { print }' "$MD" >"$MD.tmp"
mv "$MD.tmp" "$MD"
