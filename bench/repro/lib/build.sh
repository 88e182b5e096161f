# build.sh: the reproduction scripts' build step, once (sourced by
# bench/repro/{cifar,fashion,kernel_approx,mnist,patches,xperm}.sh).
#
#   repro_build TARGET...
#     configures $BUILD (a Release Ninja tree of $ROOT) when it has not been
#     configured yet, then builds the TARGETs in it with -j2. Builds of the
#     same tree are serialised by a lock file inside the tree itself
#     ($BUILD/.repro-build.lock; REPRO_BUILD_LOCK overrides it), so two
#     scripts started at once share one build instead of racing ninja.
#     Needs ROOT and BUILD set.

repro_build() {
  if [[ ! -f "$BUILD/build.ninja" && ! -f "$BUILD/Makefile" ]]; then
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
  fi
  local lock="${REPRO_BUILD_LOCK:-$BUILD/.repro-build.lock}"
  flock "$lock" cmake --build "$BUILD" -j2 --target "$@"
}
