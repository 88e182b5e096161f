#include "core/io/idx.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/base/unit_byte.h"

namespace invariant::io {
namespace {

int ElementBytes(int type) {
  switch (type) {
    case 0x0B:
      return 2;
    case 0x0C:
    case 0x0D:
      return 4;
    case 0x0E:
      return 8;
    default:
      return 1;
  }
}

bool KnownType(int type) {
  return type == 0x08 || type == 0x09 || type == 0x0B || type == 0x0C || type == 0x0D ||
         type == 0x0E;
}

}  // namespace

uint32_t ReadBigEndian32(const unsigned char* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

void WriteBigEndian32(uint32_t v, unsigned char* b) {
  b[0] = static_cast<unsigned char>(v >> 24);
  b[1] = static_cast<unsigned char>(v >> 16);
  b[2] = static_cast<unsigned char>(v >> 8);
  b[3] = static_cast<unsigned char>(v);
}

std::string Hex32(uint32_t v) { return absl::StrCat("0x", absl::Hex(v, absl::kZeroPad8)); }

bool LooksLikeIdx(absl::string_view head) {
  if (head.size() < 4 || head[0] != 0 || head[1] != 0) return false;
  const int dims = static_cast<unsigned char>(head[3]);
  return KnownType(static_cast<unsigned char>(head[2])) && dims >= 1 && dims <= 4;
}

absl::StatusOr<IdxHeader> ReadIdxHeader(ByteReader& reader, uint32_t expected_magic,
                                        absl::string_view what) {
  if (expected_magic == 0) return ReadIdxHeader(reader, absl::Span<const uint32_t>(), what);
  return ReadIdxHeader(reader, absl::MakeConstSpan(&expected_magic, 1), what);
}

absl::StatusOr<IdxHeader> ReadIdxHeader(ByteReader& reader, absl::Span<const uint32_t> accepted,
                                        absl::string_view what) {
  unsigned char bytes[4 * 5];
  ASSIGN_OR_RETURN(const int64_t got, reader.Read(bytes, 4));
  const int64_t expected_ndims = accepted.empty() ? 0 : (accepted[0] & 0xff);
  if (got < 4) {
    return absl::DataLossError(absl::StrCat(reader.path(), ": truncated IDX header: expected ",
                                            4 * (1 + expected_ndims), " bytes, got ", got));
  }
  IdxHeader header;
  header.magic = ReadBigEndian32(bytes);
  if (!accepted.empty() &&
      std::find(accepted.begin(), accepted.end(), header.magic) == accepted.end()) {
    std::vector<std::string> names;
    for (const uint32_t magic : accepted) names.push_back(Hex32(magic));
    return absl::InvalidArgumentError(
        absl::StrCat(reader.path(), ": wrong IDX magic number for ", what, " file: expected ",
                     absl::StrJoin(names, " or "), ", got ", Hex32(header.magic)));
  }
  if (!LooksLikeIdx(absl::string_view(reinterpret_cast<const char*>(bytes), 4))) {
    return absl::InvalidArgumentError(
        absl::StrCat(reader.path(), ": not an IDX file: expected magic 0x0000TTDD (type ",
                     "08/09/0B/0C/0D/0E, 1..4 dims), got ", Hex32(header.magic)));
  }
  header.type = bytes[2];
  header.element_bytes = ElementBytes(header.type);
  const int ndims = bytes[3];
  ASSIGN_OR_RETURN(const int64_t got_dims, reader.Read(bytes + 4, 4 * ndims));
  if (got_dims < 4 * ndims) {
    return absl::DataLossError(absl::StrCat(reader.path(), ": truncated IDX header: expected ",
                                            4 * (1 + ndims), " bytes, got ", 4 + got_dims));
  }
  for (int i = 0; i < ndims; ++i) header.dims.push_back(ReadBigEndian32(bytes + 4 * (i + 1)));
  return header;
}

void DecodeIdx(int type, const unsigned char* p, int64_t count, float* out) {
  const int element = ElementBytes(type);
  for (int64_t i = 0; i < count; ++i, p += element) {
    switch (type) {
      case 0x08:
        out[i] = UnitByteToFloat(p[0]);
        break;
      case 0x09:
        out[i] = static_cast<float>(static_cast<int8_t>(p[0]));
        break;
      case 0x0B:
        out[i] = static_cast<float>(static_cast<int16_t>((p[0] << 8) | p[1]));
        break;
      case 0x0C:
        out[i] = static_cast<float>(static_cast<int32_t>(ReadBigEndian32(p)));
        break;
      case 0x0D: {
        const uint32_t u = ReadBigEndian32(p);
        std::memcpy(&out[i], &u, 4);
        break;
      }
      case 0x0E: {
        const uint64_t u = (uint64_t{ReadBigEndian32(p)} << 32) | ReadBigEndian32(p + 4);
        double d;
        std::memcpy(&d, &u, 8);
        out[i] = static_cast<float>(d);
        break;
      }
      default:
        out[i] = 0.0f;
    }
  }
}

namespace {

// Writes the header for `type` and `dims`, then `bytes` (already big-endian).
absl::Status WriteIdxBytes(const std::string& path, int type, const std::vector<int64_t>& dims,
                           int64_t count, const unsigned char* bytes, bool gzip) {
  int64_t size = 1;
  for (const int64_t d : dims) size *= d;
  if (dims.empty() || dims.size() > 4 || count != size) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": data has ", count,
                                                   " elements, expected the product of the ",
                                                   dims.size(), " dims (1..4) = ", size));
  }
  unsigned char header[4 * 5];
  WriteBigEndian32(IdxMagic(type, static_cast<int>(dims.size())), header);
  for (size_t i = 0; i < dims.size(); ++i) {
    WriteBigEndian32(static_cast<uint32_t>(dims[i]), header + 4 * (i + 1));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ByteWriter> writer, ByteWriter::Create(path, gzip));
  RETURN_IF_ERROR(writer->Write(header, 4 * (1 + static_cast<int64_t>(dims.size()))));
  RETURN_IF_ERROR(writer->Write(bytes, count * ElementBytes(type)));
  return writer->Close();
}

}  // namespace

absl::Status WriteIdx(const std::string& path, const std::vector<int64_t>& dims,
                      absl::Span<const uint8_t> data, bool gzip) {
  return WriteIdxBytes(path, kIdxUnsignedByte, dims, static_cast<int64_t>(data.size()), data.data(),
                       gzip);
}

absl::Status WriteIdx(const std::string& path, const std::vector<int64_t>& dims,
                      absl::Span<const float> data, bool gzip) {
  std::vector<unsigned char> bytes(data.size() * 4);
  for (size_t i = 0; i < data.size(); ++i) {
    uint32_t u;
    std::memcpy(&u, &data[i], 4);
    WriteBigEndian32(u, bytes.data() + 4 * i);
  }
  return WriteIdxBytes(path, kIdxFloat32, dims, static_cast<int64_t>(data.size()), bytes.data(),
                       gzip);
}

}  // namespace invariant::io
