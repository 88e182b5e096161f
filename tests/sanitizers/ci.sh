#!/usr/bin/env bash
# The sanitizer and fuzzing steps of .ci/run (clang 14 from Debian), each in
# its own build tree so the GCC release build in build/ is untouched:
#   build-asan  ASan + UBSan + libFuzzer instrumentation (cmake/Sanitizers.cmake):
#               the unit tests of core/, train/, server/ and client/, the
#               server integration tests and the fuzz seed corpora, then a
#               bounded run of every fuzz target (bench/fuzz/run.sh).
#   build-tsan  TSan: the server core tests (batcher, registry, metrics,
#               validation), the handler tests and the thread pool tests.
# Scope is cut to fit CI's budget (see docs/testing.md, "Sanitizers"): the
# Python, CLI, deploy and trained-model tests run only in the GCC build.
#
#   tests/sanitizers/ci.sh [asan|tsan|fuzz|all] [fuzz_seconds_per_target=30]
#
# Findings are fatal. Only what comes from Debian's uninstrumented libraries
# is suppressed (tests/sanitizers/*.supp, each entry with its reason).
set -euo pipefail
cd "$(dirname "$0")/../.."
STEP=${1:-all}
FUZZ_SECONDS=${2:-30}
SUPP=$PWD/tests/sanitizers

# Test binaries each sanitizer build compiles and runs (ctest -R on the
# executables' discovered tests is not possible, so targets are listed and the
# placeholders of targets not built are excluded).
ASAN_TARGETS=(base_test bundle_test data_test encoders_test groups_test model_test rls_test
  spectral_test train_test server_core_test server_lib_test client_test
  server_integration_test startup_integration_test http_endpoint_integration_test
  invariant-server bundle_fuzz model_load_fuzz csv_fuzz idx_fuzz train_config_fuzz request_fuzz)
TSAN_TARGETS=(base_test server_core_test server_lib_test)

configure() {  # configure DIR SANITIZERS [extra cmake args]
  local dir=$1 sanitize=$2
  shift 2
  CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DINVARIANT_SANITIZE="$sanitize" -DINVARIANT_BUILD_BENCH=OFF "$@" >/dev/null
}

export OPENBLAS_NUM_THREADS=1  # OpenBLAS's own threads are uninstrumented spin loops

asan() {
  configure build-asan address,undefined -DINVARIANT_FUZZ=ON
  cmake --build build-asan -j2 --target "${ASAN_TARGETS[@]}"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1 \
  LSAN_OPTIONS=suppressions=$SUPP/lsan.supp:print_suppressions=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=$SUPP/ubsan.supp \
    ctest --test-dir build-asan --output-on-failure -j2 -E '_NOT_BUILT$' -LE 'python|cli|deploy' \
    --timeout 600
}

tsan() {
  configure build-tsan thread
  cmake --build build-tsan -j2 --target "${TSAN_TARGETS[@]}"
  TSAN_OPTIONS=suppressions=$SUPP/tsan.supp:halt_on_error=1:second_deadlock_stack=1:print_suppressions=0 \
    ctest --test-dir build-tsan --output-on-failure -j2 -E '_NOT_BUILT$' -LE 'python|cli|deploy|fuzz' \
    --timeout 600
}

fuzz() {
  configure build-asan address,undefined -DINVARIANT_FUZZ=ON
  BUILD=build-asan bash bench/fuzz/run.sh "$FUZZ_SECONDS"
}

case "$STEP" in
  asan) asan ;;
  tsan) tsan ;;
  fuzz) fuzz ;;
  all) asan; fuzz; tsan ;;
  *) echo "ci.sh: unknown step '$STEP' (asan, tsan, fuzz or all)" >&2; exit 2 ;;
esac
