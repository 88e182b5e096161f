// unit_byte.h: the one rule that turns an unsigned byte (an IDX pixel) into a
// model input float: v · (1/255), in [0, 1].
//
// invariant-train's IDX reader and invariant-client's IDX input use it, so
// rows sent by the client are the same bits the model was trained on
// (v / 255.0f differs from v · (1/255.0f) in the last bit for about half of
// the byte values). Models record the rule as INPUT_SCALING_UNIT_BYTE.
#ifndef INVARIANT_CORE_BASE_UNIT_BYTE_H_
#define INVARIANT_CORE_BASE_UNIT_BYTE_H_

#include <cstdint>

namespace invariant {

inline float UnitByteToFloat(uint8_t value) {
  constexpr float kScale = 1.0f / 255.0f;
  return static_cast<float>(value) * kScale;
}

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_UNIT_BYTE_H_
