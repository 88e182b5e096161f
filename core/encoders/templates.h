// templates.h: sampling the templates t_j that banks are built from.
//
// docs/math.md §2–4. Every draw comes from the caller's seeded `Rng`, in a fixed
// order (template by template, coordinate by coordinate), so the same seed
// gives the same templates bit for bit. Results are m × d row-major
// FloatMatrix values (one template per row); values are drawn in double and
// rounded to float once.
#ifndef INVARIANT_CORE_ENCODERS_TEMPLATES_H_
#define INVARIANT_CORE_ENCODERS_TEMPLATES_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/base/random.h"
#include "core/base/tensor.h"

namespace invariant {

// How templates are drawn; the values mirror invariant.v1.TemplateKind.
enum class TemplateKind {
  kGaussianRejection = 1,  // N(0, I/d), kept only when ‖t‖² < 1 + epsilon (Mroueh)
  kSphere = 2,             // uniform on the unit sphere, t = n/‖n‖
  kGaussian = 3,           // N(0, sigma⁻² I): random Fourier frequencies
  kData = 4,               // rows drawn from data (landmarks)
  kStandardNormal = 5,     // N(0, I)
};

struct TemplateOptions {
  TemplateKind kind = TemplateKind::kGaussianRejection;
  int64_t num_templates = 0;  // m > 0
  double epsilon = 0.1;       // kGaussianRejection: slack, > 0
  double sigma = 1.0;         // kGaussian: kernel bandwidth, > 0
};

// N(0, I/d) templates kept when ‖t‖² < 1 + epsilon. Rejected draws are
// discarded and redrawn. Errors: m ≤ 0, d ≤ 0, epsilon ≤ 0.
absl::StatusOr<FloatMatrix> SampleGaussianRejectionTemplates(int64_t m, int64_t d, double epsilon,
                                                             Rng& rng);

// Templates uniform on the unit sphere of R^d. Errors: m ≤ 0, d ≤ 0.
absl::StatusOr<FloatMatrix> SampleSphereTemplates(int64_t m, int64_t d, Rng& rng);

// Frequencies ω ~ N(0, sigma⁻² I_d), the spectral measure of the Gaussian
// kernel exp(−‖x − z‖² / (2 sigma²)). Errors: m ≤ 0, d ≤ 0, sigma ≤ 0.
absl::StatusOr<FloatMatrix> SampleGaussianTemplates(int64_t m, int64_t d, double sigma, Rng& rng);

// Standard normal N(0, I_d) templates. Errors: m ≤ 0, d ≤ 0.
absl::StatusOr<FloatMatrix> SampleStandardNormalTemplates(int64_t m, int64_t d, Rng& rng);

// m distinct rows of `data` chosen uniformly (a partial Fisher–Yates
// shuffle), in the order drawn. Errors: m ≤ 0, m > data.rows().
absl::StatusOr<FloatMatrix> SampleDataTemplates(int64_t m, const FloatMatrix& data, Rng& rng);

// Dispatches on options.kind. `data` is used only by kData (may be null
// otherwise); its column count must equal d.
absl::StatusOr<FloatMatrix> SampleTemplates(const TemplateOptions& options, int64_t d,
                                            const FloatMatrix* data, Rng& rng);

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_TEMPLATES_H_
