// fuzz_util.h: helpers shared by the fuzz targets in tests/fuzz/.
//
// Targets that exercise readers taking a path (bundles, CSV, IDX) write the
// fuzz input into an in-memory file (memfd) and hand the reader its
// /proc/self/fd path, so nothing touches the disk and each input replaces the
// previous one. ResealBundle fixes up the checksums of a mutated bundle so
// that the fuzzer reaches the parsers behind them. Not thread-safe (fuzz
// targets run one input at a time).
#ifndef INVARIANT_TESTS_FUZZ_FUZZ_UTIL_H_
#define INVARIANT_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <string>

namespace invariant::fuzz {

// Replaces the contents of the memfd numbered `slot` (0..3; one per file a
// target needs at once) with `bytes` and returns its /proc/self/fd path.
// Aborts when the memfd cannot be created or written.
std::string WriteMemFile(int slot, const std::string& bytes);

// In a bundle file (core/bundle/bundle_format.h), recomputes the manifest CRC
// when the claimed manifest length fits in the file, sets file_length to the
// real size and recomputes the header CRC. Files shorter than a header are
// left alone.
void ResealBundle(std::string& file);

// Aborts (a finding) with `what` on stderr when `condition` is false; the
// fuzz targets' property checks, kept in release builds.
void Check(bool condition, const char* what);

}  // namespace invariant::fuzz

#endif  // INVARIANT_TESTS_FUZZ_FUZZ_UTIL_H_
