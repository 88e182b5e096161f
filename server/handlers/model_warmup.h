// model_warmup.h: a freshly loaded model answers a few rows before it serves.
//
// WarmUp runs `rows` seeded pseudo-random rows (standard normal values)
// through the model (Predict when it has a head, Featurize otherwise) on the
// loading thread, before the registry marks the version ready: the code
// paths, the compute pool's threads, the kernels' per-thread scratch and the
// caches are exercised once, so the first requests after a (re)load do not
// pay for them (the tensors themselves are resident already: the bundle is
// read, not mapped). rows = 0 skips it. The rows come from a fixed seed, so
// warming is deterministic. For a model of sound the first row is a seeded
// synthetic clip (a tone in noise, clip_seconds long at the model's rate)
// put through the model's audio front end, so the front end's code paths are
// warmed too and a front end that answers it with NaN is refused likewise.
//
// It is also a last check of the bundle's numbers: a model that answers the
// warmup rows with a NaN or an infinity (e.g. NaN weights, which checksums
// do not catch) is refused with FAILED_PRECONDITION naming `path` and the
// count, so the previous version keeps serving. Thread-safe (Model is).
#ifndef INVARIANT_SERVER_HANDLERS_MODEL_WARMUP_H_
#define INVARIANT_SERVER_HANDLERS_MODEL_WARMUP_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "core/model/model.h"

namespace invariant::server {

absl::Status WarmUp(const std::string& path, const Model& model, int64_t rows);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_MODEL_WARMUP_H_
