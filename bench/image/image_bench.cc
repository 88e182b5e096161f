// invariant-bench-image: the image front end (decode, orientation, colour,
// fit, scale: core/image/front_end.h) on the JPEG files of a folder, one
// benchmark per side length found there. bench/image/image_bench.py writes
// the files, runs this and Pillow + numpy doing the same front end in the
// same run, and prints the ratios (docs/benchmarks/image_speed.md).
//
//   invariant-bench-image --image_dir=DIR [--height=32 --width=32 --channels=3]
//                         [benchmark flags]
//
// BM_FrontEnd/SIDE: ImageFrontEnd::Apply over every file of DIR whose name
// starts with "SIDE_" (SIDE × SIDE JPEGs), the model's size 32 × 32 × 3 by
// default, FIT_CROP, bilinear; items_per_second = images per second on one
// thread.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/image/front_end.h"

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string dir;
  int height = 32, width = 32, channels = 3;
};

std::map<int, std::vector<std::string>> ReadFiles(const std::string& dir) {
  std::map<int, std::vector<std::string>> by_side;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const size_t underscore = name.find('_');
    if (underscore == std::string::npos) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    by_side[std::stoi(name.substr(0, underscore))].emplace_back(std::istreambuf_iterator<char>(in),
                                                                std::istreambuf_iterator<char>());
  }
  return by_side;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&a](const char* flag) {
      const std::string prefix = std::string(flag) + "=";
      return a.rfind(prefix, 0) == 0 ? a.substr(prefix.size()) : std::string();
    };
    if (!value("--image_dir").empty()) {
      o.dir = value("--image_dir");
    } else if (!value("--height").empty()) {
      o.height = std::stoi(value("--height"));
    } else if (!value("--width").empty()) {
      o.width = std::stoi(value("--width"));
    } else if (!value("--channels").empty()) {
      o.channels = std::stoi(value("--channels"));
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (o.dir.empty()) {
    std::fprintf(stderr, "invariant-bench-image: --image_dir=DIR is required\n");
    return 2;
  }
  invariant::v1::ImageFrontEnd spec;
  spec.set_height(o.height);
  spec.set_width(o.width);
  spec.set_channels(o.channels);
  auto front_end = invariant::image::ImageFrontEnd::Create(spec);
  if (!front_end.ok()) {
    std::fprintf(stderr, "invariant-bench-image: %s\n", front_end.status().ToString().c_str());
    return 2;
  }
  static const auto files = ReadFiles(o.dir);
  static const std::shared_ptr<const invariant::image::ImageFrontEnd> fe = *std::move(front_end);
  for (const auto& [side, images] : files) {
    const std::vector<std::string>* set = &images;
    benchmark::RegisterBenchmark(("BM_FrontEnd/" + std::to_string(side)).c_str(),
                                 [set](benchmark::State& state) {
                                   std::vector<float> row(static_cast<size_t>(fe->output_dim()));
                                   size_t i = 0;
                                   for (auto _ : state) {
                                     const std::string& file = (*set)[i++ % set->size()];
                                     auto s = fe->Apply(file, fe->max_pixels(), row.data(), "f");
                                     if (!s.ok()) state.SkipWithError(s.ToString().c_str());
                                     benchmark::DoNotOptimize(row.data());
                                   }
                                   state.SetItemsProcessed(state.iterations());
                                 });
  }
  int count = static_cast<int>(rest.size());
  benchmark::Initialize(&count, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
