#include "train/data/csv.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/data/test_files.h"

namespace invariant::train {
namespace {

using ::testing::HasSubstr;

TEST(CsvTest, LabelColumnByNameAnywhereInTheRow) {
  const std::string path = WriteText("iris.csv",
                                     "sepal, species ,petal\n"
                                     "1.5,setosa,0.25\n"
                                     "\n"
                                     "2.5, virginica ,-3e-1\r\n"
                                     "3,setosa,4\n");
  CsvOptions options;
  options.label_column = "species";
  auto data = LoadCsv(path, options);
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->rows(), 3);
  ASSERT_EQ(data->dim(), 2);
  EXPECT_EQ(data->class_names, (std::vector<std::string>{"setosa", "virginica"}));
  EXPECT_EQ(data->labels, (std::vector<int32_t>{0, 1, 0}));
  EXPECT_FLOAT_EQ(data->x.row(0)[0], 1.5f);
  EXPECT_FLOAT_EQ(data->x.row(0)[1], 0.25f);
  EXPECT_FLOAT_EQ(data->x.row(1)[1], -0.3f);
  EXPECT_FLOAT_EQ(data->x.row(2)[0], 3.0f);
  EXPECT_FALSE(data->has_targets());
}

TEST(CsvTest, IntegerClassNamesSortNumerically) {
  const std::string path = WriteText("digits.csv", "a,label\n1,10\n2,2\n3,1\n4,2\n");
  CsvOptions options;
  options.label_column = "label";
  auto data = LoadCsv(path, options);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->class_names, (std::vector<std::string>{"1", "2", "10"}));
  EXPECT_EQ(data->labels, (std::vector<int32_t>{2, 1, 0, 1}));
}

TEST(CsvTest, TsvWithRegressionTarget) {
  const std::string path = WriteText("reg.tsv", "x1\ty\tx2\n0.5\t10\t1\n-1\t20\t2\n");
  CsvOptions options;
  options.delimiter = '\t';
  options.target_column = "y";
  auto data = LoadCsv(path, options);
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->rows(), 2);
  ASSERT_EQ(data->dim(), 2);
  ASSERT_EQ(data->num_targets(), 1);
  EXPECT_FLOAT_EQ(data->y.row(1)[0], 20.0f);
  EXPECT_FLOAT_EQ(data->x.row(1)[0], -1.0f);
  EXPECT_FLOAT_EQ(data->x.row(1)[1], 2.0f);
  EXPECT_FALSE(data->has_labels());
}

TEST(CsvTest, SchemaNamesTheInputColumnsInOrderAndTheTarget) {
  const std::string path = WriteText("named.tsv", "x1\ty\tx2\n0.5\t10\t1\n-1\t20\t2\n");
  CsvOptions options;
  options.delimiter = '\t';
  options.target_column = "y";
  auto source = OpenCsvSource(path, options);
  ASSERT_TRUE(source.ok()) << source.status();
  const RowSchema& schema = (*source)->schema();
  EXPECT_EQ(schema.column_names, (std::vector<std::string>{"x1", "x2"}));
  EXPECT_EQ(schema.target_names, (std::vector<std::string>{"y"}));
  EXPECT_FALSE(schema.unit_byte_scaled);  // CSV values are taken as read
}

TEST(CsvTest, RaggedRowReportsLineNumber) {
  const std::string path = WriteText("ragged.csv", "a,b,c\n1,2,3\n\n4,5\n");
  auto data = LoadCsv(path);
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr(path + ":4:"));
  EXPECT_THAT(data.status().message(), HasSubstr("expected 3 fields"));
  EXPECT_THAT(data.status().message(), HasSubstr("got 2"));
}

TEST(CsvTest, NonNumericCellReportsLineAndColumn) {
  const std::string path = WriteText("text.csv", "a,b\n1,2\n3,4\n5,abc\n");
  auto data = LoadCsv(path);
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr(path + ":4:"));
  EXPECT_THAT(data.status().message(), HasSubstr("column 'b'"));
  EXPECT_THAT(data.status().message(), HasSubstr("(field 2): expected a number, got 'abc'"));
}

TEST(CsvTest, NonFiniteTargetIsRejected) {
  const std::string path = WriteText("nan.csv", "a,y\n1,nan\n");
  CsvOptions options;
  options.target_column = "y";
  auto data = LoadCsv(path, options);
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr(path + ":2:"));
}

TEST(CsvTest, UnknownLabelColumnListsHeader) {
  const std::string path = WriteText("h.csv", "a,b\n1,2\n");
  CsvOptions options;
  options.label_column = "class";
  auto data = LoadCsv(path, options);
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr("'class' not in the header [a, b]"));
}

// numpy's savetxt writes its header as "# a,b,c": a comment, so the first
// data row would become the header. A header of numbers is refused instead.
TEST(CsvTest, HeaderOfNumbersIsRefusedWithTheCommentHint) {
  const std::string path = WriteText("savetxt.csv", "# a,b\n1,2\n3,4\n");
  auto data = LoadCsv(path);
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(data.status().message(), HasSubstr(path + ":2:"));
  EXPECT_THAT(data.status().message(), HasSubstr("a header line starting with '#' is a comment"));
}

TEST(CsvTest, EmptyFileNeedsHeader) {
  const std::string path = WriteText("empty.csv", "\n\n");
  auto data = LoadCsv(path);
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(data.status().message(), HasSubstr("header"));
}

TEST(CsvTest, StreamsInBlocksAndResets) {
  std::string text = "v,w,k\n";
  for (int i = 0; i < 23; ++i)
    absl::StrAppend(&text, i, ",", -i, ",", i % 2 ? "odd" : "even", "\n");
  const std::string path = WriteText("stream.csv", text);
  CsvOptions options;
  options.label_column = "k";
  auto source = OpenCsvSource(path, options);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->schema().num_rows, 23);
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<float> x(5 * 2);
    std::vector<int32_t> labels(5);
    int64_t row = 0;
    while (true) {
      auto got = (*source)->Next(5, x.data(), labels.data(), nullptr);
      ASSERT_TRUE(got.ok()) << got.status();
      if (*got == 0) break;
      for (int64_t k = 0; k < *got; ++k, ++row) {
        EXPECT_EQ(x[2 * k], static_cast<float>(row));
        EXPECT_EQ(x[2 * k + 1], -static_cast<float>(row));
        EXPECT_EQ(labels[k], row % 2 ? 1 : 0);  // "even" < "odd"
      }
    }
    EXPECT_EQ(row, 23);
    ASSERT_TRUE((*source)->Reset().ok());
  }
}

}  // namespace
}  // namespace invariant::train
