#!/usr/bin/env bash
# Issue 32's and issue 50's attacks against invariant-server, each beside a well-behaved client:
#
#   bench/admission/attacks.sh SERVER_BIN_DIR OUT_DIR
#
# SERVER_BIN_DIR holds invariant-server and invariant-train (e.g. build/bin);
# both are copied into OUT_DIR/bin first, so a rebuild during the run does not
# swap them. Then, in OUT_DIR:
#   * python/     the invariant_serve package and its stubs (generated from proto/)
#   * models/     "rows": train/configs/default.textproto (Xperm, 40 inputs, 625
#                 features); "sound": train/configs/spoken_digits.textproto (the
#                 front end of 64 x 61 values, so 4,297 clip rows are 64 MiB)
#                 trained on seeded chirps written by Python's wave module
#   * for every attack (fresh server each): server-*.std{out,err},
#     good-*.txt (every good-client call), attack-*.stderr
#   * admission.csv, admission.json: one row per attack
# and the tables go into docs/benchmarks/admission.md between its markers, under
# the label LABEL (default "after"; the baseline was run with LABEL=before).
#
# Environment: LABEL, COMMIT, DOC (default docs/benchmarks/admission.md; DOC= to skip),
# ATTACKS (comma-separated subset of 1,2a,2b,3a,3b,4,5,6,7 and issue 50's
# stream,stream1,signal,bundle,bundle-header,repository; default all), and the
# scale and duration of every attack (bench/admission/attacks.py, ENV: A1_CLIENTS,
# A1_SECONDS, ..., STREAM_*, SIGNAL_*, BUNDLE_*, REPO_*, RSS_KILL_MIB; defaults the
# issues'). The report replaces, under LABEL, only the attacks that ran. About 8
# minutes on 2 cores for issue 32's attacks, 5 more for issue 50's; the stream
# attacks take the server to several GiB (the attacker stops at STREAM_ABORT_MIB,
# 12 GiB, and the orchestrator kills the server at RSS_KILL_MIB, 14 GiB), the
# bundle attacks write 3 GiB sparse files (no disk blocks) into OUT_DIR/models.
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 SERVER_BIN_DIR OUT_DIR" >&2
  exit 2
fi
REPO=$(cd "$(dirname "$0")/../.." && pwd)
SRC_BIN=$1
OUT=$(mkdir -p "$2" && cd "$2" && pwd)
COMMAND="bench/admission/attacks.sh $*"
[[ -z ${LABEL:-} ]] || COMMAND="LABEL=$LABEL $COMMAND"
[[ -z ${COMMIT:-} ]] || COMMAND="COMMIT=$COMMIT $COMMAND"
LABEL=${LABEL:-after}
DOC=${DOC-$REPO/docs/benchmarks/admission.md}
PY=/usr/bin/python3
for b in invariant-server invariant-train; do
  [[ -x $SRC_BIN/$b ]] || { echo "attacks: $SRC_BIN/$b missing" >&2; exit 2; }
done
# Attack 7 holds 10,100 sockets in the attacker and as many in the server.
ulimit -n "$(ulimit -Hn)"

rm -rf "$OUT/bin" "$OUT/python" "$OUT/models" "$OUT/sound_clips"
mkdir -p "$OUT/bin" "$OUT/python" "$OUT/models" "$OUT/sound_clips"
cp "$SRC_BIN/invariant-server" "$SRC_BIN/invariant-train" "$OUT/bin/"
BIN=$OUT/bin

echo "attacks: Python stubs into $OUT/python"
cp -r "$REPO/python/invariant_serve" "$OUT/python/"
$PY "$REPO/python/generate_stubs.py" --out "$OUT/python/invariant_serve/_proto" \
  "$REPO/proto" "$REPO/client/proto" >/dev/null

echo "attacks: training the rows model"
"$BIN/invariant-train" --config="$REPO/train/configs/default.textproto" --models="$OUT/models" \
  --name=rows >"$OUT/train-rows.log" 2>&1 || { cat "$OUT/train-rows.log" >&2; exit 1; }

echo "attacks: training the sound model on seeded chirps"
$PY - "$OUT/sound_clips" <<'EOF'
# Three classes of chirps (low, mid, high), three "speakers" (groups) of
# different pitch and loudness, 8 takes each: 1 s, 8 kHz, 16-bit mono.
import math, random, struct, sys, wave
out = sys.argv[1]
rng = random.Random(32)
for label, f0 in (("low", 300.0), ("mid", 700.0), ("high", 1500.0)):
    for group, shift in (("g1", 1.0), ("g2", 1.12), ("g3", 0.9)):
        for take in range(8):
            f = f0 * shift * (1 + 0.03 * rng.uniform(-1, 1))
            n = 8000
            start = rng.randint(500, 2000)
            pcm = []
            for i in range(n):
                t = i / 8000.0
                on = start <= i < start + 4000
                x = (0.6 * math.sin(2 * math.pi * f * t * (1 + 0.3 * t)) if on else 0.0)
                x += 0.01 * rng.gauss(0, 1)
                pcm.append(max(-32767, min(32767, int(x * 32767))))
            with wave.open(f"{out}/{label}_{group}_{take}.wav", "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(8000)
                w.writeframes(struct.pack(f"<{n}h", *pcm))
EOF
sed -e "s|FSDD_DIR|$OUT/sound_clips|" -e 's|test_groups: "jackson"|test_groups: "g3"|' \
  "$REPO/train/configs/spoken_digits.textproto" >"$OUT/sound.textproto"
"$BIN/invariant-train" --config="$OUT/sound.textproto" --models="$OUT/models" \
  --name=sound >"$OUT/train-sound.log" 2>&1 || { cat "$OUT/train-sound.log" >&2; exit 1; }

# COMMIT names the source the binaries were built from (default: this tree's
# HEAD, "+dirty" when server/ or core/ have uncommitted changes).
if [[ -z ${COMMIT:-} ]]; then
  COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [[ -n $(git -C "$REPO" status --porcelain -- server core 2>/dev/null) ]]; then
    COMMIT="$COMMIT+dirty"
  fi
fi
MACHINE="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), \
$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(. /etc/os-release && echo "$PRETTY_NAME"), \
kernel $(uname -r), loopback; Release build; other builds may share the cores (see the load)"
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
echo "attacks: load average $LOAD; running the attacks (commit $COMMIT)"
$PY "$REPO/bench/admission/attacks.py" run --bin="$BIN" --models="$OUT/models" \
  --python="$OUT/python" --out="$OUT" --commit="$COMMIT" --machine="$MACHINE" \
  --load="$LOAD" --command="$COMMAND"
echo "attacks: $OUT/admission.csv"
if [[ -n $DOC ]]; then
  $PY "$REPO/bench/admission/attacks.py" report --results="$OUT/admission.json" --doc="$DOC" \
    --label="$LABEL"
  echo "attacks: tables written into $DOC under \"$LABEL\""
fi
