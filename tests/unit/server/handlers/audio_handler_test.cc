// Models of sound through the handlers: clips in InputBatch.clips (WAV,
// float32_le, int16_le) → the model's front end → the usual batched path;
// every bad clip refused naming it; the Open Inference Protocol's sample and
// WAV tensors on the same path; metadata and warm-up.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "server/handlers/audio_clips.h"
#include "server/handlers/inference_handler.h"
#include "server/handlers/model_warmup.h"
#include "server/rest/rest_infer_request.h"
#include "tests/test_models/test_audio_model.h"
#include "tests/unit/server/testing/audio_test_util.h"
#include "tests/unit/server/testing/serving_fixture.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace audio_test;  // NOLINT

constexpr int kRate = 8000;  // the test audio model's

class AudioHandlerTest : public ServingFixture {
 protected:
  AudioHandlerTest() : ServingFixture("audio_handler_models") {}
  void SetUp() override {
    ServingFixture::SetUp();
    model_ = AddSoundModel();
    ASSERT_NE(model_, nullptr);
    ASSERT_NE(model_->audio_front_end(), nullptr);
    inference_ = std::make_unique<InferenceHandler>(registry_.get(), features_.get(), "test",
                                                    [] { return true; });
  }

  absl::Status Featurize(const v1::FeaturizeRequest& request, v1::FeaturizeResponse* response,
                         const FeatureHandler* handler = nullptr) {
    std::promise<absl::Status> result;
    (handler != nullptr ? handler : features_.get())
        ->Featurize(request, response, absl::InfiniteFuture(),
                    [&result](absl::Status s) { result.set_value(s); });
    return result.get_future().get();
  }
  absl::Status Predict(const v1::PredictRequest& request, v1::PredictResponse* response) {
    std::promise<absl::Status> result;
    features_->Predict(request, response, absl::InfiniteFuture(),
                       [&result](absl::Status s) { result.set_value(s); });
    return result.get_future().get();
  }

  static v1::FeaturizeRequest Request(const std::vector<v1::AudioClip>& clips,
                                      const std::string& model = "sound") {
    v1::FeaturizeRequest request;
    request.mutable_model()->set_name(model);
    for (const auto& clip : clips) *request.mutable_inputs()->add_clips() = clip;
    return request;
  }
  static v1::AudioClip WavClip(const std::string& wav) {
    v1::AudioClip clip;
    clip.set_wav(wav);
    return clip;
  }
  static v1::AudioClip FloatClip(const std::vector<float>& x, int rate = 0) {
    v1::AudioClip clip;
    clip.set_float32_le(Bytes(x));
    clip.set_sample_rate(rate);
    return clip;
  }
  static v1::AudioClip Int16Clip(const std::vector<int16_t>& x, int rate = 0) {
    v1::AudioClip clip;
    clip.set_int16_le(Bytes(x));
    clip.set_sample_rate(rate);
    return clip;
  }

  // The features of one clip computed in process: front end, then Featurize.
  std::vector<float> InProcess(const std::vector<float>& samples, int rate) const {
    const audio::AudioFrontEnd& front_end = *model_->audio_front_end();
    std::vector<float> row(static_cast<size_t>(front_end.output_dim()));
    EXPECT_TRUE(front_end.Apply(samples, rate, row.data(), "clip").ok());
    std::vector<float> features(static_cast<size_t>(model_->feature_dim()));
    model_->Featurize(1, row.data(), features.data());
    return features;
  }

  // The status of featurizing one clip.
  absl::Status OneClip(const v1::AudioClip& clip) {
    v1::FeaturizeResponse response;
    return Featurize(Request({clip}), &response);
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<InferenceHandler> inference_;
};

std::vector<float> Features(const v1::FeaturizeResponse& r) {
  return {r.features().begin(), r.features().end()};
}

bool BitEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST_F(AudioHandlerTest, WavFloatAndInt16ClipsOfTheSameSamplesGiveTheSameBits) {
  const std::vector<int16_t> pcm = Pcm16(3000, 1);
  v1::FeaturizeResponse wav, f32, i16;
  ASSERT_TRUE(Featurize(Request({WavClip(Wav16(pcm, kRate))}), &wav).ok());
  ASSERT_TRUE(Featurize(Request({FloatClip(ToFloat(pcm))}), &f32).ok());
  ASSERT_TRUE(Featurize(Request({Int16Clip(pcm, kRate)}), &i16).ok());
  ASSERT_EQ(wav.features_size(), model_->feature_dim());
  EXPECT_TRUE(BitEqual(Features(wav), Features(f32)));
  EXPECT_TRUE(BitEqual(Features(i16), Features(f32)));
  // A stereo WAV of the same samples in both channels averages to them.
  std::vector<int16_t> stereo;
  for (int16_t s : pcm) stereo.insert(stereo.end(), {s, s});
  v1::FeaturizeResponse two;
  ASSERT_TRUE(Featurize(Request({WavClip(Wav(1, 2, kRate, 16, Bytes(stereo)))}), &two).ok());
  EXPECT_TRUE(BitEqual(Features(two), Features(f32)));
}

TEST_F(AudioHandlerTest, ServedFeaturesEqualTheFrontEndThenFeaturizeInProcess) {
  // Three clips of different lengths and rates in one request (split by the
  // batcher at 4 rows is not reached; the rows are independent anyway).
  const std::vector<float> a = ToFloat(Pcm16(2000, 2));
  const std::vector<float> b = ToFloat(Pcm16(5000, 3));
  const std::vector<float> c = ToFloat(Pcm16(7000, 4));  // sent at 16 kHz: resampled
  v1::FeaturizeResponse response;
  ASSERT_TRUE(
      Featurize(Request({FloatClip(a), FloatClip(b, kRate), FloatClip(c, 16000)}), &response).ok());
  ASSERT_EQ(response.num_rows(), 3);
  const int64_t f = model_->feature_dim();
  const std::vector<float> got = Features(response);
  for (const auto& [i, samples, rate] : std::vector<std::tuple<int, std::vector<float>, int>>{
           {0, a, kRate}, {1, b, kRate}, {2, c, 16000}}) {
    const std::vector<float> expected = InProcess(samples, rate);
    EXPECT_TRUE(BitEqual({got.begin() + i * f, got.begin() + (i + 1) * f}, expected)) << i;
  }
}

TEST_F(AudioHandlerTest, PredictTakesClipsAndNamesTheClass) {
  v1::PredictRequest request;
  request.mutable_model()->set_name("sound");
  *request.mutable_inputs()->add_clips() = FloatClip(ToFloat(Pcm16(2400, 5)));
  v1::PredictResponse response;
  ASSERT_TRUE(Predict(request, &response).ok());
  EXPECT_EQ(response.num_rows(), 1);
  ASSERT_EQ(response.predicted_classes_size(), 1);
  EXPECT_THAT(response.predicted_classes(0), StartsWith("word_"));
}

TEST_F(AudioHandlerTest, RowsForASoundModelAndClipsForARowModelAreRefused) {
  v1::FeaturizeRequest rows;
  rows.mutable_model()->set_name("sound");
  rows.mutable_inputs()->mutable_values()->Resize(static_cast<int>(model_->input_dim()), 0.5f);
  v1::FeaturizeResponse response;
  absl::Status s = Featurize(rows, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), StartsWith("inputs.values: expected clips"));
  rows.mutable_inputs()->clear_values();
  rows.mutable_inputs()->set_raw_values(std::string(4 * model_->input_dim(), '\0'));
  s = Featurize(rows, &response);
  EXPECT_THAT(std::string(s.message()), StartsWith("inputs.raw_values: expected clips"));

  s = Featurize(Request({FloatClip({0.1f, 0.2f})}, "feat"), &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), StartsWith("inputs.clips: expected rows of input_dim=16"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("not a model of sound"));

  v1::FeaturizeRequest both = Request({FloatClip({0.1f})});
  both.mutable_inputs()->add_values(1.0f);
  s = Featurize(both, &response);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("inputs: expected exactly one of values, raw_values, clips or images"));
}

TEST_F(AudioHandlerTest, EveryBadClipIsRefusedNamingItsIndexAndTheProblem) {
  const std::vector<float> good = ToFloat(Pcm16(1000, 6));
  const std::string pcm_bytes = Bytes(Pcm16(100, 7));
  struct Case {
    std::string name;
    v1::AudioClip clip;
    std::string prefix;  // of the message; the clip is sent second, at index 1
    std::string detail;  // a substring, or ""
  };
  v1::AudioClip none;
  v1::AudioClip odd_f32;
  odd_f32.set_float32_le(std::string(6, '\0'));
  v1::AudioClip odd_i16;
  odd_i16.set_int16_le(std::string(3, '\0'));
  v1::AudioClip empty_f32;
  empty_f32.set_float32_le("");
  std::vector<float> nan = good;
  nan[5] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> inf = good;
  inf[7] = std::numeric_limits<float>::infinity();
  std::vector<float> too_long(2 * kRate + 1, 0.1f);  // max_clip_seconds 2 at 8 kHz: 16000
  std::vector<float> longest(2 * kRate, 0.1f);
  const std::vector<Case> cases = {
      {"no data", none, "inputs.clips[1]: no samples", ""},
      {"float32 bytes", odd_f32, "inputs.clips[1].float32_le: expected a multiple of 4 bytes", ""},
      {"int16 bytes", odd_i16, "inputs.clips[1].int16_le: expected a multiple of 2 bytes", ""},
      {"zero samples", empty_f32, "inputs.clips[1].float32_le: expected at least one sample",
       "zero samples"},
      {"NaN", FloatClip(nan), "inputs.clips[1].float32_le[5]: expected a finite sample", "nan"},
      {"Inf", FloatClip(inf), "inputs.clips[1].float32_le[7]: expected a finite sample", "inf"},
      {"rate too low", FloatClip(good, 999), "inputs.clips[1].sample_rate: expected 0", "999"},
      {"rate too high", FloatClip(good, 400000), "inputs.clips[1].sample_rate: expected 0",
       "400000"},
      {"negative rate", FloatClip(good, -8000), "inputs.clips[1].sample_rate", "-8000"},
      {"over the limit", FloatClip(too_long),
       "inputs.clips[1].float32_le: expected at most 16000 samples", "16001"},
      {"over the limit at 16 kHz", Int16Clip(std::vector<int16_t>(32001, 1), 16000),
       "inputs.clips[1].int16_le: expected at most 32000 samples", ""},
      {"over the limit as WAV", WavClip(Wav16(std::vector<int16_t>(16001, 3), kRate)),
       "inputs.clips[1].wav", ""},
      {"not a WAV", WavClip("this is not a WAV file, just text"), "inputs.clips[1].wav", ""},
      {"empty WAV", WavClip(""), "inputs.clips[1].wav: expected a whole WAV file", "zero samples"},
      {"truncated header", WavClip(Wav16(Pcm16(100, 8), kRate).substr(0, 30)),
       "inputs.clips[1].wav", ""},
      {"ADPCM", WavClip(Wav(2, 1, kRate, 4, std::string(512, '\x11'))), "inputs.clips[1].wav", ""},
      {"no samples in the WAV", WavClip(Wav(1, 1, kRate, 16, "")), "inputs.clips[1].wav", ""},
      {"WAV rate out of range", WavClip(Wav(1, 1, 500, 16, pcm_bytes)), "inputs.clips[1].wav", ""},
      {"NaN in a float WAV",
       WavClip(Wav(3, 1, kRate, 32, Bytes(std::vector<float>{0.1f, NAN, 0.2f}))),
       "inputs.clips[1].wav", ""},
  };
  for (const Case& c : cases) {
    v1::FeaturizeResponse response;
    const absl::Status s = Featurize(Request({FloatClip(good), c.clip}), &response);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name << ": " << s;
    EXPECT_THAT(std::string(s.message()), StartsWith(c.prefix)) << c.name;
    if (!c.detail.empty()) EXPECT_THAT(std::string(s.message()), HasSubstr(c.detail)) << c.name;
  }
  EXPECT_TRUE(OneClip(FloatClip(longest)).ok());  // exactly the limit is fine
  EXPECT_TRUE(OneClip(WavClip(Wav16(std::vector<int16_t>(16000, 3), kRate))).ok());
}

TEST_F(AudioHandlerTest, TheServerLimitOnClipLengthIsTheSmallerOneAndIsReported) {
  FeatureHandler limited(registry_.get(), batcher_.get(), 100, std::numeric_limits<int32_t>::max(),
                         InputLimits{/*max_audio_clip_seconds=*/1.0});
  v1::FeaturizeResponse response;
  const absl::Status s =
      Featurize(Request({FloatClip(std::vector<float>(kRate + 1, 0.2f))}), &response, &limited);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("inputs.clips[0].float32_le: expected at most 8000 samples"));
  EXPECT_TRUE(
      Featurize(Request({FloatClip(std::vector<float>(kRate, 0.2f))}), &response, &limited).ok());

  v1::GetModelMetadataRequest request;
  request.mutable_model()->set_name("sound");
  v1::GetModelMetadataResponse metadata;
  ASSERT_TRUE(limited.GetModelMetadata(request, &metadata).ok());
  EXPECT_EQ(metadata.audio().max_clip_seconds(), 1.0);
  ASSERT_TRUE(features_->GetModelMetadata(request, &metadata).ok());
  EXPECT_EQ(metadata.audio().max_clip_seconds(), 2.0);  // the model's (server default 30)
}

TEST(AudioClipLimitTest, AModelWithoutItsOwnLimitHasTheFrontEndsDefault) {
  v1::AudioFrontEnd spec = testing_models::TestAudioFrontEnd();
  spec.set_max_clip_seconds(0);  // the front end's default (60 s)
  auto front_end = audio::AudioFrontEnd::Create(spec);
  ASSERT_TRUE(front_end.ok()) << front_end.status();
  EXPECT_EQ(EffectiveMaxClipSeconds(**front_end, 0), audio::AudioFrontEnd::kDefaultMaxClipSeconds);
  EXPECT_EQ(EffectiveMaxClipSeconds(**front_end, kDefaultMaxAudioClipSeconds), 30);
  EXPECT_EQ(EffectiveMaxClipSeconds(**front_end, 90), audio::AudioFrontEnd::kDefaultMaxClipSeconds);
  spec.set_max_clip_seconds(2);
  front_end = audio::AudioFrontEnd::Create(spec);
  ASSERT_TRUE(front_end.ok());
  EXPECT_EQ(EffectiveMaxClipSeconds(**front_end, 30), 2);
  EXPECT_EQ(EffectiveMaxClipSeconds(**front_end, 1.5), 1.5);
  EXPECT_EQ(MaxClipSamples(2, 8000), 16000);
}

TEST_F(AudioHandlerTest, TooManyClipsAndRowsThatWouldNotFitAreRefusedBeforeDecoding) {
  std::vector<v1::AudioClip> clips(101, FloatClip({0.1f}));
  v1::FeaturizeResponse response;
  absl::Status s = Featurize(Request(clips), &response);
  EXPECT_THAT(std::string(s.message()), StartsWith("inputs.clips: expected at most 100 clips"));
  // Response budget: 16 features × 4 bytes each; the rows 224 floats each.
  FeatureHandler small(registry_.get(), batcher_.get(), 100, 1024 + 4 * 224 * 2);
  s = Featurize(Request(std::vector<v1::AudioClip>(10, v1::AudioClip())), &response, &small);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), StartsWith("inputs.clips: expected at most"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("after the audio front end"));
  v1::FeaturizeRequest mismatch = Request({FloatClip({0.1f}), FloatClip({0.2f})});
  mismatch.mutable_inputs()->set_num_rows(3);
  s = Featurize(mismatch, &response);
  EXPECT_THAT(std::string(s.message()), StartsWith("inputs.num_rows: expected 2"));
}

TEST_F(AudioHandlerTest, MetadataDescribesTheFrontEnd) {
  v1::GetModelMetadataRequest request;
  request.mutable_model()->set_name("sound");
  v1::GetModelMetadataResponse metadata;
  ASSERT_TRUE(features_->GetModelMetadata(request, &metadata).ok());
  ASSERT_TRUE(metadata.has_audio());
  const v1::AudioFrontEnd& spec = model_->audio_front_end()->spec();
  EXPECT_EQ(metadata.audio().sample_rate(), kRate);
  EXPECT_EQ(metadata.audio().clip_seconds(), 0.25);
  EXPECT_EQ(metadata.audio().clip_policy(), "centre");
  EXPECT_EQ(metadata.audio().normalisation(), "peak");
  EXPECT_EQ(metadata.audio().frame_length(), 256);
  EXPECT_EQ(metadata.audio().hop_length(), 128);
  EXPECT_EQ(metadata.audio().fft_length(), spec.fft_length());
  EXPECT_EQ(metadata.audio().frequency_bins(), 16);
  EXPECT_EQ(metadata.audio().frames(), spec.frames());
  EXPECT_EQ(metadata.audio().trim_db(), spec.trim_db());
  EXPECT_EQ(metadata.input_dim(), 16 * spec.frames());
  EXPECT_THAT(metadata.input_shape(), ::testing::ElementsAre(16, spec.frames(), 1));

  v1::GetModelMetadataResponse rows;
  request.mutable_model()->set_name("feat");
  ASSERT_TRUE(features_->GetModelMetadata(request, &rows).ok());
  EXPECT_FALSE(rows.has_audio());

  v1::AudioFrontEnd other = spec;
  other.set_clip_policy(v1::AudioFrontEnd::CLIP_POLICY_START);
  other.set_normalisation(v1::AudioFrontEnd::NORMALISATION_RMS);
  EXPECT_EQ(AudioInfo(other, 3).clip_policy(), "start");
  EXPECT_EQ(AudioInfo(other, 3).normalisation(), "rms");
  other.set_normalisation(v1::AudioFrontEnd::NORMALISATION_NONE);
  EXPECT_EQ(AudioInfo(other, 3).normalisation(), "none");
  EXPECT_EQ(AudioInfo(other, 3).max_clip_seconds(), 3);
  EXPECT_EQ(AudioInfo(other, 3).filterbank(), "stft");
  EXPECT_FALSE(AudioInfo(other, 3).align_frequency());
  EXPECT_EQ(AudioInfo(other, 3).align_statistic(), "");
  EXPECT_FALSE(AudioInfo(other, 3).align_time());
  other.set_filterbank(v1::AudioFrontEnd::FILTERBANK_CONSTANT_Q);
  other.set_bandwidth_octaves(0.25);
  other.set_align_frequency(true);
  other.set_align_bin(7.5);
  other.set_align_statistic(v1::AudioFrontEnd::ALIGN_STATISTIC_STDDEV);
  other.set_align_time(true);
  const v1::AudioFrontEndInfo aligned = AudioInfo(other, 3);
  EXPECT_EQ(aligned.filterbank(), "constant_q");
  EXPECT_EQ(aligned.bandwidth_octaves(), 0.25);
  EXPECT_TRUE(aligned.align_frequency());
  EXPECT_EQ(aligned.align_bin(), 7.5);
  EXPECT_EQ(aligned.align_statistic(), "stddev");
  EXPECT_TRUE(aligned.align_time());
}

TEST_F(AudioHandlerTest, WarmUpRunsAnAudioModelThroughItsFrontEnd) {
  EXPECT_TRUE(WarmUp("sound/1", *model_, 4).ok());
  EXPECT_TRUE(WarmUp("sound/1", *model_, 1).ok());
}

// ---- Open Inference Protocol ----

inference::ModelInferRequest SamplesRequest(const std::string& datatype, int64_t n,
                                            int64_t length) {
  inference::ModelInferRequest request;
  request.set_model_name("sound");
  auto* input = request.add_inputs();
  input->set_name("input");
  input->set_datatype(datatype);
  input->add_shape(n);
  input->add_shape(length);
  return request;
}

TEST_F(AudioHandlerTest, InferPaddedSamplesWithLengthsEqualsTheClipsSentAlone) {
  const std::vector<int64_t> lengths = {1500, 4000, 2600};
  const int64_t length = 4000;
  std::vector<std::vector<int16_t>> clips;
  for (size_t i = 0; i < lengths.size(); ++i) clips.push_back(Pcm16(lengths[i], 10 + i));
  // FP32, typed contents, padded with junk after each clip's length.
  inference::ModelInferRequest fp32 = SamplesRequest("FP32", 3, length);
  auto* samples = fp32.mutable_inputs(0)->mutable_contents()->mutable_fp32_contents();
  for (const auto& clip : clips) {
    const std::vector<float> x = ToFloat(clip);
    samples->Add(x.begin(), x.end());
    for (int64_t j = static_cast<int64_t>(clip.size()); j < length; ++j) samples->Add(0.75f);
  }
  auto* lengths_input = fp32.add_inputs();
  lengths_input->set_name("input_lengths");
  lengths_input->set_datatype("INT64");
  lengths_input->add_shape(3);
  for (int64_t l : lengths) lengths_input->mutable_contents()->add_int64_contents(l);
  absl::StatusOr<inference::ModelInferResponse> response =
      inference_->ModelInfer(fp32, absl::InfiniteFuture());
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->outputs(0).name(), "features");
  const auto& got = response->outputs(0).contents().fp32_contents();
  const int64_t f = model_->feature_dim();
  ASSERT_EQ(got.size(), 3 * f);
  for (size_t i = 0; i < clips.size(); ++i) {
    v1::FeaturizeResponse alone;
    ASSERT_TRUE(Featurize(Request({FloatClip(ToFloat(clips[i]))}), &alone).ok());
    EXPECT_TRUE(BitEqual({got.begin() + i * f, got.begin() + (i + 1) * f}, Features(alone))) << i;
  }

  // INT16 raw, INT32 lengths raw, the rate as a parameter: the same bits.
  inference::ModelInferRequest int16 = SamplesRequest("INT16", 3, length);
  std::string raw;
  for (const auto& clip : clips) {
    std::vector<int16_t> padded = clip;
    padded.resize(static_cast<size_t>(length), 1234);
    raw += Bytes(padded);
  }
  int16.add_raw_input_contents(raw);
  auto* lengths32 = int16.add_inputs();
  lengths32->set_name("input_lengths");
  lengths32->set_datatype("INT32");
  lengths32->add_shape(3);
  std::vector<int32_t> l32(lengths.begin(), lengths.end());
  int16.add_raw_input_contents(Bytes(l32));
  (*int16.mutable_parameters())["sample_rate"].set_int64_param(kRate);
  absl::StatusOr<inference::ModelInferResponse> raw_response =
      inference_->ModelInfer(int16, absl::InfiniteFuture());
  ASSERT_TRUE(raw_response.ok()) << raw_response.status();
  ASSERT_EQ(raw_response->raw_output_contents_size(), raw_response->outputs_size());
  EXPECT_EQ(raw_response->raw_output_contents(0),
            Bytes(got.data(), static_cast<size_t>(got.size()) * sizeof(float)));
}

TEST_F(AudioHandlerTest, InferWavBytesTypedOrRawEqualsV1) {
  const std::vector<std::string> wavs = {Wav16(Pcm16(2000, 20), kRate),
                                         Wav16(Pcm16(6000, 21), 16000)};
  v1::FeaturizeResponse v1_response;
  ASSERT_TRUE(Featurize(Request({WavClip(wavs[0]), WavClip(wavs[1])}), &v1_response).ok());

  inference::ModelInferRequest typed;
  typed.set_model_name("sound");
  auto* input = typed.add_inputs();
  input->set_name("input");
  input->set_datatype("BYTES");
  input->add_shape(2);
  for (const auto& w : wavs) input->mutable_contents()->add_bytes_contents(w);
  typed.add_outputs()->set_name("features");
  absl::StatusOr<inference::ModelInferResponse> a =
      inference_->ModelInfer(typed, absl::InfiniteFuture());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(BitEqual({a->outputs(0).contents().fp32_contents().begin(),
                        a->outputs(0).contents().fp32_contents().end()},
                       Features(v1_response)));

  inference::ModelInferRequest raw = typed;
  raw.mutable_inputs(0)->clear_contents();
  std::string bytes;
  for (const auto& w : wavs) {
    Put32(bytes, static_cast<uint32_t>(w.size()));
    bytes += w;
  }
  raw.add_raw_input_contents(bytes);
  absl::StatusOr<inference::ModelInferResponse> b =
      inference_->ModelInfer(raw, absl::InfiniteFuture());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->raw_output_contents(0), Bytes(Features(v1_response)));
}

TEST_F(AudioHandlerTest, InferErrorsNameTheProtocolFields) {
  const auto message = [this](const inference::ModelInferRequest& r) {
    absl::StatusOr<inference::ModelInferResponse> response =
        inference_->ModelInfer(r, absl::InfiniteFuture());
    EXPECT_FALSE(response.ok());
    EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(response.status().message());
  };
  // Wrong datatype and shape.
  inference::ModelInferRequest r = SamplesRequest("FP64", 1, 10);
  EXPECT_THAT(message(r), StartsWith("inputs[0].datatype: expected FP32 or INT16"));
  r = SamplesRequest("FP32", 2, 10);
  r.mutable_inputs(0)->clear_shape();
  r.mutable_inputs(0)->add_shape(20);
  EXPECT_THAT(message(r), StartsWith("inputs[0].shape: expected [n, L]"));
  // Sample count.
  r = SamplesRequest("FP32", 2, 10);
  r.mutable_inputs(0)->mutable_contents()->mutable_fp32_contents()->Resize(19, 0.1f);
  EXPECT_THAT(message(r), StartsWith("inputs[0].contents.fp32_contents: expected 20 samples"));
  r.add_raw_input_contents(std::string(79, '\0'));
  r.mutable_inputs(0)->clear_contents();
  EXPECT_THAT(message(r), StartsWith("raw_input_contents[0]: expected 80 bytes"));
  // Lengths out of range, wrong shape, wrong type.
  r = SamplesRequest("FP32", 2, 10);
  r.mutable_inputs(0)->mutable_contents()->mutable_fp32_contents()->Resize(20, 0.1f);
  auto* lengths = r.add_inputs();
  lengths->set_name("input_lengths");
  lengths->set_datatype("INT64");
  lengths->add_shape(2);
  lengths->mutable_contents()->add_int64_contents(10);
  lengths->mutable_contents()->add_int64_contents(0);
  EXPECT_THAT(message(r), StartsWith("inputs[1].contents.int64_contents[1]: expected a length in "
                                     "[1, 10] samples"));
  lengths->set_datatype("FP32");
  EXPECT_THAT(message(r), StartsWith("inputs[1].datatype: expected INT32 or INT64"));
  lengths->set_datatype("INT64");
  lengths->set_shape(0, 3);
  EXPECT_THAT(message(r), StartsWith("inputs[1].shape: expected [2]"));
  lengths->set_name("lengths");
  EXPECT_THAT(message(r), StartsWith("inputs[1].name: expected 'input' or 'input_lengths'"));
  // INT16 out of range.
  r = SamplesRequest("INT16", 1, 3);
  for (int v : {1, 40000, 2}) r.mutable_inputs(0)->mutable_contents()->add_int_contents(v);
  EXPECT_THAT(message(r), StartsWith("inputs[0].contents.int_contents[1]: expected an INT16"));
  // A bad sample rate parameter, and one that the clip check refuses.
  r = SamplesRequest("FP32", 1, 3);
  r.mutable_inputs(0)->mutable_contents()->mutable_fp32_contents()->Resize(3, 0.1f);
  (*r.mutable_parameters())["sample_rate"].set_string_param("fast");
  EXPECT_THAT(message(r), StartsWith("parameters.sample_rate: expected an integer rate"));
  (*r.mutable_parameters())["sample_rate"].set_int64_param(500);
  EXPECT_THAT(message(r), StartsWith("parameters.sample_rate"));
  // A NaN sample is named by its row and column.
  r.mutable_parameters()->clear();
  r.mutable_inputs(0)->mutable_contents()->set_fp32_contents(2, NAN);
  EXPECT_THAT(message(r), StartsWith("inputs[0][0][2]: expected a finite sample"));
  // A bad WAV element is named by its index.
  inference::ModelInferRequest wav;
  wav.set_model_name("sound");
  auto* input = wav.add_inputs();
  input->set_name("input");
  input->set_datatype("BYTES");
  input->add_shape(2);
  input->mutable_contents()->add_bytes_contents(Wav16(Pcm16(900, 30), kRate));
  input->mutable_contents()->add_bytes_contents("garbage, not RIFF");
  EXPECT_THAT(message(wav), StartsWith("inputs[0][1]"));
  input->mutable_contents()->mutable_bytes_contents()->RemoveLast();
  EXPECT_THAT(message(wav), StartsWith("inputs[0].contents.bytes_contents: expected 2 elements"));
  wav.add_raw_input_contents(
      std::string("\x05\x00\x00\x00"
                  "abc",
                  7));
  input->clear_contents();
  EXPECT_THAT(message(wav), StartsWith("raw_input_contents[0]: expected"));
  // Rows for an audio model: refused by the datatype / shape rules above;
  // samples for a row model: the usual single-input rule.
  inference::ModelInferRequest rows = SamplesRequest("INT16", 1, 16);
  rows.set_model_name("feat");
  rows.mutable_inputs(0)->mutable_contents()->mutable_int_contents()->Resize(16, 0);
  EXPECT_THAT(message(rows), StartsWith("inputs[0].datatype: expected FP32"));
}

TEST_F(AudioHandlerTest, InferMetadataOfASoundModelDescribesItsInputs) {
  inference::ModelMetadataRequest request;
  request.set_name("sound");
  inference::ModelMetadataResponse response;
  ASSERT_TRUE(inference_->ModelMetadata(request, &response).ok());
  ASSERT_EQ(response.inputs_size(), 2);
  EXPECT_EQ(response.inputs(0).name(), "input");
  EXPECT_EQ(response.inputs(0).datatype(), "FP32");
  EXPECT_THAT(response.inputs(0).shape(), ::testing::ElementsAre(-1, -1));
  EXPECT_EQ(response.inputs(1).name(), "input_lengths");
  EXPECT_EQ(response.inputs(1).datatype(), "INT64");
  EXPECT_THAT(response.inputs(1).shape(), ::testing::ElementsAre(-1));
  EXPECT_EQ(response.properties().at("sample_rate"), "8000");
  EXPECT_EQ(response.properties().at("max_clip_seconds"), "2");
  EXPECT_THAT(response.properties().at("audio_inputs"), HasSubstr("BYTES"));
  EXPECT_THAT(response.properties().at("audio"), HasSubstr("\"clip_policy\":\"centre\""));
}

// ---- REST: the binary extension and JSON integers ----

TEST_F(AudioHandlerTest, RestBinaryInt16WithJsonLengthsAndBinaryWavEqualV1) {
  const std::vector<int16_t> a = Pcm16(1800, 40);
  const std::vector<int16_t> b = Pcm16(2500, 41);
  v1::FeaturizeResponse expected;
  ASSERT_TRUE(Featurize(Request({Int16Clip(a), Int16Clip(b)}), &expected).ok());

  // INT16 [2, 2500] in binary, lengths in JSON (INT32), the rate as a parameter.
  std::vector<int16_t> padded = a;
  padded.resize(2500, -7);
  padded.insert(padded.end(), b.begin(), b.end());
  const std::string json = absl::StrCat(
      R"({"parameters": {"sample_rate": 8000}, "inputs": [)",
      R"({"name": "input", "datatype": "INT16", "shape": [2, 2500], )",
      R"("parameters": {"binary_data_size": )", 2 * padded.size(), "}},",
      R"({"name": "input_lengths", "datatype": "INT32", "shape": [2], "data": [1800, 2500]}],)",
      R"( "outputs": [{"name": "features"}]})");
  const std::string header = absl::StrCat(json.size());
  absl::StatusOr<inference::ModelInferRequest> request =
      InferRequestFromHttp(json + Bytes(padded), &header, "sound", "");
  ASSERT_TRUE(request.ok()) << request.status();
  absl::StatusOr<inference::ModelInferResponse> response =
      inference_->ModelInfer(*request, absl::InfiniteFuture());
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_TRUE(BitEqual({response->outputs(0).contents().fp32_contents().begin(),
                        response->outputs(0).contents().fp32_contents().end()},
                       Features(expected)));

  // The same clips as two WAV files, BYTES [2] in binary.
  const std::string wa = Wav16(a, kRate), wb = Wav16(b, kRate);
  std::string bytes;
  for (const std::string* w : {&wa, &wb}) {
    Put32(bytes, static_cast<uint32_t>(w->size()));
    bytes += *w;
  }
  const std::string wav_json =
      absl::StrCat(R"({"inputs": [{"name": "input", "datatype": "BYTES", "shape": [2], )",
                   R"("parameters": {"binary_data_size": )", bytes.size(), "}}]}");
  const std::string wav_header = absl::StrCat(wav_json.size());
  request = InferRequestFromHttp(wav_json + bytes, &wav_header, "sound", "");
  ASSERT_TRUE(request.ok()) << request.status();
  response = inference_->ModelInfer(*request, absl::InfiniteFuture());
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->outputs(0).name(), "features");
  EXPECT_TRUE(BitEqual({response->outputs(0).contents().fp32_contents().begin(),
                        response->outputs(0).contents().fp32_contents().end()},
                       Features(expected)));
}

TEST_F(AudioHandlerTest, RestJsonSamplesAsIntegersOrFloatsInAnyMemberOrder) {
  const std::vector<int16_t> a = Pcm16(1200, 50);
  v1::FeaturizeResponse expected;
  ASSERT_TRUE(Featurize(Request({Int16Clip(a)}), &expected).ok());
  const std::string data = absl::StrCat("[", absl::StrJoin(a, ", "), "]");
  const std::string shape = absl::StrCat("[1, ", a.size(), "]");
  // The datatype before the data, after it, and the samples as FP32 numbers.
  std::vector<float> f = ToFloat(a);
  std::vector<std::string> floats;
  for (float x : f) floats.push_back(absl::StrFormat("%.9g", x));  // reads back exactly
  for (const std::string& body :
       {absl::StrCat(R"({"inputs": [{"name": "input", "datatype": "INT16", "shape": )", shape,
                     R"(, "data": )", data, "}]}"),
        absl::StrCat(R"({"inputs": [{"data": )", data, R"(, "shape": )", shape,
                     R"(, "name": "input", "datatype": "INT16"}]})"),
        absl::StrCat(R"({"inputs": [{"name": "input", "datatype": "FP32", "shape": )", shape,
                     R"(, "data": [)", absl::StrJoin(floats, ", "), "]}]}")}) {
    absl::StatusOr<inference::ModelInferRequest> request = InferRequestFromJson(body, "sound", "");
    ASSERT_TRUE(request.ok()) << request.status();
    absl::StatusOr<inference::ModelInferResponse> response =
        inference_->ModelInfer(*request, absl::InfiniteFuture());
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_TRUE(BitEqual({response->outputs(0).contents().fp32_contents().begin(),
                          response->outputs(0).contents().fp32_contents().end()},
                         Features(expected)));
  }
  // Integers are integers: a fraction is refused, in either member order.
  absl::StatusOr<inference::ModelInferRequest> bad = InferRequestFromJson(
      R"({"inputs": [{"name": "input", "datatype": "INT16", "shape": [1, 2], "data": [1, 2.5]}]})",
      "sound", "");
  EXPECT_EQ(bad.status().message(), "inputs[0].data[1]: expected a 32-bit integer, received 2.5");
  bad = InferRequestFromJson(
      R"({"inputs": [{"data": [1, 2.5], "name": "input", "datatype": "INT64", "shape": [1, 2]}]})",
      "sound", "");
  EXPECT_THAT(std::string(bad.status().message()),
              StartsWith("inputs[0].data (item 1 in row-major order): expected an integer for "
                         "datatype INT64"));
}

}  // namespace
}  // namespace invariant::server
