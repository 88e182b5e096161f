// Crafted files whose checksums are all valid but whose header or tensor
// table lies: unsupported versions, huge claimed lengths and sizes, shapes
// that overflow, negative dimensions, overlaps. None may crash or allocate
// what it claims; each gets the right code and a message naming the tensor.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/bundle/bundle.h"
#include "core/bundle/bundle_format.h"
#include "core/bundle/crc32c.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/bundle/bundle_test_util.h"

namespace invariant {
namespace {

namespace fmt = bundle_format;
using bundle_test::CraftBundle;
using bundle_test::ScratchDir;
using bundle_test::WriteBytes;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kTwoTo40 = int64_t{1} << 40;
constexpr int64_t kTwoTo58 = int64_t{1} << 58;

// An entry of the table; its offset is data start + `relative_offset`.
struct Entry {
  std::string name;
  v1::DType dtype;
  std::vector<int64_t> shape;
  uint64_t relative_offset;
  uint64_t size_bytes;
};

class BundleCraftedTest : public ::testing::Test {
 protected:
  // A file with `entries` over `payload`; tensor CRCs are those of the
  // payload bytes where they fit.
  std::string Craft(const std::vector<Entry>& entries, const std::string& payload,
                    uint32_t version = 1, uint32_t manifest_version = 1) {
    v1::Manifest manifest;
    manifest.set_format_version(manifest_version);
    manifest.set_model_name("crafted");
    for (const Entry& e : entries) {
      v1::TensorEntry* t = manifest.add_tensors();
      t->set_name(e.name);
      t->set_dtype(e.dtype);
      for (int64_t d : e.shape) t->add_shape(d);
      t->set_size_bytes(e.size_bytes);
      if (e.relative_offset + e.size_bytes <= payload.size()) {
        t->set_crc32c(Crc32c(payload.data() + e.relative_offset, e.size_bytes));
      }
    }
    return CraftBundle(manifest, payload, version, [&entries](v1::Manifest& m, uint64_t start) {
      for (size_t i = 0; i < entries.size(); ++i) {
        m.mutable_tensors(static_cast<int>(i))->set_offset(start + entries[i].relative_offset);
      }
    });
  }

  absl::Status Open(const std::string& bytes) {
    WriteBytes(path_, bytes);
    return OpenPath();
  }
  // Opens the file already at path_.
  absl::Status OpenPath() { return Bundle::Open(path_).status(); }

  void ExpectRejected(const absl::Status& status, absl::StatusCode code,
                      const std::string& problem) {
    EXPECT_EQ(status.code(), code) << status;
    EXPECT_THAT(std::string(status.message()), StartsWith(path_ + ": "));
    EXPECT_THAT(std::string(status.message()), HasSubstr(problem));
  }

  // Rewrites header field bytes of `file` and re-seals the header CRC.
  static void PatchHeader(std::string& file, size_t at, const void* value, size_t size) {
    std::memcpy(file.data() + at, value, size);
    const uint32_t crc = fmt::ComputeHeaderCrc(reinterpret_cast<const uint8_t*>(file.data()));
    std::memcpy(file.data() + fmt::kHeaderCrcOffset, &crc, sizeof(crc));
  }

  ScratchDir dir_;
  std::string path_ = dir_.File("crafted.bundle");
  const std::string payload_ = std::string(256, '\0');
};

TEST_F(BundleCraftedTest, ConsistentCraftedFileIsAccepted) {
  // Guards the other tests: the crafting itself produces valid files.
  const std::string file = Craft({{"a", v1::DTYPE_FLOAT32, {4, 4}, 0, 64},
                                  {"b", v1::DTYPE_INT32, {3}, 64, 12},
                                  {"c", v1::DTYPE_FLOAT64, {0}, 128, 0}},
                                 payload_.substr(0, 128));
  EXPECT_TRUE(Open(file).ok()) << Open(file);
}

TEST_F(BundleCraftedTest, NewerOrOlderVersionIsFailedPrecondition) {
  ExpectRejected(Open(Craft({}, "", 2)), absl::StatusCode::kFailedPrecondition,
                 "unsupported bundle format version 2; this build reads version 1");
  ExpectRejected(Open(Craft({}, "", 0)), absl::StatusCode::kFailedPrecondition,
                 "unsupported bundle format version 0");
}

TEST_F(BundleCraftedTest, ManifestVersionMustMatchHeader) {
  ExpectRejected(Open(Craft({}, "", 1, 7)), absl::StatusCode::kInvalidArgument,
                 "manifest format_version 7 disagrees with header version 1");
}

TEST_F(BundleCraftedTest, HugeManifestLengthIsRejectedBeforeReading) {
  std::string file = Craft({}, payload_);
  for (const uint64_t claimed :
       {uint64_t{1} << 60, ~uint64_t{0}, static_cast<uint64_t>(file.size() - 63)}) {
    PatchHeader(file, fmt::kManifestLengthOffset, &claimed, sizeof(claimed));
    ExpectRejected(Open(file), absl::StatusCode::kDataLoss,
                   "manifest length " + std::to_string(claimed) +
                       " extends past end of file (64 + " + std::to_string(claimed) +
                       " > file size " + std::to_string(file.size()) + ")");
  }
}

TEST_F(BundleCraftedTest, HugeFileLengthIsTruncation) {
  std::string file = Craft({}, payload_);
  const uint64_t claimed = uint64_t{1} << 60;
  PatchHeader(file, fmt::kFileLengthOffset, &claimed, sizeof(claimed));
  ExpectRejected(Open(file), absl::StatusCode::kDataLoss,
                 "file is truncated: header records 1152921504606846976 bytes");
}

TEST_F(BundleCraftedTest, ReservedHeaderBytesMustBeZero) {
  std::string file = Craft({}, payload_);
  const uint8_t one = 1;
  PatchHeader(file, 40, &one, 1);
  ExpectRejected(Open(file), absl::StatusCode::kDataLoss, "reserved header byte 40 is 1");
}

TEST_F(BundleCraftedTest, ManifestThatDoesNotParseIsDataLoss) {
  // Valid CRCs over bytes that are not a Manifest (a truncated varint).
  const std::string garbage = "\x0a\xff\xff\xff";
  fmt::Header header;
  header.format_version = 1;
  header.manifest_crc32c = Crc32c(garbage.data(), garbage.size());
  header.manifest_length = garbage.size();
  header.file_length = 128;
  const auto header_bytes = fmt::EncodeHeader(header);
  std::string file(header_bytes.begin(), header_bytes.end());
  file += garbage;
  file.resize(128, '\0');
  ExpectRejected(Open(file), absl::StatusCode::kDataLoss,
                 "manifest (4 bytes) does not parse as invariant.v1.Manifest");
}

TEST_F(BundleCraftedTest, TensorPastEndOfFile) {
  ExpectRejected(Open(Craft({{"encoder/bank", v1::DTYPE_FLOAT32, {10000}, 0, 40000}}, payload_)),
                 absl::StatusCode::kInvalidArgument,
                 "tensor 'encoder/bank' extends past end of file (offset ");
  // Claims 2^60 bytes: rejected from the table, never allocated or read.
  const std::string file =
      Craft({{"encoder/bank", v1::DTYPE_FLOAT32, {kTwoTo58}, 64, uint64_t{1} << 60}}, payload_);
  const absl::Status status = Open(file);
  ExpectRejected(status, absl::StatusCode::kInvalidArgument,
                 " + 1152921504606846976 bytes > file size " + std::to_string(file.size()) + ")");
  // Offset far past the end.
  ExpectRejected(Open(Craft({{"w", v1::DTYPE_INT32, {16}, uint64_t{1} << 62, 64}}, payload_)),
                 absl::StatusCode::kInvalidArgument, "tensor 'w' extends past end of file");
}

TEST_F(BundleCraftedTest, OffsetPlusSizeWrappingAround) {
  v1::Manifest manifest;
  manifest.set_format_version(1);
  v1::TensorEntry* t = manifest.add_tensors();
  t->set_name("w");
  t->set_dtype(v1::DTYPE_FLOAT32);
  t->add_shape(32);
  t->set_size_bytes(128);
  t->set_offset(~uint64_t{63});  // 2^64 − 64: offset + size wraps to 64
  ExpectRejected(Open(CraftBundle(manifest, payload_)), absl::StatusCode::kInvalidArgument,
                 "tensor 'w' extends past end of file (offset 18446744073709551552 + 128 bytes");
}

TEST_F(BundleCraftedTest, ShapesWhoseProductOverflows) {
  ExpectRejected(
      Open(Craft({{"big", v1::DTYPE_FLOAT32, {kTwoTo40, kTwoTo40}, 0, 64}}, payload_)),
      absl::StatusCode::kInvalidArgument,
      "tensor 'big' has shape [1099511627776, 1099511627776] whose element count overflows int64");
  ExpectRejected(Open(Craft({{"big", v1::DTYPE_FLOAT64, {int64_t{1} << 62}, 0, 64}}, payload_)),
                 absl::StatusCode::kInvalidArgument,
                 "tensor 'big' has shape [4611686018427387904] whose size");
  // A zero dimension makes the size 0, but the other dimensions' product must
  // still fit, so row/column counts never overflow.
  ExpectRejected(Open(Craft({{"big", v1::DTYPE_INT32, {kTwoTo40, kTwoTo40, 0}, 0, 0}}, payload_)),
                 absl::StatusCode::kInvalidArgument, "whose element count overflows int64");
}

TEST_F(BundleCraftedTest, NegativeDimension) {
  ExpectRejected(Open(Craft({{"neg", v1::DTYPE_FLOAT32, {4, -4}, 0, 64}}, payload_)),
                 absl::StatusCode::kInvalidArgument,
                 "tensor 'neg' has negative dimension -4 at axis 1 of shape [4, -4]");
  ExpectRejected(Open(Craft({{"neg", v1::DTYPE_FLOAT32, {-4, -4}, 0, 64}}, payload_)),
                 absl::StatusCode::kInvalidArgument, "negative dimension -4 at axis 0");
}

TEST_F(BundleCraftedTest, SizeBytesMustMatchShape) {
  ExpectRejected(Open(Craft({{"w", v1::DTYPE_FLOAT64, {4, 4}, 0, 64}}, payload_)),
                 absl::StatusCode::kInvalidArgument,
                 "tensor 'w' records size_bytes 64, but shape [4, 4] of DTYPE_FLOAT64 needs 128");
}

TEST_F(BundleCraftedTest, UnknownDtype) {
  ExpectRejected(Open(Craft({{"w", static_cast<v1::DType>(99), {4}, 0, 16}}, payload_)),
                 absl::StatusCode::kInvalidArgument, "tensor 'w' has unknown dtype 99");
  ExpectRejected(Open(Craft({{"w", v1::DTYPE_UNSPECIFIED, {4}, 0, 16}}, payload_)),
                 absl::StatusCode::kInvalidArgument, "tensor 'w' has DTYPE_UNSPECIFIED");
}

TEST_F(BundleCraftedTest, UnalignedOffset) {
  ExpectRejected(Open(Craft({{"w", v1::DTYPE_FLOAT32, {4}, 8, 16}}, payload_)),
                 absl::StatusCode::kInvalidArgument, "is not a multiple of 64");
}

TEST_F(BundleCraftedTest, OffsetInsideTheManifest) {
  v1::Manifest manifest;
  manifest.set_format_version(1);
  v1::TensorEntry* t = manifest.add_tensors();
  t->set_name("w");
  t->set_dtype(v1::DTYPE_FLOAT32);
  t->add_shape(4);
  t->set_size_bytes(16);
  t->set_offset(0);  // on top of the header
  ExpectRejected(Open(CraftBundle(manifest, payload_)), absl::StatusCode::kInvalidArgument,
                 "tensor 'w' at offset 0 overlaps the header and manifest (data starts at 128)");
}

TEST_F(BundleCraftedTest, OverlappingTensors) {
  ExpectRejected(
      Open(Craft({{"a", v1::DTYPE_FLOAT32, {32}, 0, 128}, {"b", v1::DTYPE_FLOAT32, {16}, 64, 64}},
                 payload_)),
      absl::StatusCode::kInvalidArgument, "tensors 'a' [");
  ExpectRejected(
      Open(Craft({{"a", v1::DTYPE_FLOAT32, {16}, 128, 64}, {"b", v1::DTYPE_INT32, {16}, 128, 64}},
                 payload_)),
      absl::StatusCode::kInvalidArgument, ") overlap");
}

TEST_F(BundleCraftedTest, NamesMustBeUniqueAndNonEmpty) {
  ExpectRejected(
      Open(Craft({{"a", v1::DTYPE_FLOAT32, {16}, 0, 64}, {"a", v1::DTYPE_FLOAT32, {16}, 64, 64}},
                 payload_)),
      absl::StatusCode::kInvalidArgument, "tensor name 'a' appears more than once");
  ExpectRejected(Open(Craft({{"", v1::DTYPE_FLOAT32, {16}, 0, 64}}, payload_)),
                 absl::StatusCode::kInvalidArgument, "tensor entry #0 has an empty name");
}

TEST_F(BundleCraftedTest, NonZeroGapIsDataLoss) {
  std::string payload = payload_;
  payload[30] = 1;  // in the alignment padding between "a" [0, 12) and "b" [64, 128)
  ExpectRejected(
      Open(Craft({{"a", v1::DTYPE_INT32, {3}, 0, 12}, {"b", v1::DTYPE_FLOAT32, {16}, 64, 64}},
                 payload.substr(0, 128))),
      absl::StatusCode::kDataLoss, "padding byte at offset ");
}

// Issue 50: the file's size must be accounted for by its tensor table, so a
// file larger than its tensors is refused from the manifest, unread.
TEST_F(BundleCraftedTest, BytesThatBelongToNoTensorAreRefusedFromTheManifest) {
  ExpectRejected(
      Open(Craft({{"a", v1::DTYPE_FLOAT32, {16}, 0, 64}, {"b", v1::DTYPE_FLOAT32, {16}, 128, 64}},
                 payload_.substr(0, 192))),
      absl::StatusCode::kDataLoss, "64 bytes before tensor 'b' (at offset ");
  ExpectRejected(Open(Craft({{"a", v1::DTYPE_FLOAT32, {16}, 0, 64}}, payload_)),
                 absl::StatusCode::kDataLoss, "(192 bytes belong to no tensor)");
}

TEST_F(BundleCraftedTest, AFileOverTheSizeLimitIsRefusedBeforeItIsRead) {
  const std::string file = Craft({{"a", v1::DTYPE_FLOAT32, {16}, 0, 64}}, payload_.substr(0, 64));
  WriteBytes(path_, file);
  OpenOptions options;
  options.max_file_bytes = file.size() - 1;
  ExpectRejected(Bundle::Open(path_, options).status(), absl::StatusCode::kResourceExhausted,
                 absl::StrCat("bundle of ", file.size(), " bytes exceeds the limit of ",
                              file.size() - 1, " bytes"));
  options.max_file_bytes = file.size();
  EXPECT_TRUE(Bundle::Open(path_, options).ok());
}

// The process's peak resident memory, in bytes.
int64_t PeakResidentBytes() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

// Issue 50: a 3 GiB sparse file was read whole (3.1 GB resident) before
// "bad magic". Now the header, then the manifest, are all that is read of a
// file they refuse: the peak resident memory does not move by the file's size.
TEST_F(BundleCraftedTest, ALargeFileIsCheckedFromItsHeaderAndManifestBeforeItIsRead) {
  constexpr off_t kLarge = off_t{3} << 30;
  const auto sparse = [this](std::string head, off_t size) {
    WriteBytes(path_, head);
    ASSERT_EQ(::truncate(path_.c_str(), size), 0) << std::strerror(errno);
  };
  const int64_t peak_before = PeakResidentBytes();
  sparse(std::string(64, 'x'), kLarge);
  ExpectRejected(OpenPath(), absl::StatusCode::kDataLoss, "bad magic");
  // A valid header and manifest whose file length was patched to the file's.
  std::string file = Craft({{"a", v1::DTYPE_FLOAT32, {16}, 0, 64}}, payload_.substr(0, 64));
  const uint64_t claimed = static_cast<uint64_t>(kLarge);
  PatchHeader(file, fmt::kFileLengthOffset, &claimed, sizeof(claimed));
  sparse(file, kLarge);
  ExpectRejected(OpenPath(), absl::StatusCode::kDataLoss, "bytes belong to no tensor");
  EXPECT_LT(PeakResidentBytes() - peak_before, int64_t{256} << 20);
}

TEST_F(BundleCraftedTest, AFifoIsRefusedWithoutWaitingForAWriter) {
  ASSERT_EQ(::mkfifo(path_.c_str(), 0644), 0) << std::strerror(errno);
  ExpectRejected(OpenPath(), absl::StatusCode::kFailedPrecondition,
                 "is not a regular file, expected a bundle file");
}

}  // namespace
}  // namespace invariant
