#include "core/encoders/templates.h"

#include <cmath>
#include <numeric>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace invariant {
namespace {

absl::Status CheckShape(int64_t m, int64_t d) {
  if (m <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("templates: num_templates must be > 0, got ", m));
  }
  if (d <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("templates: dimension must be > 0, got ", d));
  }
  return absl::OkStatus();
}

// Fills m × d with stddev · N(0, 1).
FloatMatrix NormalMatrix(int64_t m, int64_t d, double stddev, Rng& rng) {
  FloatMatrix t = FloatMatrix::Zeros(m, d);
  float* p = t.mutable_data();
  for (int64_t i = 0; i < m * d; ++i) p[i] = static_cast<float>(stddev * rng.Normal());
  return t;
}

}  // namespace

absl::StatusOr<FloatMatrix> SampleGaussianRejectionTemplates(int64_t m, int64_t d, double epsilon,
                                                             Rng& rng) {
  if (absl::Status s = CheckShape(m, d); !s.ok()) return s;
  if (!(epsilon > 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("templates: epsilon must be > 0 for Gaussian rejection, got ", epsilon));
  }
  FloatMatrix t = FloatMatrix::Zeros(m, d);
  const double stddev = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> draw(static_cast<size_t>(d));
  for (int64_t j = 0; j < m; ++j) {
    double norm2;
    do {
      norm2 = 0.0;
      for (double& v : draw) {
        v = stddev * rng.Normal();
        norm2 += v * v;
      }
    } while (!(norm2 < 1.0 + epsilon));
    float* row = t.mutable_row(j);
    for (int64_t i = 0; i < d; ++i) row[i] = static_cast<float>(draw[static_cast<size_t>(i)]);
  }
  return t;
}

absl::StatusOr<FloatMatrix> SampleSphereTemplates(int64_t m, int64_t d, Rng& rng) {
  if (absl::Status s = CheckShape(m, d); !s.ok()) return s;
  FloatMatrix t = FloatMatrix::Zeros(m, d);
  std::vector<double> draw(static_cast<size_t>(d));
  for (int64_t j = 0; j < m; ++j) {
    double norm2;
    do {
      norm2 = 0.0;
      for (double& v : draw) {
        v = rng.Normal();
        norm2 += v * v;
      }
    } while (!(norm2 > 0.0));
    const double inv = 1.0 / std::sqrt(norm2);
    float* row = t.mutable_row(j);
    for (int64_t i = 0; i < d; ++i) row[i] = static_cast<float>(draw[static_cast<size_t>(i)] * inv);
  }
  return t;
}

absl::StatusOr<FloatMatrix> SampleGaussianTemplates(int64_t m, int64_t d, double sigma, Rng& rng) {
  if (absl::Status s = CheckShape(m, d); !s.ok()) return s;
  if (!(sigma > 0.0) || !std::isfinite(sigma)) {
    return absl::InvalidArgumentError(
        absl::StrCat("templates: sigma must be finite and > 0, got ", sigma));
  }
  return NormalMatrix(m, d, 1.0 / sigma, rng);
}

absl::StatusOr<FloatMatrix> SampleStandardNormalTemplates(int64_t m, int64_t d, Rng& rng) {
  if (absl::Status s = CheckShape(m, d); !s.ok()) return s;
  return NormalMatrix(m, d, 1.0, rng);
}

absl::StatusOr<FloatMatrix> SampleDataTemplates(int64_t m, const FloatMatrix& data, Rng& rng) {
  if (absl::Status s = CheckShape(m, data.cols()); !s.ok()) return s;
  if (m > data.rows()) {
    return absl::InvalidArgumentError(
        absl::StrCat("templates: num_templates must be <= ", data.rows(), " data rows, got ", m));
  }
  std::vector<int64_t> order(static_cast<size_t>(data.rows()));
  std::iota(order.begin(), order.end(), 0);
  FloatMatrix t = FloatMatrix::Zeros(m, data.cols());
  for (int64_t j = 0; j < m; ++j) {
    const int64_t pick =
        j + static_cast<int64_t>(rng.UniformInt(static_cast<uint64_t>(data.rows() - j)));
    std::swap(order[static_cast<size_t>(j)], order[static_cast<size_t>(pick)]);
    const float* src = data.row(order[static_cast<size_t>(j)]);
    std::copy(src, src + data.cols(), t.mutable_row(j));
  }
  return t;
}

absl::StatusOr<FloatMatrix> SampleTemplates(const TemplateOptions& options, int64_t d,
                                            const FloatMatrix* data, Rng& rng) {
  switch (options.kind) {
    case TemplateKind::kGaussianRejection:
      return SampleGaussianRejectionTemplates(options.num_templates, d, options.epsilon, rng);
    case TemplateKind::kSphere:
      return SampleSphereTemplates(options.num_templates, d, rng);
    case TemplateKind::kGaussian:
      return SampleGaussianTemplates(options.num_templates, d, options.sigma, rng);
    case TemplateKind::kStandardNormal:
      return SampleStandardNormalTemplates(options.num_templates, d, rng);
    case TemplateKind::kData:
      if (data == nullptr) {
        return absl::InvalidArgumentError("templates: kind DATA needs training rows, got none");
      }
      if (data->cols() != d) {
        return absl::InvalidArgumentError(
            absl::StrCat("templates: data rows must have dimension ", d, ", got ", data->cols()));
      }
      return SampleDataTemplates(options.num_templates, *data, rng);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("templates: unknown template kind ", static_cast<int>(options.kind)));
}

}  // namespace invariant
