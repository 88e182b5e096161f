#!/usr/bin/env bash
# plot.sh: turn a CSV table into a PNG line or bar chart with gnuplot.
# Shared by the reproduction scripts in research/repro/.
#
# Usage: research/repro/plot.sh [options] IN.csv OUT.png
#   -x COL    x column: numbers for lines, category labels for bars (required)
#   -y COL    y column (required)
#   -e COL    optional error column, drawn as ± error bars around y
#   -g COL    optional series column: one line (or one bar colour) per value,
#             in order of first appearance
#   -k KIND   lines (default) or bars
#   -t TITLE  -X XLABEL  -Y YLABEL
#   -l AXES   log scale on x, y or xy
#   -s WxH    image size in pixels (default 900x560)
#   -K POS    gnuplot key position (default "outside right top"; e.g.
#             "top right", "bottom left")
#
# The CSV has a header row naming the columns and plain comma-separated
# fields (double quotes around a field are stripped; a field cannot contain a
# comma). Empty y cells are skipped. Needs gnuplot (Debian: gnuplot-nox);
# without it the script prints a message and exits with status 3, so callers
# can skip the plot and keep going.
set -euo pipefail

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

X="" Y="" E="" G="" KIND=lines TITLE="" XLABEL="" YLABEL="" LOG="" SIZE=900x560
KEY="outside right top"
while getopts "x:y:e:g:k:t:X:Y:l:s:K:h" opt; do
  case "$opt" in
    x) X=$OPTARG ;; y) Y=$OPTARG ;; e) E=$OPTARG ;; g) G=$OPTARG ;;
    k) KIND=$OPTARG ;; t) TITLE=$OPTARG ;; X) XLABEL=$OPTARG ;; Y) YLABEL=$OPTARG ;;
    l) LOG=$OPTARG ;; s) SIZE=$OPTARG ;; K) KEY=$OPTARG ;; *) usage ;;
  esac
done
shift $((OPTIND - 1))
[[ $# -eq 2 && -n "$X" && -n "$Y" ]] || usage
IN=$1 OUT=$2
[[ -r "$IN" ]] || { echo "plot.sh: cannot read $IN" >&2; exit 2; }
[[ "$KIND" == lines || "$KIND" == bars ]] || { echo "plot.sh: -k must be lines or bars, got $KIND" >&2; exit 2; }
[[ -z "$LOG" || "$LOG" =~ ^(x|y|xy)$ ]] || { echo "plot.sh: -l must be x, y or xy, got $LOG" >&2; exit 2; }
[[ "$SIZE" =~ ^[0-9]+x[0-9]+$ ]] || { echo "plot.sh: -s must be WxH, got $SIZE" >&2; exit 2; }
[[ "$KEY" =~ ^[a-z\ ]+$ ]] || { echo "plot.sh: -K must be gnuplot key words, got $KEY" >&2; exit 2; }
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "plot.sh: gnuplot not found, skipped $OUT (apt-get install -y gnuplot-nox)" >&2
  exit 3
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Data blocks (one per series, separated by two blank lines) in $TMP/data,
# series names in $TMP/series, bar categories in $TMP/cats.
awk -F, -v X="$X" -v Y="$Y" -v E="$E" -v G="$G" -v kind="$KIND" \
    -v data="$TMP/data" -v series="$TMP/series" -v cats="$TMP/cats" '
  function clean(s) { gsub(/^[ \t"]+|[ \t"\r]+$/, "", s); return s }
  NR == 1 {
    for (i = 1; i <= NF; ++i) col[clean($i)] = i
    if (!(X in col)) { print "plot.sh: no column " X > "/dev/stderr"; exit 2 }
    if (!(Y in col)) { print "plot.sh: no column " Y > "/dev/stderr"; exit 2 }
    if (E != "" && !(E in col)) { print "plot.sh: no column " E > "/dev/stderr"; exit 2 }
    if (G != "" && !(G in col)) { print "plot.sh: no column " G > "/dev/stderr"; exit 2 }
    next
  }
  {
    y = clean($(col[Y])); if (y == "") next
    s = (G == "") ? Y : clean($(col[G]))
    if (!(s in sid)) { sid[s] = ns++; sname[sid[s]] = s }
    x = clean($(col[X]))
    if (kind == "bars" && !(x in cid)) { cid[x] = nc++; cname[cid[x]] = x }
    e = (E == "") ? 0 : clean($(col[E])); if (e == "") e = 0
    row[sid[s], ++cnt[sid[s]]] = ((kind == "bars") ? cid[x] : x) " " y " " e
  }
  END {
    if (ns == 0) { print "plot.sh: no data rows" > "/dev/stderr"; exit 2 }
    for (i = 0; i < ns; ++i) {
      for (j = 1; j <= cnt[i]; ++j) {
        split(row[i, j], f, " ")
        xpos = f[1]
        if (kind == "bars") xpos = f[1] + (i - (ns - 1) / 2) * (0.8 / ns)
        print xpos, f[2], f[3] > data
      }
      print "\n" > data
      print sname[i] > series
    }
    for (i = 0; i < nc; ++i) print cname[i] > cats
  }' "$IN"

ns=$(wc -l < "$TMP/series")
# Colour-blind-safe colours (Okabe–Ito), reused after eight series.
COLORS=("#0072B2" "#D55E00" "#009E73" "#CC79A7" "#E69F00" "#56B4E9" "#000000" "#F0E442")
lc() { printf 'lc rgb "%s"' "${COLORS[$(($1 % ${#COLORS[@]}))]}"; }
q() { printf '"%s"' "${1//\"/\'}"; }
{
  if gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo; then
    echo "set terminal pngcairo size ${SIZE/x/,} enhanced font ',10'"
  else
    echo "set terminal png size ${SIZE/x/,}"
  fi
  echo "set output $(q "$OUT")"
  echo "set title $(q "$TITLE") noenhanced"
  echo "set xlabel $(q "${XLABEL:-$X}") noenhanced"
  echo "set ylabel $(q "${YLABEL:-$Y}") noenhanced"
  echo "set grid ytics"
  echo "set key $KEY noenhanced box opaque"
  [[ -n "$LOG" ]] && echo "set logscale $LOG"
  if [[ "$KIND" == bars ]]; then
    echo "set style fill solid 0.75 border -1"
    echo "set boxwidth $(awk -v n="$ns" 'BEGIN { print 0.8 / n }')"
    nc=$(wc -l < "$TMP/cats")
    echo "set xrange [-0.6:$((nc - 1)).6]"
    printf 'set xtics ('
    awk '{ gsub(/"/, "'"'"'"); printf "%s\"%s\" %d", (NR > 1 ? ", " : ""), $0, NR - 1 }' "$TMP/cats"
    echo ") rotate by -20"
    [[ "$LOG" == *y* ]] || echo "set yrange [0:*]"
  fi
  printf 'plot '
  i=0
  while IFS= read -r name; do
    [[ $i -gt 0 ]] && printf ', \\\n     '
    if [[ "$KIND" == bars ]]; then
      printf '%s index %d using 1:2 with boxes %s title %s' "$(q "$TMP/data")" "$i" "$(lc "$i")" "$(q "$name")"
      [[ -n "$E" ]] && printf ', %s index %d using 1:2:3 with yerrorbars lc rgb "black" lw 1.5 pt 7 ps 0.4 notitle' "$(q "$TMP/data")" "$i"
    elif [[ -n "$E" ]]; then
      printf '%s index %d using 1:2:3 with yerrorlines lw 2 pt %d %s title %s' "$(q "$TMP/data")" "$i" "$((i % 13 + 1))" "$(lc "$i")" "$(q "$name")"
    else
      printf '%s index %d using 1:2 with linespoints lw 2 pt %d %s title %s' "$(q "$TMP/data")" "$i" "$((i % 13 + 1))" "$(lc "$i")" "$(q "$name")"
    fi
    i=$((i + 1))
  done < "$TMP/series"
  echo
} > "$TMP/plot.gp"
gnuplot "$TMP/plot.gp"
echo "wrote $OUT"
