// Compatibility fixture: three small bundles written by invariant-train
// before the model code was reorganised (tests/fixtures/compat_models, made
// from the configs next to them) must keep loading to the same manifest and
// the same tensor bits, and keep producing the stored features and scores for
// fixed input rows.
//
// Tensors and manifests are compared exactly. Features and scores are
// compared with a tight tolerance (1e-5 relative to max(|expected|, 1))
// rather than bit for bit, because the encoders' dot-product kernel may be
// replaced by one that rounds differently in the last bits; a wrong layout,
// a lost tensor or a changed head moves them by far more.
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/base/file.h"
#include "core/bundle/crc32c.h"
#include "core/model/model.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

constexpr int64_t kRows = 4;

std::string FixturePath(const std::string& name, const std::string& file) {
  return std::string(INVARIANT_FIXTURE_DIR) + "/" + name + "/1/" + file;
}

std::string ReadText(const std::string& path) { return ReadWholeFile(path).value_or(""); }

// Row i, column j: sin(0.37 (i·d + j) + 0.1), inside [-1, 1] as the torus wants.
std::vector<float> FixedRows(int64_t d) {
  std::vector<float> x(static_cast<size_t>(kRows * d));
  for (size_t k = 0; k < x.size(); ++k) {
    x[k] = static_cast<float>(std::sin(0.37 * static_cast<double>(k) + 0.1));
  }
  return x;
}

// expected.txt: "tensor <name> <crc32c>" lines, then "features <row>: v..."
// and "scores <row>: v..." lines ('#' starts a comment).
struct Expected {
  std::map<std::string, uint32_t> tensor_crcs;
  std::vector<std::vector<float>> features, scores;
};

Expected ParseExpected(const std::string& text) {
  Expected e;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (words[0] == "tensor") {
      uint32_t crc = 0;
      EXPECT_TRUE(absl::SimpleAtoi(words[2], &crc)) << line;
      e.tensor_crcs[words[1]] = crc;
      continue;
    }
    std::vector<float> values;
    for (size_t k = 2; k < words.size(); ++k) {
      float v = 0;
      EXPECT_TRUE(absl::SimpleAtof(words[k], &v)) << line;
      values.push_back(v);
    }
    (words[0] == "features" ? e.features : e.scores).push_back(values);
  }
  return e;
}

void ExpectClose(const std::vector<std::vector<float>>& expected, const float* actual, int64_t cols,
                 const std::string& what) {
  ASSERT_EQ(static_cast<int64_t>(expected.size()), kRows) << what;
  for (int64_t i = 0; i < kRows; ++i) {
    ASSERT_EQ(static_cast<int64_t>(expected[i].size()), cols) << what << " row " << i;
    for (int64_t j = 0; j < cols; ++j) {
      const float want = expected[i][j];
      const float got = actual[i * cols + j];
      EXPECT_NEAR(got, want, 1e-5 * std::max(1.0f, std::abs(want)))
          << what << " row " << i << " column " << j;
    }
  }
}

class CompatFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CompatFixtureTest, LoadsTheSameManifestTensorsAndOutputs) {
  const std::string name = GetParam();
  auto model = Model::Load(FixturePath(name, kBundleFileName));
  ASSERT_TRUE(model.ok()) << model.status();

  std::string manifest;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString((*model)->manifest(), &manifest));
  EXPECT_EQ(manifest, ReadText(FixturePath(name, "manifest.textproto")));

  const Expected expected = ParseExpected(ReadText(FixturePath(name, "expected.txt")));
  std::map<std::string, uint32_t> crcs;
  for (const auto& [tensor, a] : (*model)->tensors().f32)
    crcs[tensor] = Crc32c(a.data(), a.bytes());
  for (const auto& [tensor, a] : (*model)->tensors().f64)
    crcs[tensor] = Crc32c(a.data(), a.bytes());
  for (const auto& [tensor, a] : (*model)->tensors().i32)
    crcs[tensor] = Crc32c(a.data(), a.bytes());
  EXPECT_FALSE(crcs.empty());
  EXPECT_EQ(crcs, expected.tensor_crcs);

  const int64_t d = (*model)->input_dim();
  const std::vector<float> x = FixedRows(d);
  std::vector<float> features(static_cast<size_t>(kRows * (*model)->feature_dim()));
  (*model)->Featurize(kRows, x.data(), features.data());
  ExpectClose(expected.features, features.data(), (*model)->feature_dim(), name + " features");
  ASSERT_TRUE((*model)->has_head());
  std::vector<float> scores(static_cast<size_t>(kRows * (*model)->output_dim()));
  (*model)->Predict(kRows, x.data(), scores.data());
  ExpectClose(expected.scores, scores.data(), (*model)->output_dim(), name + " scores");
}

INSTANTIATE_TEST_SUITE_P(Bundles, CompatFixtureTest,
                         ::testing::Values("xperm_cdf", "coulomb_rf", "torus_spectral"));

}  // namespace
}  // namespace invariant
