// CIFAR-10 binary files (train/data/cifar.h) on crafted records: the
// channels-last layout pixel by pixel, gzip, refused files naming the file
// and the record, data.cifar's files and folder, the rotated protocol and the
// image group on its rows, and a tiny model trained end to end.
#include "train/data/cifar.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/base/file.h"
#include "core/base/random.h"
#include "core/base/unit_byte.h"
#include "core/io/byte_stream.h"
#include "core/model/model.h"
#include "core/model/repository.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/train_test_util.h"
#include "train/data/data_config.h"
#include "train/data/rotated.h"
#include "train/pipeline/config.h"
#include "train/pipeline/data_plan.h"
#include "train/pipeline/feature_map.h"
#include "train/pipeline/trainer.h"

namespace invariant::train {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::RunOptions;
using testing::TempDir;

// The on-disk byte of record i at (channel, row, col): different in every
// channel of a pixel, so a layout mix-up shows.
uint8_t PixelByte(int i, int ch, int r, int c) {
  return static_cast<uint8_t>(i * 37 + ch * 101 + r * 7 + c * 3);
}

// One record: the label byte, then the red, green and blue planes.
std::string Record(int label, int i) {
  std::string record(static_cast<size_t>(kCifarRecordBytes), '\0');
  record[0] = static_cast<char>(label);
  for (int ch = 0; ch < 3; ++ch) {
    for (int r = 0; r < 32; ++r) {
      for (int c = 0; c < 32; ++c) {
        record[static_cast<size_t>(1 + ch * 1024 + r * 32 + c)] =
            static_cast<char>(PixelByte(i, ch, r, c));
      }
    }
  }
  return record;
}

// Records i = first .. first + labels.size() − 1 with those labels.
std::string Records(const std::vector<int>& labels, int first = 0) {
  std::string out;
  for (size_t k = 0; k < labels.size(); ++k) {
    out += Record(labels[k], first + static_cast<int>(k));
  }
  return out;
}

std::string WriteFile(const TempDir& dir, const std::string& name, const std::string& bytes,
                      bool gzip = false) {
  const std::string path = dir.path() + "/" + name;
  auto writer = io::ByteWriter::Create(path, gzip);
  EXPECT_TRUE(writer.ok()) << writer.status();
  EXPECT_TRUE((*writer)->Write(bytes.data(), static_cast<int64_t>(bytes.size())).ok());
  EXPECT_TRUE((*writer)->Close().ok());
  return path;
}

// Every value of row k of `data` is record first + k's byte at the same
// (r, c, ch), scaled by 1/255.
void ExpectChannelsLast(const Dataset& data, int first = 0) {
  for (int64_t k = 0; k < data.rows(); ++k) {
    const float* row = data.x.row(k);
    for (int r = 0; r < 32; ++r) {
      for (int c = 0; c < 32; ++c) {
        for (int ch = 0; ch < 3; ++ch) {
          ASSERT_EQ(row[(r * 32 + c) * 3 + ch],
                    UnitByteToFloat(PixelByte(first + static_cast<int>(k), ch, r, c)))
              << "row " << k << " (r, c, ch) = (" << r << ", " << c << ", " << ch << ")";
        }
      }
    }
  }
}

TEST(CifarTest, ReadsRecordsChannelsLast) {
  TempDir dir;
  const std::string path = WriteFile(dir, "data_batch_1.bin", Records({3, 0, 9}));
  absl::StatusOr<Dataset> data = LoadCifar({path});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->rows(), 3);
  EXPECT_EQ(data->dim(), 3072);
  EXPECT_THAT(data->labels, ElementsAre(3, 0, 9));
  EXPECT_THAT(data->input_shape, ElementsAre(32, 32, 3));
  EXPECT_THAT(data->class_names, ElementsAre("airplane", "automobile", "bird", "cat", "deer", "dog",
                                             "frog", "horse", "ship", "truck"));
  ExpectChannelsLast(*data);
  // The first values by hand: (0, 0, red), (0, 0, green), (0, 0, blue), (0, 1, red).
  EXPECT_EQ(data->x.row(0)[0], UnitByteToFloat(0));
  EXPECT_EQ(data->x.row(0)[1], UnitByteToFloat(101));
  EXPECT_EQ(data->x.row(0)[2], UnitByteToFloat(202));
  EXPECT_EQ(data->x.row(0)[3], UnitByteToFloat(3));

  auto source = OpenCifarSource({path}, "three");
  ASSERT_TRUE(source.ok()) << source.status();
  const RowSchema& s = (*source)->schema();
  EXPECT_EQ(s.name, "three");
  EXPECT_EQ(s.num_rows, 3);
  EXPECT_TRUE(s.unit_byte_scaled);  // recorded as INPUT_SCALING_UNIT_BYTE
  EXPECT_TRUE(s.has_labels);
}

TEST(CifarTest, GzipAndSeveralFilesReadInOrderWhateverTheBlocks) {
  TempDir dir;
  const std::string a = WriteFile(dir, "a.bin.gz", Records({1, 2}), /*gzip=*/true);
  const std::string b = WriteFile(dir, "b.bin", Records({4, 5, 6}, 2));
  auto source = OpenCifarSource({a, b});
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->schema().num_rows, 5);
  EXPECT_EQ((*source)->schema().name, a);
  for (int64_t block : {1, 3, 8}) {
    ASSERT_TRUE((*source)->Reset().ok());
    absl::StatusOr<Dataset> data = ReadAllRows(**source, block);
    ASSERT_TRUE(data.ok()) << data.status();
    EXPECT_THAT(data->labels, ElementsAre(1, 2, 4, 5, 6)) << "block " << block;
    ExpectChannelsLast(*data);
  }
}

TEST(CifarTest, TruncatedRecordNamesFileAndRecord) {
  TempDir dir;
  const std::string bytes = Records({1, 2, 3}).substr(0, 2 * kCifarRecordBytes + 100);
  for (bool gzip : {false, true}) {
    const std::string path = WriteFile(dir, gzip ? "t.bin.gz" : "t.bin", bytes, gzip);
    auto source = OpenCifarSource({path});
    ASSERT_FALSE(source.ok());
    EXPECT_THAT(std::string(source.status().message()),
                AllOf(HasSubstr(path), HasSubstr("truncated record 2: expected 3073 bytes"),
                      HasSubstr("ends after 100 of them"), HasSubstr("6246 bytes in all")));
  }
}

TEST(CifarTest, WrongSizesAreRefused) {
  TempDir dir;
  // The image without its label byte: one short record.
  const std::string image_only = WriteFile(dir, "image_only.bin", std::string(3072, '\1'));
  auto source = OpenCifarSource({image_only});
  ASSERT_FALSE(source.ok());
  EXPECT_THAT(std::string(source.status().message()),
              AllOf(HasSubstr(image_only), HasSubstr("truncated record 0"),
                    HasSubstr("ends after 3072 of them")));
  // One byte too many.
  const std::string extra = WriteFile(dir, "extra.bin", Records({0}) + "x");
  source = OpenCifarSource({extra});
  ASSERT_FALSE(source.ok());
  EXPECT_THAT(std::string(source.status().message()),
              AllOf(HasSubstr(extra), HasSubstr("truncated record 1"), HasSubstr("after 1 of")));
  const std::string empty = WriteFile(dir, "empty.bin", "");
  source = OpenCifarSource({empty});
  ASSERT_FALSE(source.ok());
  EXPECT_THAT(std::string(source.status().message()),
              AllOf(HasSubstr(empty), HasSubstr("empty file")));
  source = OpenCifarSource({dir.path() + "/missing.bin"});
  EXPECT_TRUE(absl::IsNotFound(source.status())) << source.status();
  EXPECT_FALSE(OpenCifarSource({}).ok());
  EXPECT_FALSE(OpenCifarSource({"-"}).ok());  // read once per pass: no stdin
}

TEST(CifarTest, LabelOutsideTheClassesNamesTheRecord) {
  TempDir dir;
  const std::string path = WriteFile(dir, "bad_label.bin", Records({9, 10, 0}));
  auto source = OpenCifarSource({path});
  ASSERT_FALSE(source.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(source.status())) << source.status();
  EXPECT_THAT(std::string(source.status().message()),
              AllOf(HasSubstr(path), HasSubstr("record 1: label 10, expected 0-9")));
}

TEST(CifarTest, ConfigTrainAndTestFiles) {
  TempDir dir;
  v1::DataConfig config;
  config.mutable_cifar()->add_train_files(WriteFile(dir, "data_batch_1.bin", Records({0, 1})));
  config.mutable_cifar()->add_train_files(WriteFile(dir, "data_batch_2.bin", Records({2}, 2)));
  config.mutable_cifar()->add_test_files(WriteFile(dir, "test_batch.bin", Records({7, 8, 9})));
  auto parts = OpenDataConfig(config);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_NE(parts->test, nullptr);
  EXPECT_EQ(parts->train->schema().name, "cifar-10/train");
  EXPECT_EQ(parts->train->schema().num_rows, 3);
  EXPECT_EQ(parts->test->schema().name, "cifar-10/test");
  EXPECT_EQ(parts->test->schema().num_rows, 3);
  config.mutable_cifar()->clear_test_files();
  parts = OpenDataConfig(config);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->test, nullptr);  // the test split comes from train
  config.mutable_cifar()->clear_train_files();
  parts = OpenDataConfig(config);
  ASSERT_FALSE(parts.ok());
  EXPECT_THAT(std::string(parts.status().message()), HasSubstr("data.cifar.train_files"));
}

TEST(CifarTest, ConfigFolderTakesTheBatchesPresent) {
  TempDir dir;
  const std::string batches = dir.path() + "/cifar-10-batches-bin";
  std::filesystem::create_directories(batches);
  WriteFile(dir, "cifar-10-batches-bin/data_batch_1.bin", Records({0, 1}));
  WriteFile(dir, "cifar-10-batches-bin/data_batch_3.bin.gz", Records({2}, 2), /*gzip=*/true);
  WriteFile(dir, "cifar-10-batches-bin/readme.html", "not a batch");
  absl::StatusOr<CifarFiles> files = FindCifarFiles(batches);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(files->train,
              ElementsAre(batches + "/data_batch_1.bin", batches + "/data_batch_3.bin.gz"));
  EXPECT_TRUE(files->test.empty());

  v1::DataConfig config;
  config.mutable_cifar()->set_dir(batches);
  auto parts = OpenDataConfig(config);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->train->schema().num_rows, 3);
  EXPECT_EQ(parts->test, nullptr);
  WriteFile(dir, "cifar-10-batches-bin/test_batch.bin", Records({5, 6}));
  parts = OpenDataConfig(config);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_NE(parts->test, nullptr);
  EXPECT_EQ(parts->test->schema().num_rows, 2);

  // The folder above the batches: NOT_FOUND saying where they are.
  config.mutable_cifar()->set_dir(dir.path());
  parts = OpenDataConfig(config);
  EXPECT_TRUE(absl::IsNotFound(parts.status())) << parts.status();
  EXPECT_THAT(std::string(parts.status().message()),
              AllOf(HasSubstr("data.cifar.dir"), HasSubstr("give that folder")));
  config.mutable_cifar()->add_train_files(batches + "/data_batch_1.bin");
  parts = OpenDataConfig(config);
  ASSERT_FALSE(parts.ok());
  EXPECT_THAT(std::string(parts.status().message()), HasSubstr("alternatives"));
}

TEST(CifarTest, RotatedProtocolTurnsEveryChannelByOneAngle) {
  TempDir dir;
  const std::string path = WriteFile(dir, "data_batch_1.bin", Records({4, 2}));
  v1::DataConfig config;
  config.mutable_cifar()->add_train_files(path);
  config.mutable_image()->set_height(32);
  config.mutable_image()->set_width(32);
  config.mutable_image()->set_channels(3);
  config.mutable_rotated()->set_enabled(true);
  config.mutable_rotated()->set_seed(11);
  auto parts = OpenDataConfig(config);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->train->schema().name, "cifar-10/train/rotated");
  absl::StatusOr<Dataset> rotated = ReadAllRows(*parts->train);
  ASSERT_TRUE(rotated.ok()) << rotated.status();
  absl::StatusOr<Dataset> plain = LoadCifar({path});
  ASSERT_TRUE(plain.ok()) << plain.status();
  const uint64_t seed = Rng::ForStream(11, 2).NextU64();  // the train part's angle seed
  for (int64_t i = 0; i < 2; ++i) {
    std::vector<float> expected(3072);
    RotateImages(32, 32, 3, RotationAngle(seed, i), 1, plain->x.row(i), expected.data());
    EXPECT_THAT(std::vector<float>(rotated->x.row(i), rotated->x.row(i) + 3072),
                ElementsAreArray(expected))
        << "row " << i;
  }
  EXPECT_NE(std::vector<float>(rotated->x.row(0), rotated->x.row(0) + 3072),
            std::vector<float>(plain->x.row(0), plain->x.row(0) + 3072));
  config.mutable_image()->set_channels(1);  // the rows are 32 x 32 x 3
  EXPECT_FALSE(OpenDataConfig(config).ok());
}

// Ten classes told apart by their colour (a distinct red, green, blue mean
// each, plus seeded noise). DATA and the GROUP fields are replaced.
constexpr char kCifarConfig[] = R"pb(
  description: "crafted CIFAR-10 records"
  data { cifar { DATA } }
  split { SPLIT seed: 1 }
  preprocess { center: true }
  encoder {
    random_fourier { num_features: 300 num_group_elements: 4 sigma: 8 }
    group {
      image {
        GROUP
        rotation { uniform { low: 0 high: 6.283185307179586 } }
        stratified_rotation: true
      }
    }
    seed: 3
  }
  learner {
    kind: RIDGE
    task: TASK_CLASSIFICATION
    lambda_grid: [ 1e-3, 1e-1 ]
  }
  certificate { num_points: 4 num_group_elements: 2 }
)pb";

// `per_class` records of each class: a flat colour by class with noise.
std::string ColourRecords(int per_class, uint64_t seed) {
  Rng rng(seed);
  std::string out;
  for (int k = 0; k < per_class; ++k) {
    for (int label = 0; label < 10; ++label) {
      std::string record(static_cast<size_t>(kCifarRecordBytes), '\0');
      record[0] = static_cast<char>(label);
      for (int ch = 0; ch < 3; ++ch) {
        // Class colours: the digits of label + 1 in base 3, times 100.
        int digit = label + 1;
        for (int j = 0; j < ch; ++j) digit /= 3;
        const int mean = 30 + 90 * (digit % 3);
        for (int p = 0; p < 1024; ++p) {
          const int noise = static_cast<int>(rng.NextU64() % 41) - 20;
          record[static_cast<size_t>(1 + ch * 1024 + p)] = static_cast<char>(mean + noise);
        }
      }
      out += record;
    }
  }
  return out;
}

std::string CifarConfig(const std::string& data, const std::string& split,
                        const std::string& group) {
  return absl::StrReplaceAll(kCifarConfig, {{"DATA", data}, {"SPLIT", split}, {"GROUP", group}});
}

TEST(CifarTest, TrainsATinyModelEndToEnd) {
  TempDir dir;
  const std::string train = WriteFile(dir, "data_batch_1.bin", ColourRecords(8, 1));
  const std::string test = WriteFile(dir, "test_batch.bin.gz", ColourRecords(3, 2), true);
  const std::string data = absl::StrCat("train_files: '", train, "' test_files: '", test, "'");
  TrainOptions o = RunOptions(
      dir, CifarConfig(data, "train: 60 validation: 20", "height: 32 width: 32 channels: 3"),
      "cifar");
  TrainSummary summary;
  absl::StatusOr<std::string> out = RunTraining(o, &summary);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(summary.test_rows, 30);
  EXPECT_GE(summary.test_metrics["accuracy"], 0.9);  // chance is 0.1
  auto model = Model::Load(*out + "/" + kBundleFileName);
  ASSERT_TRUE(model.ok()) << model.status();
  const v1::Manifest& m = (*model)->manifest();
  EXPECT_EQ(m.input_dim(), 3072);
  EXPECT_EQ(m.input_scaling(), v1::INPUT_SCALING_UNIT_BYTE);
  EXPECT_THAT(m.encoder().input_shape(), ElementsAre(32, 32, 3));
  EXPECT_THAT(m.head().class_names(), ElementsAreArray(Cifar10ClassNames()));
}

TEST(CifarTest, TheImageGroupMustFitTheRows) {
  TempDir dir;
  const std::string data =
      absl::StrCat("train_files: '", WriteFile(dir, "b.bin", ColourRecords(1, 1)), "'");
  for (const char* group :
       {"height: 32 width: 32 channels: 3", "height: 16 width: 16 channels: 3"}) {
    absl::StatusOr<v1::TrainConfig> config =
        ParseTrainConfig(CifarConfig(data, "train: 6 validation: 2", group), "test");
    ASSERT_TRUE(config.ok()) << config.status();
    absl::StatusOr<DataPlan> plan = PlanData(*config);
    if (std::string(group).find("32") != std::string::npos) {
      EXPECT_TRUE(plan.ok()) << plan.status();
    } else {
      ASSERT_FALSE(plan.ok());
      EXPECT_THAT(std::string(plan.status().message()), HasSubstr("encoder.group.image"));
    }
  }
  // A group the factory cannot make is refused when the config is read.
  absl::StatusOr<v1::TrainConfig> config =
      ParseTrainConfig(CifarConfig(data, "train: 6 validation: 2", "height: 32 width: 32"), "test");
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("encoder.group.image.channels must be in [1, 64], got 0"));
}

// preprocess.per_channel: the mean and scale of every coordinate are its
// channel's, pooled over all pixels of the training rows (computed here in
// two passes over the rows the plan trains on).
TEST(CifarTest, PerChannelStatisticsArePooledOverEachChannel) {
  TempDir dir;
  const std::string data =
      absl::StrCat("train_files: '", WriteFile(dir, "b.bin", ColourRecords(3, 5)), "'");
  std::string text =
      CifarConfig(data, "train: 20 validation: 5", "height: 32 width: 32 channels: 3");
  text = absl::StrReplaceAll(text, {{"preprocess { center: true }",
                                     "preprocess { center: true scale: true per_channel: true }"}});
  absl::StatusOr<v1::TrainConfig> config = ParseTrainConfig(text, "test");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<DataPlan> plan = PlanData(*config);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<float> rows;
  ASSERT_TRUE(ForEachTrainBlock(*plan, 7, 0, 1, [&](const TrainBlock& b) {
                rows.insert(rows.end(), b.x, b.x + b.n * kCifarImageBytes);
                return absl::OkStatus();
              }).ok());
  ASSERT_EQ(rows.size(), 20u * kCifarImageBytes);
  double mean[3] = {0, 0, 0}, var[3] = {0, 0, 0};
  const double per_channel = static_cast<double>(rows.size() / 3);
  for (size_t j = 0; j < rows.size(); ++j) mean[j % 3] += rows[j] / per_channel;
  for (size_t j = 0; j < rows.size(); ++j) {
    var[j % 3] += (rows[j] - mean[j % 3]) * (rows[j] - mean[j % 3]) / per_channel;
  }
  // The channels differ (class colours), so pooling over all coordinates or
  // mixing channels up would show.
  EXPECT_GT(std::abs(mean[0] - mean[1]) + std::abs(mean[1] - mean[2]), 0.01);
  absl::StatusOr<FeatureMap> fm = BuildFeatureMap(*config, *plan);
  ASSERT_TRUE(fm.ok()) << fm.status();
  const FloatMatrix& m = fm->tensors.f32.at("preprocess/mean");
  const FloatMatrix& s = fm->tensors.f32.at("preprocess/scale");
  ASSERT_EQ(m.cols(), kCifarImageBytes);
  ASSERT_EQ(s.cols(), kCifarImageBytes);
  for (int64_t j = 0; j < kCifarImageBytes; ++j) {
    ASSERT_EQ(m.data()[j], m.data()[j % 3]) << j;  // equal within a channel
    ASSERT_EQ(s.data()[j], s.data()[j % 3]) << j;
  }
  for (int ch = 0; ch < 3; ++ch) {
    EXPECT_NEAR(m.data()[ch], mean[ch], 1e-6) << ch;
    EXPECT_NEAR(s.data()[ch], std::sqrt(var[ch]), 1e-6) << ch;
  }
  EXPECT_TRUE(fm->manifest.preprocess().per_channel());
}

TEST(CifarTest, PerChannelNeedsCenteringOrScalingAndChannels) {
  TempDir dir;
  const std::string data =
      absl::StrCat("train_files: '", WriteFile(dir, "b.bin", ColourRecords(1, 1)), "'");
  absl::StatusOr<v1::TrainConfig> base = ParseTrainConfig(
      CifarConfig(data, "train: 6 validation: 2", "height: 32 width: 32 channels: 3"), "test");
  ASSERT_TRUE(base.ok()) << base.status();
  absl::StatusOr<DataPlan> plan = PlanData(*base);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto expect_refused = [&](const v1::TrainConfig& config, const std::string& message) {
    absl::StatusOr<FeatureMap> fm = BuildFeatureMap(config, *plan);
    ASSERT_FALSE(fm.ok()) << message;
    EXPECT_EQ(fm.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(fm.status().message()),
                AllOf(HasSubstr("preprocess.per_channel"), HasSubstr(message)));
  };
  v1::TrainConfig no_statistics = *base;
  no_statistics.mutable_preprocess()->Clear();
  no_statistics.mutable_preprocess()->set_l2_normalize(true);
  no_statistics.mutable_preprocess()->set_per_channel(true);
  expect_refused(no_statistics, "needs preprocess.center or preprocess.scale");
  // 3072 values seen as 32 × 96 × 5: 5 channels do not divide 3072.
  v1::TrainConfig five = *base;
  five.mutable_preprocess()->set_per_channel(true);
  five.mutable_encoder()->mutable_group()->mutable_identity()->set_dim(3072);
  for (int64_t s : {32, 96, 5}) five.mutable_encoder()->add_input_shape(s);
  expect_refused(five, "divides the input_dim 3072, got 5");
  // A flat shape has no channels (it was read as 3072 "channels" of one
  // value each, per-coordinate statistics under another name).
  v1::TrainConfig flat = *base;
  flat.mutable_preprocess()->set_per_channel(true);
  flat.mutable_encoder()->mutable_group()->mutable_identity()->set_dim(3072);
  flat.mutable_encoder()->add_input_shape(3072);
  expect_refused(flat, "needs an image shape [H, W, C] or [H, W]");
}

// The shipped CIFAR-10 configs (research/repro/cifar.sh's) parse once the data
// folder placeholder is replaced, standardise per channel and pool LGIKA
// over the paper's local affine law on RGB images.
TEST(CifarTest, ShippedConfigsParse) {
  for (const char* name : {"cifar_rf", "cifar_lgika"}) {
    std::optional<std::string> text =
        ReadWholeFile(absl::StrCat(INVARIANT_SOURCE_DIR, "/train/configs/", name, ".textproto"));
    ASSERT_TRUE(text.has_value()) << name;
    ASSERT_THAT(*text, HasSubstr("CIFAR10_DIR"));
    absl::StatusOr<v1::TrainConfig> config =
        ParseTrainConfig(absl::StrReplaceAll(*text, {{"CIFAR10_DIR", "/data"}}), name);
    ASSERT_TRUE(config.ok()) << name << ": " << config.status();
    EXPECT_EQ(config->data().cifar().dir(), "/data");
    EXPECT_TRUE(config->preprocess().per_channel());
    EXPECT_EQ(config->encoder().random_fourier().num_features(), 10000);
    const v1::ImageTransformGroup& law = std::string(name) == "cifar_rf"
                                             ? config->certificate().group().image()
                                             : config->encoder().group().image();
    EXPECT_EQ(law.channels(), 3) << name;
    EXPECT_EQ(law.rotation().von_mises().kappa(), 9) << name;
    EXPECT_EQ(law.translation_x().normal().stddev(), 0.3) << name;
    EXPECT_EQ(law.translation_y().normal().stddev(), 0.3) << name;
    EXPECT_EQ(law.scale().log_normal().log_stddev(), 0.3) << name;
  }
}

}  // namespace
}  // namespace invariant::train
