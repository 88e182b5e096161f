// test_files.h: per-test scratch files under the GoogleTest temp directory.
#ifndef INVARIANT_TESTS_UNIT_DATA_TEST_FILES_H_
#define INVARIANT_TESTS_UNIT_DATA_TEST_FILES_H_

#include <algorithm>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace invariant::train {

// A path unique to the running test: <TempDir>/data_test_<suite>_<test>_<leaf>.
inline std::string ScratchPath(const std::string& leaf) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = absl::StrCat(info->test_suite_name(), "_", info->name());
  std::replace(test.begin(), test.end(), '/', '_');  // parameterised test names
  return absl::StrCat(::testing::TempDir(), "/data_test_", test, "_", leaf);
}

inline std::string WriteText(const std::string& leaf, const std::string& text) {
  const std::string path = ScratchPath(leaf);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace invariant::train

#endif  // INVARIANT_TESTS_UNIT_DATA_TEST_FILES_H_
