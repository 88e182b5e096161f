// reader_agreement_test.cc: a file that trains is read the same way at
// prediction time. The SAME tricky files go to invariant-train's data sources
// (train/data/csv.h, idx.h) and to invariant-client's reader
// (client/cli/rows.h): quoted fields with blanks, '#' comment lines, pandas'
// index column, TSV on stdin, gzip-compressed CSV, IDX. Both must give the
// same rows, the same column names and the same values, bit for bit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/cli/rows.h"
#include "core/io/byte_stream.h"
#include "train/data/csv.h"
#include "train/data/idx.h"

namespace invariant {
namespace {

std::string Scratch(const std::string& leaf) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return absl::StrCat(::testing::TempDir(), "/reader_agreement_", info->name(), "_", leaf);
}

std::string Write(const std::string& leaf, const std::string& bytes, bool gzip = false) {
  const std::string path = Scratch(leaf);
  auto writer = io::ByteWriter::Create(path, gzip);
  EXPECT_TRUE(writer.ok()) << writer.status();
  EXPECT_TRUE((*writer)->Write(bytes.data(), static_cast<int64_t>(bytes.size())).ok());
  EXPECT_TRUE((*writer)->Close().ok());
  return path;
}

void FromStdin(const std::string& path) {
  ASSERT_NE(std::freopen(path.c_str(), "rb", stdin), nullptr) << path;
}

// The trainer's rows (CSV with `label` as the label column) against the
// CLI's (the label column ignored, as invariant-client --ignore_columns).
void ExpectSameCsvRows(const std::string& path, const std::string& stdin_path,
                       const std::vector<std::string>& columns, const std::vector<float>& values) {
  if (!stdin_path.empty()) FromStdin(stdin_path);
  train::CsvOptions train_options;
  train_options.label_column = "label";
  auto trained = train::LoadCsv(path, train_options);
  ASSERT_TRUE(trained.ok()) << trained.status();

  if (!stdin_path.empty()) FromStdin(stdin_path);
  cli::RowReadOptions cli_options;
  cli_options.ignore_columns = {"label"};
  auto predicted = cli::ReadRows(path, cli_options);
  ASSERT_TRUE(predicted.ok()) << predicted.status();

  ASSERT_EQ(trained->rows(), predicted->num_rows);
  ASSERT_EQ(trained->dim(), predicted->dim);
  EXPECT_EQ(trained->class_names, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(predicted->column_names, columns);
  auto source = train::OpenCsvSource(path == "-" ? stdin_path : path, train_options);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->schema().column_names, columns);
  std::vector<float> from_trainer;
  for (int64_t i = 0; i < trained->rows(); ++i) {
    for (int64_t j = 0; j < trained->dim(); ++j) from_trainer.push_back(trained->x.row(i)[j]);
  }
  EXPECT_EQ(from_trainer, predicted->values);
  EXPECT_EQ(predicted->values, values);
}

// pandas' DataFrame.to_csv() with an unnamed index, quoted names and values
// with blanks, comment lines, blank lines, CRLF.
constexpr char kTrickyCsv[] =
    "# exported by pandas\n"
    ",a,\" b c \",label\r\n"
    "0,1.5,\" 2 \",cat\r\n"
    "\n"
    "1, \"-3e1\" ,4,\"dog\"\n"
    "  # a comment between rows\n"
    "2,  5 ,6e-1,cat\n";

TEST(ReaderAgreementTest, QuotedBlanksCommentsAndPandasIndexColumn) {
  ExpectSameCsvRows(Write("tricky.csv", kTrickyCsv), "", {"a", " b c "},
                    {1.5f, 2.0f, -30.0f, 4.0f, 5.0f, 0.6f});
}

TEST(ReaderAgreementTest, GzipCompressedCsv) {
  ExpectSameCsvRows(Write("tricky.csv.gz", kTrickyCsv, true), "", {"a", " b c "},
                    {1.5f, 2.0f, -30.0f, 4.0f, 5.0f, 0.6f});
}

TEST(ReaderAgreementTest, TsvOnStdin) {
  const std::string tsv = Write("rows.txt",
                                "# tab separated, no name to say so\n"
                                "x\t\"y \"\tlabel\n"
                                "1\t2\tdog\n"
                                "3\t 4 \tcat\n");
  ExpectSameCsvRows("-", tsv, {"x", "y "}, {1, 2, 3, 4});
}

TEST(ReaderAgreementTest, GzipIdxImages) {
  const std::string images = Scratch("images-idx3-ubyte.gz");
  const std::string labels = Scratch("labels-idx1-ubyte.gz");
  std::vector<uint8_t> pixels;
  for (int i = 0; i < 3 * 2 * 3; ++i) pixels.push_back(static_cast<uint8_t>(i * 37 % 256));
  ASSERT_TRUE(train::WriteIdxImages(images, 3, 2, 3, pixels, true).ok());
  ASSERT_TRUE(train::WriteIdxLabels(labels, std::vector<uint8_t>{0, 1, 0}, true).ok());
  auto trained = train::LoadIdx(images, labels);
  ASSERT_TRUE(trained.ok()) << trained.status();
  auto predicted = cli::ReadRows(images);
  ASSERT_TRUE(predicted.ok()) << predicted.status();
  ASSERT_EQ(trained->rows(), predicted->num_rows);
  ASSERT_EQ(trained->dim(), predicted->dim);
  std::vector<float> from_trainer;
  for (int64_t i = 0; i < trained->rows(); ++i) {
    for (int64_t j = 0; j < trained->dim(); ++j) from_trainer.push_back(trained->x.row(i)[j]);
  }
  EXPECT_EQ(from_trainer, predicted->values);
  EXPECT_FLOAT_EQ(predicted->values[1], 37 / 255.0f);
}

TEST(ReaderAgreementTest, ColourAndFloatIdxImages) {
  // Rank-4 files (n × height × width × channels, channels last): the trainer
  // and invariant-client give the same rows, bytes scaled alike, floats as is.
  const std::string labels = Scratch("labels-idx1-ubyte");
  ASSERT_TRUE(train::WriteIdxLabels(labels, std::vector<uint8_t>{0, 1}, false).ok());
  std::vector<uint8_t> pixels;
  std::vector<float> floats;
  for (int i = 0; i < 2 * 2 * 3 * 3; ++i) {
    pixels.push_back(static_cast<uint8_t>(i * 29 % 256));
    floats.push_back(0.5f * i - 3.0f);
  }
  const std::string bytes_path = Scratch("colour-idx4-ubyte.gz");
  const std::string float_path = Scratch("colour-idx4-float");
  ASSERT_TRUE(train::WriteIdxColorImages(bytes_path, 2, 2, 3, 3, pixels, true).ok());
  ASSERT_TRUE(io::WriteIdx(float_path, {2, 2, 3, 3}, floats, false).ok());
  for (const std::string& images : {bytes_path, float_path}) {
    auto trained = train::LoadIdx(images, labels);
    ASSERT_TRUE(trained.ok()) << trained.status();
    EXPECT_EQ(trained->input_shape, (std::vector<int64_t>{2, 3, 3}));
    auto predicted = cli::ReadRows(images);
    ASSERT_TRUE(predicted.ok()) << predicted.status();
    ASSERT_EQ(trained->rows(), predicted->num_rows);
    ASSERT_EQ(trained->dim(), predicted->dim);
    std::vector<float> from_trainer;
    for (int64_t i = 0; i < trained->rows(); ++i) {
      for (int64_t j = 0; j < trained->dim(); ++j) from_trainer.push_back(trained->x.row(i)[j]);
    }
    EXPECT_EQ(from_trainer, predicted->values) << images;
  }
}

}  // namespace
}  // namespace invariant
