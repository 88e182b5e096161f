// Writing and reading valid bundles: bit-exact round trips, layout, accessors,
// writer argument errors, atomic replacement.
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/bundle/bundle.h"
#include "core/bundle/bundle_format.h"
#include "core/bundle/crc32c.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/unit/bundle/bundle_test_util.h"

namespace invariant {
namespace {

using bundle_test::ReadBytes;
using bundle_test::SampleManifest;
using bundle_test::SampleTensors;
using bundle_test::ScratchDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::shared_ptr<const Bundle> OpenOrDie(const std::string& path, OpenOptions options = {}) {
  absl::StatusOr<std::shared_ptr<const Bundle>> bundle = Bundle::Open(path, options);
  EXPECT_TRUE(bundle.ok()) << bundle.status();
  return bundle.ok() ? *bundle : nullptr;
}

TEST(BundleRoundTripTest, TensorsComeBackBitForBit) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  SampleTensors tensors(1);
  ASSERT_TRUE(WriteBundle(path, SampleManifest(), tensors.refs).ok());
  std::shared_ptr<const Bundle> bundle = OpenOrDie(path);
  ASSERT_NE(bundle, nullptr);

  absl::StatusOr<FloatMatrix> bank = bundle->Float("encoder/bank");
  ASSERT_TRUE(bank.ok()) << bank.status();
  EXPECT_EQ(bank->rows(), 3);
  EXPECT_EQ(bank->cols(), 5);
  EXPECT_EQ(std::memcmp(bank->data(), tensors.bank.data(), tensors.bank.size() * 4), 0);

  absl::StatusOr<DoubleMatrix> bias = bundle->Double("head/bias");
  ASSERT_TRUE(bias.ok()) << bias.status();
  EXPECT_EQ(bias->rows(), 1);  // 1-D tensors are 1 × n
  EXPECT_EQ(bias->cols(), 7);
  EXPECT_EQ(std::memcmp(bias->data(), tensors.bias.data(), tensors.bias.size() * 8), 0);

  absl::StatusOr<IntMatrix> ids = bundle->Int32("ids");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(ids->rows(), 6);  // [2, 3, 3] → (2·3) × 3
  EXPECT_EQ(ids->cols(), 3);
  EXPECT_EQ(std::memcmp(ids->data(), tensors.ids.data(), tensors.ids.size() * 4), 0);

  absl::StatusOr<FloatMatrix> empty = bundle->Float("empty");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->rows(), 0);
  EXPECT_EQ(empty->cols(), 4);
  EXPECT_TRUE(empty->empty());

  absl::StatusOr<FloatMatrix> scalar = bundle->Float("scalar", 1, 1);
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ(scalar->data()[0], tensors.scalar[0]);
}

// A loaded bundle is the server's own copy: overwriting the file in place
// (not by rename) or truncating it must neither change its tensors nor crash
// a reader (a shared file mapping would raise SIGBUS past the new end).
TEST(BundleRoundTripTest, FileOverwrittenOrTruncatedInPlaceLeavesTheLoadedBundleIntact) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  SampleTensors tensors(3);
  ASSERT_TRUE(WriteBundle(path, SampleManifest(), tensors.refs).ok());
  std::shared_ptr<const Bundle> bundle = OpenOrDie(path);
  ASSERT_NE(bundle, nullptr);
  absl::StatusOr<FloatMatrix> bank = bundle->Float("encoder/bank");
  ASSERT_TRUE(bank.ok()) << bank.status();
  const std::string original = ReadBytes(path);

  // In place: same inode, every byte flipped.
  std::string flipped = original;
  for (char& c : flipped) c = static_cast<char>(~c);
  {
    std::fstream in_place(path, std::ios::in | std::ios::out | std::ios::binary);
    in_place.write(flipped.data(), static_cast<std::streamsize>(flipped.size()));
    ASSERT_TRUE(in_place.good());
  }
  EXPECT_EQ(std::memcmp(bank->data(), tensors.bank.data(), tensors.bank.size() * 4), 0);
  // Truncated to nothing, then reopened: the old views still read the old bits.
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  EXPECT_EQ(std::memcmp(bank->data(), tensors.bank.data(), tensors.bank.size() * 4), 0);
  absl::StatusOr<DoubleMatrix> bias = bundle->Double("head/bias");
  ASSERT_TRUE(bias.ok()) << bias.status();
  EXPECT_EQ(std::memcmp(bias->data(), tensors.bias.data(), tensors.bias.size() * 8), 0);
  EXPECT_EQ(Bundle::Open(path).status().code(), absl::StatusCode::kDataLoss);
  // Truncated mid-tensor: refused with the path and the reason.
  bundle_test::WriteBytes(path, original.substr(0, original.size() - 8));
  const absl::Status cut = Bundle::Open(path).status();
  EXPECT_EQ(cut.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(cut.message()), StartsWith(path + ": "));
  EXPECT_THAT(std::string(cut.message()), HasSubstr("truncated"));
}

TEST(BundleRoundTripTest, ManifestRoundTripsAndTensorTableIsFilled) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  SampleTensors tensors(2);
  v1::Manifest manifest = SampleManifest();
  // A stale entry the writer must replace.
  manifest.add_tensors()->set_name("stale");
  ASSERT_TRUE(WriteBundle(path, manifest, tensors.refs).ok());
  std::shared_ptr<const Bundle> bundle = OpenOrDie(path);
  ASSERT_NE(bundle, nullptr);

  v1::Manifest expected = SampleManifest();
  expected.set_format_version(kBundleFormatVersion);
  v1::Manifest got = bundle->manifest();
  ASSERT_EQ(got.tensors_size(), static_cast<int>(tensors.refs.size()));
  got.clear_tensors();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(got, expected))
      << got.DebugString();

  const auto& table = bundle->manifest().tensors();
  uint64_t total = 0;
  for (int i = 0; i < table.size(); ++i) {
    const TensorRef& ref = tensors.refs[i];
    const v1::TensorEntry& e = table[i];
    EXPECT_EQ(e.name(), ref.name);
    EXPECT_EQ(e.dtype(), ref.dtype);
    EXPECT_EQ(std::vector<int64_t>(e.shape().begin(), e.shape().end()), ref.shape);
    EXPECT_EQ(e.offset() % 64, 0u) << e.name();
    EXPECT_EQ(e.crc32c(), Crc32c(ref.data, e.size_bytes())) << e.name();
    total += e.size_bytes();
  }
  EXPECT_EQ(table[0].size_bytes(), 60u);
  EXPECT_EQ(table[1].size_bytes(), 56u);
  EXPECT_EQ(table[2].size_bytes(), 0u);
  EXPECT_EQ(table[3].size_bytes(), 72u);
  EXPECT_EQ(table[4].size_bytes(), 4u);
  EXPECT_EQ(bundle->tensor_bytes(), total);
  EXPECT_EQ(bundle->file_bytes(), ReadBytes(path).size());
  EXPECT_EQ(bundle->file_bytes(), table[4].offset() + 4);  // file ends at the last tensor
}

TEST(BundleRoundTripTest, ViewsAreAlignedIntoTheMapping) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  SampleTensors tensors(3);
  ASSERT_TRUE(WriteBundle(path, SampleManifest(), tensors.refs).ok());
  std::shared_ptr<const Bundle> bundle = OpenOrDie(path);
  ASSERT_NE(bundle, nullptr);
  absl::StatusOr<FloatMatrix> a = bundle->Float("encoder/bank");
  absl::StatusOr<FloatMatrix> b = bundle->Float("encoder/bank");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data()) % 64, 0u);
  EXPECT_EQ(a->data(), b->data());        // never copied: both views share the mapping
  EXPECT_EQ(a->mutable_data(), nullptr);  // read-only
}

TEST(BundleRoundTripTest, ViewOutlivesTheBundleHandle) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  SampleTensors tensors(4);
  ASSERT_TRUE(WriteBundle(path, SampleManifest(), tensors.refs).ok());
  FloatMatrix bank;
  {
    std::shared_ptr<const Bundle> bundle = OpenOrDie(path);
    ASSERT_NE(bundle, nullptr);
    absl::StatusOr<FloatMatrix> view = bundle->Float("encoder/bank");
    ASSERT_TRUE(view.ok());
    bank = *view;
  }
  // Replacing the file on disk does not disturb the old mapping either.
  SampleTensors other(5);
  ASSERT_TRUE(WriteBundle(path, SampleManifest(), other.refs).ok());
  ASSERT_EQ(bank.size(), 15);
  for (int64_t i = 0; i < bank.size(); ++i) EXPECT_EQ(bank.data()[i], tensors.bank[i]) << i;
}

TEST(BundleRoundTripTest, AccessorErrorsNameTheTensor) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  SampleTensors tensors(6);
  ASSERT_TRUE(WriteBundle(path, SampleManifest(), tensors.refs).ok());
  std::shared_ptr<const Bundle> bundle = OpenOrDie(path);
  ASSERT_NE(bundle, nullptr);

  EXPECT_TRUE(bundle->Has("head/bias"));
  EXPECT_FALSE(bundle->Has("head/weights"));
  absl::StatusOr<FloatMatrix> missing = bundle->Float("head/weights");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()),
              AllOf(StartsWith(path + ": "), HasSubstr("no tensor named 'head/weights'"),
                    HasSubstr("encoder/bank")));

  absl::StatusOr<FloatMatrix> wrong_type = bundle->Float("head/bias");
  EXPECT_EQ(wrong_type.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong_type.status().message()),
              HasSubstr("tensor 'head/bias' has dtype DTYPE_FLOAT64, expected DTYPE_FLOAT32"));
  EXPECT_EQ(bundle->Int32("encoder/bank").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bundle->Double("ids").status().code(), absl::StatusCode::kInvalidArgument);

  absl::StatusOr<FloatMatrix> wrong_shape = bundle->Float("encoder/bank", 3, 4);
  EXPECT_EQ(wrong_shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong_shape.status().message()),
              HasSubstr("tensor 'encoder/bank' has shape [3, 5] (3 × 5), expected 3 × 4"));
  EXPECT_TRUE(bundle->Float("encoder/bank", -1, 5).ok());
  EXPECT_TRUE(bundle->Float("encoder/bank", 3, -1).ok());
  EXPECT_EQ(bundle->Double("head/bias", 7, 1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BundleRoundTripTest, BundleWithoutTensors) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  ASSERT_TRUE(WriteBundle(path, SampleManifest(), {}).ok());
  std::shared_ptr<const Bundle> bundle = OpenOrDie(path);
  ASSERT_NE(bundle, nullptr);
  EXPECT_EQ(bundle->manifest().tensors_size(), 0);
  EXPECT_EQ(bundle->file_bytes() % 64, 0u);
  EXPECT_EQ(bundle->manifest().model_name(), "sample");
}

TEST(BundleRoundTripTest, LargeOffsetsNeedALongerManifestAndStillConverge) {
  // 70 tensors of 1000 floats: offsets exceed 2^16, so their varints grow
  // while the layout is computed.
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  std::vector<std::vector<float>> storage(70, std::vector<float>(1000));
  std::vector<TensorRef> refs;
  for (size_t i = 0; i < storage.size(); ++i) {
    for (size_t j = 0; j < storage[i].size(); ++j) storage[i][j] = static_cast<float>(i * j);
    refs.push_back({"t" + std::to_string(i), v1::DTYPE_FLOAT32, {1000}, storage[i].data()});
  }
  ASSERT_TRUE(WriteBundle(path, v1::Manifest(), refs).ok());
  std::shared_ptr<const Bundle> bundle = OpenOrDie(path);
  ASSERT_NE(bundle, nullptr);
  absl::StatusOr<FloatMatrix> last = bundle->Float("t69", 1, 1000);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->data()[999], 69.0f * 999.0f);
}

TEST(BundleRoundTripTest, SameInputsGiveIdenticalFiles) {
  ScratchDir dir;
  SampleTensors tensors(8);
  ASSERT_TRUE(WriteBundle(dir.File("a.bundle"), SampleManifest(), tensors.refs).ok());
  ASSERT_TRUE(WriteBundle(dir.File("b.bundle"), SampleManifest(), tensors.refs).ok());
  EXPECT_EQ(ReadBytes(dir.File("a.bundle")), ReadBytes(dir.File("b.bundle")));
}

TEST(BundleRoundTripTest, WriteReplacesAtomicallyAndLeavesNoTemporaryFiles) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  SampleTensors first(9);
  SampleTensors second(10);
  ASSERT_TRUE(WriteBundle(path, SampleManifest(), first.refs).ok());
  ASSERT_TRUE(WriteBundle(path, SampleManifest(), second.refs).ok());
  EXPECT_EQ(dir.List(), std::vector<std::string>{"model.bundle"});
  std::shared_ptr<const Bundle> bundle = OpenOrDie(path);
  ASSERT_NE(bundle, nullptr);
  absl::StatusOr<FloatMatrix> bank = bundle->Float("encoder/bank");
  ASSERT_TRUE(bank.ok());
  EXPECT_EQ(bank->data()[0], second.bank[0]);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(BundleRoundTripTest, FailedWriteKeepsTheOldFile) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  SampleTensors tensors(11);
  ASSERT_TRUE(WriteBundle(path, SampleManifest(), tensors.refs).ok());
  const std::string before = ReadBytes(path);
  std::vector<TensorRef> bad = tensors.refs;
  bad[1].shape = {7, -1};
  EXPECT_FALSE(WriteBundle(path, SampleManifest(), bad).ok());
  EXPECT_EQ(ReadBytes(path), before);
  EXPECT_EQ(dir.List(), std::vector<std::string>{"model.bundle"});
}

TEST(BundleWriterTest, RejectsBadTensorsNamingThem) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  SampleTensors tensors(12);
  struct Case {
    std::function<void(std::vector<TensorRef>&)> mutate;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& r) { r[0].name = ""; }, "tensor #0 has an empty name"},
      {[](auto& r) { r[1].name = "encoder/bank"; },
       "tensor name 'encoder/bank' appears more than once"},
      {[](auto& r) { r[0].dtype = v1::DTYPE_UNSPECIFIED; },
       "tensor 'encoder/bank' has unknown dtype 0"},
      {[](auto& r) {
         r[0].shape = {3, -5};
       },
       "tensor 'encoder/bank' has negative dimension -5 at axis 1 of shape [3, -5]"},
      {[](auto& r) {
         r[0].shape = {int64_t{1} << 40, int64_t{1} << 40};
       },
       "tensor 'encoder/bank' has shape [1099511627776, 1099511627776] whose element count "
       "overflows int64"},
      {[](auto& r) { r[1].shape = {int64_t{1} << 62}; },
       "tensor 'head/bias' has shape [4611686018427387904] whose size"},
      {[](auto& r) { r[3].data = nullptr; }, "tensor 'ids' of shape [2, 3, 3] has null data"},
  };
  for (const Case& c : cases) {
    std::vector<TensorRef> refs = tensors.refs;
    c.mutate(refs);
    const absl::Status status = WriteBundle(path, SampleManifest(), refs);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(std::string(status.message()), StartsWith(path + ": ")) << c.message;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.message));
  }
  EXPECT_TRUE(dir.List().empty());
}

TEST(BundleWriterTest, MissingDirectoryIsNotFoundNamingThePath) {
  ScratchDir dir;
  const std::string path = dir.File("no/such/dir/model.bundle");
  const absl::Status status = WriteBundle(path, SampleManifest(), {});
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), StartsWith(path + ": "));
}

TEST(BundleOpenTest, SkippingTensorChecksumsStillValidatesTheTable) {
  ScratchDir dir;
  const std::string path = dir.File("model.bundle");
  SampleTensors tensors(13);
  ASSERT_TRUE(WriteBundle(path, SampleManifest(), tensors.refs).ok());
  OpenOptions options;
  options.verify_tensor_checksums = false;
  std::shared_ptr<const Bundle> bundle = OpenOrDie(path, options);
  ASSERT_NE(bundle, nullptr);
  EXPECT_TRUE(bundle->Float("encoder/bank", 3, 5).ok());
}

}  // namespace
}  // namespace invariant
