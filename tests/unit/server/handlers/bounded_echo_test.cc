// The 64-byte echo rule of docs/security.md (EchoInput, server/handlers/validation.h)
// across the request handlers: every string a client controls (model names,
// version labels and strings, tensor, datatype and output names, shapes)
// reaches a status message bounded, without raw control bytes, whichever
// handler and field it came through.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/handlers/inference_handler.h"
#include "server/handlers/model_metadata.h"
#include "server/handlers/validation.h"
#include "tests/unit/server/testing/serving_fixture.h"

namespace invariant::server {
namespace {

// A message quoting EchoInput of one client string: the fixed text of the
// longest message plus 4 × 64 bytes (a \xNN per byte at worst) and the
// "...(N bytes)" suffix stays well under this.
constexpr size_t kMaxMessageBytes = 600;

// `length` bytes of client text: letters, with a newline, an escape, a NUL
// and a byte that is not UTF-8 spread through it.
std::string Hostile(size_t length, char first = 'q') {
  std::string s(length, 'q');
  s[0] = first;
  for (size_t i = 7; i < length; i += 97) s[i] = "\n\x1b\0\xff"[(i / 97) % 4];
  return s;
}

void ExpectBounded(const absl::Status& status, const std::string& what) {
  EXPECT_FALSE(status.ok()) << what;
  const std::string message(status.message());
  EXPECT_LE(message.size(), kMaxMessageBytes) << what << ": " << message.substr(0, 200);
  for (unsigned char c : message) {
    ASSERT_TRUE(c >= 0x20 && c != 0x7F)
        << what << ": raw control byte " << int{c} << " in " << message.substr(0, 200);
  }
  // No more than kMaxEchoBytes of any client string in a row.
  EXPECT_EQ(message.find(std::string(kMaxEchoBytes + 1, 'q')), std::string::npos)
      << what << ": " << message.substr(0, 200);
}

class BoundedEchoTest : public ServingFixture {
 protected:
  BoundedEchoTest() : ServingFixture("bounded_echo_models") {}
  void SetUp() override {
    ServingFixture::SetUp();
    inference_ = std::make_unique<InferenceHandler>(registry_.get(), features_.get(), "1.2.3",
                                                    [] { return true; });
  }

  absl::Status Predict(const v1::ModelSpec& spec) {
    v1::PredictRequest request;
    *request.mutable_model() = spec;
    for (int i = 0; i < 16; ++i) request.mutable_inputs()->add_values(0.5f);
    v1::PredictResponse response;
    return Wait([&](DoneFn done) {
      features_->Predict(request, &response, absl::InfiniteFuture(), std::move(done));
    });
  }

  absl::Status Featurize(const v1::ModelSpec& spec) {
    v1::FeaturizeRequest request;
    *request.mutable_model() = spec;
    for (int i = 0; i < 16; ++i) request.mutable_inputs()->add_values(0.5f);
    v1::FeaturizeResponse response;
    return Wait([&](DoneFn done) {
      features_->Featurize(request, &response, absl::InfiniteFuture(), std::move(done));
    });
  }

  static absl::Status Wait(const std::function<void(DoneFn)>& call) {
    absl::Status status;
    absl::Notification finished;
    call([&](absl::Status s) {
      status = std::move(s);
      finished.Notify();
    });
    finished.WaitForNotification();
    return status;
  }

  // A valid ModelInfer request for "clf" (2 rows of 16).
  static inference::ModelInferRequest Infer() {
    inference::ModelInferRequest request;
    request.set_model_name("clf");
    auto* input = request.add_inputs();
    input->set_name("input");
    input->set_datatype("FP32");
    input->add_shape(2);
    input->add_shape(16);
    for (int i = 0; i < 32; ++i) input->mutable_contents()->add_fp32_contents(0.5f);
    return request;
  }

  std::unique_ptr<InferenceHandler> inference_;
};

TEST_F(BoundedEchoTest, InvariantV1ModelSpecs) {
  for (size_t length : {size_t{200}, size_t{8000}}) {  // a valid-length and an overlong name
    v1::ModelSpec spec;
    spec.set_name(Hostile(length));
    ExpectBounded(Predict(spec), "Predict model.name");
    ExpectBounded(Featurize(spec), "Featurize model.name");
    v1::GetModelMetadataRequest request;
    *request.mutable_model() = spec;
    v1::GetModelMetadataResponse response;
    ExpectBounded(features_->GetModelMetadata(request, &response), "GetModelMetadata model.name");
  }
  v1::ModelSpec labelled;
  labelled.set_name("clf");
  labelled.set_version_label(Hostile(8000));
  ExpectBounded(Predict(labelled), "Predict model.version_label");
  ExpectBounded(Featurize(labelled), "Featurize model.version_label");
  labelled.set_version(1);  // a label that disagrees with the version
  ExpectBounded(Predict(labelled), "Predict model.version_label with a version");
}

TEST_F(BoundedEchoTest, ModelAdminModelName) {
  v1::GetModelStatusResponse response;
  ExpectBounded(FillModelStatus(*registry_, Hostile(8000), &response), "GetModelStatus");
}

TEST_F(BoundedEchoTest, OpenInferenceProtocolStrings) {
  for (const std::string& version : {Hostile(8000, '7'), Hostile(8000, 'g')}) {
    inference::ModelMetadataRequest metadata;
    metadata.set_name("clf");
    metadata.set_version(version);
    inference::ModelMetadataResponse metadata_response;
    ExpectBounded(inference_->ModelMetadata(metadata, &metadata_response), "ModelMetadata version");
    inference::ModelInferRequest request = Infer();
    request.set_model_version(version);
    ExpectBounded(inference_->ModelInfer(request, absl::InfiniteFuture()).status(),
                  "ModelInfer model_version");
  }
  inference::ModelMetadataRequest metadata;
  metadata.set_name(Hostile(8000));
  inference::ModelMetadataResponse metadata_response;
  ExpectBounded(inference_->ModelMetadata(metadata, &metadata_response), "ModelMetadata name");

  const std::vector<std::pair<std::string, std::function<void(inference::ModelInferRequest&)>>>
      edits = {
          {"model_name", [](auto& r) { r.set_model_name(Hostile(8000)); }},
          {"inputs[0].name", [](auto& r) { r.mutable_inputs(0)->set_name(Hostile(8000)); }},
          {"inputs[0].datatype", [](auto& r) { r.mutable_inputs(0)->set_datatype(Hostile(8000)); }},
          {"outputs[0].name", [](auto& r) { r.add_outputs()->set_name(Hostile(8000)); }},
          {"outputs[1].name (repeated)",
           [](auto& r) {
             r.add_outputs()->set_name("features");
             r.add_outputs()->set_name("features");
           }},
          {"inputs[0].shape",
           [](auto& r) {
             for (int i = 0; i < 5000; ++i) r.mutable_inputs(0)->add_shape(3);
           }},
      };
  for (const auto& [what, edit] : edits) {
    inference::ModelInferRequest request = Infer();
    edit(request);
    ExpectBounded(inference_->ModelInfer(request, absl::InfiniteFuture()).status(),
                  "ModelInfer " + what);
  }
}

}  // namespace
}  // namespace invariant::server
