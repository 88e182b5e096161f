#include "core/model/model_footprint.h"

#include <string>

namespace invariant {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kPanelRows = 16;          // PackedBank::kPanelWidth
constexpr uint64_t kPredictBlockRows = 256;  // Model::EncodeInBlocks
constexpr uint64_t kTileFloats = 96 * 512;   // Projector::kRowBlock × kBlockColumns

uint64_t RoundUp(uint64_t value, uint64_t to) { return (value + to - 1) / to * to; }

bool IsPacked(const std::string& name) {
  return name == "encoder/bank" || name == "encoder/projection" ||
         name == "second_layer/frequencies";
}

}  // namespace

ModelFootprint EstimateModelFootprint(const v1::Manifest& manifest, uint64_t file_bytes) {
  ModelFootprint footprint;
  footprint.bundle = RoundUp(file_bytes, kPage);
  const bool bf16_bank = manifest.encoder().bank_dtype() == v1::BANK_DTYPE_BF16;
  for (const v1::TensorEntry& tensor : manifest.tensors()) {
    if (!IsPacked(tensor.name()) || tensor.shape_size() != 2) continue;
    const auto rows = static_cast<uint64_t>(tensor.shape(0));
    const auto cols = static_cast<uint64_t>(tensor.shape(1));
    const bool half =
        tensor.dtype() == v1::DTYPE_BFLOAT16 || (bf16_bank && tensor.name() == "encoder/bank");
    footprint.packed += RoundUp(rows, kPanelRows) * cols * (half ? 2 : 4);
    if (half && tensor.dtype() == v1::DTYPE_FLOAT32) footprint.packed += rows * cols * 2;
  }
  footprint.workspace =
      4 * (kPredictBlockRows * static_cast<uint64_t>(manifest.feature_dim()) + kTileFloats);
  return footprint;
}

}  // namespace invariant
