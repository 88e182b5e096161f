// bundle_format.cc: header encoding (little-endian, see bundle.h).
#include "core/bundle/bundle_format.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/error_text.h"
#include "core/bundle/crc32c.h"

namespace invariant {
namespace bundle_format {
namespace {

// The host is little-endian (bundle.h refuses others), so memcpy is the
// little-endian encoding.
template <typename T>
void Store(uint8_t* at, T value) {
  std::memcpy(at, &value, sizeof(T));
}

template <typename T>
T Load(const uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

}  // namespace

std::array<uint8_t, kHeaderSize> EncodeHeader(const Header& header) {
  std::array<uint8_t, kHeaderSize> bytes{};
  std::memcpy(bytes.data(), kMagic.data(), kMagic.size());
  Store(bytes.data() + kVersionOffset, header.format_version);
  Store(bytes.data() + kManifestCrcOffset, header.manifest_crc32c);
  Store(bytes.data() + kManifestLengthOffset, header.manifest_length);
  Store(bytes.data() + kFileLengthOffset, header.file_length);
  Store(bytes.data() + kHeaderCrcOffset, ComputeHeaderCrc(bytes.data()));
  return bytes;
}

Header DecodeHeaderFields(const uint8_t* bytes) {
  Header header;
  header.format_version = Load<uint32_t>(bytes + kVersionOffset);
  header.manifest_crc32c = Load<uint32_t>(bytes + kManifestCrcOffset);
  header.manifest_length = Load<uint64_t>(bytes + kManifestLengthOffset);
  header.file_length = Load<uint64_t>(bytes + kFileLengthOffset);
  return header;
}

uint32_t StoredHeaderCrc(const uint8_t* bytes) { return Load<uint32_t>(bytes + kHeaderCrcOffset); }

uint32_t ComputeHeaderCrc(const uint8_t* bytes) { return Crc32c(bytes, kHeaderCrcOffset); }

std::optional<uint64_t> RoundUpToAlignment(uint64_t x) {
  constexpr uint64_t kAlign = 64;
  if (x > UINT64_MAX - (kAlign - 1)) return std::nullopt;
  return (x + kAlign - 1) / kAlign * kAlign;
}

std::optional<uint64_t> DataStart(uint64_t manifest_length) {
  if (manifest_length > UINT64_MAX - kHeaderSize) return std::nullopt;
  return RoundUpToAlignment(kHeaderSize + manifest_length);
}

absl::StatusOr<uint64_t> TensorSizeBytes(absl::Span<const int64_t> shape, size_t element_size) {
  int64_t nonzero_product = 1;
  bool has_zero = false;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    const int64_t dim = shape[axis];
    if (dim < 0) {
      return absl::InvalidArgumentError(absl::StrCat("has negative dimension ", dim, " at axis ",
                                                     axis, " of shape ", ShapeText(shape)));
    }
    if (dim == 0) {
      has_zero = true;
      continue;
    }
    if (__builtin_mul_overflow(nonzero_product, dim, &nonzero_product)) {
      return absl::InvalidArgumentError(
          absl::StrCat("has shape ", ShapeText(shape), " whose element count overflows int64"));
    }
  }
  if (has_zero) return uint64_t{0};
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(nonzero_product), element_size, &bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("has shape ", ShapeText(shape), " whose size (",
                                                   nonzero_product, " values of ", element_size,
                                                   " bytes) overflows uint64"));
  }
  return bytes;
}

}  // namespace bundle_format
}  // namespace invariant
