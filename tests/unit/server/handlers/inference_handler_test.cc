#include "server/handlers/inference_handler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "server/handlers/inference_tensors.h"
#include "server/handlers/validation.h"
#include "tests/test_models/test_models.h"
#include "tests/unit/server/testing/serving_fixture.h"

namespace invariant::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kInputDim = 16;

// Calls the handler the way an HTTP front end would: the blocking ModelInfer.
class InferenceHandlerTest : public ServingFixture {
 protected:
  InferenceHandlerTest() : ServingFixture("inference_models") {}
  void SetUp() override {
    ServingFixture::SetUp();
    handler_ = std::make_unique<InferenceHandler>(registry_.get(), features_.get(), "1.2.3",
                                                  [this] { return ready_; });
  }

  static std::vector<float> RandomRows(int64_t n, uint64_t seed) {
    return ServingFixture::RandomRows(n, kInputDim, seed);
  }

  static inference::ModelInferRequest Request(const std::string& model, const std::vector<float>& x,
                                              bool raw) {
    inference::ModelInferRequest request;
    request.set_model_name(model);
    request.set_id("r1");
    auto* input = request.add_inputs();
    input->set_name("input");
    input->set_datatype("FP32");
    input->add_shape(static_cast<int64_t>(x.size()) / kInputDim);
    input->add_shape(kInputDim);
    if (raw) {
      request.add_raw_input_contents(
          std::string(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float)));
    } else {
      input->mutable_contents()->mutable_fp32_contents()->Add(x.begin(), x.end());
    }
    return request;
  }

  v1::FeaturizeResponse Featurize(const std::string& model, const std::vector<float>& x) {
    v1::FeaturizeRequest request;
    request.mutable_model()->set_name(model);
    request.mutable_inputs()->mutable_values()->Add(x.begin(), x.end());
    v1::FeaturizeResponse response;
    absl::Status status;
    absl::Notification finished;
    features_->Featurize(request, &response, absl::InfiniteFuture(), [&](absl::Status s) {
      status = s;
      finished.Notify();
    });
    finished.WaitForNotification();
    EXPECT_TRUE(status.ok()) << status;
    return response;
  }

  v1::PredictResponse Predict(const std::string& model, const std::vector<float>& x) {
    v1::PredictRequest request;
    request.mutable_model()->set_name(model);
    request.mutable_inputs()->mutable_values()->Add(x.begin(), x.end());
    v1::PredictResponse response;
    absl::Status status;
    absl::Notification finished;
    features_->Predict(request, &response, absl::InfiniteFuture(), [&](absl::Status s) {
      status = s;
      finished.Notify();
    });
    finished.WaitForNotification();
    EXPECT_TRUE(status.ok()) << status;
    return response;
  }

  bool ready_ = true;
  std::unique_ptr<InferenceHandler> handler_;
};

TEST_F(InferenceHandlerTest, TypedInferEqualsFeaturizeAndPredict) {
  const std::vector<float> x = RandomRows(10, 1);
  auto response = handler_->ModelInfer(Request("clf", x, /*raw=*/false), absl::InfiniteFuture());
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->model_name(), "clf");
  EXPECT_EQ(response->model_version(), "1");
  EXPECT_EQ(response->id(), "r1");
  ASSERT_EQ(response->outputs_size(), 4);
  EXPECT_EQ(response->raw_output_contents_size(), 0);
  const auto& features = response->outputs(0);
  EXPECT_EQ(features.name(), "features");
  EXPECT_THAT(features.shape(), ElementsAre(10, 16));
  const v1::FeaturizeResponse expected_features = Featurize("clf", x);
  ASSERT_EQ(features.contents().fp32_contents_size(), expected_features.features_size());
  EXPECT_EQ(
      std::memcmp(features.contents().fp32_contents().data(), expected_features.features().data(),
                  expected_features.features_size() * sizeof(float)),
      0);
  const v1::PredictResponse expected = Predict("clf", x);
  const auto& scores = response->outputs(1);
  EXPECT_THAT(scores.shape(), ElementsAre(10, 3));
  ASSERT_EQ(scores.contents().fp32_contents_size(), expected.scores_size());
  EXPECT_EQ(std::memcmp(scores.contents().fp32_contents().data(), expected.scores().data(),
                        expected.scores_size() * sizeof(float)),
            0);
  EXPECT_EQ(response->outputs(2).datatype(), "BYTES");
  EXPECT_THAT(response->outputs(2).contents().bytes_contents(),
              ElementsAre(expected.predicted_classes(0), expected.predicted_classes(1),
                          expected.predicted_classes(2), expected.predicted_classes(3),
                          expected.predicted_classes(4), expected.predicted_classes(5),
                          expected.predicted_classes(6), expected.predicted_classes(7),
                          expected.predicted_classes(8), expected.predicted_classes(9)));
  EXPECT_EQ(response->outputs(3).datatype(), "INT32");
  EXPECT_EQ(response->outputs(3).contents().int_contents_size(), 10);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(response->outputs(3).contents().int_contents(i), expected.predicted_indices(i));
  }
}

// Counts the rows every batch computes, by method.
class OneJobPerInferTest : public InferenceHandlerTest {
 protected:
  OneJobPerInferTest() {
    batch_observers_.on_batch = [this](const std::string&, int64_t, const std::string& method,
                                       int64_t rows, double) {
      std::lock_guard<std::mutex> lock(mu_);
      rows_by_method_[method] += rows;
      ++jobs_;
    };
    registry_observers_.on_lookup = [this](const std::string&) {
      std::lock_guard<std::mutex> lock(mu_);
      ++lookups_;
    };
  }
  std::map<std::string, int64_t> RowsByMethod() {
    std::lock_guard<std::mutex> lock(mu_);
    return rows_by_method_;
  }
  // The registry lookups and batches since the last call.
  std::pair<int, int> LookupsAndBatches() {
    std::lock_guard<std::mutex> lock(mu_);
    std::pair<int, int> counts{lookups_, jobs_};
    lookups_ = jobs_ = 0;
    return counts;
  }
  std::mutex mu_;
  std::map<std::string, int64_t> rows_by_method_;
  int lookups_ = 0;
  int jobs_ = 0;
};

TEST_F(OneJobPerInferTest, OneLookupAndOneBatchPerProtocolRequest) {
  // 3 rows fit one batch (max_batch_rows = 4): a batch per job.
  const std::vector<float> x = RandomRows(3, 7);
  LookupsAndBatches();
  for (bool raw : {false, true}) {
    ASSERT_TRUE(handler_->ModelInfer(Request("clf", x, raw), absl::InfiniteFuture()).ok());
    EXPECT_EQ(LookupsAndBatches(), std::make_pair(1, 1)) << "raw=" << raw;
  }
  // invariant.v1 goes through the same core: one lookup, one batch.
  Predict("clf", x);
  EXPECT_EQ(LookupsAndBatches(), std::make_pair(1, 1));
  // A refused request: one lookup, no batch.
  auto bad = Request("clf", x, false);
  bad.add_outputs()->set_name("nope");
  ASSERT_FALSE(handler_->ModelInfer(bad, absl::InfiniteFuture()).ok());
  EXPECT_EQ(LookupsAndBatches(), std::make_pair(1, 0));
}

TEST_F(OneJobPerInferTest, FeaturesAndScoresAreOneBatchJobComputedOnce) {
  const std::vector<float> x = RandomRows(10, 7);
  // Every output (features, scores, class, index): the 10 rows are computed
  // once, by one job (in pieces of max_batch_rows = 4), never as a featurize
  // and a predict job.
  auto both = handler_->ModelInfer(Request("clf", x, /*raw=*/true), absl::InfiniteFuture());
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_THAT(RowsByMethod(),
              ElementsAre(std::pair<const std::string, int64_t>("FeaturizePredict", 10)));
  // The same bits as invariant.v1's two calls.
  const v1::FeaturizeResponse features = Featurize("clf", x);
  const v1::PredictResponse scores = Predict("clf", x);
  ASSERT_EQ(both->raw_output_contents_size(), 4);
  EXPECT_EQ(both->raw_output_contents(0),
            std::string(reinterpret_cast<const char*>(features.features().data()),
                        features.features_size() * sizeof(float)));
  EXPECT_EQ(both->raw_output_contents(1),
            std::string(reinterpret_cast<const char*>(scores.scores().data()),
                        scores.scores_size() * sizeof(float)));
  // Features alone and scores alone are one job each too.
  rows_by_method_.clear();
  auto only_features = Request("feat", x, /*raw=*/false);
  only_features.add_outputs()->set_name("features");
  ASSERT_TRUE(handler_->ModelInfer(only_features, absl::InfiniteFuture()).ok());
  auto only_scores = Request("clf", x, /*raw=*/false);
  only_scores.add_outputs()->set_name("scores");
  ASSERT_TRUE(handler_->ModelInfer(only_scores, absl::InfiniteFuture()).ok());
  EXPECT_THAT(RowsByMethod(), ElementsAre(std::pair<const std::string, int64_t>("Featurize", 10),
                                          std::pair<const std::string, int64_t>("Predict", 10)));
}

TEST_F(OneJobPerInferTest, AFeaturizeOnlyModelAskedForScoresIsRefusedBeforeAnyWork) {
  auto request = Request("feat", RandomRows(2, 8), /*raw=*/false);
  request.add_outputs()->set_name("features");
  request.add_outputs()->set_name("scores");
  auto response = handler_->ModelInfer(request, absl::InfiniteFuture());
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(RowsByMethod().empty());
}

TEST_F(InferenceHandlerTest, RawInputGivesRawOutputs) {
  const std::vector<float> x = RandomRows(3, 2);
  inference::ModelInferRequest request = Request("clf", x, /*raw=*/true);
  request.add_outputs()->set_name("predicted_class");
  request.add_outputs()->set_name("features");
  auto response = handler_->ModelInfer(request, absl::InfiniteFuture());
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->outputs_size(), 2);
  ASSERT_EQ(response->raw_output_contents_size(), 2);
  EXPECT_FALSE(response->outputs(0).has_contents());
  // BYTES: 4-byte little-endian length, then the name, per row.
  const v1::PredictResponse expected = Predict("clf", x);
  std::string bytes;
  for (const std::string& name : expected.predicted_classes()) {
    bytes += std::string({static_cast<char>(name.size()), 0, 0, 0}) + name;
  }
  EXPECT_EQ(response->raw_output_contents(0), bytes);
  EXPECT_EQ(response->raw_output_contents(1).size(), 3 * 16 * sizeof(float));
}

TEST_F(InferenceHandlerTest, ErrorsNameTheProtocolFields) {
  const std::vector<float> x = RandomRows(2, 3);
  inference::ModelInferRequest unknown = Request("nope", x, false);
  auto status = handler_->ModelInfer(unknown, absl::InfiniteFuture()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), StartsWith("model_name: no model named 'nope'"));

  std::vector<float> nan = x;
  nan[20] = std::numeric_limits<float>::quiet_NaN();
  status = handler_->ModelInfer(Request("clf", nan, true), absl::InfiniteFuture()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), StartsWith("raw_input_contents[0][row 1, column 4]"));

  inference::ModelInferRequest scores = Request("feat", x, false);
  scores.add_outputs()->set_name("scores");
  status = handler_->ModelInfer(scores, absl::InfiniteFuture()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("outputs[0].name: expected one of [features]"));

  inference::ModelInferRequest too_many = Request("clf", RandomRows(101, 4), true);
  status = handler_->ModelInfer(too_many, absl::InfiniteFuture()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "inputs[0].shape: expected at most 100 rows per request, received [101, 16]");
}

TEST_F(InferenceHandlerTest, ResponseOfAllOutputsTogetherMustFitTheMessageLimit) {
  // 1024 bytes of framing + 10 rows of 16 features: features alone fit, and
  // so do scores alone (invariant.v1's checks), but not everything at once.
  constexpr int64_t kMaxBytes = 1024 + 10 * 16 * 4;
  FeatureHandler features(registry_.get(), batcher_.get(), 100, kMaxBytes);
  InferenceHandler handler(registry_.get(), &features, "1.2.3", nullptr, kMaxBytes);
  const std::vector<float> x = RandomRows(10, 5);
  inference::ModelInferRequest only_features = Request("clf", x, true);
  only_features.add_outputs()->set_name("features");
  EXPECT_TRUE(handler.ModelInfer(only_features, absl::InfiniteFuture()).ok());
  inference::ModelInferRequest only_scores = Request("clf", x, true);
  only_scores.add_outputs()->set_name("scores");
  EXPECT_TRUE(handler.ModelInfer(only_scores, absl::InfiniteFuture()).ok());
  const absl::Status status =
      handler.ModelInfer(Request("clf", x, true), absl::InfiniteFuture()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("inputs[0].shape: expected at most 5 rows so that the response (112 "
                         "bytes per row for features, scores, predicted_class, predicted_index) "
                         "fits max_message_bytes=1664, received 10"));
}

TEST_F(InferenceHandlerTest, ReadinessAndServerMetadata) {
  inference::ServerReadyResponse server_ready;
  ASSERT_TRUE(handler_->ServerReady({}, &server_ready).ok());
  EXPECT_TRUE(server_ready.ready());
  ready_ = false;
  ASSERT_TRUE(handler_->ServerReady({}, &server_ready).ok());
  EXPECT_FALSE(server_ready.ready());

  inference::ModelReadyRequest request;
  inference::ModelReadyResponse model_ready;
  request.set_name("clf");
  ASSERT_TRUE(handler_->ModelReady(request, &model_ready).ok());
  EXPECT_TRUE(model_ready.ready());
  request.set_version("2");
  ASSERT_TRUE(handler_->ModelReady(request, &model_ready).ok());
  EXPECT_FALSE(model_ready.ready());
  request.set_name("nope");
  request.set_version("");
  ASSERT_TRUE(handler_->ModelReady(request, &model_ready).ok());
  EXPECT_FALSE(model_ready.ready());

  inference::ServerMetadataResponse metadata;
  ASSERT_TRUE(handler_->ServerMetadata({}, &metadata).ok());
  EXPECT_EQ(metadata.name(), "invariant-server");
  EXPECT_EQ(metadata.version(), "1.2.3");
}

TEST(InferenceTensorsTest, VersionStrings) {
  auto spec = ModelSpecFromProtocol("m", "", "name", "version");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->version(), 0);
  EXPECT_EQ(spec->version_label(), "");
  spec = ModelSpecFromProtocol("m", "12", "name", "version");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->version(), 12);
  spec = ModelSpecFromProtocol("m", "stable", "name", "version");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->version_label(), "stable");
  for (const char* bad : {"0", "-3", "+3", "1.5", "99999999999999999999", "7a"}) {
    spec = ModelSpecFromProtocol("m", bad, "name", "model_version");
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(spec.status().message()),
                StartsWith("model_version: expected a positive"));
    EXPECT_THAT(std::string(spec.status().message()),
                HasSubstr(absl::StrCat("received '", bad, "'")));
  }
  spec = ModelSpecFromProtocol("", "1", "model_name", "model_version");
  EXPECT_THAT(std::string(spec.status().message()),
              StartsWith("model_name: expected a model name"));
}

TEST(InferenceTensorsTest, ProtocolFieldNamesNameWhatTheClientSent) {
  const InferFieldNames typed = ProtocolFieldNames(false, 0);
  const InferFieldNames raw = ProtocolFieldNames(true, 1);
  EXPECT_EQ(typed.model.name, "model_name");
  EXPECT_EQ(typed.model.version, "model_version");
  EXPECT_EQ(typed.model.label, "model_version");
  EXPECT_EQ(typed.values, "inputs[0].contents.fp32_contents");
  EXPECT_EQ(typed.inputs, "inputs[0]");
  EXPECT_EQ(raw.raw_values, "raw_input_contents[0]");
  EXPECT_EQ(raw.inputs, "raw_input_contents[0]");
  EXPECT_EQ(raw.clips, "inputs[1].shape");
  EXPECT_EQ(raw.Clip(3, ClipPart::kWav), "inputs[1][3]");
  EXPECT_EQ(raw.Clip(3, ClipPart::kFloat32), "inputs[1][3]");
  EXPECT_EQ(raw.Clip(3, ClipPart::kSampleRate), "parameters.sample_rate");
  // invariant.v1's names by default.
  const InferFieldNames v1_names;
  EXPECT_EQ(v1_names.Clip(3, ClipPart::kWav), "inputs.clips[3].wav");
  EXPECT_EQ(v1_names.Clip(3, ClipPart::kSampleRate), "inputs.clips[3].sample_rate");
}

TEST(InferenceTensorsTest, TheSharedChecksNameTheProtocolsFieldsOnce) {
  InferenceModelShape model;
  model.input_dim = 2;
  model.input_shape = {2};
  model.feature_dim = 4;
  inference::ModelInferRequest request;
  auto* input = request.add_inputs();
  input->set_name("input");
  input->set_datatype("FP32");
  input->add_shape(2);
  input->add_shape(2);
  for (float v : {1.0f, 2.0f, 3.0f, std::nanf("")}) {
    input->mutable_contents()->add_fp32_contents(v);
  }
  InferRequest out;
  ASSERT_TRUE(DecodeInferInput(request, model, 100, &out).ok());
  EXPECT_EQ(out.value_count, 4);
  EXPECT_EQ(out.values, input->contents().fp32_contents().data());  // viewed, not copied
  absl::StatusOr<DecodedRows> rows = DecodeRows(out, model.input_dim, 100);
  ASSERT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(rows.status().message()),
              StartsWith("inputs[0].contents.fp32_contents[row 1, column 1]: expected a finite"));
}

TEST(InferenceTensorsTest, ClientStringsAndShapesAreEchoedBounded) {
  const std::string long_text(8000, 'q');
  const auto bounded = [](const absl::Status& status) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_LT(status.message().size(), 300u) << status.message().substr(0, 300);
  };
  bounded(ModelSpecFromProtocol("m", "1" + long_text, "name", "version").status());
  InferenceModelShape model;
  model.input_dim = 16;
  model.input_shape = {16};
  model.feature_dim = 8;
  inference::ModelInferRequest request;
  auto* input = request.add_inputs();
  input->set_name(long_text);
  input->set_datatype("FP32");
  InferRequest out;
  bounded(DecodeInferInput(request, model, 100, &out));
  input->set_name("input");
  input->set_datatype(long_text);
  bounded(DecodeInferInput(request, model, 100, &out));
  input->set_datatype("FP32");
  for (int i = 0; i < 5000; ++i) input->add_shape(3);  // a 5000-dimensional shape
  bounded(DecodeInferInput(request, model, 100, &out));
  request.add_outputs()->set_name(long_text);
  bounded(SelectOutputs(request, model).status());
}

}  // namespace
}  // namespace invariant::server
