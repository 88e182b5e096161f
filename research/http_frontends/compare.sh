#!/bin/bash
# compare.sh: measures the HTTP/1.1 front-end candidates of research/http_frontends/
# (the project's Boost.Beast HttpServer, libevent 2.1 evhttp, libevhtp) on the
# same two routes, and prints one markdown table. A benchmark, not a CI test.
#
# Builds nothing: expects the binaries under $BUILD/bin (default ./build), e.g.
#   cmake -B build -DINVARIANT_BUILD_RESEARCH=ON && cmake --build build --target invariant-bench-beast-echo \
#     invariant-bench-evhttp-echo invariant-bench-evhtp-echo
# A missing evhttp/evhtp binary (no libevent-dev / libevhtp-dev) is skipped.
# Needs wrk (apt-get install wrk) and /usr/bin/python3.
#
# Per server, one server process at a time, a fresh process per part:
#   (a) throughput, wrk -t2 keep-alive, $DURATION each: GET /v2/health/live
#       and POST /echo with a 64 KiB body, 8 and 64 connections (req/s);
#   (b) conns.py hold: RSS and threads before / with 3,000 idle + 1,000
#       slow-header connections open, p50/p99 of 100 health probes (a new
#       connection each) while they are open, and how many of each the server
#       still holds $HOLD_S s later;
#   (c) conns.py slowbody: POST /echo, Content-Length 1000, 1 byte/s — is it
#       cut by the server (and when) or held until the client gives up
#       ($SLOW_BODY_LIMIT_S s)?
#   (d) conns.py pipeline / early: are 5 pipelined requests all answered, and
#       is a Content-Length over the body cap refused before the body?
# Everything runs $ROUNDS times (rounds outer), each cell shows "round1 / round2".
# Servers run with their defaults: beast 2 handler threads, header 10 s /
# body 30 s total deadlines, idle 60 s; evhttp/evhtp a 10 s per-read/write
# timeout, one event-loop thread. Environment: BUILD, ROUNDS (2),
# DURATION (5s), HOLD_S (15), SLOW_BODY_LIMIT_S (40), OUT (results dir).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-build}
BIN=$BUILD/bin
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5s}
HOLD_S=${HOLD_S:-15}
SLOW_BODY_LIMIT_S=${SLOW_BODY_LIMIT_S:-40}
OUT=${OUT:-$(mktemp -d /tmp/http_frontends.XXXXXX)}
PY=/usr/bin/python3
mkdir -p "$OUT"
RESULTS=$OUT/results.tsv
: >"$RESULTS"

command -v wrk >/dev/null || { echo "compare.sh: wrk not found (apt-get install wrk)" >&2; exit 1; }
SERVERS=()
for s in beast evhttp evhtp; do
  if [[ -x $BIN/invariant-bench-$s-echo ]]; then
    SERVERS+=("$s")
  else
    echo "compare.sh: $BIN/invariant-bench-$s-echo not built, skipping $s" >&2
  fi
done
[[ ${#SERVERS[@]} -gt 0 ]] || { echo "compare.sh: no server binary under $BIN" >&2; exit 1; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true  # 4,000+ sockets on each side

PID=
PORT=
STARTS=0
start_server() {  # $1 = server name; sets PID and PORT
  STARTS=$((STARTS + 1))
  local log=$OUT/$1.$STARTS  # a new file per start: never read an old port
  "$BIN/invariant-bench-$1-echo" >"$log.stdout" 2>"$log.stderr" &
  PID=$!
  for _ in $(seq 50); do
    PORT=$(awk '/^port /{print $2}' "$log.stdout" 2>/dev/null || true)  # not created yet
    [[ -n $PORT ]] && return 0
    sleep 0.1
  done
  echo "compare.sh: $1 did not start (see $log.stderr)" >&2
  exit 1
}
stop_server() {
  kill "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
}
trap stop_server EXIT
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$RESULTS"; }

wrk_run() {  # $1 server $2 round $3 key $4 conns $5 url [$6 script]
  local log=$OUT/wrk.$1.$2.$3.log
  if [[ $# -ge 6 ]]; then
    wrk -t2 -c"$4" -d"$DURATION" -s "$6" "$5" >"$log" 2>&1 || true
  else
    wrk -t2 -c"$4" -d"$DURATION" "$5" >"$log" 2>&1 || true
  fi
  local rps errs
  rps=$(awk '/^Requests\/sec:/{printf "%.0f", $2}' "$log")
  errs=$(awk '/Non-2xx/{n+=$NF} /Socket errors/{gsub(",","");for(i=1;i<=NF;i++)if($i~/^[0-9]+$/)n+=$i} END{print n+0}' "$log")
  [[ -n $rps ]] || rps=failed
  [[ $errs == 0 ]] || rps="$rps ($errs err)"
  record "$1" "$2" "$3" "$rps"
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "compare.sh: servers ${SERVERS[*]}, $ROUNDS rounds, results in $OUT" >&2
for round in $(seq "$ROUNDS"); do
  for s in "${SERVERS[@]}"; do
    echo "compare.sh: round $round, $s" >&2
    # (a) throughput
    start_server "$s"
    for c in 8 64; do
      wrk_run "$s" "$round" "get_c$c" "$c" "http://127.0.0.1:$PORT/v2/health/live"
      wrk_run "$s" "$round" "post_c$c" "$c" "http://127.0.0.1:$PORT/echo" "$HERE/post64k.lua"
    done
    stop_server
    # (b) idle + slow-header connections
    start_server "$s"
    "$PY" "$HERE/conns.py" hold "$PID" "$PORT" 3000 1000 "$HOLD_S" 100 >"$OUT/hold.$s.$round" ||
      echo "compare.sh: conns.py hold failed for $s" >&2
    while IFS='=' read -r k v; do record "$s" "$round" "$k" "$v"; done <"$OUT/hold.$s.$round"
    stop_server
    # (c) a 1-byte-per-second body
    start_server "$s"
    "$PY" "$HERE/conns.py" slowbody "$PORT" "$SLOW_BODY_LIMIT_S" >"$OUT/slowbody.$s.$round" ||
      echo "compare.sh: conns.py slowbody failed for $s" >&2
    while IFS='=' read -r k v; do record "$s" "$round" "sb_$k" "$v"; done <"$OUT/slowbody.$s.$round"
    stop_server
    # (d) pipelining and an early refusal
    start_server "$s"
    { "$PY" "$HERE/conns.py" pipeline "$PORT" && "$PY" "$HERE/conns.py" early "$PORT"; } \
      >"$OUT/checks.$s.$round" || echo "compare.sh: conns.py checks failed for $s" >&2
    while IFS='=' read -r k v; do record "$s" "$round" "$k" "$v"; done <"$OUT/checks.$s.$round"
    stop_server
  done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

"$PY" - "$RESULTS" "$LOAD_BEFORE" "$LOAD_AFTER" "$HOLD_S" "$DURATION" "${SERVERS[@]}" <<'PYEOF'
import collections, sys
path, load_before, load_after, hold_s, duration, servers = (sys.argv[1], sys.argv[2], sys.argv[3],
                                                           sys.argv[4], sys.argv[5], sys.argv[6:])
v = collections.defaultdict(dict)  # (server, key) -> round -> value
for line in open(path):
    s, r, k, val = line.rstrip("\n").split("\t")
    v[(s, k)][int(r)] = val

def cell(s, fn):
    rounds = sorted({r for (srv, _), d in v.items() if srv == s for r in d})
    return " / ".join(fn(s, r) for r in rounds)

def get(key, fmt=lambda x: x):
    def f(s, r):
        x = v[(s, key)].get(r)
        return "n/a" if x is None else fmt(x)
    return f

def mib(x):
    return f"{int(x) / 1024:.1f}"

def per_conn(s, r):
    a, b = v[(s, "rss_before_kib")].get(r), v[(s, "rss_open_kib")].get(r)
    return "n/a" if a is None or b is None else f"{(int(b) - int(a)) / 4000:.1f}"  # KiB per connection, 4,000 open

def threads(s, r):
    return f"{v[(s, 'threads_before')].get(r, '?')} → {v[(s, 'threads_open')].get(r, '?')}"

def slow_body(s, r):
    out, held = v[(s, "sb_outcome")].get(r), v[(s, "sb_held_s")].get(r)
    return "n/a" if out is None else f"{out} at {held} s"

rows = [
    (f"GET /v2/health/live, 8 conns (req/s, wrk -t2 {duration})", get("get_c8")),
    (f"GET /v2/health/live, 64 conns (req/s)", get("get_c64")),
    (f"POST /echo 64 KiB, 8 conns (req/s)", get("post_c8")),
    (f"POST /echo 64 KiB, 64 conns (req/s)", get("post_c64")),
    ("RSS before (MiB)", get("rss_before_kib", mib)),
    ("RSS with 3,000 idle + 1,000 slow-header conns (MiB)", get("rss_open_kib", mib)),
    ("RSS per open connection (KiB)", per_conn),
    ("threads before → with them open", threads),
    ("probe GET p50 while open (ms, new conn each)", get("probe_p50_ms")),
    ("probe GET p99 while open (ms)", get("probe_p99_ms")),
    ("probe failures (of 100)", get("probe_failures")),
    (f"idle conns still open after ~{hold_s} s (of 3,000)", get("idle_open_after_hold")),
    (f"slow-header conns (1 B/s) still open after ~{hold_s} s (of 1,000)", get("slow_open_after_hold")),
    ("1 B/s body, Content-Length 1000: outcome", slow_body),
    ("5 pipelined requests in one write: 200s read within 5 s", get("pipelined_answers")),
    ("Content-Length 2,000,000 (cap 1 MiB), no body: answer before the body",
     get("early_answer")),
]
print("| measurement (round 1 / round 2) | " + " | ".join(servers) + " |")
print("|---|" + "---|" * len(servers))
for name, fn in rows:
    print(f"| {name} | " + " | ".join(cell(s, fn) for s in servers) + " |")
print()
print(f"Load average (1/5/15 min): before {load_before}, after {load_after}.")
PYEOF
