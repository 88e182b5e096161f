# build.sh: the reproduction scripts' build step, once (sourced by
# research/repro/{cifar,fashion,kernel_approx,mnist,patches,xperm}.sh).
#
#   repro_build TARGET...
#     configures $BUILD (a Release Ninja tree of $ROOT) when it has not been
#     configured yet, turns INVARIANT_BUILD_RESEARCH on in it (the drivers are
#     research targets, off by default) when it is not, then builds the TARGETs in it with -j2. Builds of the
#     same tree are serialised by a lock file inside the tree itself
#     ($BUILD/.repro-build.lock; REPRO_BUILD_LOCK overrides it), so two
#     scripts started at once share one build instead of racing ninja.
#     Needs ROOT and BUILD set.

repro_build() {
  if [[ ! -f "$BUILD/build.ninja" && ! -f "$BUILD/Makefile" ]]; then
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINVARIANT_BUILD_RESEARCH=ON
  elif ! grep -q '^INVARIANT_BUILD_RESEARCH:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null; then
    cmake "$BUILD" -DINVARIANT_BUILD_RESEARCH=ON
  fi
  local lock="${REPRO_BUILD_LOCK:-$BUILD/.repro-build.lock}"
  flock "$lock" cmake --build "$BUILD" -j2 --target "$@"
}
