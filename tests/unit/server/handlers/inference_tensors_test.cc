// The row limit of an Open Inference Protocol request (inference_tensors.h):
// a shape declaring more rows than the server is configured for is refused
// naming the configured limit, not an internal overflow bound.
#include "server/handlers/inference_tensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "server/handlers/inference_handler.h"
#include "tests/unit/server/testing/serving_fixture.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr int64_t kConfiguredRows = 65536;  // the server's default max_request_rows

InferenceModelShape Model(int64_t input_dim) {
  InferenceModelShape model;
  model.input_dim = input_dim;
  model.input_shape = {input_dim};
  model.feature_dim = 8;
  return model;
}

// One FP32 input tensor "input" of `shape` carrying `values` zeros.
inference::ModelInferRequest Request(const std::vector<int64_t>& shape, int64_t values) {
  inference::ModelInferRequest request;
  auto* input = request.add_inputs();
  input->set_name("input");
  input->set_datatype("FP32");
  for (int64_t d : shape) input->add_shape(d);
  input->mutable_contents()->mutable_fp32_contents()->Resize(static_cast<int>(values), 0.0f);
  return request;
}

TEST(InferRowLimitTest, AHugeShapeHearsTheConfiguredLimit) {
  // 40 columns: the old message quoted INT64_MAX / 4 / 40 = 57646075230342348.
  InferRequest out;
  const absl::Status status =
      DecodeInferInput(Request({100000000000000000, 40}, 40), Model(40), kConfiguredRows, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "inputs[0].shape: expected at most 65536 rows per request, received "
            "[100000000000000000, 40]");
  EXPECT_THAT(std::string(status.message()), Not(HasSubstr("57646075230342348")));
}

TEST(InferRowLimitTest, OneRowOverTheLimitIsRefusedBeforeTheContentsAreCounted) {
  InferRequest out;
  // Only one row of values: the limit, not the value count, is what is wrong first.
  absl::Status status =
      DecodeInferInput(Request({kConfiguredRows + 1, 40}, 40), Model(40), kConfiguredRows, &out);
  EXPECT_EQ(status.message(),
            "inputs[0].shape: expected at most 65536 rows per request, received [65537, 40]");
  // At the limit the shape passes and the contents are checked.
  status = DecodeInferInput(Request({kConfiguredRows, 40}, 40), Model(40), kConfiguredRows, &out);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("inputs[0].contents.fp32_contents: expected 2621440 values"));
  EXPECT_TRUE(DecodeInferInput(Request({3, 40}, 120), Model(40), kConfiguredRows, &out).ok());
}

TEST(InferRowLimitTest, ALimitBeyondTheByteCountStillRefusesAnOverflowingShape) {
  InferRequest out;
  const absl::Status status = DecodeInferInput(Request({100000000000000000, 40}, 40), Model(40),
                                               std::numeric_limits<int64_t>::max(), &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("inputs[0].shape: expected a shape whose byte count fits in 64 bits"));
}

class InferRowLimitHandlerTest : public ServingFixture {
 protected:
  InferRowLimitHandlerTest() : ServingFixture("infer_row_limit_models") {}
};

TEST_F(InferRowLimitHandlerTest, ModelInferNamesTheServersConfiguredLimit) {
  FeatureHandler features(registry_.get(), batcher_.get(), kConfiguredRows);
  InferenceHandler handler(registry_.get(), &features, "1.2.3", nullptr);
  inference::ModelInferRequest request = Request({100000000000000000, 16}, 16);
  request.set_model_name("clf");
  const absl::Status status = handler.ModelInfer(request, absl::InfiniteFuture()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "inputs[0].shape: expected at most 65536 rows per request, received "
            "[100000000000000000, 16]");
}

}  // namespace
}  // namespace invariant::server
