// idx.h: the IDX format (LeCun et al., the MNIST page), written once: the
// big-endian header, element decoding, and writing.
//
// An IDX file is a magic number 0x0000TTDD (TT the element type: 0x08
// unsigned byte, 0x09 signed byte, 0x0B int16, 0x0C int32, 0x0D float32,
// 0x0E float64; DD the number of dims, 1..4), DD big-endian uint32 dims, then
// the elements, big-endian, row-major. The first dim counts the rows (images,
// labels); a row is the slice along it, flattened. Files may be gzip (read
// through ByteReader, which looks for the gzip magic).
//
// Scaling: an unsigned byte b decodes to b / 255 (core/base/unit_byte.h,
// recorded as INPUT_SCALING_UNIT_BYTE); every other type is taken as is.
//
// Errors name the file: a wrong or unknown magic (expected and got), a
// truncated header (expected and got byte counts). Thread-compatible.
#ifndef INVARIANT_CORE_IO_IDX_H_
#define INVARIANT_CORE_IO_IDX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/io/byte_stream.h"

namespace invariant::io {

inline constexpr uint32_t kIdxLabelMagic = 0x00000801;       // unsigned bytes, 1 dim
inline constexpr uint32_t kIdxImageMagic = 0x00000803;       // unsigned bytes, 3 dims
inline constexpr uint32_t kIdxColorImageMagic = 0x00000804;  // unsigned bytes, 4 dims
inline constexpr int kIdxUnsignedByte = 0x08;
inline constexpr int kIdxFloat32 = 0x0D;

// The magic of an IDX file of element `type` with `ndims` dims.
constexpr uint32_t IdxMagic(int type, int ndims) {
  return (static_cast<uint32_t>(type) << 8) | static_cast<uint32_t>(ndims);
}

uint32_t ReadBigEndian32(const unsigned char* bytes);
void WriteBigEndian32(uint32_t value, unsigned char* bytes);

// "0x" and 8 hex digits.
std::string Hex32(uint32_t value);

// True when `head` starts with an IDX magic of a known type and 1..4 dims.
bool LooksLikeIdx(absl::string_view head);

struct IdxHeader {
  uint32_t magic = 0;
  int type = 0;               // 0x08 .. 0x0E
  int element_bytes = 1;      // bytes per element of `type`
  std::vector<int64_t> dims;  // dims[0] counts the rows
  int64_t header_bytes() const { return 4 + 4 * static_cast<int64_t>(dims.size()); }
};

// Reads the magic and dims from `reader`. With `expected_magic` != 0 any
// other magic is INVALID_ARGUMENT ("wrong IDX magic number for <what> file:
// expected 0x.., got 0x.."); with 0, any known type and 1..4 dims is
// accepted (else INVALID_ARGUMENT "not an IDX file"). A short header is
// DATA_LOSS ("truncated IDX header: expected N bytes, got M").
absl::StatusOr<IdxHeader> ReadIdxHeader(ByteReader& reader, uint32_t expected_magic = 0,
                                        absl::string_view what = "");
// As above with a set of accepted magics (non-empty): any other is
// INVALID_ARGUMENT ("wrong IDX magic number for <what> file: expected
// 0x00000803 or 0x00000804, got 0x..").
absl::StatusOr<IdxHeader> ReadIdxHeader(ByteReader& reader, absl::Span<const uint32_t> accepted,
                                        absl::string_view what);

// Decodes `count` big-endian elements of `type` at `bytes` into `out`
// (unsigned bytes scaled by 1/255).
void DecodeIdx(int type, const unsigned char* bytes, int64_t count, float* out);

// Writes an unsigned-byte IDX file: magic 0x000008DD, `dims`, then `data`
// (product of dims bytes); gzip when `gzip`. A rank-4 `dims` {n, height,
// width, channels} is a file of channels-last colour images (0x00000804).
absl::Status WriteIdx(const std::string& path, const std::vector<int64_t>& dims,
                      absl::Span<const uint8_t> data, bool gzip);
// Writes a float32 IDX file: magic 0x00000DDD, `dims`, then `data` (product
// of dims floats) as big-endian IEEE-754 words; gzip when `gzip`.
absl::Status WriteIdx(const std::string& path, const std::vector<int64_t>& dims,
                      absl::Span<const float> data, bool gzip);

}  // namespace invariant::io

#endif  // INVARIANT_CORE_IO_IDX_H_
