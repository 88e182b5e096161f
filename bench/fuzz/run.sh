#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz/ for a bounded time:
#   bench/fuzz/run.sh [seconds_per_target=300] [target...]
#
# Uses (and, when missing, configures and builds) the clang build BUILD
# (default build-asan: ASan + UBSan + libFuzzer, the tree .ci/run's sanitizer
# step uses). Each target starts from its committed seeds
# (tests/fuzz/corpus/<target>/, read-only) plus a work corpus OUT/corpus/<target>/
# that keeps what it learns between runs; crash, leak, timeout and OOM inputs
# go to OUT/artifacts/<target>/. Prints one line per target (executions,
# exec/s, work-corpus size, findings) and exits 1 when any target found
# something. A finding is fixed in the code and its input committed under
# tests/fuzz/corpus/<target>/ as a regression seed. Environment: BUILD, OUT
# (default BUILD/fuzz), FUZZ_FLAGS (extra libFuzzer flags), NO_BUILD=1 (use
# the binaries as they are).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_PER_TARGET=${1:-300}
shift || true
BUILD=${BUILD:-build-asan}
OUT=${OUT:-$BUILD/fuzz}
ALL_TARGETS=(request_fuzz rest_request_fuzz csv_fuzz idx_fuzz cifar_fuzz train_config_fuzz model_load_fuzz bundle_fuzz wav_fuzz)
TARGETS=("${@:-${ALL_TARGETS[@]}}")
if ((${#TARGETS[@]} == 0)); then TARGETS=("${ALL_TARGETS[@]}"); fi

if [[ ! -f $BUILD/CMakeCache.txt ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DINVARIANT_SANITIZE=address,undefined -DINVARIANT_FUZZ=ON -DINVARIANT_BUILD_BENCH=OFF
fi
grep -q '^INVARIANT_FUZZ:BOOL=ON' "$BUILD/CMakeCache.txt" ||
  { echo "fuzz: $BUILD is not an INVARIANT_FUZZ=ON build" >&2; exit 2; }
if [[ ${NO_BUILD:-0} != 1 ]]; then cmake --build "$BUILD" -j2 --target "${TARGETS[@]}"; fi

# Leaks are findings too; Debian's uninstrumented libraries are suppressed
# (tests/sanitizers/lsan.supp says why).
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OPENBLAS_NUM_THREADS=1

status=0
printf "%-18s %12s %10s %8s %s\n" target executions exec/s corpus findings
for t in "${TARGETS[@]}"; do
  work=$OUT/corpus/$t
  artifacts=$OUT/artifacts/$t
  mkdir -p "$work" "$artifacts"
  log=$OUT/$t.log
  set +e
  # -rss_limit_mb / -malloc_limit_mb: an input that makes a reader allocate
  # more than 2 GiB is a finding (a header promising more than the file holds).
  "$BUILD/bin/$t" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    ${FUZZ_FLAGS:-} "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
  findings=$(ls "$artifacts" | wc -l)
  printf "%-18s %12s %10s %8s %s\n" "$t" "${execs:-?}" "${rate:-?}" "$(ls "$work" | wc -l)" \
    "$findings$( ((rc != 0)) && echo " (exit $rc, see $log)")"
  if ((rc != 0 || findings != 0)); then status=1; fi
done
exit "$status"
