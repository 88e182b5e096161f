#include "train/pipeline/baseline_certificate.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "train/pipeline/certificate.h"

namespace invariant::train {

absl::StatusOr<v1::InvarianceCertificate> CertifyBaseline(const Model& model,
                                                          const FloatMatrix& test_x,
                                                          const v1::TrainConfig& train_config,
                                                          const DataPlan& plan, uint64_t seed) {
  const v1::CertificateConfig& config = train_config.certificate();
  const v1::EncoderSpec& spec = model.manifest().encoder();
  if (spec.has_patch() && !config.has_group()) {
    return absl::InvalidArgumentError(
        "certificate.baseline: a patch model's own group acts on its patches, not on the "
        "inputs a baseline takes; set certificate.group to a group on its input images");
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Model> baseline, LoadModelAt(config.baseline()));
  if (baseline->input_dim() != model.input_dim()) {
    return absl::InvalidArgumentError(absl::StrCat("certificate.baseline: ", config.baseline(),
                                                   " takes input_dim ", baseline->input_dim(),
                                                   ", but the model takes ", model.input_dim()));
  }
  int64_t outputs = 0;
  const BatchFunction f = ModelOutputs(*baseline, &outputs);
  v1::InvarianceCertificate c;
  if (CertifiesClips(model, train_config)) {
    ASSIGN_OR_RETURN(c, CertifyOnClips(model, f, outputs, train_config, plan, seed));
  } else {
    ASSIGN_OR_RETURN(c, CertifyPredictor(f, outputs, spec, test_x, config, seed));
  }
  c.set_method(absl::StrCat("baseline ", config.baseline(), ": ", c.method()));
  return c;
}

absl::Status RecordBaselineCertificate(const Model& model, const FloatMatrix& test_x,
                                       const v1::TrainConfig& config, const DataPlan& plan,
                                       uint64_t seed, TrainReport& report) {
  if (config.certificate().baseline().empty()) return absl::OkStatus();
  absl::StatusOr<v1::InvarianceCertificate> certificate =
      CertifyBaseline(model, test_x, config, plan, seed);
  if (!certificate.ok()) return certificate.status();
  report.baseline_model = config.certificate().baseline();
  report.baseline_certificate = *std::move(certificate);
  return absl::OkStatus();
}

}  // namespace invariant::train
