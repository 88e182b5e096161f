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

# Test binaries that run under TSan call this: Debian's Abseil is not built
# with TSan, so without tests/sanitizers/absl_tsan_shim.cc TSan cannot see
# absl::Mutex's synchronisation and reports every field it guards as a race.
function(invariant_sanitizer_support target)
  if(INVARIANT_SANITIZE MATCHES "thread")
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests/sanitizers/absl_tsan_shim.cc)
    target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS})
  endif()
endfunction()
