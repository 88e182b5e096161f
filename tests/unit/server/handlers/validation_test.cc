#include "server/handlers/validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace invariant::server {
namespace {

using ::testing::HasSubstr;

v1::InputBatch Values(std::initializer_list<float> values) {
  v1::InputBatch batch;
  for (float v : values) batch.add_values(v);
  return batch;
}

TEST(ValidationTest, PackedValuesAreBorrowed) {
  const v1::InputBatch batch = Values({1, 2, 3, 4, 5, 6});
  absl::StatusOr<DecodedRows> rows = DecodeRows(InferRequestOfV1({}, batch), 3, 10);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->num_rows(), 2);
  EXPECT_EQ(rows->data(), batch.values().data());
}

TEST(ValidationTest, RawBytesAreDecodedLittleEndian) {
  const float values[] = {1.5f, -2.0f, 3.25f, 0.0f};
  v1::InputBatch batch;
  batch.set_raw_values(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  batch.set_num_rows(2);
  absl::StatusOr<DecodedRows> rows = DecodeRows(InferRequestOfV1({}, batch), 2, 10);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->num_rows(), 2);
  EXPECT_EQ(std::memcmp(rows->data(), values, sizeof(values)), 0);
}

TEST(ValidationTest, WrongRowLengthNamesFieldExpectedAndReceived) {
  absl::StatusOr<DecodedRows> rows =
      DecodeRows(InferRequestOfV1({}, Values({1, 2, 3, 4, 5})), 3, 10);
  ASSERT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rows.status().message(),
              HasSubstr("inputs.values: expected a multiple of input_dim=3 floats, received 5"));
}

TEST(ValidationTest, EmptyBatchIsRefused) {
  absl::StatusOr<DecodedRows> rows = DecodeRows(InferRequestOfV1({}, v1::InputBatch()), 784, 10);
  ASSERT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rows.status().message(), HasSubstr("empty batch"));
  EXPECT_THAT(rows.status().message(), HasSubstr("input_dim=784"));
}

TEST(ValidationTest, NonFiniteValuesAreLocated) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  absl::StatusOr<DecodedRows> rows =
      DecodeRows(InferRequestOfV1({}, Values({1, 2, 3, 4, nan, 6})), 3, 10);
  ASSERT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rows.status().message(),
              HasSubstr("inputs.values[row 1, column 1]: expected a finite float, received nan"));
  rows = DecodeRows(InferRequestOfV1({}, Values({inf, 2, 3})), 3, 10);
  ASSERT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rows.status().message(), HasSubstr("[row 0, column 0]"));
  EXPECT_THAT(rows.status().message(), HasSubstr("received inf"));
}

TEST(ValidationTest, TooManyRowsIsRefused) {
  absl::StatusOr<DecodedRows> rows = DecodeRows(InferRequestOfV1({}, Values({1, 2, 3, 4})), 1, 3);
  ASSERT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rows.status().message(),
              HasSubstr("inputs: expected at most 3 rows per request, received 4"));
}

TEST(ValidationTest, RawBytesNotMultipleOfFourAreRefused) {
  v1::InputBatch batch;
  batch.set_raw_values(std::string(10, '\0'));
  absl::StatusOr<DecodedRows> rows = DecodeRows(InferRequestOfV1({}, batch), 1, 100);
  ASSERT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rows.status().message(),
              HasSubstr("inputs.raw_values: expected a multiple of 4 bytes (little-endian "
                        "float32), received 10 bytes"));
}

TEST(ValidationTest, BothEncodingsAreRefused) {
  v1::InputBatch batch = Values({1});
  batch.set_raw_values(std::string(4, '\0'));
  absl::StatusOr<DecodedRows> rows = DecodeRows(InferRequestOfV1({}, batch), 1, 100);
  ASSERT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rows.status().message(), HasSubstr("exactly one of values or raw_values"));
}

TEST(ValidationTest, NumRowsMustAgree) {
  v1::InputBatch batch = Values({1, 2, 3, 4});
  batch.set_num_rows(3);
  absl::StatusOr<DecodedRows> rows = DecodeRows(InferRequestOfV1({}, batch), 2, 100);
  ASSERT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rows.status().message(),
              HasSubstr("inputs.num_rows: expected 2 (4 values / input_dim=2), received 3"));
}

TEST(ValidationTest, ModelSpecNeedsNameAndNonNegativeVersion) {
  v1::ModelSpec spec;
  EXPECT_THAT(ValidateModelRef(spec.name(), spec.version()).message(), HasSubstr("model.name"));
  spec.set_name("m");
  EXPECT_TRUE(ValidateModelRef(spec.name(), spec.version()).ok());
  spec.set_version(-2);
  const absl::Status status = ValidateModelRef(spec.name(), spec.version());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("received -2"));
}

TEST(ValidationTest, ModelNameLongerThanADirectoryNameIsRefusedWithABoundedEcho) {
  v1::ModelSpec spec;
  spec.set_name(std::string(kMaxModelNameBytes, 'n'));
  EXPECT_TRUE(ValidateModelRef(spec.name(), spec.version()).ok());
  spec.set_name(std::string(8000, 'n'));
  const absl::Status status = ValidateModelRef(spec.name(), spec.version());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("model.name: expected at most 255 bytes, received 8000"));
  EXPECT_LT(status.message().size(), 200u);
}

TEST(EchoInputTest, ShortPrintableInputIsUnchanged) {
  EXPECT_EQ(EchoInput("digits"), "digits");
  EXPECT_EQ(EchoInput(""), "");
  EXPECT_EQ(EchoInput("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");  // UTF-8 kept
}

TEST(EchoInputTest, LongInputIsCutToABoundedPrefixWithItsLength) {
  const std::string echoed = EchoInput(std::string(8000, 'a'));
  EXPECT_EQ(echoed, std::string(kMaxEchoBytes, 'a') + "...(8000 bytes)");
  // Exactly the bound: not cut.
  EXPECT_EQ(EchoInput(std::string(kMaxEchoBytes, 'a')), std::string(kMaxEchoBytes, 'a'));
}

TEST(EchoInputTest, CutsAtACharacterBoundary) {
  // 63 ASCII bytes, then a 2-byte character that would straddle the bound.
  const std::string input = std::string(kMaxEchoBytes - 1, 'a') + "\xc3\xa9tail";
  EXPECT_EQ(EchoInput(input), std::string(kMaxEchoBytes - 1, 'a') + "...(" +
                                  std::to_string(input.size()) + " bytes)");
}

TEST(EchoInputTest, ControlBytesAndInvalidUtf8AreEscaped) {
  EXPECT_EQ(EchoInput("a\nb\x01"), "a\\x0ab\\x01");
  EXPECT_EQ(EchoInput("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(EchoInput("\xc3"), "\\xc3");                    // truncated sequence
  EXPECT_EQ(EchoInput("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(EchoInput("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  // Escaping never lets the echo grow past 4 output bytes per input byte.
  EXPECT_LE(EchoInput(std::string(8000, '\x01')).size(), 4 * kMaxEchoBytes + 32);
}

}  // namespace
}  // namespace invariant::server
