# time_v.sh: what the reproduction scripts read of `/usr/bin/time -v -o FILE`
# (sourced by bench/repro/{fashion,mnist,cifar,patches}.sh).
#   time_v_rss_mib FILE   peak resident set size, MiB (rounded)
#   time_v_wall_s FILE    elapsed wall-clock seconds ([h:]m:s.ss → s, one decimal)

time_v_rss_mib() {
  awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$1"
}

time_v_wall_s() {
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0
    for (i = 1; i <= n; ++i) s = 60 * s + t[i]; printf "%.1f", s }' "$1"
}
