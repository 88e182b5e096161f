// Model's own contracts: Assemble and Load errors name what is wrong,
// SaveWithRecords changes only the records, and Predict is the head applied
// to the features.
#include "core/model/model.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_models/test_models.h"

namespace invariant {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(ModelTest, LoadErrorsNameThePathAndTheProblem) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("model_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string missing = (dir / "absent.bundle").string();
  absl::Status s = Model::Load(missing).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr(missing));
  const std::string corrupt = (dir / kBundleFileName).string();
  std::ofstream(corrupt) << "INVBNDL" << std::string(200, 'Z');
  s = Model::Load(corrupt).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), HasSubstr(corrupt));
  fs::remove_all(dir);
}

TEST(ModelTest, AssembleRejectsAHeadWithoutItsTensorsOrWithWrongShapes) {
  auto base = testing_models::MakeTestModel({});
  ASSERT_TRUE(base.ok()) << base.status();
  ModelTensors tensors = (*base)->tensors();
  tensors.f32.erase(kHeadBiasTensor);
  absl::Status s = Model::Assemble((*base)->manifest(), tensors).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'head/bias' is missing"));
  tensors.f32[kHeadBiasTensor] = FloatMatrix::Zeros(1, 2);  // 3 classes
  s = Model::Assemble((*base)->manifest(), tensors).status();
  EXPECT_THAT(std::string(s.message()), HasSubstr("'head/bias' 1 × T"));
  v1::Manifest wrong_input = (*base)->manifest();
  wrong_input.set_input_dim(15);
  s = Model::Assemble(wrong_input, (*base)->tensors()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
}

// Issue 50: input_shape [2^40, 2^40] loaded beside input_dim 16, and a
// request of that shape with 16 values was answered.
TEST(ModelTest, AssembleRejectsAnInputShapeThatDoesNotHoldInputDimValues) {
  auto base = testing_models::MakeTestModel({});  // input_dim 16
  ASSERT_TRUE(base.ok()) << base.status();
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
           {int64_t{1} << 40, int64_t{1} << 40}, {4, 5}, {0, 16}, {-4, -4}, {16, 2}}) {
    v1::Manifest manifest = (*base)->manifest();
    *manifest.mutable_encoder()->mutable_input_shape() = {shape.begin(), shape.end()};
    const absl::Status s = Model::Assemble(manifest, (*base)->tensors()).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << shape[0];
    EXPECT_THAT(std::string(s.message()), HasSubstr("manifest.encoder.input_shape: expected"));
  }
  v1::Manifest manifest = (*base)->manifest();
  manifest.mutable_encoder()->clear_input_shape();
  manifest.mutable_encoder()->add_input_shape(4);
  manifest.mutable_encoder()->add_input_shape(4);
  EXPECT_TRUE(Model::Assemble(manifest, (*base)->tensors()).ok());
}

// The training job stamps its records into the one assembled model's bundle:
// SaveWithRecords writes them, the same bytes as a model assembled again
// with them, and refuses a manifest that differs in anything else.
TEST(ModelTest, SaveWithRecordsWritesTheRecordsAndNothingElseDifferent) {
  auto model = testing_models::MakeTestModel({});
  ASSERT_TRUE(model.ok()) << model.status();
  const fs::path dir = fs::path(::testing::TempDir()) / ("records_" + std::to_string(getpid()));
  fs::create_directories(dir);
  v1::Manifest records = (*model)->manifest();
  (*records.mutable_metrics())["test_accuracy"] = 0.75;
  records.mutable_certificate()->set_num_points(12);
  records.mutable_pairs_certificate()->set_num_points(3);
  const std::string stamped = (dir / "stamped.bundle").string();
  ASSERT_TRUE((*model)->SaveWithRecords(stamped, records).ok());
  auto loaded = Model::Load(stamped);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->manifest().metrics().at("test_accuracy"), 0.75);
  EXPECT_EQ((*loaded)->manifest().certificate().num_points(), 12);
  EXPECT_EQ((*loaded)->manifest().pairs_certificate().num_points(), 3);
  auto again = Model::Assemble(records, (*model)->tensors());
  ASSERT_TRUE(again.ok()) << again.status();
  const std::string reassembled = (dir / "reassembled.bundle").string();
  ASSERT_TRUE((*again)->Save(reassembled).ok());
  std::ifstream a(stamped, std::ios::binary), b(reassembled, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}),
            std::string(std::istreambuf_iterator<char>(b), {}));
  v1::Manifest other = records;
  other.set_input_dim(15);
  const absl::Status s = (*model)->SaveWithRecords((dir / "other.bundle").string(), other);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("differs from the model's in more than"));
  EXPECT_FALSE(fs::exists(dir / "other.bundle"));
  fs::remove_all(dir);
}

TEST(ModelTest, PredictIsTheHeadAppliedToTheFeaturesBitForBit) {
  auto model = testing_models::MakeTestModel({});
  ASSERT_TRUE(model.ok()) << model.status();
  const int64_t n = 300;  // more than one featurization block
  std::vector<float> x(static_cast<size_t>(n * (*model)->input_dim()));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37 % 101) - 50) / 25.f;
  std::vector<float> features(static_cast<size_t>(n * (*model)->feature_dim()));
  (*model)->Featurize(n, x.data(), features.data());
  std::vector<float> expected(static_cast<size_t>(n * (*model)->output_dim()));
  ApplyLinearModel((*model)->head(), n, features.data(), expected.data());
  std::vector<float> scores(expected.size());
  (*model)->Predict(n, x.data(), scores.data());
  EXPECT_EQ(std::memcmp(scores.data(), expected.data(), scores.size() * sizeof(float)), 0);
  std::vector<float> one_row((*model)->output_dim());
  (*model)->Predict(1, x.data() + 7 * (*model)->input_dim(), one_row.data());
  EXPECT_EQ(std::memcmp(one_row.data(), scores.data() + 7 * (*model)->output_dim(),
                        one_row.size() * sizeof(float)),
            0);
}

}  // namespace
}  // namespace invariant
