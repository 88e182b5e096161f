// clip_certificate.h: the invariance certificate of a model of sound as its
// callers meet it: held-out clips are changed as recordings change (pitch,
// tempo, a later start, noise) and go through the model's stored front end
// (voice activity, the alignments, compression) before the model, the
// server's path. The group certificate of certificate.h moves rows after the
// front end instead, which measures the encoder alone (issue 46: at 400 cents
// it showed the shipped model moving 0.42 of a different clip's distance,
// while the served model lost one point under a real shift).
//
// certificate.h's CertifyServedModel uses it for a model with an audio front
// end whose checked group (certificate.group, else encoder.group) is an
// AudioTransformGroup. The group's elements {c, a, s} (cents, tempo factor,
// frames) act on a clip x at its own rate as
//   x ↦ later_s(tempo_a(pitch_c(x)))
// pitch_c is PitchShift and tempo_a TimeStretch (core/audio/time_stretch.h:
// a real pitch shift that keeps the length, a tempo change that keeps the
// pitch); later_s puts s · hop_length frames' worth of digital silence
// (at the clip's rate) before the clip for s > 0, after it for s < 0.
// Figures: certificate.h's, with f(x) = the model's outputs on
// FrontEnd(x), over the clips and the elements given (the whole group or
// seeded draws: the caller draws them). The curve has the generators of
// invariance_curve.h for the laws that are set (pitch in cents, tempo as a
// factor, time_shift in frames), acting on clips as above, and two that
// every clip certificate has:
//   offset  (seconds): 0 … kMaxOffsetSeconds of digital silence before the
//           clip, kContinuousSizes sizes;
//   noise   (noise/speech rms): white noise over the clip and
//           kTrailingNoiseSeconds after it, at rms ratios ρ = 0 and
//           10^(−SNR/20) for SNR = 30, 25, …, 0 dB (ρ = 0.1 is 20 dB); the
//           speech's power is the clip's mean square, the noise of clip i is
//           seeded by (seed, i) and the same at every ρ, scaled.
// A changed clip in which voice activity finds no speech is scored on its
// whole row (the front end's fallback) and counted in `method`.
//
// HeldOutClips gives the clips of the rows CertificationRows (certificate.h)
// checks, in the same order: the test rows, else the validation rows, else
// (k-fold, leave one group out) fold 1's originals.
//
// Errors: a clip that cannot be read (the WAV reader's message), a change or
// the front end refusing a changed clip (its message, naming the clip and
// the change); INVALID_ARGUMENT when there are no clips. Thread-safety:
// reentrant; the clips are changed and featurized on the default thread
// pool, `f` is called from the calling thread only.
#ifndef INVARIANT_TRAIN_PIPELINE_CLIP_CERTIFICATE_H_
#define INVARIANT_TRAIN_PIPELINE_CLIP_CERTIFICATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/audio/front_end.h"
#include "core/audio/wav.h"
#include "core/groups/group.h"
#include "invariant/v1/bundle.pb.h"
#include "invariant/v1/train_config.pb.h"
#include "train/pipeline/data_plan.h"
#include "train/pipeline/invariance_curve.h"

namespace invariant::train {

inline constexpr double kMaxOffsetSeconds = 1.0;
// What the method of a clip certificate says after its clip count.
inline constexpr char kClipCertificateMethod[] =
    " held-out clips, changed as recordings and through the model's front end: ";
inline constexpr double kTrailingNoiseSeconds = 1.5;

// The clips of the held-out rows (above), at most max_clips, read as the
// trainer reads them (data.audio; the front end's max_clip_seconds).
absl::StatusOr<std::vector<audio::Clip>> HeldOutClips(const v1::AudioSource& source,
                                                      const DataPlan& plan,
                                                      const audio::AudioFrontEnd& front_end,
                                                      int64_t max_clips);

// The elements the figures average over, drawn from the group's law by the
// caller (certificate.cc: the whole group when it can be listed, else draws).
struct DrawnElements {
  std::vector<GroupElement> list;  // {cents, tempo, frames} each
  bool exhaustive = false;
  std::string method;  // how they were chosen
};

// The certificate above of f (num_outputs values per row of the front end)
// on `clips`; `law` gives the curve's generators. The caller sets `group`.
absl::StatusOr<v1::InvarianceCertificate> CertifyClips(const VectorMap& f, int64_t num_outputs,
                                                       const audio::AudioFrontEnd& front_end,
                                                       const v1::AudioTransformGroup& law,
                                                       const DrawnElements& elements,
                                                       const std::vector<audio::Clip>& clips,
                                                       uint64_t seed);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_CLIP_CERTIFICATE_H_
