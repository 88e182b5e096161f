// The real invariant-server serving models that the real invariant-train
// wrote: served features and scores equal the loaded bundle's, bit for bit,
// and the served Xperm features do not move when the blocks are permuted; a
// model of sound trained on WAV files answers those files, sent as clips,
// with the scores of its front end and head in process; a patch model of
// small colour images is served as it computes in process.
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "core/audio/front_end.h"
#include "core/audio/wav.h"
#include "core/model/model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/integration_env.h"
#include "tests/unit/data/synthetic_clips.h"
#include "tests/unit/train/synthetic_images.h"

namespace invariant::testing_server {
namespace {

class TrainedModelTest : public ServerTestBase {
 protected:
  // Trains train/configs/<config>.textproto as model `name`, version 1.
  void Train(const std::string& config, const std::string& name) {
    const std::string cmd = std::string(INVARIANT_TRAIN_BINARY) +
                            " --config=" + INVARIANT_SOURCE_DIR + "/train/configs/" + config +
                            ".textproto --models=" + models() + " --name=" + name +
                            " >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;
  }
  std::shared_ptr<const Model> Load(const std::string& name) {
    auto m = Model::Load(models() + "/" + name + "/1/" + kBundleFileName);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : nullptr;
  }
};

// Xperm rows: one-hot symbols of 5 blocks of 8.
std::vector<float> XpermRow(const std::vector<int>& symbols) {
  std::vector<float> x(40, 0.f);
  for (size_t p = 0; p < symbols.size(); ++p) x[p * 8 + symbols[p]] = 1.f;
  return x;
}

TEST_F(TrainedModelTest, ServedFeaturesAndScoresEqualTheBundleBitForBit) {
  Train("default", "default");
  Train("torus_specavg", "torus");
  StartServer({"--port=0", "--metrics_port=0"});
  for (const std::string name : {"default", "torus"}) {
    std::shared_ptr<const Model> model = Load(name);
    ASSERT_NE(model, nullptr);
    const int64_t n = 37, d = model->input_dim();
    std::vector<float> x = RandomRows(n, d, 11);
    if (name == "torus") {
      for (float& v : x) v = std::tanh(v);  // points of the torus [-1, 1)
    }
    std::vector<float> served, local(static_cast<size_t>(n * model->feature_dim()));
    ASSERT_TRUE(client_->Featurize(name, n, x, &served).ok());
    model->Featurize(n, x.data(), local.data());
    ASSERT_EQ(served.size(), local.size());
    EXPECT_EQ(std::memcmp(served.data(), local.data(), local.size() * sizeof(float)), 0) << name;
    std::vector<float> scores, expected(static_cast<size_t>(n * model->output_dim()));
    ASSERT_TRUE(client_->Predict(name, n, x, &scores).ok());
    model->Predict(n, x.data(), expected.data());
    ASSERT_EQ(scores.size(), expected.size());
    EXPECT_EQ(std::memcmp(scores.data(), expected.data(), scores.size() * sizeof(float)), 0);
    v1::GetModelMetadataResponse meta;
    ASSERT_TRUE(client_->GetModelMetadata(name, 0, &meta).ok());
    EXPECT_EQ(meta.encoder_kind(), name == "torus" ? "spectral" : "cdf");
    EXPECT_TRUE(meta.certificate().exhaustive());
    EXPECT_LE(meta.certificate().relative_max_discrepancy(), 1e-6);
  }
}

TEST_F(TrainedModelTest, ServedXpermFeaturesIgnoreTheOrderOfTheBlocks) {
  Train("default", "default");
  StartServer({"--port=0", "--metrics_port=0"});
  std::vector<float> x = XpermRow({0, 1, 2, 3, 4});
  const std::vector<float> permuted = XpermRow({4, 2, 0, 3, 1});
  const std::vector<float> other = XpermRow({5, 1, 2, 3, 4});
  x.insert(x.end(), permuted.begin(), permuted.end());
  x.insert(x.end(), other.begin(), other.end());
  std::vector<float> f;
  ASSERT_TRUE(client_->Featurize("default", 3, x, &f).ok());
  const size_t k = f.size() / 3;
  EXPECT_TRUE(std::equal(f.begin(), f.begin() + k, f.begin() + k));
  EXPECT_FALSE(std::equal(f.begin(), f.begin() + k, f.begin() + 2 * k));
}

TEST_F(TrainedModelTest, ATrainedModelOfSoundAnswersItsWavFilesAsTheBundleDoes) {
  // Three "words" by three speakers (tests/unit/data/synthetic_clips.h);
  // the speaker cat is the test set.
  const std::string clips = (dir_ / "clips").string();
  const std::vector<std::string> paths =
      invariant::testing::WriteSpokenDigits(clips, 3, {"ann", "bob", "cat"}, 4);
  const std::string config = absl::StrReplaceAll(
      R"pb(
        description: "synthetic words"
        data { audio { dir: "CLIPS" front_end { FRONT_END } } }
        split { test_groups: "cat" seed: 1 }
        preprocess { center: true l2_normalize: true }
        encoder {
          cdf {
            num_templates: 12
            num_group_elements: 6
            num_bins: 8
            range: 1.0
            template_kind: TEMPLATE_DATA
          }
          group {
            audio {
              frequency_bins: 24
              frames: 30
              bins_per_octave: 6
              pitch_cents { uniform { low: -200 high: 200 } }
              time_shift { uniform { low: -3 high: 3 } }
            }
          }
          seed: 5
        }
        learner {
          kind: RIDGE
          task: TASK_CLASSIFICATION
          lambda_grid: [ 1e-4, 1e-2, 1 ]
        }
        certificate { num_points: 8 num_group_elements: 4 }
      )pb",
      {{"CLIPS", clips}, {"FRONT_END", invariant::testing::kTestFrontEnd}});
  const std::string config_path = (dir_ / "words.textproto").string();
  std::ofstream(config_path) << config;
  const std::string cmd = std::string(INVARIANT_TRAIN_BINARY) + " --config=" + config_path +
                          " --models=" + models() + " --name=words >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;
  StartServer({"--port=0", "--metrics_port=0"});
  std::shared_ptr<const Model> model = Load("words");
  ASSERT_NE(model, nullptr);
  ASSERT_NE(model->audio_front_end(), nullptr);

  v1::PredictRequest request;
  request.mutable_model()->set_name("words");
  std::vector<float> expected;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    request.mutable_inputs()->add_clips()->set_wav(
        std::string(std::istreambuf_iterator<char>(in), {}));
    auto clip = audio::ReadWavFile(path, 1 << 20);
    ASSERT_TRUE(clip.ok()) << clip.status();
    std::vector<float> row(static_cast<size_t>(model->input_dim()));
    ASSERT_TRUE(
        model->audio_front_end()->Apply(clip->samples, clip->sample_rate, row.data(), path).ok());
    std::vector<float> scores(static_cast<size_t>(model->output_dim()));
    model->Predict(1, row.data(), scores.data());
    expected.insert(expected.end(), scores.begin(), scores.end());
  }
  v1::PredictResponse response;
  const grpc::Status served = client_->Predict(request, &response);
  ASSERT_TRUE(served.ok()) << served.error_message();
  ASSERT_EQ(response.scores_size(), static_cast<int>(expected.size()));
  EXPECT_EQ(std::memcmp(response.scores().data(), expected.data(), expected.size() * sizeof(float)),
            0);
  // The words are told apart (3 classes: chance is 1/3), also for the unheard speaker.
  int right = 0;
  for (int i = 0; i < response.predicted_classes_size(); ++i) {
    const std::string name = std::filesystem::path(paths[static_cast<size_t>(i)]).filename();
    right += response.predicted_classes(i) == name.substr(0, 1) ? 1 : 0;
  }
  EXPECT_GT(right, response.predicted_classes_size() / 2);
  v1::GetModelMetadataResponse meta;
  ASSERT_TRUE(client_->GetModelMetadata("words", 0, &meta).ok());
  EXPECT_EQ(meta.audio().frames(), 30);
  EXPECT_EQ(meta.audio().max_clip_seconds(), 2);
}

// Patch features (docs/math.md §10) of 8 × 8 × 3 images: trained by
// invariant-train from a CSV file, served by invariant-server, the same bits
// as the bundle loaded in process, for images of the training kind and for
// arbitrary rows, with the features averaged over the image's mirror
// (encoder.patch.image_group); the metadata describes the patch encoder and
// its certificate on patches.
TEST_F(TrainedModelTest, APatchModelIsServedAsItComputesInProcess) {
  const std::string csv = (dir_ / "bars.csv").string();
  invariant::testing::WriteBarImagesCsv(csv, 240, 5);
  const std::string config = absl::StrReplaceAll(
      R"pb(
        description: "bars, patch features"
        data { csv { path: "CSV" label_column: "label" } }
        split { train: 160 validation: 30 test: 50 seed: 1 }
        encoder {
          patch {
            patch_size: 3
            num_templates: 12
            normalize_patches: true
            whiten: true
            kmeans_iterations: 2
            statistics_patches: 2000
            image_group {
              dihedral { height: 8 width: 8 channels: 3 flips: true }
              enumerate: true
            }
          }
          group {
            dihedral { height: 3 width: 3 channels: 3 flips: true }
            enumerate: true
          }
          input_shape: [ 8, 8, 3 ]
          seed: 4
        }
        learner {
          kind: RIDGE
          task: TASK_CLASSIFICATION
          lambda_grid: [ 1e-3, 1e-1, 10 ]
        }
        certificate { num_points: 20 }
      )pb",
      {{"CSV", csv}});
  const std::string config_path = (dir_ / "bars.textproto").string();
  std::ofstream(config_path) << config;
  const std::string cmd = std::string(INVARIANT_TRAIN_BINARY) + " --config=" + config_path +
                          " --models=" + models() + " --name=bars >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;
  StartServer({"--port=0", "--metrics_port=0"});
  std::shared_ptr<const Model> model = Load("bars");
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->input_dim(), invariant::testing::kBarImageDim);
  const int64_t n = 9, d = model->input_dim();
  std::vector<float> x = invariant::testing::BarImages(n, 77).x;
  const std::vector<float> noise = RandomRows(4, d, 3);  // any rows, not only images
  x.insert(x.end(), noise.begin(), noise.end());
  const int64_t rows = n + 4;
  std::vector<float> served, local(static_cast<size_t>(rows * model->feature_dim()));
  ASSERT_TRUE(client_->Featurize("bars", rows, x, &served).ok());
  model->Featurize(rows, x.data(), local.data());
  ASSERT_EQ(served.size(), local.size());
  EXPECT_EQ(std::memcmp(served.data(), local.data(), local.size() * sizeof(float)), 0);
  std::vector<float> scores, expected(static_cast<size_t>(rows * model->output_dim()));
  ASSERT_TRUE(client_->Predict("bars", rows, x, &scores).ok());
  model->Predict(rows, x.data(), expected.data());
  ASSERT_EQ(scores.size(), expected.size());
  EXPECT_EQ(std::memcmp(scores.data(), expected.data(), scores.size() * sizeof(float)), 0);
  v1::GetModelMetadataResponse meta;
  ASSERT_TRUE(client_->GetModelMetadata("bars", 0, &meta).ok());
  EXPECT_EQ(meta.encoder_kind(), "patch");
  EXPECT_EQ(meta.encoder().patch().num_templates(), 12);
  EXPECT_EQ(meta.encoder().patch().num_group_elements(), 2);
  EXPECT_TRUE(meta.encoder().group().has_dihedral());
  EXPECT_EQ(meta.encoder().patch().image_group().dihedral().width(), 8);
  EXPECT_EQ(meta.feature_dim(), 4 * 2 * 12);
  EXPECT_TRUE(meta.certificate().exhaustive());
  EXPECT_LT(meta.certificate().max_discrepancy(), 1e-5);
  EXPECT_THAT(meta.certificate().method(), ::testing::StartsWith("per-patch map on 20 patches"));
}

// The compatibility fixture (tests/fixtures/compat_models, bundles written by
// an earlier build; tests/unit/model/compat_fixture_test.cc checks their
// in-process outputs against the stored ones): the server serves exactly what
// the loaded bundle computes.
TEST_F(TrainedModelTest, ServesTheCompatibilityFixtureBitForBit) {
  const std::vector<std::string> names = {"xperm_cdf", "coulomb_rf", "torus_spectral"};
  for (const std::string& name : names) {
    std::filesystem::create_directories(models() + "/" + name + "/1");
    std::filesystem::copy_file(std::string(INVARIANT_SOURCE_DIR) +
                                   "/tests/fixtures/compat_models/" + name + "/1/" +
                                   kBundleFileName,
                               models() + "/" + name + "/1/" + kBundleFileName);
  }
  StartServer({"--port=0", "--metrics_port=0"});
  for (const std::string& name : names) {
    std::shared_ptr<const Model> model = Load(name);
    ASSERT_NE(model, nullptr);
    const int64_t n = 9, d = model->input_dim();
    std::vector<float> x = RandomRows(n, d, 5);
    for (float& v : x) v = std::tanh(v);
    std::vector<float> served, local(static_cast<size_t>(n * model->feature_dim()));
    ASSERT_TRUE(client_->Featurize(name, n, x, &served).ok()) << name;
    model->Featurize(n, x.data(), local.data());
    ASSERT_EQ(served.size(), local.size());
    EXPECT_EQ(std::memcmp(served.data(), local.data(), local.size() * sizeof(float)), 0) << name;
    std::vector<float> scores, expected(static_cast<size_t>(n * model->output_dim()));
    ASSERT_TRUE(client_->Predict(name, n, x, &scores).ok()) << name;
    model->Predict(n, x.data(), expected.data());
    ASSERT_EQ(scores.size(), expected.size());
    EXPECT_EQ(std::memcmp(scores.data(), expected.data(), scores.size() * sizeof(float)), 0)
        << name;
  }
}

}  // namespace
}  // namespace invariant::testing_server
