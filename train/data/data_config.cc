#include "train/data/data_config.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "train/data/audio.h"
#include "train/data/cifar.h"
#include "train/data/coulomb.h"
#include "train/data/csv.h"
#include "train/data/fashion_mnist.h"
#include "train/data/idx.h"
#include "train/data/image_files.h"
#include "train/data/image_layout.h"
#include "train/data/rotated.h"
#include "train/data/torus.h"
#include "train/data/xperm.h"

namespace invariant::train {
namespace {

constexpr char kImageField[] = "data.image";

// `source` with another schema (an image's input_shape, an audio front
// end); rows pass through unchanged.
class ShapedSource : public RowSource {
 public:
  ShapedSource(std::unique_ptr<RowSource> source, RowSchema schema)
      : source_(std::move(source)), schema_(std::move(schema)) {}

  const RowSchema& schema() const override { return schema_; }
  absl::StatusOr<int64_t> Next(int64_t max_rows, float* x, int32_t* labels,
                               float* targets) override {
    return source_->Next(max_rows, x, labels, targets);
  }
  absl::Status Reset() override { return source_->Reset(); }

 private:
  std::unique_ptr<RowSource> source_;
  RowSchema schema_;
};

// Checks `source` against data.image (image_layout.h) and gives its rows the
// image's input_shape.
absl::StatusOr<std::unique_ptr<RowSource>> ApplyImageLayout(std::unique_ptr<RowSource> source,
                                                            const ImageShape& shape) {
  RETURN_IF_ERROR(CheckImageLayout(source->schema(), shape, kImageField));
  std::vector<int64_t> input_shape = {shape.height, shape.width};
  if (shape.channels > 1) input_shape.push_back(shape.channels);
  if (source->schema().input_shape == input_shape) return source;
  RowSchema schema = source->schema();
  schema.input_shape = std::move(input_shape);
  return std::unique_ptr<RowSource>(new ShapedSource(std::move(source), std::move(schema)));
}

// Sound clips (audio.h): decoded and featurized once, held in memory; the
// schemas carry the completed front end, the groups and the train part's
// augmented copies (RowSchema::copy_of).
absl::StatusOr<DataParts> OpenAudioParts(const v1::AudioSource& audio) {
  ASSIGN_OR_RETURN(AudioData data, LoadAudio(audio, "data.audio"));
  const auto open = [&data](Dataset part, std::vector<int64_t> copy_of) {
    RowSchema schema = SchemaOf(part);
    schema.audio = data.front_end;
    schema.copy_of = std::move(copy_of);
    return std::unique_ptr<RowSource>(
        new ShapedSource(MakeDatasetSource(std::move(part)), std::move(schema)));
  };
  DataParts parts;
  parts.train = open(std::move(data.train), std::move(data.copy_of));
  if (data.test.rows() > 0) parts.test = open(std::move(data.test), {});
  return parts;
}

// Image files (image_files.h): decoded once, held in memory; the schemas
// carry the front end and say the values are bytes / 255.
absl::StatusOr<DataParts> OpenImageFileParts(const v1::ImageFileSource& source) {
  ASSIGN_OR_RETURN(ImageFileData data, LoadImageFiles(source, "data.image_files"));
  const auto open = [&data](Dataset part) {
    RowSchema schema = SchemaOf(part);
    schema.image = data.front_end;
    schema.unit_byte_scaled = true;
    return std::unique_ptr<RowSource>(
        new ShapedSource(MakeDatasetSource(std::move(part)), std::move(schema)));
  };
  DataParts parts;
  parts.train = open(std::move(data.train));
  if (data.test.rows() > 0) parts.test = open(std::move(data.test));
  return parts;
}

absl::StatusOr<DataParts> OpenIdxParts(const v1::IdxSource& idx) {
  if (idx.train_images().empty() || idx.train_labels().empty()) {
    return absl::InvalidArgumentError(
        "data.idx.train_images and data.idx.train_labels must both be set");
  }
  IdxOptions options;
  options.class_names.assign(idx.class_names().begin(), idx.class_names().end());
  DataParts parts;
  ASSIGN_OR_RETURN(parts.train, OpenIdxSource(idx.train_images(), idx.train_labels(), options));
  if (!idx.test_images().empty() || !idx.test_labels().empty()) {
    if (idx.test_images().empty() || idx.test_labels().empty()) {
      return absl::InvalidArgumentError(
          "data.idx.test_images and data.idx.test_labels must be set together");
    }
    ASSIGN_OR_RETURN(parts.test, OpenIdxSource(idx.test_images(), idx.test_labels(), options));
  }
  return parts;
}

// CIFAR-10 files (cifar.h): train_files and test_files, or a folder.
absl::StatusOr<DataParts> OpenCifarParts(const v1::CifarSource& cifar) {
  CifarFiles files;
  if (!cifar.dir().empty()) {
    if (!cifar.train_files().empty() || !cifar.test_files().empty()) {
      return absl::InvalidArgumentError(
          "data.cifar.dir and data.cifar.train_files / test_files are alternatives: set one");
    }
    auto found = FindCifarFiles(cifar.dir());
    if (!found.ok()) {
      return absl::Status(found.status().code(),
                          absl::StrCat("data.cifar.dir: ", found.status().message()));
    }
    files = *std::move(found);
  } else {
    if (cifar.train_files().empty()) {
      return absl::InvalidArgumentError("data.cifar.train_files (or data.cifar.dir) must be set");
    }
    files.train.assign(cifar.train_files().begin(), cifar.train_files().end());
    files.test.assign(cifar.test_files().begin(), cifar.test_files().end());
  }
  DataParts parts;
  ASSIGN_OR_RETURN(parts.train, OpenCifarSource(files.train, "cifar-10/train"));
  if (!files.test.empty()) {
    ASSIGN_OR_RETURN(parts.test, OpenCifarSource(files.test, "cifar-10/test"));
  }
  return parts;
}

absl::StatusOr<DataParts> OpenCsvParts(const v1::CsvSource& csv) {
  if (csv.path().empty()) return absl::InvalidArgumentError("data.csv.path must be set");
  CsvOptions options;
  if (csv.delimiter() == "\\t") {
    options.delimiter = '\t';
  } else if (csv.delimiter().size() == 1) {
    options.delimiter = csv.delimiter()[0];
  } else if (!csv.delimiter().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("data.csv.delimiter must be one character, got '", csv.delimiter(), "'"));
  }
  options.label_column = csv.label_column();
  options.target_column = csv.target_column();
  DataParts parts;
  ASSIGN_OR_RETURN(parts.train, OpenCsvSource(csv.path(), options));
  return parts;
}

absl::StatusOr<DataParts> OpenSourceParts(const v1::DataConfig& config) {
  DataParts parts;
  switch (config.source_case()) {
    case v1::DataConfig::kIdx:
      return OpenIdxParts(config.idx());
    case v1::DataConfig::kCsv:
      return OpenCsvParts(config.csv());
    case v1::DataConfig::kFashionMnist: {
      const std::string dir = config.fashion_mnist().dir().empty() ? kFashionMnistDefaultDir
                                                                   : config.fashion_mnist().dir();
      ASSIGN_OR_RETURN(parts.train, OpenFashionMnist(FashionMnistPart::kTrain, dir));
      ASSIGN_OR_RETURN(parts.test, OpenFashionMnist(FashionMnistPart::kTest, dir));
      return parts;
    }
    case v1::DataConfig::kXperm:
      parts.train = MakeXpermSource({config.xperm().seed(), config.xperm().bag_of_words()});
      return parts;
    case v1::DataConfig::kTorus: {
      const v1::TorusSource& t = config.torus();
      TorusOptions options;
      if (t.dim() != 0) options.dim = t.dim();
      options.num_points = t.num_points();
      options.noise_stddev = t.noise_stddev();
      options.seed = t.seed();
      ASSIGN_OR_RETURN(parts.train, MakeTorusSource(options));
      return parts;
    }
    case v1::DataConfig::kCoulomb: {
      const v1::CoulombSource& c = config.coulomb();
      CoulombOptions options;
      options.num_molecules = c.num_molecules();
      if (c.max_atoms() != 0) options.max_atoms = c.max_atoms();
      if (c.min_atoms() != 0) options.min_atoms = c.min_atoms();
      options.noise_stddev = c.noise_stddev();
      options.seed = c.seed();
      options.sorted = c.sorted();
      ASSIGN_OR_RETURN(parts.train, MakeCoulombSource(options));
      return parts;
    }
    case v1::DataConfig::kAudio:
      return OpenAudioParts(config.audio());
    case v1::DataConfig::kCifar:
      return OpenCifarParts(config.cifar());
    case v1::DataConfig::kImageFiles:
      return OpenImageFileParts(config.image_files());
    case v1::DataConfig::SOURCE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "data.source must be one of idx, csv, fashion_mnist, xperm, torus, coulomb, audio, "
      "cifar, image_files; got none");
}

}  // namespace

absl::StatusOr<DataParts> OpenDataConfig(const v1::DataConfig& config) {
  if (config.has_audio() && (config.has_image() || config.rotated().enabled())) {
    return absl::InvalidArgumentError(
        absl::StrCat(config.has_image() ? "data.image" : "data.rotated",
                     " does not apply to data.audio: its rows are spectrograms of the front "
                     "end's shape, acted on by encoder.group.audio"));
  }
  ASSIGN_OR_RETURN(DataParts parts, OpenSourceParts(config));
  if (config.has_image()) {
    ASSIGN_OR_RETURN(const ImageShape shape, ImageShapeFromConfig(config.image(), kImageField));
    ASSIGN_OR_RETURN(parts.train, ApplyImageLayout(std::move(parts.train), shape));
    if (parts.test != nullptr) {
      ASSIGN_OR_RETURN(parts.test, ApplyImageLayout(std::move(parts.test), shape));
    }
  }
  if (config.rotated().enabled()) {
    const uint64_t seed = config.rotated().seed();
    ASSIGN_OR_RETURN(parts.train,
                     MakeRotatedSource(std::move(parts.train), Rng::ForStream(seed, 2).NextU64()));
    if (parts.test != nullptr) {
      ASSIGN_OR_RETURN(parts.test,
                       MakeRotatedSource(std::move(parts.test), Rng::ForStream(seed, 3).NextU64()));
    }
  }
  return parts;
}

}  // namespace invariant::train
