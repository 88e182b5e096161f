// pair_certificate.h: the empirical invariance certificate of a model over
// real (original, transformed) input files (issue 31).
//
// The group certificate (certificate.h) moves held-out rows by group
// elements g in the model's own row space. This one measures what happens to
// real inputs: recordings pitch-shifted or time-stretched by a tool, images
// turned by a camera, whatever the transformation is, as the server would
// see them. Over the pairs (x_p, x'_p) of a manifest it reports
//   max_discrepancy            max_{p, c} |f_c(x_p) − f_c(x'_p)|
//   mean_discrepancy           mean_{p, c} |f_c(x_p) − f_c(x'_p)|
//   mean_pairwise_difference   the spread of certificate.h over the DISTINCT
//                              originals (each file once, in first-seen order)
//   relative_mean_discrepancy  mean_discrepancy / mean_pairwise_difference
//   relative_max_discrepancy   max_discrepancy / max |f(x_p)| over originals
//   num_points                 the number of pairs
//   method                     "pairs: N (original, transformed) files from MANIFEST"
// with f the model's scores (its features when it has no head; for a patch
// model too, the whole model, not the per-patch map). num_group_elements is
// 0, exhaustive false and group unset.
//
// The manifest is a CSV file (core/io/delimited.h's field rule) whose header
// is exactly `original,transformed`; each further record names two files,
// relative to the manifest's folder or absolute. The files are inputs of the
// model's kind:
//   * a model of sound (manifest.audio): WAV clips, read by audio::ReadWavFile
//     and turned into rows by the model's stored front end
//     (AudioFrontEnd::Apply), the trainer's and the server's path, with the
//     front end's max_clip_seconds;
//   * any other model: an IDX image file (core/io/idx.h, plain or gzip)
//     holding exactly one image of input_dim values (unsigned bytes scaled
//     by 1/255 as the IDX data source scales them, float32 as is), or a text
//     file of exactly input_dim numbers separated by commas, blanks or line
//     breaks (a row as the CSV source reads it, without a label). The project
//     reads no other image format (PNG, JPEG, ...).
//
// Errors are INVALID_ARGUMENT and name the manifest and line
// ("pairs.csv:3: transformed file 'b.wav': ..."): the manifest cannot be
// read, its header is not `original,transformed`, an empty path, a listed
// file that does not exist or fails to decode (the decoder's message), a
// file of the wrong size; and a manifest without pairs.
// Thread-safety: reentrant; files are decoded on the calling thread.
#ifndef INVARIANT_TRAIN_PIPELINE_PAIR_CERTIFICATE_H_
#define INVARIANT_TRAIN_PIPELINE_PAIR_CERTIFICATE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/base/tensor.h"
#include "core/model/model.h"
#include "invariant/v1/bundle.pb.h"
#include "invariant/v1/train_config.pb.h"
#include "train/pipeline/certificate.h"

namespace invariant::train {

// The rows of a manifest's pairs.
struct PairRows {
  FloatMatrix original;           // pairs × input_dim
  FloatMatrix transformed;        // pairs × input_dim
  std::vector<int64_t> distinct;  // the first pair of every distinct original path
};

// Turns the file at `path` into one row of the model's input_dim values;
// errors name the file (the manifest's line is added by the caller).
using InputReader = std::function<absl::Status(const std::string& path, float* row)>;

// The reader for `model`'s inputs (above): its front end for a model of
// sound, IDX or text rows otherwise.
InputReader ModelInputReader(const Model& model);

// Reads the manifest at `manifest` with `read` for rows of `dim` values.
absl::StatusOr<PairRows> ReadPairs(const std::string& manifest, int64_t dim,
                                   const InputReader& read);

// The certificate of `f` (num_outputs scores per row) over `rows`;
// `manifest` names the file in `method`.
absl::StatusOr<v1::InvarianceCertificate> CertifyPairs(const BatchFunction& f, int64_t num_outputs,
                                                       const PairRows& rows,
                                                       const std::string& manifest);

// Reads the manifest's files as `model`'s inputs and certifies its scores.
absl::StatusOr<v1::InvarianceCertificate> CertifyModelOnPairs(const Model& model,
                                                              const std::string& manifest);

// At training time: when config.pairs is set, certifies `model` on it into
// manifest->pairs_certificate (errors as above); otherwise does nothing.
absl::Status AddPairsCertificate(const Model& model, const v1::CertificateConfig& config,
                                 v1::Manifest* manifest);

// `invariant-train certify --model=MODEL --pairs=MANIFEST`: loads the model
// (a version directory or its model.bundle) and certifies it on the pairs.
absl::StatusOr<v1::InvarianceCertificate> RunPairsCertify(const std::string& model_path,
                                                          const std::string& manifest);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_PAIR_CERTIFICATE_H_
