// bundle_test_util.h: temporary directories, file bytes and crafted bundles
// for the bundle tests. Everything is seeded and stays under one temp dir.
#ifndef INVARIANT_TESTS_UNIT_BUNDLE_BUNDLE_TEST_UTIL_H_
#define INVARIANT_TESTS_UNIT_BUNDLE_BUNDLE_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/bundle/bundle.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant {
namespace bundle_test {

// A fresh directory under the test temp dir, removed (recursively, one
// level) on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Names of the entries in the directory (excluding . and ..), sorted.
  std::vector<std::string> List() const;

 private:
  std::string path_;
};

std::string ReadBytes(const std::string& path);
void WriteBytes(const std::string& path, const std::string& bytes);

// Tensors of every dtype with odd sizes, an empty and a scalar tensor; the
// storage lives in this struct.
struct SampleTensors {
  explicit SampleTensors(uint64_t seed);
  std::vector<float> bank;      // "encoder/bank"  float32 [3, 5]
  std::vector<double> bias;     // "head/bias"     float64 [7]
  std::vector<int32_t> ids;     // "ids"           int32   [2, 3, 3]
  std::vector<float> scalar;    // "scalar"        float32 []
  std::vector<TensorRef> refs;  // the above plus "empty" float32 [0, 4]
};

// A manifest with some non-tensor fields set.
v1::Manifest SampleManifest();

// A file laid out like a bundle around `manifest` and `payload` (placed at
// the data start), with correct header and manifest CRCs. `place` may set
// tensor offsets given the data start; the layout is iterated until the
// manifest length is stable. `version` goes into the header;
// `manifest.format_version` is left as given.
std::string CraftBundle(v1::Manifest manifest, const std::string& payload, uint32_t version = 1,
                        const std::function<void(v1::Manifest&, uint64_t)>& place = nullptr);

}  // namespace bundle_test
}  // namespace invariant

#endif  // INVARIANT_TESTS_UNIT_BUNDLE_BUNDLE_TEST_UTIL_H_
