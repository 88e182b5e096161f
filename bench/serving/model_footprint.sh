#!/usr/bin/env bash
# Does a model state what its load costs? Trains shipped configs
# (train/configs/) into MODELS (once), then runs
# build/bin/invariant-bench-model-footprint on each bundle in a fresh process
# and prints a table: the file, the bytes the version states it holds
# (bundle + packed copies) and its per-thread workspace, and the resident
# memory the load and a batch of ROWS rows added. The target: stated held
# within 10 % of the resident memory added, for the configs that matter
# (large banks); small models are dominated by the heap the warm-up leaves.
#
# Usage: bench/serving/model_footprint.sh [DATA_DIR]
#   DATA_DIR holds mnist/ (IDX files), cifar10/ (data_batch_N.bin[.gz]) and
#   fsdd/recordings/ (the FSDD WAV files); the configs needing a folder it
#   lacks are skipped.
# Environment: BUILD (default REPO/build), MODELS (default
#   BUILD/footprint_models), CONFIGS (default: the list below), ROWS (256),
#   OUT (also write the table here).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
DATA="${1:-}"
MODELS="${MODELS:-$BUILD/footprint_models}"
ROWS="${ROWS:-256}"
CONFIGS="${CONFIGS:-default xperm_cdf coulomb_rf torus_specavg mnist_cdf mnist_patch cifar_rf cifar_patch cifar_lgika spoken_digits}"
for b in invariant-train invariant-bench-model-footprint; do
  [[ -x "$BUILD/bin/$b" ]] || { echo "model_footprint: $BUILD/bin/$b missing (build it first)" >&2; exit 2; }
done
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$MODELS"

for name in $CONFIGS; do
  config="$ROOT/train/configs/$name.textproto"
  [[ -f "$config" ]] || { echo "model_footprint: no config $config" >&2; exit 2; }
  if [[ ! -f "$MODELS/$name/1/model.bundle" ]]; then
    text="$(cat "$config")"
    if grep -q MNIST_DIR <<<"$text"; then
      [[ -n "$DATA" && -d "$DATA/mnist" ]] || { echo "  $name: skipped (no DATA_DIR/mnist)" >&2; continue; }
      text="${text//MNIST_DIR/$DATA/mnist}"
    fi
    if grep -q CIFAR10_DIR <<<"$text"; then
      [[ -n "$DATA" && -d "$DATA/cifar10" ]] || { echo "  $name: skipped (no DATA_DIR/cifar10)" >&2; continue; }
      text="${text//CIFAR10_DIR/$DATA/cifar10}"
    fi
    if grep -q FSDD_DIR <<<"$text"; then
      [[ -n "$DATA" && -d "$DATA/fsdd/recordings" ]] || { echo "  $name: skipped (no DATA_DIR/fsdd/recordings)" >&2; continue; }
      text="${text//FSDD_DIR/$DATA/fsdd/recordings}"
    fi
    printf '%s\n' "$text" >"$WORK/$name.textproto"
    echo "  training $name" >&2
    "$BUILD/bin/invariant-train" --config="$WORK/$name.textproto" --models="$MODELS" --name="$name" \
      --version=1 >"$WORK/$name.log" 2>&1 || { tail -5 "$WORK/$name.log" >&2; exit 1; }
  fi
  "$BUILD/bin/invariant-bench-model-footprint" --rows="$ROWS" "$MODELS/$name/1/model.bundle" \
    >"$WORK/$name.json"
done

/usr/bin/python3 - "$WORK" "${OUT:-}" "$CONFIGS" "$ROWS" <<'PYEOF'
import json, pathlib, sys
work, out, configs, rows = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3].split(), sys.argv[4]
mib = lambda b: f"{b / 2**20:,.2f}"
lines = ["| config | file (MiB) | stated held (MiB) | workspace / thread (MiB) | resident added (MiB) "
         "| held / resident |", "|---|---|---|---|---|---|"]
for name in configs:
    path = work / f"{name}.json"
    if not path.exists():
        continue
    r = json.loads(path.read_text())
    lines.append(f"| {name} | {mib(r['file_bytes'])} | {mib(r['stated_held'])} | "
                 f"{mib(r['stated_workspace'])} | {mib(r['rss_added'])} | {r['held_vs_rss']:.3f} |")
lines.append(f"\nResident memory added by Model::Load, 8 warm-up rows and a batch of {rows} rows, "
             f"in a fresh process per bundle, with the server's malloc settings "
             f"(bench/serving/model_footprint_bench.cc); {json.loads(next(work.glob('*.json')).read_text())['threads']} compute threads.")
text = "\n".join(lines)
print(text)
if out:
    pathlib.Path(out).write_text(text + "\n")
PYEOF
