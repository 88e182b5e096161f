// Damaged files: every truncation length and every single-byte flip of a real
// bundle is rejected with the right code and a message naming the file and
// the damaged section; plus missing, empty, directory and foreign files.
#include <sys/stat.h>

#include <memory>
#include <string>

#include "core/bundle/bundle.h"
#include "core/bundle/bundle_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/bundle/bundle_test_util.h"

namespace invariant {
namespace {

using bundle_test::ReadBytes;
using bundle_test::SampleManifest;
using bundle_test::SampleTensors;
using bundle_test::ScratchDir;
using bundle_test::WriteBytes;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class BundleCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string good_path = dir_.File("good.bundle");
    ASSERT_TRUE(WriteBundle(good_path, SampleManifest(), tensors_.refs).ok());
    good_ = ReadBytes(good_path);
    absl::StatusOr<std::shared_ptr<const Bundle>> bundle = Bundle::Open(good_path);
    ASSERT_TRUE(bundle.ok()) << bundle.status();
    manifest_ = (*bundle)->manifest();
    manifest_end_ = bundle_format::kHeaderSize + bundle_format::DecodeHeaderFields(
                                                     reinterpret_cast<const uint8_t*>(good_.data()))
                                                     .manifest_length;
    bad_path_ = dir_.File("bad.bundle");
  }

  absl::Status OpenBytes(const std::string& bytes, OpenOptions options = {}) {
    WriteBytes(bad_path_, bytes);
    return Bundle::Open(bad_path_, options).status();
  }

  // What a flip of byte `i` must be reported as.
  std::string SectionProblem(size_t i) const {
    if (i < 8) return "bad magic";
    if (i < bundle_format::kHeaderSize) return "header checksum mismatch";
    if (i < manifest_end_) return "manifest checksum mismatch";
    for (const v1::TensorEntry& e : manifest_.tensors()) {
      if (i >= e.offset() && i < e.offset() + e.size_bytes()) {
        return "tensor '" + e.name() + "' checksum mismatch";
      }
    }
    return "padding byte at offset " + std::to_string(i) + " is ";
  }

  void ExpectRejected(const absl::Status& status, absl::StatusCode code, const std::string& problem,
                      const std::string& context) {
    EXPECT_EQ(status.code(), code) << context << ": " << status;
    EXPECT_THAT(std::string(status.message()), StartsWith(bad_path_ + ": ")) << context;
    EXPECT_THAT(std::string(status.message()), HasSubstr(problem)) << context;
  }

  ScratchDir dir_;
  SampleTensors tensors_{21};
  std::string good_;
  v1::Manifest manifest_;
  uint64_t manifest_end_ = 0;
  std::string bad_path_;
};

TEST_F(BundleCorruptionTest, TheSampleHasEverySection) {
  // The exhaustive tests below only mean something if the sample file has
  // manifest padding, tensors, gaps between tensors and an empty tensor.
  ASSERT_EQ(manifest_.tensors_size(), 5);
  EXPECT_GT(manifest_.tensors(0).offset(), manifest_end_);
  EXPECT_GT(manifest_.tensors(1).offset(),
            manifest_.tensors(0).offset() + manifest_.tensors(0).size_bytes());
  EXPECT_EQ(manifest_.tensors(2).size_bytes(), 0u);
  EXPECT_EQ(good_.size(), manifest_.tensors(4).offset() + manifest_.tensors(4).size_bytes());
}

TEST_F(BundleCorruptionTest, EveryTruncationIsDataLoss) {
  // Every length short of the full file: inside the header, at its end, inside
  // and at the end of the manifest, in the padding, at each tensor's start,
  // inside it and at its end.
  for (size_t length = 0; length < good_.size(); ++length) {
    const absl::Status status = OpenBytes(good_.substr(0, length));
    std::string problem;
    if (length == 0) {
      problem = "file is empty (0 bytes)";
    } else if (length < bundle_format::kHeaderSize) {
      problem = "file is truncated: " + std::to_string(length) +
                " bytes, shorter than the 64-byte header";
    } else {
      problem = "file is truncated: header records " + std::to_string(good_.size()) +
                " bytes, file has " + std::to_string(length) + " bytes";
    }
    ExpectRejected(status, absl::StatusCode::kDataLoss, problem,
                   "truncated to " + std::to_string(length));
  }
}

TEST_F(BundleCorruptionTest, EverySingleByteFlipIsDetectedInItsSection) {
  for (const int mask : {0x01, 0x80, 0xFF}) {
    for (size_t i = 0; i < good_.size(); ++i) {
      std::string bad = good_;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      ExpectRejected(OpenBytes(bad), absl::StatusCode::kDataLoss, SectionProblem(i),
                     "byte " + std::to_string(i) + " ^ " + std::to_string(mask));
    }
  }
}

TEST_F(BundleCorruptionTest, TensorFlipsPassOnlyWhenChecksumsAreSkipped) {
  OpenOptions skip;
  skip.verify_tensor_checksums = false;
  for (const v1::TensorEntry& e : manifest_.tensors()) {
    if (e.size_bytes() == 0) continue;
    std::string bad = good_;
    bad[e.offset() + e.size_bytes() / 2] ^= 0x10;
    EXPECT_TRUE(OpenBytes(bad, skip).ok()) << e.name();
    ExpectRejected(OpenBytes(bad), absl::StatusCode::kDataLoss,
                   "tensor '" + e.name() + "' checksum mismatch (stored 0x", e.name());
  }
  // The header and manifest are always verified.
  std::string bad = good_;
  bad[manifest_end_ - 1] ^= 0x01;
  ExpectRejected(OpenBytes(bad, skip), absl::StatusCode::kDataLoss, "manifest checksum mismatch",
                 "manifest flip, checksums skipped");
}

TEST_F(BundleCorruptionTest, TrailingBytesAreDataLoss) {
  ExpectRejected(
      OpenBytes(good_ + std::string(64, '\0')), absl::StatusCode::kDataLoss,
      "header records " + std::to_string(good_.size()) + " (64 unexpected trailing bytes)",
      "trailing zeros");
}

TEST_F(BundleCorruptionTest, ForeignFileIsBadMagic) {
  ExpectRejected(OpenBytes(std::string(200, 'x')), absl::StatusCode::kDataLoss,
                 "bad magic: expected \"INVBNDL\\000\", found \"xxxxxxxx\"; not an invariant "
                 "bundle file",
                 "text file");
  std::string bad = good_;
  bad[7] = 'X';  // the terminating NUL of the magic
  ExpectRejected(OpenBytes(bad), absl::StatusCode::kDataLoss, "found \"INVBNDLX\"", "magic NUL");
}

TEST_F(BundleCorruptionTest, EmptyFileIsDataLoss) {
  ExpectRejected(OpenBytes(""), absl::StatusCode::kDataLoss,
                 "file is empty (0 bytes); a bundle starts with a 64-byte header", "empty");
}

TEST(BundleOpenFileTest, MissingFileIsNotFound) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  const absl::Status status = Bundle::Open(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), path + ": no such bundle file");
}

TEST(BundleOpenFileTest, DirectoryIsFailedPrecondition) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
  const absl::Status status = Bundle::Open(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), path + ": is a directory, expected a bundle file");
}

}  // namespace
}  // namespace invariant
