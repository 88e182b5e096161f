#!/usr/bin/env bash
# Builds the invariant-serve image from the real Dockerfile and runs it offline
# (no Docker engine, no registry): the debian:bookworm-slim base is made with
# debootstrap from the Debian mirror apt already uses, imported into podman, and
# the image is built with `podman build --pull=never` on the runc runtime. The
# running container is then called from the host with build/bin/invariant-client
# (health, featurize, predict) and its metrics endpoint is scraped.
#
#   deploy/container-test.sh              full build: the builder stage compiles
#                                         the project inside the image (slow on 2 cores)
#   deploy/container-test.sh --prebuilt   package the host's already-built binaries
#                                         (BUILD_DIR/bin) with the runtime-prebuilt
#                                         target: no compilation, minutes not hours
#   deploy/container-test.sh --base-only  only debootstrap + import + runtime-base build
#
# Options: --keep (leave the container running), --timeout=SECONDS (image build
# bound; default 5400 full, 900 otherwise).
# Environment: BUILD_DIR (default build), INVARIANT_CACHE_DIR (default
# /var/cache/invariant-serve), IMAGE_TAG, MIRROR (default: read from apt sources),
# TRAIN_CONFIG (default train/configs/default.textproto).
# Caches: the debootstrap rootfs tarball under INVARIANT_CACHE_DIR and the
# imported base image in podman's storage, so a second run skips both.
# Prints one PASS/FAIL line per check and exits non-zero if any check failed.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$REPO/build}"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$REPO/$BUILD_DIR"
CACHE_DIR="${INVARIANT_CACHE_DIR:-/var/cache/invariant-serve}"
BASE_IMAGE="docker.io/library/debian:bookworm-slim"
IMAGE_TAG="${IMAGE_TAG:-localhost/invariant-serve:test}"
MODE=full
KEEP=0
BUILD_TIMEOUT=""
for arg in "$@"; do
  case "$arg" in
    --prebuilt) MODE=prebuilt ;;
    --base-only) MODE=base ;;
    --keep) KEEP=1 ;;
    --timeout=*) BUILD_TIMEOUT="${arg#--timeout=}" ;;
    -h | --help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "container-test: unknown argument '$arg' (expected --prebuilt, --base-only, --keep, --timeout=N)" >&2; exit 2 ;;
  esac
done
if [[ -z "$BUILD_TIMEOUT" ]]; then
  if [[ $MODE == full ]]; then BUILD_TIMEOUT=5400; else BUILD_TIMEOUT=900; fi
fi

FAILED=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; FAILED=1; }
die() { fail "$*"; exit 1; }
now() { date +%s; }

WORK="$(mktemp -d /tmp/invariant-container-test.XXXXXX)"
CONTAINER="invariant-serve-test-$$"
RUNTIME_ARGS=(--runtime=runc)
# crun rejects this host's hybrid cgroup layout, podman's default rlimits exceed
# the host's hard limits, and there is no systemd for healthcheck timers
# (`podman healthcheck run` still executes the image's HEALTHCHECK on demand).
RUN_ARGS=("${RUNTIME_ARGS[@]}" --network=host --ulimit nofile=20000:20000 --ulimit nproc=4096:4096
  --health-interval=disable)
cleanup() {
  if [[ $KEEP == 0 ]]; then
    podman rm -f -t 5 "$CONTAINER" >/dev/null 2>&1 || true
  else
    echo "container-test: --keep: container $CONTAINER left running"
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- prerequisites ------------------------------------------------------------
for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null || die "prerequisite: '$tool' not installed (apt-get install podman runc debootstrap)"
done
pass "prerequisite: podman runc debootstrap present"

# The Debian mirror apt is configured with (deb822 .sources or one-line .list).
debian_mirror() {
  local f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    uri=$(awk '/^URIs:/ {u=$2} /^Suites:/ && / bookworm( |$)/ {print u; exit}' "$f")
    [[ -n $uri ]] && { echo "$uri"; return; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    uri=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' "$f")
    [[ -n $uri ]] && { echo "$uri"; return; }
  done
  echo "http://deb.debian.org/debian"
}
MIRROR="${MIRROR:-$(debian_mirror)}"

# --- base image: debootstrap (cached tarball) + podman import (cached image) ----
ROOTFS_TAR="$CACHE_DIR/debian-bookworm-minbase.tar"
make_rootfs_tar() {
  local rootfs="$WORK/rootfs" t0
  t0=$(now)
  mkdir -p "$CACHE_DIR"
  if ! timeout 1800 debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
    tail -20 "$WORK/debootstrap.log"
    return 1
  fi
  # The container's apt must use the same mirror (and suites) as the host's:
  # copy the host's Debian source definitions in place of debootstrap's.
  local copied=0 f
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list; do
    [[ -f $f ]] || continue
    grep -q "debian" "$f" || continue
    mkdir -p "$rootfs$(dirname "$f")"
    cp "$f" "$rootfs$f"
    copied=1
  done
  if [[ $copied == 1 && ! -f /etc/apt/sources.list ]]; then rm -f "$rootfs/etc/apt/sources.list"; fi
  # Like the official slim image: no apt lists or package cache in the base.
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb
  tar -C "$rootfs" --numeric-owner -cf "$ROOTFS_TAR.partial" . && mv "$ROOTFS_TAR.partial" "$ROOTFS_TAR"
  local rc=$?
  rm -rf "$rootfs"
  echo "container-test: debootstrap + tar took $(($(now) - t0)) s (mirror $MIRROR)"
  return $rc
}
if [[ -s $ROOTFS_TAR ]]; then
  pass "base rootfs: cached $ROOTFS_TAR"
elif make_rootfs_tar; then
  pass "base rootfs: debootstrap --variant=minbase bookworm from $MIRROR"
else
  die "base rootfs: debootstrap from $MIRROR failed (log above)"
fi

if podman image exists "$BASE_IMAGE"; then
  pass "base image: $BASE_IMAGE already imported"
elif podman import "$ROOTFS_TAR" "$BASE_IMAGE" >"$WORK/import.log" 2>&1; then
  pass "base image: imported $ROOTFS_TAR as $BASE_IMAGE"
else
  die "base image: podman import of $ROOTFS_TAR failed"
fi

# --- image build --------------------------------------------------------------
BUILD_ARGS=(--pull=never --format=docker --network=host "${RUNTIME_ARGS[@]}"
  --ulimit nofile=20000:20000 --ulimit nproc=4096:4096 -f "$REPO/Dockerfile")
case $MODE in
  full)
    CONTEXT="$REPO"
    BUILD_ARGS+=(--build-arg "BUILD_JOBS=$(nproc)" -t "$IMAGE_TAG")
    ;;
  prebuilt)
    CONTEXT="$WORK/context"
    mkdir -p "$CONTEXT/deploy" "$CONTEXT/prebuilt/bin" "$CONTEXT/prebuilt/configs"
    cp "$REPO/deploy/install-deps.sh" "$CONTEXT/deploy/"
    for b in invariant-server invariant-client invariant-train invariant-loadgen; do
      [[ -x "$BUILD_DIR/bin/$b" ]] && cp "$BUILD_DIR/bin/$b" "$CONTEXT/prebuilt/bin/"
    done
    [[ -x "$CONTEXT/prebuilt/bin/invariant-server" ]] || die "prebuilt: $BUILD_DIR/bin/invariant-server missing (build it first)"
    [[ -d "$REPO/train/configs" ]] && cp -r "$REPO/train/configs/." "$CONTEXT/prebuilt/configs/"
    BUILD_ARGS+=(--target=runtime-prebuilt -t "$IMAGE_TAG")
    ;;
  base)
    CONTEXT="$WORK/context"
    mkdir -p "$CONTEXT/deploy"
    cp "$REPO/deploy/install-deps.sh" "$CONTEXT/deploy/"
    BUILD_ARGS+=(--target=runtime-base -t "${IMAGE_TAG%:*}:runtime-base")
    ;;
esac
t0=$(now)
if timeout "$BUILD_TIMEOUT" podman build "${BUILD_ARGS[@]}" "$CONTEXT" >"$WORK/build.log" 2>&1; then
  pass "image build ($MODE): $(($(now) - t0)) s"
else
  tail -40 "$WORK/build.log"
  die "image build ($MODE): failed or exceeded ${BUILD_TIMEOUT} s after $(($(now) - t0)) s (log tail above)"
fi
if [[ $MODE == base ]]; then
  podman run --rm "${RUN_ARGS[@]}" --entrypoint=/bin/sh "${IMAGE_TAG%:*}:runtime-base" \
    -c 'id -u; ls /usr/lib/x86_64-linux-gnu/libgrpc++.so.1.51*' >"$WORK/run.log" 2>&1 &&
    grep -q '^10001$' "$WORK/run.log" && pass "runtime-base: runs as uid 10001 with gRPC libraries" ||
    { cat "$WORK/run.log"; fail "runtime-base: could not run as uid 10001 with gRPC libraries"; }
  exit $FAILED
fi

# --- models: train the default model on the host ------------------------------
MODELS="$WORK/models"
mkdir -p "$MODELS"
CONFIG="${TRAIN_CONFIG:-$REPO/train/configs/default.textproto}"
[[ -x "$BUILD_DIR/bin/invariant-train" ]] || die "models: $BUILD_DIR/bin/invariant-train missing"
[[ -f "$CONFIG" ]] || die "models: $CONFIG missing"
if timeout 600 "$BUILD_DIR/bin/invariant-train" --config="$CONFIG" --models="$MODELS" --name=default \
  >"$WORK/train.log" 2>&1; then
  pass "models: trained 'default' into $MODELS"
else
  tail -20 "$WORK/train.log"
  die "models: invariant-train failed (log tail above)"
fi
chmod -R a+rX "$WORK"

# --- run ----------------------------------------------------------------------
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
GRPC_PORT=$(free_port)
METRICS_PORT=$(free_port)
HTTP_PORT=$(free_port)
if podman run -d --name "$CONTAINER" "${RUN_ARGS[@]}" -v "$MODELS:/models:ro" \
  -e INVARIANT_GRPC_PORT="$GRPC_PORT" "$IMAGE_TAG" \
  --models=/models --port="$GRPC_PORT" --metrics_port="$METRICS_PORT" \
  --http_port="$HTTP_PORT" >/dev/null; then
  pass "run: container $CONTAINER started (grpc $GRPC_PORT, http $HTTP_PORT, metrics $METRICS_PORT)"
else
  die "run: podman run failed"
fi

CLIENT="$BUILD_DIR/bin/invariant-client"
[[ -x $CLIENT ]] || die "client: $CLIENT missing"
TARGET="127.0.0.1:$GRPC_PORT"
ready=0
for _ in $(seq 1 60); do
  if [[ "$(podman inspect -f '{{.State.Running}}' "$CONTAINER" 2>/dev/null)" != true ]]; then break; fi
  if timeout 5 "$CLIENT" health --target="$TARGET" >/dev/null 2>&1; then ready=1; break; fi
  sleep 1
done
if [[ $ready == 1 ]]; then
  pass "health: invariant-client health --target=$TARGET"
else
  podman logs "$CONTAINER" 2>&1 | tail -30
  die "health: server not serving within 60 s (container log tail above)"
fi
podman logs "$CONTAINER" 2>&1 | grep -q "invariant-server ready" &&
  pass "log: server printed its ready line" || fail "log: no 'invariant-server ready' line in the container log"

# The image's own HEALTHCHECK (needs --format=docker at build time).
if timeout 30 podman healthcheck run "$CONTAINER" >/dev/null 2>&1; then
  pass "healthcheck: image HEALTHCHECK reports healthy"
else
  fail "healthcheck: podman healthcheck run $CONTAINER did not report healthy"
fi

# featurize/predict send 4 seeded random rows of the model's input_dim.
for call in "models" "metadata default" "featurize default --random_rows=4" \
  "predict default --random_rows=4"; do
  # shellcheck disable=SC2086
  if timeout 30 "$CLIENT" $call --target="$TARGET" </dev/null >"$WORK/client.out" 2>&1; then
    pass "client: $call"
  else
    tail -5 "$WORK/client.out"
    fail "client: $call (output tail above)"
  fi
done

# The Open Inference Protocol's REST binding: readiness and one infer call.
if timeout 30 python3 - "$HTTP_PORT" >"$WORK/rest.out" 2>&1 <<'EOF'; then
import json, sys, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}/v2"
urllib.request.urlopen(f"{base}/health/ready", timeout=5).read()
meta = json.load(urllib.request.urlopen(f"{base}/models/default", timeout=5))
d = meta["inputs"][0]["shape"][1]
body = json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, d],
                               "data": [0.0] * d}]}).encode()
out = json.load(urllib.request.urlopen(urllib.request.Request(
    f"{base}/models/default/infer", data=body, method="POST"), timeout=10))
print(sorted(t["name"] for t in out["outputs"]))
EOF
  pass "rest: /v2/health/ready and /v2/models/default/infer on $HTTP_PORT"
else
  tail -5 "$WORK/rest.out"
  fail "rest: Open Inference Protocol REST on 127.0.0.1:$HTTP_PORT"
fi

if timeout 10 python3 - "$METRICS_PORT" >"$WORK/metrics.out" 2>&1 <<'EOF'; then
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode()
missing = [m for m in ("invariant_build_info", "invariant_model_info", "grpc_server_handled_total")
           if m not in text]
print("missing: " + " ".join(missing) if missing else "ok")
sys.exit(1 if missing else 0)
EOF
  pass "metrics: /metrics exposes invariant_build_info, invariant_model_info, grpc_server_handled_total"
else
  tail -1 "$WORK/metrics.out"
  fail "metrics: scrape of 127.0.0.1:$METRICS_PORT/metrics"
fi

# Graceful stop: SIGTERM must end the server within its drain window.
t0=$(now)
if podman stop -t 30 "$CONTAINER" >/dev/null 2>&1; then
  code=$(podman inspect -f '{{.State.ExitCode}}' "$CONTAINER")
  if [[ $code == 0 ]]; then
    pass "stop: SIGTERM drained and exited 0 in $(($(now) - t0)) s"
  else
    fail "stop: exit code $code after SIGTERM (expected 0)"
  fi
else
  fail "stop: podman stop failed"
fi

if [[ $FAILED == 0 ]]; then echo "container-test: ALL PASS"; else echo "container-test: FAILURES above"; fi
exit $FAILED
