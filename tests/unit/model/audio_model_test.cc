// Model's contract for models of sound: the front end is built from the
// manifest's complete AudioFrontEnd and agrees with the encoder's input;
// Save/Load keeps it; a model without manifest.audio has none.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/audio/front_end.h"
#include "core/model/model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_models/test_audio_model.h"
#include "tests/test_models/test_models.h"

namespace invariant {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The test audio model's manifest and tensors, to assemble again after a change.
struct Parts {
  v1::Manifest manifest;
  ModelTensors tensors;
};

Parts AudioParts() {
  auto model = testing_models::MakeTestAudioModel({});
  EXPECT_TRUE(model.ok()) << model.status();
  return {(*model)->manifest(), (*model)->tensors()};
}

TEST(AudioModelTest, AModelOfSoundHoldsItsFrontEndAndOthersHaveNone) {
  auto model = testing_models::MakeTestAudioModel({});
  ASSERT_TRUE(model.ok()) << model.status();
  const audio::AudioFrontEnd* front_end = (*model)->audio_front_end();
  ASSERT_NE(front_end, nullptr);
  EXPECT_EQ(front_end->output_dim(), (*model)->input_dim());
  EXPECT_EQ(front_end->spec().SerializeAsString(),
            (*model)->manifest().audio().SerializeAsString());
  auto rows = testing_models::MakeTestModel({});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ((*rows)->audio_front_end(), nullptr);
}

TEST(AudioModelTest, SaveAndLoadKeepTheFrontEnd) {
  const std::string dir = ::testing::TempDir() + "/audio_model_" + std::to_string(getpid());
  auto path = testing_models::WriteTestAudioModel(dir, {});
  ASSERT_TRUE(path.ok()) << path.status();
  auto loaded = Model::Load(*path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_NE((*loaded)->audio_front_end(), nullptr);
  EXPECT_EQ((*loaded)->audio_front_end()->spec().SerializeAsString(),
            testing_models::TestAudioFrontEnd().SerializeAsString());
  std::filesystem::remove_all(dir);
}

TEST(AudioModelTest, AssembleRefusesAnIncompleteOrMismatchedFrontEndNamingTheField) {
  {
    Parts p = AudioParts();
    p.manifest.mutable_audio()->clear_frames();  // not complete: frames is derived
    auto model = Model::Assemble(p.manifest, p.tensors);
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(model.status().message()),
                StartsWith("audio: expected a complete front end"));
  }
  {
    Parts p = AudioParts();
    p.manifest.mutable_audio()->set_sample_rate(10);  // Complete refuses it
    auto model = Model::Assemble(p.manifest, p.tensors);
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(model.status().message()), HasSubstr("audio.sample_rate"));
  }
  {
    // A front end whose rows have a different length than the encoder takes.
    Parts p = AudioParts();
    v1::AudioFrontEnd spec = p.manifest.audio();
    spec.set_frequency_bins(spec.frequency_bins() - 1);
    spec.clear_frames();
    auto completed = audio::AudioFrontEnd::Complete(spec);
    ASSERT_TRUE(completed.ok()) << completed.status();
    *p.manifest.mutable_audio() = *completed;
    auto model = Model::Assemble(p.manifest, p.tensors);
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(model.status().message()),
                StartsWith("manifest.input_dim: expected audio.frequency_bins · audio.frames"));
  }
  {
    Parts p = AudioParts();
    auto* shape = p.manifest.mutable_encoder()->mutable_input_shape();
    std::swap((*shape)[0], (*shape)[1]);  // [frames, bins, 1]: the product still agrees
    auto model = Model::Assemble(p.manifest, p.tensors);
    EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(model.status().message()),
                StartsWith("manifest.encoder.input_shape: expected [audio.frequency_bins, "
                           "audio.frames, 1]"));
  }
}

}  // namespace
}  // namespace invariant
