#include "core/base/bf16.h"

namespace invariant {

Bf16Matrix RoundToBf16(const FloatMatrix& m) {
  Bf16Matrix out = Bf16Matrix::Zeros(m.rows(), m.cols());
  uint16_t* dst = out.mutable_data();
  const float* src = m.data();
  const int64_t size = m.rows() * m.cols();
  for (int64_t i = 0; i < size; ++i) dst[i] = FloatToBf16(src[i]);
  return out;
}

}  // namespace invariant
