// io_test_files.h: scratch files for the core/io tests, under the GoogleTest
// temp directory, unique to the running test.
#ifndef INVARIANT_TESTS_UNIT_IO_IO_TEST_FILES_H_
#define INVARIANT_TESTS_UNIT_IO_IO_TEST_FILES_H_

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/io/byte_stream.h"
#include "gtest/gtest.h"

namespace invariant::io {

// <TempDir>/io_test_<suite>_<test>_<leaf>.
inline std::string ScratchPath(const std::string& leaf) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = absl::StrCat(info->test_suite_name(), "_", info->name());
  std::replace(test.begin(), test.end(), '/', '_');
  return absl::StrCat(::testing::TempDir(), "/io_test_", test, "_", leaf);
}

// Writes `bytes` to a scratch file, gzip-compressed when `gzip`.
inline std::string WriteScratch(const std::string& leaf, const std::string& bytes,
                                bool gzip = false) {
  const std::string path = ScratchPath(leaf);
  auto writer = ByteWriter::Create(path, gzip);
  EXPECT_TRUE(writer.ok()) << writer.status();
  EXPECT_TRUE((*writer)->Write(bytes.data(), static_cast<int64_t>(bytes.size())).ok());
  EXPECT_TRUE((*writer)->Close().ok());
  return path;
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace invariant::io

#endif  // INVARIANT_TESTS_UNIT_IO_IO_TEST_FILES_H_
