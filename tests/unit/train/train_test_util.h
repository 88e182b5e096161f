// train_test_util.h: temporary model repositories and configs for the
// training job's tests.
#ifndef INVARIANT_TESTS_UNIT_TRAIN_TRAIN_TEST_UTIL_H_
#define INVARIANT_TESTS_UNIT_TRAIN_TRAIN_TEST_UTIL_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/base/file.h"
#include "gtest/gtest.h"

namespace invariant::testing {

// A fresh directory under the test's temporary directory, removed at exit.
class TempDir {
 public:
  TempDir() {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("train_test_") + info->name() + "_" + std::to_string(getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string p = (path_ / name).string();
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::filesystem::path path_;
};

inline std::string ReadText(const std::string& path) { return ReadWholeFile(path).value_or(""); }

// A small Xperm run: CDF pooling over all 120 block permutations.
inline constexpr char kXpermConfig[] = R"pb(
  description: "test"
  data { xperm { seed: 1 } }
  split { per_class_train: 60 validation: 100 test: 600 seed: 3 }
  encoder {
    cdf { num_templates: 8 num_bins: 8 range: 1.0 template_kind: TEMPLATE_STANDARD_NORMAL }
    group {
      block_permutation { num_blocks: 5 block_size: 8 }
      enumerate: true
    }
    seed: 7
  }
  learner {
    kind: RIDGE
    task: TASK_CLASSIFICATION
    lambda_grid: [ 1e-4, 1e-2, 1 ]
  }
  certificate { num_points: 30 }
  block_rows: 17
)pb";

// Spec-Avg on the torus, sign flips of 6 coordinates.
inline constexpr char kTorusConfig[] = R"pb(
  data { torus { dim: 6 num_points: 700 noise_stddev: 0.05 seed: 2 } }
  split { train: 500 validation: 100 test: 100 seed: 1 }
  encoder {
    spectral {
      dim: 6
      budget: 400
      generators { kind: SIGN_FLIP coords: 0 }
      generators { kind: SIGN_FLIP coords: 1 }
      generators { kind: SIGN_FLIP coords: 2 }
      generators { kind: SIGN_FLIP coords: 3 }
      generators { kind: SIGN_FLIP coords: 4 }
      generators { kind: SIGN_FLIP coords: 5 }
    }
  }
  learner { kind: SPEC_AVG task: TASK_REGRESSION }
  certificate { num_points: 50 }
)pb";

}  // namespace invariant::testing

#endif  // INVARIANT_TESTS_UNIT_TRAIN_TRAIN_TEST_UTIL_H_
