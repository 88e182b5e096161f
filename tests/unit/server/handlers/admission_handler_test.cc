// Admission by cost through the handlers (feature_handler.h): the memory
// budget (rows, outputs, encoded answer) refuses before any work and is held
// until the call ends or its answer is encoded; one connection's share;
// clips are priced (length + the front end's span) before decoding, decoded
// on the worker queue and never on the caller's thread; a call cancelled or
// out of time while its clips wait is answered without decoding and counted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/admission/inflight_budget.h"
#include "server/admission/worker_queue.h"
#include "server/handlers/audio_clips.h"
#include "server/handlers/feature_handler.h"
#include "server/handlers/inference_handler.h"
#include "tests/test_models/test_audio_model.h"
#include "tests/unit/server/testing/audio_test_util.h"
#include "tests/unit/server/testing/serving_fixture.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace audio_test;  // NOLINT

constexpr int kRate = 8000;  // the test audio model's

class AdmissionHandlerTest : public ServingFixture {
 protected:
  AdmissionHandlerTest() : ServingFixture("admission_models") {}
  void SetUp() override {
    ServingFixture::SetUp();
    sound_ = AddSoundModel();
    ASSERT_NE(sound_, nullptr);
    auto feat = registry_->Lookup("feat");
    ASSERT_TRUE(feat.ok());
    feat_ = feat->servable;
  }

  // A handler over budgets of `memory_limit` bytes (share `share`) and
  // `audio_limit` seconds, with a paused one-thread decoding queue.
  void Build(int64_t memory_limit, int64_t share, int64_t audio_limit) {
    InflightBudgetOptions memory;
    memory.name = "max_inflight_bytes";
    memory.limit = memory_limit;
    memory.per_key_limit = share;
    memory_ = std::make_unique<InflightBudget>(memory);
    InflightBudgetOptions audio;
    audio.name = "max_decode_audio_seconds";
    audio.unit = "seconds of audio";
    audio.limit = audio_limit;
    audio_ = std::make_unique<InflightBudget>(audio);
    decoders_ = std::make_unique<WorkerQueue>(1, /*start_paused=*/true);
    HandlerAdmission admission;
    admission.memory = memory_.get();
    admission.audio = audio_.get();
    admission.decoders = decoders_.get();
    admission.on_abandoned = [this](const char* stage, const absl::Status& status) {
      std::lock_guard<std::mutex> lock(mu_);
      abandoned_.push_back(absl::StrCat(stage, ":", absl::StatusCodeToString(status.code())));
    };
    handler_ =
        std::make_unique<FeatureHandler>(registry_.get(), batcher_.get(), 100, int64_t{64} << 20,
                                         InputLimits{30}, std::move(admission));
  }
  void TearDown() override {
    decoders_.reset();  // runs what is queued
    ServingFixture::TearDown();
  }

  // Bytes one row of `feat` holds for Featurize with protobuf answers.
  int64_t FeatRowBytes() const { return 4 * feat_->input_dim() + feat_->feature_dim() * 8; }

  static v1::FeaturizeRequest Rows(const std::string& model, int64_t n, int64_t dim) {
    v1::FeaturizeRequest request;
    request.mutable_model()->set_name(model);
    for (float v : RandomRows(n, dim, 3)) request.mutable_inputs()->add_values(v);
    return request;
  }

  // Starts a Featurize of a copy of `request` (kept until the call ends);
  // the future gives its status.
  std::future<absl::Status> Start(const v1::FeaturizeRequest& request,
                                  v1::FeaturizeResponse* response, const CallContext& call = {},
                                  const std::shared_ptr<CancelToken>& cancel = nullptr,
                                  absl::Time deadline = absl::InfiniteFuture()) {
    auto promise = std::make_shared<std::promise<absl::Status>>();
    auto kept = std::make_shared<v1::FeaturizeRequest>(request);
    std::future<absl::Status> result = promise->get_future();
    handler_->Featurize(
        *kept, response, deadline, [promise, kept](absl::Status s) { promise->set_value(s); },
        cancel, call);
    return result;
  }

  std::shared_ptr<const Model> feat_, sound_;
  std::unique_ptr<InflightBudget> memory_, audio_;
  std::unique_ptr<WorkerQueue> decoders_;
  std::unique_ptr<FeatureHandler> handler_;
  std::mutex mu_;
  std::vector<std::string> abandoned_;
};

TEST_F(AdmissionHandlerTest, ARequestOverTheMemoryBudgetAloneIsRefusedBeforeAnyWork) {
  Build(10 * FeatRowBytes() - 1, 0, 0);
  v1::FeaturizeResponse response;
  const absl::Status status = Start(Rows("feat", 10, 16), &response).get();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith(absl::StrCat("inputs.values: the request costs ", 10 * FeatRowBytes(),
                                      " bytes, over max_inflight_bytes=")));
  EXPECT_THAT(std::string(status.message()), HasSubstr("send fewer rows per request"));
  EXPECT_EQ(response.features_size(), 0);  // nothing allocated
  v1::FeaturizeResponse fits;
  EXPECT_TRUE(Start(Rows("feat", 9, 16), &fits).get().ok());
  EXPECT_EQ(memory_->in_flight(), 0);
}

TEST_F(AdmissionHandlerTest, TheBudgetIsHeldUntilTheCallEndsThenFreesForTheNext) {
  Build(10 * FeatRowBytes(), 0, 0);
  batcher_->Pause();
  v1::FeaturizeResponse first_response, second_response, third_response;
  std::future<absl::Status> first = Start(Rows("feat", 10, 16), &first_response);
  EXPECT_EQ(memory_->in_flight(), 10 * FeatRowBytes());
  const absl::Status second = Start(Rows("feat", 1, 16), &second_response).get();
  EXPECT_EQ(second.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(second.message()), HasSubstr("retry later"));
  batcher_->Resume();
  EXPECT_TRUE(first.get().ok());
  EXPECT_EQ(memory_->in_flight(), 0);
  EXPECT_TRUE(Start(Rows("feat", 10, 16), &third_response).get().ok());
}

TEST_F(AdmissionHandlerTest, OneConnectionCannotTakeTheWholeBudget) {
  Build(100 * FeatRowBytes(), 10 * FeatRowBytes(), 0);
  batcher_->Pause();
  CallContext a;
  a.peer = "ipv4:127.0.0.1:1000";
  CallContext b;
  b.peer = "ipv4:127.0.0.1:2000";
  v1::FeaturizeResponse r1, r2, r3;
  std::future<absl::Status> held = Start(Rows("feat", 10, 16), &r1, a);
  const absl::Status more = Start(Rows("feat", 1, 16), &r2, a).get();
  EXPECT_EQ(more.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(more.message()), StartsWith("connection: "));
  std::future<absl::Status> other = Start(Rows("feat", 10, 16), &r3, b);
  batcher_->Resume();
  EXPECT_TRUE(held.get().ok());
  EXPECT_TRUE(other.get().ok());
}

TEST_F(AdmissionHandlerTest, TheAnswerEncodingIsPricedAndItsLeaseHandedToTheFrontEnd) {
  Build(int64_t{1} << 30, 0, 0);
  CallContext json;
  json.answer_bytes_per_value = 20;
  json.answer_leases = std::make_shared<LeaseBag>();
  v1::FeaturizeResponse response;
  ASSERT_TRUE(Start(Rows("feat", 5, 16), &response, json).get().ok());
  // Held by the front end until its answer is encoded.
  EXPECT_EQ(memory_->in_flight(), 5 * (4 * 16 + feat_->feature_dim() * (4 + 20)));
  json.answer_leases->Clear();
  EXPECT_EQ(memory_->in_flight(), 0);
}

TEST_F(AdmissionHandlerTest, ClipsAreDecodedOnTheWorkersNeverOnTheCallersThread) {
  Build(0, 0, 0);
  decoders_->Resume();
  v1::FeaturizeRequest request = ClipsRequest(2, 4000);
  v1::FeaturizeResponse response;
  std::promise<std::thread::id> where;
  handler_->Featurize(request, &response, absl::InfiniteFuture(), [&where](absl::Status s) {
    EXPECT_TRUE(s.ok()) << s;
    where.set_value(std::this_thread::get_id());
  });
  EXPECT_NE(where.get_future().get(), std::this_thread::get_id());
  EXPECT_EQ(response.num_rows(), 2);
}

TEST_F(AdmissionHandlerTest, ClipSecondsArePricedBeforeDecodingAndOneSampleCostsAWholeClip) {
  // The test front end's clip_seconds is its span: a one-sample clip costs it.
  const double span = sound_->audio_front_end()->spec().clip_seconds();
  ASSERT_GT(span, 0);
  absl::StatusOr<double> cost = PlanClipBatch(InferRequestOfV1({}, ClipsRequest(3, 1).inputs()),
                                              *sound_->audio_front_end(), 100, 30);
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_DOUBLE_EQ(*cost, 3 * (1.0 / kRate + span));

  const int clips = static_cast<int>(std::ceil(10 / span)) + 1;  // over 10 s
  Build(0, 0, 10);
  v1::FeaturizeResponse response;
  const absl::Status status = Start(ClipsRequest(clips, 1), &response).get();
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), StartsWith("inputs.clips: the request costs "));
  EXPECT_THAT(std::string(status.message()), HasSubstr("over max_decode_audio_seconds=10"));
  EXPECT_EQ(decoders_->queued(), 0);  // refused before any decoding was queued
}

TEST_F(AdmissionHandlerTest, QueuedClipsHoldTheAudioBudgetAndRefuseMoreUntilDecoded) {
  Build(0, 0, 3);
  v1::FeaturizeResponse r1, r2;
  std::future<absl::Status> first = Start(ClipsRequest(1, 2 * kRate), &r1);  // 2 s + span
  EXPECT_GT(audio_->in_flight(), 0);
  const absl::Status second = Start(ClipsRequest(1, 2 * kRate), &r2).get();
  EXPECT_EQ(second.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(second.message()), HasSubstr("max_decode_audio_seconds=3"));
  decoders_->Resume();
  EXPECT_TRUE(first.get().ok());
  EXPECT_EQ(audio_->in_flight(), 0);
}

TEST_F(AdmissionHandlerTest, ACallCancelledWhileItsClipsWaitIsAnsweredWithoutDecoding) {
  Build(int64_t{1} << 30, 0, 3600);
  auto cancel = std::make_shared<CancelToken>();
  v1::FeaturizeResponse response;
  std::future<absl::Status> call = Start(ClipsRequest(4, kRate), &response, {}, cancel);
  cancel->Cancel(absl::CancelledError("the client went away"));
  decoders_->Resume();
  const absl::Status status = call.get();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(response.features_size(), 0);  // never decoded nor computed
  EXPECT_EQ(memory_->in_flight(), 0);
  EXPECT_EQ(audio_->in_flight(), 0);
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_EQ(abandoned_, std::vector<std::string>{"decode:CANCELLED"});
}

TEST_F(AdmissionHandlerTest, ACallPastItsDeadlineIsNotDecoded) {
  Build(0, 0, 0);
  decoders_->Resume();
  v1::FeaturizeResponse response;
  const absl::Status status =
      Start(ClipsRequest(2, kRate), &response, {}, nullptr, absl::Now() - absl::Seconds(1)).get();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_EQ(abandoned_, std::vector<std::string>{"decode:DEADLINE_EXCEEDED"});
}

TEST_F(AdmissionHandlerTest, DecodingStopsAtTheNextClipOnceAskedTo) {
  const v1::FeaturizeRequest request = ClipsRequest(5, 400);
  int asked = 0;
  absl::StatusOr<DecodedRows> rows = DecodeClipBatch(
      InferRequestOfV1({}, request.inputs()), *sound_->audio_front_end(), 100, 30,
      [&asked] { return ++asked <= 2 ? absl::OkStatus() : absl::CancelledError("gone"); });
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(asked, 3);  // two clips decoded, the third never started
}

TEST_F(AdmissionHandlerTest, AWavIsHeldToItsOwnRateBeforeItsSamplesAreDecoded) {
  // 3 s at 8 kHz against a 2 s limit: refused from the header, naming 8000 Hz
  // (the check once assumed the highest rate and decoded the file first).
  v1::FeaturizeRequest request;
  request.mutable_model()->set_name("sound");
  request.mutable_inputs()->add_clips()->set_wav(Wav16(Pcm16(3 * kRate, 1), kRate));
  absl::StatusOr<double> cost =
      PlanClipBatch(InferRequestOfV1({}, request.inputs()), *sound_->audio_front_end(), 100, 2);
  ASSERT_EQ(cost.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cost.status().message(),
            "inputs.clips[0].wav: expected at most 16000 samples (max_clip_seconds=2 at 8000 Hz), "
            "received 24000");
}

TEST_F(AdmissionHandlerTest, AProtocolCallForFeaturesAndScoresIsPricedOnceAgainstItsShare) {
  // The call's features and scores read the same rows: priced by its first
  // half, it fits a share that two halves would not.
  auto clf = registry_->Lookup("clf");
  ASSERT_TRUE(clf.ok());
  const int64_t per_row = 4 * 16 + clf->servable->feature_dim() * 8;
  Build(int64_t{1} << 30, 10 * per_row + 1, 0);
  InferenceHandler inference(registry_.get(), handler_.get(), "test", [] { return true; });
  inference::ModelInferRequest request;
  request.set_model_name("clf");
  auto* input = request.add_inputs();
  input->set_name("input");
  input->set_datatype("FP32");
  input->add_shape(10);
  input->add_shape(16);
  for (float v : RandomRows(10, 16, 4)) input->mutable_contents()->add_fp32_contents(v);
  request.add_outputs()->set_name("features");
  request.add_outputs()->set_name("scores");
  CallContext call;
  call.peer = "ipv4:127.0.0.1:3000";
  absl::StatusOr<inference::ModelInferResponse> response =
      inference.ModelInfer(request, absl::InfiniteFuture(), nullptr, call);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->outputs_size(), 2);
  EXPECT_EQ(memory_->in_flight(), 0);
}

}  // namespace
}  // namespace invariant::server
