// publish.h: the versions of a model directory (MODELS/<name>/<version>/)
// and publishing a new one.
//
// A version is written into a staged temporary directory (StageVersion: the
// bundle; then PublishVersion: report.json, report.md and report.html) and
// published by one rename (repository.h: StagedVersion), so it appears
// complete or not at all; a failed or interrupted write leaves no version
// behind. An existing version is never overwritten.
//
// Errors: ALREADY_EXISTS for a version that exists (CheckVersionFree, before
// any data is read; StageVersion; and PublishVersion, for a writer that
// published the same version meanwhile); the file system's (INTERNAL for a
// report that could not be written); Model::Save's.
// Thread-safety: none needed; one run writes one version from one thread.
#ifndef INVARIANT_TRAIN_PIPELINE_PUBLISH_H_
#define INVARIANT_TRAIN_PIPELINE_PUBLISH_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/model/model.h"
#include "core/model/repository.h"
#include "train/pipeline/report.h"

namespace invariant::train {

// OK when `version` ≤ 0 (the next free one will be chosen) or does not exist
// in model_dir; ALREADY_EXISTS naming the directory otherwise.
absl::Status CheckVersionFree(const std::string& model_dir, int64_t version);

// `version` when > 0, else one above the highest version in model_dir.
absl::StatusOr<int64_t> ChooseVersion(const std::string& model_dir, int64_t version);

// Creates the staged directory of `version` in model_dir and saves `model`'s
// bundle there (model.bundle; nothing when model is null) under `manifest`:
// the model's own with the run's records (Model::SaveWithRecords).
absl::StatusOr<StagedVersion> StageVersion(const std::string& model_dir, int64_t version,
                                           const Model* model, const v1::Manifest& manifest);

// Writes report.json, report.md and report.html (the model page,
// report_html.h) of `report` into `staged` and publishes it; returns the
// version directory. With hold_before_publish (tests only:
// --testonly_hold_before_publish) it prints "invariant-train: holding
// <staged path>" to stderr and blocks forever instead of publishing.
absl::StatusOr<std::string> PublishVersion(StagedVersion& staged, const TrainReport& report,
                                           bool hold_before_publish);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_PUBLISH_H_
