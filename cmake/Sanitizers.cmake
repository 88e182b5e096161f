# Sanitizer and fuzzing instrumentation for a whole build tree.
#   -DINVARIANT_SANITIZE=address,undefined   ASan + UBSan (build-asan in .ci/run)
#   -DINVARIANT_SANITIZE=thread              TSan (build-tsan in .ci/run)
#   -DINVARIANT_FUZZ=ON                      tests/fuzz targets as libFuzzer
#                                            binaries (clang only); everything
#                                            else gets coverage instrumentation
# Every finding is fatal (-fno-sanitize-recover). Debian's libraries (gRPC,
# protobuf, Abseil, OpenBLAS) are not instrumented: tests/sanitizers/ holds
# the suppressions for what they cause, and .ci/run the runtime options.
set(INVARIANT_SANITIZE "" CACHE STRING
    "Comma-separated -fsanitize= list for the whole build (e.g. address,undefined or thread)")
option(INVARIANT_FUZZ "Build tests/fuzz targets as libFuzzer binaries (needs clang)" OFF)

if(INVARIANT_SANITIZE OR INVARIANT_FUZZ)
  # The usual sanitizer setup: -O1 with line tables compiles in about half the
  # time of -O2 -g and still symbolizes every frame of a report.
  set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -gline-tables-only -DNDEBUG")
  set(CMAKE_C_FLAGS_RELWITHDEBINFO "-O1 -gline-tables-only -DNDEBUG")
endif()
if(INVARIANT_SANITIZE)
  add_compile_options(-fsanitize=${INVARIANT_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${INVARIANT_SANITIZE})
endif()
if(INVARIANT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "INVARIANT_FUZZ needs clang (libFuzzer): CC=clang CXX=clang++ cmake ...")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_link_options(-fsanitize=fuzzer-no-link)
endif()
