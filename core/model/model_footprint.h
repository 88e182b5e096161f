// model_footprint.h: the memory a model version will hold, stated from its
// bundle's manifest before the bundle is read (the server's --max_model_bytes
// admits a load by it; docs/operations.md, "Model memory").
//
//   bundle      the file, copied once into private memory (core/bundle/bundle.h),
//               rounded up to whole pages
//   packed      the copies the encoders pack at load for the batch-independent
//               product (core/encoders/packed_dot.h): each packed tensor
//               (encoder/bank, encoder/projection, second_layer/frequencies)
//               as panels of 16 rows × its columns, zero-padded, in float32
//               or bfloat16 (encoder.bank_dtype or the tensor's dtype); a
//               float32 bank served as bfloat16 also keeps its rounded copy
//   workspace   per compute thread while a batch computes: the feature block
//               of Model::Predict (256 rows × feature_dim floats) and one
//               projector tile (96 rows × 512 columns); transient, freed
//               between calls (blocks over 1 MiB are unmapped)
//   held()      bundle + packed: what stays resident while the version serves
//   total(t)    held() + t · workspace: what --max_model_bytes counts
//
// Front ends hold tables of a few KiB (an audio front end's filterbank, an
// image front end's per-thread buffers, shared by every model and bounded by
// the decoding budget), counted in neither.
//
// Thread-safety: pure function.
#ifndef INVARIANT_CORE_MODEL_MODEL_FOOTPRINT_H_
#define INVARIANT_CORE_MODEL_MODEL_FOOTPRINT_H_

#include <cstdint>

#include "invariant/v1/bundle.pb.h"

namespace invariant {

struct ModelFootprint {
  uint64_t bundle = 0;
  uint64_t packed = 0;
  uint64_t workspace = 0;  // per compute thread
  uint64_t held() const { return bundle + packed; }
  uint64_t total(int compute_threads) const {
    return held() + static_cast<uint64_t>(compute_threads > 0 ? compute_threads : 1) * workspace;
  }
};

// The footprint of the model whose bundle has `manifest` and `file_bytes`.
ModelFootprint EstimateModelFootprint(const v1::Manifest& manifest, uint64_t file_bytes);

}  // namespace invariant

#endif  // INVARIANT_CORE_MODEL_MODEL_FOOTPRINT_H_
