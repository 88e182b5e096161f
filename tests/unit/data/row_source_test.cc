#include "train/data/row_source.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/data/test_files.h"
#include "train/data/coulomb.h"
#include "train/data/csv.h"
#include "train/data/idx.h"
#include "train/data/torus.h"
#include "train/data/xperm.h"

namespace invariant::train {
namespace {

// Reads `source` to the end in blocks of `block` and compares every row,
// label and target with `expected`.
void ExpectSameRows(RowSource& source, const Dataset& expected, int64_t block) {
  ASSERT_TRUE(source.Reset().ok());
  const RowSchema& s = source.schema();
  ASSERT_EQ(s.dim, expected.dim());
  std::vector<float> x(block * s.dim);
  std::vector<int32_t> labels(block);
  std::vector<float> targets(block * std::max<int64_t>(s.num_targets, 1));
  int64_t row = 0;
  while (true) {
    auto got = source.Next(block, x.data(), labels.data(), targets.data());
    ASSERT_TRUE(got.ok()) << got.status();
    if (*got == 0) break;
    ASSERT_LE(*got, block);
    for (int64_t k = 0; k < *got; ++k, ++row) {
      ASSERT_LT(row, expected.rows());
      ASSERT_EQ(std::memcmp(x.data() + k * s.dim, expected.x.row(row), sizeof(float) * s.dim), 0)
          << "row " << row << " block " << block;
      if (expected.has_labels()) {
        ASSERT_EQ(labels[k], expected.labels[row]);
      }
      for (int64_t t = 0; t < expected.num_targets(); ++t) {
        ASSERT_EQ(targets[k * s.num_targets + t], expected.y.row(row)[t]);
      }
    }
  }
  EXPECT_EQ(row, expected.rows()) << "block " << block;
}

TEST(RowSourceTest, GeneratorsYieldTheSameRowsForAnyBlockSize) {
  TorusOptions torus;
  torus.num_points = 257;
  torus.noise_stddev = 0.1;
  CoulombOptions coulomb;
  coulomb.num_molecules = 37;
  coulomb.max_atoms = 9;
  std::vector<std::unique_ptr<RowSource>> sources;
  sources.push_back(MakeXpermSource({/*seed=*/5, false}));
  sources.push_back(*MakeTorusSource(torus));
  sources.push_back(*MakeCoulombSource(coulomb));
  for (auto& source : sources) {
    auto all = ReadAllRows(*source, 100000);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->rows(), source->schema().num_rows);
    for (int64_t block : {1, 7, 64, 1000}) {
      SCOPED_TRACE(source->schema().name);
      ExpectSameRows(*source, *all, block);
    }
  }
}

TEST(RowSourceTest, InMemorySourceMatchesItsDataset) {
  const Dataset data = MakeXperm({/*seed=*/9, true});
  auto source = MakeDatasetSource(data);
  EXPECT_EQ(source->schema().num_rows, data.rows());
  EXPECT_EQ(source->schema().class_names, data.class_names);
  for (int64_t block : {1, 3, 5000, 40000}) ExpectSameRows(*source, data, block);
}

TEST(RowSourceTest, FileSourcesMatchTheirLoadedData) {
  // IDX (gzip) with 13 images of 2 × 2.
  std::vector<uint8_t> pixels, labels;
  for (int i = 0; i < 13 * 4; ++i) pixels.push_back(static_cast<uint8_t>(i * 5));
  for (int i = 0; i < 13; ++i) labels.push_back(static_cast<uint8_t>(i % 10));
  const std::string images_path = ScratchPath("im.gz"), labels_path = ScratchPath("lb.gz");
  ASSERT_TRUE(WriteIdxImages(images_path, 13, 2, 2, pixels, true).ok());
  ASSERT_TRUE(WriteIdxLabels(labels_path, labels, true).ok());
  auto idx = OpenIdxSource(images_path, labels_path);
  ASSERT_TRUE(idx.ok()) << idx.status();
  auto idx_all = LoadIdx(images_path, labels_path);
  ASSERT_TRUE(idx_all.ok());
  for (int64_t block : {1, 4, 13, 100}) ExpectSameRows(**idx, *idx_all, block);

  // CSV with a target column.
  std::string text = "a,b,y\n";
  for (int i = 0; i < 11; ++i) absl::StrAppend(&text, i * 0.5, ",", -i, ",", i * i, "\n");
  const std::string csv_path = WriteText("s.csv", text);
  CsvOptions options;
  options.target_column = "y";
  auto csv = OpenCsvSource(csv_path, options);
  ASSERT_TRUE(csv.ok());
  auto csv_all = LoadCsv(csv_path, options);
  ASSERT_TRUE(csv_all.ok());
  for (int64_t block : {1, 2, 11, 50}) ExpectSameRows(**csv, *csv_all, block);
}

TEST(RowSourceTest, SelectAndConcatRows) {
  const Dataset data = MakeXperm({/*seed=*/1, true});
  auto picked = SelectRows(data, std::vector<int64_t>{5, 0, 5});
  ASSERT_TRUE(picked.ok());
  ASSERT_EQ(picked->rows(), 3);
  EXPECT_EQ(std::memcmp(picked->x.row(0), data.x.row(5), 8 * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(picked->x.row(1), data.x.row(0), 8 * sizeof(float)), 0);
  EXPECT_EQ(picked->labels[2], data.labels[5]);
  EXPECT_FALSE(SelectRows(data, std::vector<int64_t>{32768}).ok());
  auto both = ConcatRows(*picked, *picked);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->rows(), 6);
  EXPECT_EQ(both->labels[3], picked->labels[0]);
  EXPECT_TRUE(ValidateDataset(*both).ok());
  const Dataset one_hot = MakeXperm({/*seed=*/1, false});
  EXPECT_FALSE(ConcatRows(*picked, one_hot).ok());
}

TEST(RowSourceTest, ValidateDatasetCatchesBadLabels) {
  Dataset data = MakeXperm({/*seed=*/1, true});
  data.labels[3] = 2;
  const absl::Status status = ValidateDataset(data);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("row 3"), std::string::npos);
}

}  // namespace
}  // namespace invariant::train
