// bundle_format.h: the fixed 64-byte bundle header and layout arithmetic.
//
// Low-level pieces shared by the writer, the reader and the tests that craft
// corrupt files; bundle.h documents the byte layout. Application code uses
// WriteBundle and Bundle::Open instead. Pure functions, thread-safe.
#ifndef INVARIANT_CORE_BUNDLE_BUNDLE_FORMAT_H_
#define INVARIANT_CORE_BUNDLE_BUNDLE_FORMAT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace invariant {
namespace bundle_format {

inline constexpr size_t kHeaderSize = 64;
inline constexpr std::array<char, 8> kMagic = {'I', 'N', 'V', 'B', 'N', 'D', 'L', '\0'};
// Byte offsets of the header fields.
inline constexpr size_t kVersionOffset = 8;
inline constexpr size_t kManifestCrcOffset = 12;
inline constexpr size_t kManifestLengthOffset = 16;
inline constexpr size_t kFileLengthOffset = 24;
inline constexpr size_t kReservedOffset = 32;
inline constexpr size_t kHeaderCrcOffset = 60;
// A manifest larger than this is refused (it holds metadata, not tensors).
inline constexpr uint64_t kMaxManifestLength = uint64_t{256} << 20;

// The decoded header fields (magic and header CRC are implicit).
struct Header {
  uint32_t format_version = 0;
  uint32_t manifest_crc32c = 0;
  uint64_t manifest_length = 0;
  uint64_t file_length = 0;
};

// The 64 header bytes for `header`: magic, fields, zero reserved bytes and
// the header CRC-32C over bytes [0, 60).
std::array<uint8_t, kHeaderSize> EncodeHeader(const Header& header);

// Reads the fields of a 64-byte header without validating anything.
Header DecodeHeaderFields(const uint8_t* bytes);

// Stored and recomputed header CRC of a 64-byte header.
uint32_t StoredHeaderCrc(const uint8_t* bytes);
uint32_t ComputeHeaderCrc(const uint8_t* bytes);

// x rounded up to a multiple of 64, or nullopt when that overflows.
std::optional<uint64_t> RoundUpToAlignment(uint64_t x);

// Offset of the first tensor byte: RoundUp64(64 + manifest_length), or nullopt
// when that overflows.
std::optional<uint64_t> DataStart(uint64_t manifest_length);

// Bytes of a row-major tensor of `shape` with `element_size`-byte values.
// INVALID_ARGUMENT (message without path or tensor name, for the caller to
// prefix) when a dimension is negative, when the product of the non-zero
// dimensions exceeds INT64_MAX (so every partial product of the shape fits in
// int64_t), or when product · element_size overflows uint64_t.
absl::StatusOr<uint64_t> TensorSizeBytes(absl::Span<const int64_t> shape, size_t element_size);

}  // namespace bundle_format
}  // namespace invariant

#endif  // INVARIANT_CORE_BUNDLE_BUNDLE_FORMAT_H_
