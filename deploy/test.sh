#!/usr/bin/env bash
# The README's test command: everything the test suite needs, then the suite.
#   1. install the Debian packages the tests use (deploy/install-deps.sh: the
#      build's, plus Prometheus, Python with grpcio and numpy, clang, ...);
#      packages already present are left alone
#   2. configure build/ with every part on (tests, benchmarks, the Python
#      package) and build all of it; after deploy/quickstart.sh this builds
#      only what the quick start left out
#   3. ctest --test-dir build --output-on-failure -j2, plus any arguments
#
#   deploy/test.sh [--skip-deps] [CTEST_ARGS...]    e.g. deploy/test.sh -L integration
#
# Environment: BUILD_DIR (default REPO/build), JOBS (build and test
# parallelism, default 2). Exits with ctest's status.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$REPO/build}"
[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$REPO/$BUILD_DIR"
JOBS="${JOBS:-2}"
SKIP_DEPS=0
if [[ "${1:-}" == "--skip-deps" ]]; then
  SKIP_DEPS=1
  shift
fi
case "${1:-}" in
  -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
esac

if [[ $SKIP_DEPS == 0 ]]; then
  bash "$REPO/deploy/install-deps.sh"
fi
cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DINVARIANT_BUILD_TESTS=ON -DINVARIANT_BUILD_BENCH=ON -DINVARIANT_BUILD_SERVER=ON \
  -DINVARIANT_BUILD_PYTHON=ON
cmake --build "$BUILD_DIR" -j"$JOBS"
exec ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS" "$@"
