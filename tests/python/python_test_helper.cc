// python_test_helper.cc: the C++ side of the Python tests (tests/python/).
//
//   invariant_python_test_helper write-models ROOT
//       writes the seeded test models the Python tests serve (test_models.h):
//         rf             classifier (3 classes, 16 inputs), versions 1 and 2,
//                        labels.txt "stable 1"
//         rf_features    featurize-only (no head)
//         rf_regression  regressor with 2 targets
//         rf_image       classifier whose encoder declares input_shape [4, 4]
//   invariant_python_test_helper write-audio-model ROOT
//       writes the model of sound "words" (tests/cli/audio_test_model.h:
//       8000 Hz, 0.25 s clips → 16 bins × 14 frames, classes yes/no/maybe)
//       and "listening", the same with voice activity
//   invariant_python_test_helper write-image-model ROOT
//       writes the model of image files "pictures" (tests/test_models/
//       test_image_model.h: 8 x 8 RGB, crop, bilinear; classes shape_0..2)
//   invariant_python_test_helper prepare-image FILE HEIGHT WIDTH CHANNELS FIT FILTER BG OUT
//       writes to OUT the bytes the image front end makes of FILE before
//       scaling (height x width x channels, channels last), FIT crop|pad|stretch,
//       FILTER bilinear|bicubic, BG the background grey level; on a refused
//       file, exit 1 with the message
//   invariant_python_test_helper featurize-image MODEL_BUNDLE FILE OUT
//       writes the features the model computes in process for FILE (its
//       image front end, then Featurize) as little-endian float32
//   invariant_python_test_helper featurize|predict TARGET MODEL INPUT_DIM IN OUT
//       reads IN (little-endian float32 rows of INPUT_DIM), calls the server
//       through the C++ client (invariant::Client) and writes the features or
//       scores to OUT as little-endian float32; predict also writes the
//       predicted classes to OUT.classes, one per line.
// Exit code 0 on success, 1 with a message on stderr otherwise.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "client/client.h"
#include "core/model/model.h"
#include "tests/cli/audio_test_model.h"
#include "tests/test_models/test_image_model.h"
#include "tests/test_models/test_models.h"

namespace {

namespace fs = std::filesystem;
using invariant::testing_models::TestModelSpec;

int Fail(const std::string& message) {
  std::cerr << "invariant_python_test_helper: " << message << std::endl;
  return 1;
}

int WriteModels(const std::string& root) {
  std::vector<TestModelSpec> specs(4);
  specs[0].name = "rf";
  specs[0].version = 1;
  specs[0].seed = 1;
  specs[1].name = "rf";
  specs[1].version = 2;
  specs[1].seed = 2;
  specs[2].name = "rf_features";
  specs[2].num_classes = 0;
  specs[2].seed = 3;
  specs[3].name = "rf_regression";
  specs[3].num_classes = 2;
  specs[3].regression = true;
  specs[3].seed = 4;
  for (const TestModelSpec& spec : specs) {
    auto path = invariant::testing_models::WriteTestModel(root, spec);
    if (!path.ok()) return Fail(path.status().ToString());
  }
  std::ofstream(fs::path(root) / "rf" / "labels.txt") << "stable 1\n";

  TestModelSpec image;
  image.name = "rf_image";
  image.seed = 5;
  auto model = invariant::testing_models::MakeTestModel(image);
  if (!model.ok()) return Fail(model.status().ToString());
  invariant::v1::Manifest manifest = (*model)->manifest();
  manifest.mutable_encoder()->clear_input_shape();
  manifest.mutable_encoder()->add_input_shape(4);
  manifest.mutable_encoder()->add_input_shape(4);
  auto reshaped = invariant::Model::Assemble(manifest, (*model)->tensors());
  if (!reshaped.ok()) return Fail(reshaped.status().ToString());
  const fs::path dir = fs::path(root) / "rf_image" / "1";
  fs::create_directories(dir);
  if (auto s = (*reshaped)->Save((dir / invariant::kBundleFileName).string()); !s.ok()) {
    return Fail(s.ToString());
  }
  return 0;
}

bool WriteFloats(const std::string& path, const std::vector<float>& values) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
  return static_cast<bool>(out);
}

int Call(const std::string& method, const std::string& target, const std::string& model,
         int64_t input_dim, const std::string& in_path, const std::string& out_path) {
  std::ifstream in(in_path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && in.fail()) return Fail("cannot read " + in_path);
  std::vector<float> x(bytes.size() / sizeof(float));
  std::copy(bytes.data(), bytes.data() + x.size() * sizeof(float),
            reinterpret_cast<char*>(x.data()));
  const int64_t rows = static_cast<int64_t>(x.size()) / input_dim;
  auto client = invariant::Client::Create(target);
  std::vector<float> out;
  if (method == "featurize") {
    grpc::Status s = client->Featurize(model, rows, x, &out);
    if (!s.ok()) return Fail(s.error_message());
  } else {
    std::vector<std::string> classes;
    grpc::Status s = client->Predict(model, rows, x, &out, &classes);
    if (!s.ok()) return Fail(s.error_message());
    std::ofstream names(out_path + ".classes");
    for (const std::string& c : classes) names << c << "\n";
  }
  if (!WriteFloats(out_path, out)) return Fail("cannot write " + out_path);
  return 0;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

int PrepareImage(const std::vector<std::string>& a) {
  invariant::v1::ImageFrontEnd spec;
  spec.set_height(std::stoi(a[2]));
  spec.set_width(std::stoi(a[3]));
  spec.set_channels(std::stoi(a[4]));
  spec.set_fit(a[5] == "pad"       ? invariant::v1::ImageFrontEnd::FIT_PAD
               : a[5] == "stretch" ? invariant::v1::ImageFrontEnd::FIT_STRETCH
                                   : invariant::v1::ImageFrontEnd::FIT_CROP);
  spec.set_filter(a[6] == "bicubic" ? invariant::v1::ImageFrontEnd::FILTER_BICUBIC
                                    : invariant::v1::ImageFrontEnd::FILTER_BILINEAR);
  spec.set_background(std::stoi(a[7]));
  auto front_end = invariant::image::ImageFrontEnd::Create(spec);
  if (!front_end.ok()) return Fail(front_end.status().ToString());
  auto pixels = (*front_end)->Prepare(ReadAll(a[1]), (*front_end)->max_pixels(), a[1]);
  if (!pixels.ok()) return Fail(std::string(pixels.status().message()));
  std::ofstream out(a[8], std::ios::binary);
  out.write(reinterpret_cast<const char*>(pixels->data.data()),
            static_cast<std::streamsize>(pixels->data.size()));
  return out ? 0 : Fail("cannot write " + a[8]);
}

int FeaturizeImage(const std::string& bundle, const std::string& file, const std::string& out) {
  auto model = invariant::Model::Load(bundle);
  if (!model.ok()) return Fail(model.status().ToString());
  const invariant::image::ImageFrontEnd* fe = (*model)->image_front_end();
  if (fe == nullptr) return Fail(bundle + ": not a model of image files");
  std::vector<float> row(static_cast<size_t>(fe->output_dim()));
  if (auto s = fe->Apply(ReadAll(file), fe->max_pixels(), row.data(), file); !s.ok()) {
    return Fail(s.ToString());
  }
  std::vector<float> features(static_cast<size_t>((*model)->feature_dim()));
  (*model)->Featurize(1, row.data(), features.data());
  return WriteFloats(out, features) ? 0 : Fail("cannot write " + out);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "write-models") return WriteModels(args[1]);
  if (args.size() == 2 && args[0] == "write-audio-model") {
    auto path = invariant::testing_models::WriteAudioTestModel(args[1], "words", 7);
    if (!path.ok()) return Fail(path.status().ToString());
    path = invariant::testing_models::WriteAudioTestModel(args[1], "listening", 7, true);
    return path.ok() ? 0 : Fail(path.status().ToString());
  }
  if (args.size() == 2 && args[0] == "write-image-model") {
    auto path = invariant::testing_models::WriteTestImageModel(args[1], {});
    return path.ok() ? 0 : Fail(path.status().ToString());
  }
  if (args.size() == 9 && args[0] == "prepare-image") return PrepareImage(args);
  if (args.size() == 4 && args[0] == "featurize-image") {
    return FeaturizeImage(args[1], args[2], args[3]);
  }
  if (args.size() == 6 && (args[0] == "featurize" || args[0] == "predict")) {
    return Call(args[0], args[1], args[2], std::stoll(args[3]), args[4], args[5]);
  }
  return Fail(
      "usage: write-models ROOT | write-audio-model ROOT | write-image-model ROOT | "
      "prepare-image FILE H W C FIT FILTER BG OUT | featurize-image BUNDLE FILE OUT | "
      "featurize|predict TARGET MODEL INPUT_DIM IN OUT");
}
