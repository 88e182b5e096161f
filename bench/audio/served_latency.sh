#!/usr/bin/env bash
# served_latency.sh [DATA_DIR]: the served batch-1 latency of the shipped
# spoken-digit model (train/configs/spoken_digits.textproto: spectrogram
# patch features, 384 templates of 32 × 8 read at stride 2 over the 64 × 62
# spectrogram padded by 4 bins, pooled in 2 bands × 4 segments: 6,144
# features) for a 1 s clip, against a model of rows with
# the same encoder (the front end's share). Issue 31's target: p50 ≤ 5 ms.
#
#   DATA_DIR  WAV files named digit_speaker_take.wav (FSDD's recordings/);
#             without it, espeak-ng speaks the ten digits in 6 voices × 5
#             pitch / speed takes (300 clips, 22.05 kHz, resampled by the
#             front end).
#
# Steps: train the model with invariant-train (the config's held-out speaker
# when the data has it, else the last speaker by name, or $TEST_GROUP);
# train a model of rows with the same encoder on seeded random rows of
# 64 × 62 = 3968 values (input_shape [64, 62, 1], the front end's output);
# start invariant-server on free ports (--port=0 --http_port=0); run
# invariant-loadgen at concurrency 1, batch 1, closed loop: one recording of
# the held-out speaker (WAV bytes) and seeded 1 s clips (WAV bytes, float32
# samples) over gRPC, the same over REST (binary BYTES WAV, binary FP32), and
# a row of 3968 values to the rows model over gRPC and REST. Prints p50 / p99
# (µs) per case, then the JSON reports' path. Environment: BUILD_DIR
# (default build), REQUESTS (default 2000), WORK_DIR (default a new folder
# under /tmp, kept). Needs bash, python3, espeak-ng (without DATA_DIR).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${BUILD_DIR:-$repo/build}
bin=$build/bin
requests=${REQUESTS:-2000}
work=${WORK_DIR:-$(mktemp -d /tmp/served_latency.XXXXXX)}
mkdir -p "$work"
for b in invariant-train invariant-server invariant-loadgen; do
  [[ -x $bin/$b ]] || { echo "served_latency.sh: $bin/$b not built" >&2; exit 2; }
done

data_dir=${1:-}
if [[ -z $data_dir ]]; then
  data_dir=$work/espeak
  mkdir -p "$data_dir"
  words=(zero one two three four five six seven eight nine)
  voices=(en en-us en+f3 en-us+m3 en+f4 en-gb-scotland)
  for d in "${!words[@]}"; do
    for v in "${!voices[@]}"; do
      for take in 0 1 2 3 4; do
        espeak-ng -v "${voices[$v]}" -p $((35 + 8 * take)) -s $((130 + 10 * take)) \
          -w "$data_dir/${d}_v${v}_${take}.wav" "${words[$d]}"
      done
    done
  done
  echo "data: 300 espeak-ng clips in $data_dir"
else
  echo "data: $data_dir"
fi
config=$repo/train/configs/spoken_digits.textproto
groups=$(find "$data_dir" -maxdepth 1 -name '*_*_*.wav' -printf '%f\n' | cut -d_ -f2 | sort -u)
shipped_group=$(grep -o 'test_groups: "[^"]*"' "$config" | cut -d'"' -f2)
if [[ -n ${TEST_GROUP:-} ]]; then
  test_group=$TEST_GROUP
elif grep -qx "$shipped_group" <<< "$groups"; then
  test_group=$shipped_group
else
  test_group=$(tail -1 <<< "$groups")
fi
clip=$(find "$data_dir" -maxdepth 1 -name "7_${test_group}_*.wav" | sort | head -1)
[[ -n $clip ]] || clip=$(find "$data_dir" -maxdepth 1 -name '*.wav' | sort | head -1)

models=$work/models
rm -rf "$models"
sed -e "s|FSDD_DIR|$data_dir|" -e "s|test_groups: \"$shipped_group\"|test_groups: \"$test_group\"|" \
  "$config" > "$work/sound.textproto"
"$bin/invariant-train" --config="$work/sound.textproto" --models="$models" \
  --name=spoken_digits 2>&1 | tee "$work/train_sound.log" | grep -E "^data|accuracy"

# The same encoder over rows: 400 seeded random rows of 64 × 62 = 3968 values
# (the front end's output), 10 labels.
python3 - "$work/rows.csv" <<'PY'
import random, sys
random.seed(1)
with open(sys.argv[1], "w") as f:
    f.write(",".join(f"x{i}" for i in range(64 * 62)) + ",label\n")
    for r in range(400):
        f.write(",".join(f"{random.gauss(0, 1):.4f}" for _ in range(64 * 62)) + f",{r % 10}\n")
PY
python3 - "$work/sound.textproto" "$work/rows.csv" > "$work/rows.textproto" <<'PY'
import re, sys
text = open(sys.argv[1]).read()


def block(name):
    """[start, end) of the top-level block `name { ... }`, nested braces included."""
    start = re.search(r"^" + name + r" \{", text, re.M).start()
    depth, i = 0, start
    while True:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
        if depth == 0 and text[i - 1] == "}":
            return start, i


start, end = block("data")
text = text[:start] + f'data {{ csv {{ path: "{sys.argv[2]}" label_column: "label" }} }}' + text[end:]
start, end = block("split")
text = text[:start] + "split { train: 300 validation: 50 test: 50 seed: 1 }" + text[end:]
start, end = block("certificate")
text = text[:start] + text[end:]
# A model of sound takes its input_shape from the front end; rows spell it out.
start, _ = block("encoder")
head = "encoder {"
text = text[:start] + head + " input_shape: 64 input_shape: 62 input_shape: 1" + \
    text[start + len(head):]
print(text)
PY
"$bin/invariant-train" --config="$work/rows.textproto" --models="$models" \
  --name=rows_patch > "$work/train_rows.log" 2>&1 || { cat "$work/train_rows.log" >&2; exit 1; }


"$bin/invariant-server" --models="$models" --port=0 --http_port=0 --metrics_port=-1 \
  > "$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  grep -q "ready grpc_port" "$work/server.log" && break
  sleep 0.1
done
grpc=$(grep -o 'grpc_port=[0-9]*' "$work/server.log" | cut -d= -f2)
http=$(grep -o 'http_port=[0-9]*' "$work/server.log" | cut -d= -f2)
[[ -n $grpc && -n $http ]] || { cat "$work/server.log" >&2; exit 1; }

run() {  # name, loadgen flags...
  local name=$1
  shift
  "$bin/invariant-loadgen" --concurrency=1 --batch=1 --requests=$((requests / 10)) "$@" \
    > /dev/null  # warm-up
  "$bin/invariant-loadgen" --concurrency=1 --batch=1 --requests="$requests" \
    --json_out="$work/$name.json" "$@" > "$work/$name.txt"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); l=r['latency_us']; \
print(f\"{sys.argv[2]:<34} p50 {l['p50']:8.0f}  p99 {l['p99']:8.0f}  ok {r['requests']['ok']}  \
p50 <= 5 ms: {'yes' if l['p50'] <= 5000 else 'no'}\")" \
    "$work/$name.json" "$name"
}
echo "clip: $clip (1 s clips are cropped / padded by the front end)"
echo "latency (µs), concurrency 1, batch 1, $requests requests each:"
g=(--target=127.0.0.1:$grpc)
r=(--protocol=rest --target=127.0.0.1:$http --rest_encoding=binary)
run grpc_clip_wav "${g[@]}" --model=spoken_digits --clip="$clip" --clip_encoding=wav
run grpc_seeded_1s_wav "${g[@]}" --model=spoken_digits --clip_seconds=1 --clip_encoding=wav
run grpc_seeded_1s_float32 "${g[@]}" --model=spoken_digits --clip_seconds=1 \
  --clip_encoding=float32
run rest_clip_wav_bytes "${r[@]}" --model=spoken_digits --clip="$clip" --clip_encoding=wav
run rest_seeded_1s_fp32 "${r[@]}" --model=spoken_digits --clip_seconds=1 \
  --clip_encoding=float32
run grpc_rows_3968 "${g[@]}" --model=rows_patch
run rest_rows_3968 "${r[@]}" --model=rows_patch
echo "reports: $work"
