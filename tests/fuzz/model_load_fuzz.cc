// model_load_fuzz.cc: libFuzzer target for Model::Load on arbitrary bundle bytes.
//
// Input: one control byte, then the bundle file. Control bit 0 re-seals the
// header and manifest checksums (tests/fuzz/fuzz_util.h) so mutations reach
// the manifest, the tensor table and Model::Assemble's shape checks. Every
// load must return a status with a message (never crash, never read outside
// the file); a model that loads must featurize, and predict when it has a
// head, two rows of inputs without touching memory it does not own, with the
// dimensions its manifest declares.
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Dimensions beyond which the target does not allocate its own buffers (the
// model itself already fitted in the input).
constexpr int64_t kMaxDim = int64_t{1} << 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using invariant::fuzz::Check;
  if (size == 0) return 0;
  const uint8_t control = data[0];
  std::string file(reinterpret_cast<const char*>(data + 1), size - 1);
  if (control & 1) invariant::fuzz::ResealBundle(file);
  const std::string path = invariant::fuzz::WriteMemFile(0, file);
  const auto model = invariant::Model::Load(path);
  if (!model.ok()) {
    Check(!model.status().message().empty(), "a refused bundle has an error message");
    return 0;
  }
  const invariant::Model& m = **model;
  Check(m.input_dim() > 0 && m.feature_dim() > 0, "a loaded model has positive dimensions");
  Check(m.featurizer().d_in() == m.input_dim(), "featurizer d_in matches the manifest");
  Check(m.featurizer().d_out() == m.feature_dim(), "featurizer d_out matches the manifest");
  if (m.input_dim() > kMaxDim || m.feature_dim() > kMaxDim || m.output_dim() > kMaxDim) return 0;
  constexpr int64_t kRows = 2;
  std::vector<float> x(static_cast<size_t>(kRows * m.input_dim()));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  std::vector<float> features(static_cast<size_t>(kRows * m.feature_dim()));
  m.Featurize(kRows, x.data(), features.data());
  if (m.has_head()) {
    Check(m.output_dim() > 0, "a model with a head has outputs");
    std::vector<float> scores(static_cast<size_t>(kRows * m.output_dim()));
    m.Predict(kRows, x.data(), scores.data());
  }
  return 0;
}
