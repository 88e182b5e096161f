#!/usr/bin/env bash
# table.sh CSV MD: regenerates, in MD, the table between each pair of markers
#   <!-- patches.csv EXPERIMENT -->  ...  <!-- /patches.csv -->
# from the rows of CSV (research/repro/patches.sh's) whose experiment column is
# EXPERIMENT, in CSV order; the rest of MD is kept as it is. A missing MD is
# created with one marker pair per experiment in CSV.
set -euo pipefail
csv=$1 md=$2
if [[ ! -f "$md" ]]; then
  { echo "# Patch features on digits and clothes"
    for e in $(tail -n+2 "$csv" | cut -d, -f1 | awk '!seen[$0]++'); do
      printf '\n## %s\n\n<!-- patches.csv %s -->\n<!-- /patches.csv -->\n' "$e" "$e"
    done; } >"$md"
fi
table() { # experiment
  awk -F, -v e="$1" '
    function pct(x) { return x == "" ? "" : sprintf("%.2f %%", 100 * x) }
    NR == 1 { next }
    $1 == e {
      if (!n++) {
        print "| label | method | train | k | stride | m | r | patch group | response | n | range / α | pool | whiten | 2nd layer | features | test acc. | val. acc. | λ | featurize s | solve s | wall s | peak MiB | test rows | load |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
      }
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | **%s** | %s | %s | %.1f | %.1f | %s | %s | %s | %s |\n",
        $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, pct($19), pct($20), sprintf("%.0e", $21), $22, $23, $24, $25, $18, $26
    }
    END { if (!n) print "(no rows yet)" }' "$csv"
}
tmp="$md.tmp"
exp=""
while IFS= read -r line; do
  if [[ "$line" =~ ^\<\!--\ patches\.csv\ ([a-z0-9_]+)\ --\>$ ]]; then
    exp="${BASH_REMATCH[1]}"
    echo "$line"
    table "$exp"
  elif [[ "$line" == "<!-- /patches.csv -->" ]]; then
    exp=""
    echo "$line"
  elif [[ -z "$exp" ]]; then
    echo "$line"
  fi
done <"$md" >"$tmp"
mv "$tmp" "$md"
