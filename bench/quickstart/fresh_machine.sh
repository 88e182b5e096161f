#!/usr/bin/env bash
# Times the README's two commands on a fresh Debian 12 machine: a clean clone of
# this repository's HEAD, run as root in a new debian:bookworm-slim container
# (podman, runc, host network for Debian's archive; nothing installed, nothing
# cached: no packages, no ccache). Prints one line per command:
#   fresh_machine: quickstart <seconds> s (exit <rc>)
#   fresh_machine: test <seconds> s (exit <rc>)
# and keeps both logs in OUT_DIR (default: a new /tmp/fresh-machine.XXXXXX).
#
#   bench/quickstart/fresh_machine.sh [--quickstart-only] [--out=DIR]
#
# The base image is the one deploy/container-test.sh makes with debootstrap
# (it runs `deploy/container-test.sh --base-only` when the image is missing).
# Needs podman, runc, debootstrap (deploy/install-deps.sh) and the Debian mirror.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BASE_IMAGE="docker.io/library/debian:bookworm-slim"
QUICKSTART_ONLY=0
OUT=""
for arg in "$@"; do
  case "$arg" in
    --quickstart-only) QUICKSTART_ONLY=1 ;;
    --out=*) OUT="${arg#--out=}" ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "fresh_machine: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done
[[ -n "$OUT" ]] || OUT="$(mktemp -d /tmp/fresh-machine.XXXXXX)"
mkdir -p "$OUT"
if ! podman image exists "$BASE_IMAGE"; then
  bash "$REPO/deploy/container-test.sh" --base-only || { echo "fresh_machine: no base image" >&2; exit 1; }
fi
rm -rf "$OUT/repo"
git clone -q --no-local "$REPO" "$OUT/repo" || exit 1
echo "fresh_machine: clone of $(git -C "$OUT/repo" rev-parse --short HEAD) in $OUT/repo"

# One container for both commands, so the test command finds what the quick
# start installed and built, as on one machine.
mkdir -p "$OUT/state"
rm -f "$OUT/state/times"
cat >"$OUT/state/run.sh" <<'SCRIPT'
set -u
s=$(date +%s); ./deploy/quickstart.sh >/state/quickstart.log 2>&1; rc=$?
echo "quickstart $(( $(date +%s) - s )) $rc" >>/state/times
[[ $rc -eq 0 && "${1:-}" != "--quickstart-only" ]] || exit $rc
s=$(date +%s); ./deploy/test.sh >/state/test.log 2>&1; rc=$?
echo "test $(( $(date +%s) - s )) $rc" >>/state/times
exit $rc
SCRIPT
ARG=""
[[ $QUICKSTART_ONLY == 1 ]] && ARG="--quickstart-only"
podman run --rm --runtime=runc --network=host --ulimit nofile=20000:20000 \
  --ulimit nproc=4096:4096 -v "$OUT/repo:/src" -v "$OUT/state:/state" -w /src "$BASE_IMAGE" \
  bash /state/run.sh $ARG
rc=$?
while read -r name seconds code; do
  echo "fresh_machine: $name $seconds s (exit $code)"
done <"$OUT/state/times"
echo "fresh_machine: logs in $OUT/state/{quickstart,test}.log"
exit $rc
