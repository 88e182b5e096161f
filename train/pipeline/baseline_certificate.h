// baseline_certificate.h: the certificate of a plain model to compare with
// (certificate.baseline of the training config): the baseline's scores (its
// features when it has no head) checked on the same points against the same
// group elements (the same seed) as the trained model's certificate, so the
// two relative curves of the model page (report_html.h) are comparable. For
// a model of sound certified on its clips (certificate.h CertifiesClips) the
// baseline gets the same changed clips through the model's front end.
//
// Errors: the baseline cannot be loaded (Model::Load's), its input_dim
// differs from the model's, or the model is a patch model certified on its
// patches (no certificate.group on its input images): INVALID_ARGUMENT
// naming certificate.baseline. Thread-safety: reentrant.
#ifndef INVARIANT_TRAIN_PIPELINE_BASELINE_CERTIFICATE_H_
#define INVARIANT_TRAIN_PIPELINE_BASELINE_CERTIFICATE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/model/model.h"
#include "invariant/v1/bundle.pb.h"
#include "invariant/v1/train_config.pb.h"
#include "train/pipeline/data_plan.h"
#include "train/pipeline/report.h"

namespace invariant::train {

// The certificate of the model at config.certificate.baseline against
// `model`'s certificate group (certificate.group, else `model`'s own), on
// test_x or on the clips of `plan`'s held-out rows.
absl::StatusOr<v1::InvarianceCertificate> CertifyBaseline(const Model& model,
                                                          const FloatMatrix& test_x,
                                                          const v1::TrainConfig& config,
                                                          const DataPlan& plan, uint64_t seed);

// When certificate.baseline names a model: CertifyBaseline, recorded in
// `report` (baseline_model, baseline_certificate); nothing otherwise.
absl::Status RecordBaselineCertificate(const Model& model, const FloatMatrix& test_x,
                                       const v1::TrainConfig& config, const DataPlan& plan,
                                       uint64_t seed, TrainReport& report);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_BASELINE_CERTIFICATE_H_
