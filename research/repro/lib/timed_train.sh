# timed_train.sh: one timed training run, as the reproduction scripts make
# them (sourced by research/repro/{fashion,mnist,cifar,patches}.sh).
#
#   timed_train NAME CONFIG MODELS LOGS MESSAGE
#     runs $BUILD/bin/invariant-train --config=CONFIG --models=MODELS
#     --name=NAME --threads=$THREADS under /usr/bin/time -v (LOGS/NAME.time),
#     its stdout and stderr in LOGS/NAME.out and LOGS/NAME.log, after
#     printing "[date] MESSAGE (load L), log LOGS/NAME.log" on stderr. On
#     failure it prints the last lines of the log and of time -v and
#     returns 1. Sets, for the caller's row: load0 (the 1-minute load
#     average before), date0 (the UTC start), rss (peak MiB), wall (s) and
#     rep (the run's report.json, also copied to LOGS/NAME.report.json).
#   time_v_rss_mib FILE   peak resident set size of a time -v output, MiB
#   time_v_wall_s FILE    its elapsed wall-clock seconds ([h:]m:s.ss → s)

time_v_rss_mib() {
  awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$1"
}

time_v_wall_s() {
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0
    for (i = 1; i <= n; ++i) s = 60 * s + t[i]; printf "%.1f", s }' "$1"
}

timed_train() {
  local name=$1 cfg=$2 models=$3 logs=$4 message=$5
  load0=$(cut -d' ' -f1 /proc/loadavg)
  date0=$(date -u +%Y-%m-%dT%H:%MZ)
  echo "[$date0] $message (load $load0), log $logs/$name.log" >&2
  rm -rf "${models:?}/$name"
  /usr/bin/time -v -o "$logs/$name.time" "$BUILD/bin/invariant-train" --config="$cfg" \
    --models="$models" --name="$name" --threads="$THREADS" \
    >"$logs/$name.out" 2>"$logs/$name.log" || {
    tail -n 20 "$logs/$name.log" "$logs/$name.time" >&2
    return 1
  }
  rss=$(time_v_rss_mib "$logs/$name.time")
  wall=$(time_v_wall_s "$logs/$name.time")
  rep="$models/$name/1/report.json"
  cp "$rep" "$logs/$name.report.json"
}
