// Training on image files: a folder laid out as ImageFolder (train/ and
// test/ inside) or a manifest; the model stores the image front end and the
// served front end gives the trainer's rows bit for bit.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/base/random.h"
#include "core/image/front_end.h"
#include "core/model/model.h"
#include "core/model/repository.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_models/test_images.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/train_test_util.h"
#include "train/data/image_files.h"
#include "train/pipeline/config.h"
#include "train/pipeline/trainer.h"

namespace invariant::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ReadText;
using testing::RunOptions;
using testing::TempDir;
namespace fs = std::filesystem;
namespace ti = invariant::testing_images;

constexpr char kImageConfig[] = R"pb(
  description: "synthetic shapes"
  data {
    image_files {
      DATA_FIELD
      front_end { height: 12 width: 12 channels: 3 fit: FIT_CROP }
    }
  }
  split { validation: 6 seed: 1 }
  preprocess { center: true l2_normalize: true }
  encoder {
    random_fourier { num_features: 256 num_group_elements: 1 sigma: 1.0 }
    group { identity { dim: 432 } }
    seed: 3
  }
  learner {
    kind: RIDGE
    task: TASK_CLASSIFICATION
    lambda_grid: [ 1e-4, 1e-2, 1 ]
  }
)pb";

std::string Config(const std::string& data_field) {
  return absl::StrReplaceAll(kImageConfig, {{"DATA_FIELD", data_field}});
}

// A w × h photo-like image of class `shape`: noise over a bright disk (0),
// a bright square frame (1) or horizontal bars (2).
image::Pixels Shape(int shape, int64_t w, int64_t h, uint64_t seed) {
  image::Pixels p = ti::Noise(w, h, 3, seed, 1);
  for (int64_t r = 0; r < h; ++r) {
    for (int64_t c = 0; c < w; ++c) {
      const double y = (r + 0.5) / h - 0.5, x = (c + 0.5) / w - 0.5;
      bool on = false;
      if (shape == 0) on = x * x + y * y < 0.09;
      if (shape == 1) on = std::max(std::abs(x), std::abs(y)) > 0.3;
      if (shape == 2) on = static_cast<int>((y + 0.5) * 6) % 2 == 0;
      if (!on) continue;
      for (int ch = 0; ch < 3; ++ch) {
        uint8_t& v = p.row(r)[c * 3 + ch];
        v = static_cast<uint8_t>(std::min(255, v / 4 + 190));
      }
    }
  }
  return p;
}

const char* kClasses[] = {"disk", "frame", "bars"};

// ROOT/{train,test}/CLASS/NAME.{png,jpg}: `per_class` images of each class
// in each part, of varied sizes and aspect, every other one a JPEG.
std::string WriteFolder(const TempDir& dir, int per_class, bool with_test = true) {
  const std::string root = dir.path() + "/shapes";
  Rng rng(17);
  for (const char* part : {"train", "test"}) {
    if (!with_test && std::string(part) == "test") continue;
    for (int k = 0; k < 3; ++k) {
      const std::string folder = absl::StrCat(root, "/", part, "/", kClasses[k]);
      fs::create_directories(folder);
      for (int i = 0; i < per_class; ++i) {
        const int64_t w = 16 + static_cast<int64_t>(rng.NextU64() % 24);
        const int64_t h = 16 + static_cast<int64_t>(rng.NextU64() % 24);
        const image::Pixels p = Shape(k, w, h, rng.NextU64());
        const bool jpeg = i % 2 == 1;
        ti::WriteFile(absl::StrCat(folder, "/", i, jpeg ? ".JPG" : ".png"),
                      jpeg ? ti::EncodeJpeg(p, 92) : ti::EncodePng(p));
      }
      ti::WriteFile(folder + "/notes.txt", "not an image");  // skipped
    }
  }
  return root;
}

TEST(ImageTrainTest, AnImageFolderTrainsAModelThatServesTheTrainersRows) {
  TempDir dir;
  const std::string root = WriteFolder(dir, 12);
  TrainOptions o = RunOptions(dir, Config(absl::StrCat("dir: '", root, "'")), "shapes");
  TrainSummary summary;
  absl::StatusOr<std::string> out = RunTraining(o, &summary);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(summary.test_rows, 36);  // the test folder
  EXPECT_GT(summary.test_metrics["accuracy"], 0.8);
  auto model = Model::Load(*out + "/" + kBundleFileName);
  ASSERT_TRUE(model.ok()) << model.status();
  const v1::Manifest& m = (*model)->manifest();
  ASSERT_TRUE(m.has_image());
  EXPECT_EQ(m.input_dim(), 12 * 12 * 3);
  EXPECT_EQ(m.input_scaling(), v1::INPUT_SCALING_UNIT_BYTE);
  EXPECT_THAT(m.encoder().input_shape(), ElementsAre(12, 12, 3));
  EXPECT_THAT(m.head().class_names(), ElementsAre("bars", "disk", "frame"));  // folder names sorted

  absl::StatusOr<v1::TrainConfig> config = ParseTrainConfig(ReadText(o.config_path), "test");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<ImageFileData> data = LoadImageFiles(config->data().image_files(), "f");
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->train.rows(), 36);
  const image::ImageFrontEnd& served = *(*model)->image_front_end();
  // Train rows are in class order (bars, disk, frame), files sorted by path.
  const std::vector<std::pair<std::string, int64_t>> files = {
      {root + "/train/bars/0.png", 0},
      {root + "/train/bars/1.JPG", 1},
      {root + "/train/frame/9.JPG", 24 + 11}};
  for (const auto& [path, row] : files) {
    const std::string bytes = ReadText(path);
    std::vector<float> x(static_cast<size_t>(m.input_dim()));
    ASSERT_TRUE(served.Apply(bytes, served.max_pixels(), x.data(), path).ok());
    const float* trained = data->train.x.row(row);
    EXPECT_EQ(x, std::vector<float>(trained, trained + m.input_dim())) << path;
  }
}

TEST(ImageTrainTest, AManifestNamesTheFilesLabelsAndSplit) {
  TempDir dir;
  const std::string root = WriteFolder(dir, 4, /*with_test=*/false);
  std::string csv = "path,label,split\n";
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < 4; ++i) {
      absl::StrAppend(&csv, "train/", kClasses[k], "/", i, i % 2 ? ".JPG" : ".png", ",",
                      kClasses[k], ",", i == 3 ? "test" : "train", "\n");
    }
  }
  ti::WriteFile(root + "/manifest.csv", csv);
  v1::ImageFileSource source;
  source.set_manifest(root + "/manifest.csv");
  source.mutable_front_end()->set_height(8);
  source.mutable_front_end()->set_width(8);
  source.mutable_front_end()->set_channels(1);
  absl::StatusOr<ImageFileData> data = LoadImageFiles(source, "data.image_files");
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->train.rows(), 9);
  EXPECT_EQ(data->test.rows(), 3);
  EXPECT_THAT(data->train.input_shape, ElementsAre(8, 8, 1));
  EXPECT_THAT(data->train.class_names, ElementsAre("bars", "disk", "frame"));
}

TEST(ImageTrainTest, AFolderWithoutTrainHoldsTheClassesItself) {
  TempDir dir;
  const std::string root = WriteFolder(dir, 2, false) + "/train";
  ti::WriteFile(root + "/stray.png", ti::EncodePng(ti::Noise(4, 4, 3, 1)));  // not in a class
  v1::ImageFileSource source;
  source.set_dir(root);
  absl::StatusOr<std::vector<LabelledFile>> files = ListImageFiles(source, "data.image_files");
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 6u);
  EXPECT_EQ((*files)[0].label, "bars");
  EXPECT_EQ((*files)[0].path, root + "/bars/0.png");
  EXPECT_FALSE((*files)[0].test);
}

TEST(ImageTrainTest, BadFoldersAndFilesAreRefusedNamingThem) {
  TempDir dir;
  const std::string root = WriteFolder(dir, 2);
  fs::create_directories(root + "/test/cats");
  ti::WriteFile(root + "/test/cats/a.png", ti::EncodePng(ti::Noise(4, 4, 3, 1)));
  v1::ImageFileSource source;
  source.set_dir(root);
  source.mutable_front_end()->set_height(8);
  source.mutable_front_end()->set_width(8);
  source.mutable_front_end()->set_channels(3);
  absl::StatusOr<ImageFileData> data = LoadImageFiles(source, "data.image_files");
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(std::string(data.status().message()),
              HasSubstr("class folder 'cats' of the test part is not a class"));
  fs::remove_all(root + "/test/cats");
  ti::WriteFile(root + "/train/disk/broken.png", "\x89PNG\r\n\x1a\nbroken");
  data = LoadImageFiles(source, "data.image_files");
  ASSERT_FALSE(data.ok());
  EXPECT_THAT(std::string(data.status().message()),
              ::testing::StartsWith(root + "/train/disk/broken.png: a corrupt or truncated PNG"));
  source.set_dir(dir.path() + "/nowhere");
  EXPECT_EQ(LoadImageFiles(source, "data.image_files").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(ImageTrainTest, TheConfigNeedsAFrontEndAndClassification) {
  absl::StatusOr<v1::TrainConfig> config = ParseTrainConfig(
      absl::StrReplaceAll(Config("dir: '/x'"),
                          {{"front_end { height: 12 width: 12 channels: 3 fit: FIT_CROP }", ""}}),
      "test");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("data.image_files.front_end must be set"));
  config = ParseTrainConfig(
      absl::StrReplaceAll(Config("dir: '/x'"), {{"channels: 3", "channels: 2"}}), "test");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(
      std::string(config.status().message()),
      HasSubstr("data.image_files.front_end: image.channels: expected 1 (grey) or 3 (RGB)"));
}

TEST(ImageTrainTest, TheShippedImageFolderConfigParsesOnceItsFolderIsGiven) {
  const std::string text =
      ReadText(std::string(INVARIANT_SOURCE_DIR) + "/train/configs/image_folder.textproto");
  ASSERT_THAT(text, HasSubstr("IMAGES_DIR"));
  absl::StatusOr<v1::TrainConfig> config =
      ParseTrainConfig(absl::StrReplaceAll(text, {{"IMAGES_DIR", "/photos"}}), "image_folder");
  ASSERT_TRUE(config.ok()) << config.status();
  const v1::ImageFrontEnd& fe = config->data().image_files().front_end();
  EXPECT_THAT(config->encoder().input_shape(), ElementsAre(fe.height(), fe.width(), fe.channels()));
  EXPECT_TRUE(config->encoder().has_patch());
}

}  // namespace
}  // namespace invariant::train
