#include "tests/unit/bundle/bundle_test_util.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/base/random.h"
#include "core/bundle/bundle_format.h"
#include "core/bundle/crc32c.h"
#include "gtest/gtest.h"

namespace invariant {
namespace bundle_test {

ScratchDir::ScratchDir() {
  std::string tmpl = ::testing::TempDir() + "bundle_test_XXXXXX";
  const char* made = ::mkdtemp(tmpl.data());
  EXPECT_NE(made, nullptr) << "mkdtemp failed for " << tmpl;
  path_ = tmpl;
}

ScratchDir::~ScratchDir() {
  for (const std::string& name : List()) {
    const std::string full = File(name);
    if (::unlink(full.c_str()) != 0) ::rmdir(full.c_str());
  }
  ::rmdir(path_.c_str());
}

std::vector<std::string> ScratchDir::List() const {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path_.c_str());
  if (dir == nullptr) return names;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  // A fresh file rather than a truncated one: ext4 (auto_da_alloc) flushes a
  // file that is truncated and rewritten, which makes thousands of rewrites slow.
  ::unlink(path.c_str());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

SampleTensors::SampleTensors(uint64_t seed) {
  Rng rng(seed);
  bank.resize(15);
  for (float& v : bank) v = static_cast<float>(rng.Normal());
  bias.resize(7);
  for (double& v : bias) v = rng.Normal();
  ids.resize(18);
  for (int32_t& v : ids) v = static_cast<int32_t>(rng.UniformInt(1u << 31)) - (1 << 30);
  scalar = {static_cast<float>(rng.Uniform())};
  refs = {
      {"encoder/bank", v1::DTYPE_FLOAT32, {3, 5}, bank.data()},
      {"head/bias", v1::DTYPE_FLOAT64, {7}, bias.data()},
      {"empty", v1::DTYPE_FLOAT32, {0, 4}, nullptr},
      {"ids", v1::DTYPE_INT32, {2, 3, 3}, ids.data()},
      {"scalar", v1::DTYPE_FLOAT32, {}, scalar.data()},
  };
}

v1::Manifest SampleManifest() {
  v1::Manifest m;
  m.set_model_name("sample");
  m.set_version(42);
  m.set_input_dim(5);
  m.set_feature_dim(3);
  m.mutable_encoder()->mutable_cdf()->set_num_templates(3);
  m.mutable_encoder()->set_seed(1234);
  m.mutable_head()->set_task(v1::TASK_CLASSIFICATION);
  m.mutable_head()->add_class_names("a");
  m.mutable_head()->add_class_names("b");
  (*m.mutable_metrics())["accuracy"] = 0.875;
  (*m.mutable_metrics())["loss"] = 0.25;
  m.set_training_config("seed: 1234\n");
  return m;
}

std::string CraftBundle(v1::Manifest manifest, const std::string& payload, uint32_t version,
                        const std::function<void(v1::Manifest&, uint64_t)>& place) {
  namespace fmt = bundle_format;
  uint64_t data_start = *fmt::DataStart(0);
  for (int round = 0; round < 32; ++round) {
    if (place) place(manifest, data_start);
    const uint64_t needed = *fmt::DataStart(manifest.ByteSizeLong());
    if (needed == data_start) break;
    data_start = needed;
  }
  const std::string manifest_bytes = manifest.SerializeAsString();
  fmt::Header header;
  header.format_version = version;
  header.manifest_crc32c = Crc32c(manifest_bytes.data(), manifest_bytes.size());
  header.manifest_length = manifest_bytes.size();
  header.file_length = data_start + payload.size();
  const auto header_bytes = fmt::EncodeHeader(header);
  std::string file(header_bytes.begin(), header_bytes.end());
  file += manifest_bytes;
  file.resize(data_start, '\0');
  file += payload;
  return file;
}

}  // namespace bundle_test
}  // namespace invariant
