#include "core/encoders/projector.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/random.h"
#include "core/encoders/dot_kernel.h"

namespace invariant {
namespace {

double SquaredNorm(const float* v, int64_t d) {
  double s = 0.0;
  for (int64_t i = 0; i < d; ++i) s += static_cast<double>(v[i]) * v[i];
  return s;
}

}  // namespace

uint64_t HashRowBytes(const float* x, int64_t d) {
  uint64_t h = 0xcbf29ce484222325ULL;
  const auto* bytes = reinterpret_cast<const unsigned char*>(x);
  const size_t n = static_cast<size_t>(d) * sizeof(float);
  for (size_t i = 0; i < n; ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::vector<float> RowSquaredNorms(const FloatMatrix& rows) {
  std::vector<float> norms(static_cast<size_t>(rows.rows()));
  for (int64_t i = 0; i < rows.rows(); ++i) {
    norms[static_cast<size_t>(i)] = static_cast<float>(SquaredNorm(rows.row(i), rows.cols()));
  }
  return norms;
}

Projector Projector::OverBank(TemplateBank bank) {
  Projector p;
  p.placement_ = Placement::kTemplates;
  p.num_templates_ = bank.num_templates();
  p.r_ = bank.num_group_elements();
  p.rows_ = bank.rows();
  return p;
}

absl::StatusOr<Projector> Projector::OverInput(FloatMatrix templates, int64_t r,
                                               std::shared_ptr<const GroupDistribution> q,
                                               uint64_t seed) {
  if (q == nullptr) return absl::InvalidArgumentError("projector: input placement needs a group");
  if (r <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("projector: num_group_elements must be > 0, got ", r));
  }
  if (templates.empty()) return absl::InvalidArgumentError("projector: no templates");
  if (templates.cols() != q->action().dim()) {
    return absl::InvalidArgumentError(absl::StrCat("projector: templates have dimension ",
                                                   templates.cols(), ", group ", q->name(),
                                                   " acts on dimension ", q->action().dim()));
  }
  Projector p;
  p.placement_ = Placement::kInput;
  p.num_templates_ = templates.rows();
  p.r_ = r;
  p.rows_ = std::move(templates);
  p.q_ = std::move(q);
  p.seed_ = seed;
  return p;
}

void Projector::ForEachBlock(int64_t n, const float* x, bool need_sq_norms,
                             absl::FunctionRef<void(const ProjectionBlock&)> on_block) const {
  if (n <= 0) return;
  if (placement_ == Placement::kTemplates) {
    ForEachBlockOverBank(n, x, need_sq_norms, on_block);
  } else {
    ForEachBlockOverInput(n, x, need_sq_norms, on_block);
  }
}

void Projector::ForEachBlockOverBank(
    int64_t n, const float* x, bool need_sq_norms,
    absl::FunctionRef<void(const ProjectionBlock&)> on_block) const {
  const int64_t d = dim();
  // Column blocks (whole templates) sized so one block of projections for
  // the rows of a row block fits kScratchFloats; block sizes never change a
  // value, only how many are computed at once.
  const int64_t templates_per_block =
      std::min(num_templates_, std::max<int64_t>(1, kScratchFloats / std::min(n, kRowBlock) / r_));
  const int64_t max_cols = templates_per_block * r_;
  std::vector<float> scratch(static_cast<size_t>(std::min(n, kRowBlock) * max_cols));
  std::vector<float> norms;
  for (int64_t row0 = 0; row0 < n; row0 += kRowBlock) {
    const int64_t rows = std::min(kRowBlock, n - row0);
    const float* xb = x + row0 * d;
    if (need_sq_norms) {
      norms.resize(static_cast<size_t>(rows));
      for (int64_t i = 0; i < rows; ++i) {
        norms[static_cast<size_t>(i)] = static_cast<float>(SquaredNorm(xb + i * d, d));
      }
    }
    for (int64_t j0 = 0; j0 < num_templates_; j0 += templates_per_block) {
      const int64_t nt = std::min(templates_per_block, num_templates_ - j0);
      const int64_t cols = nt * r_;
      BatchIndependentDot(rows, xb, d, cols, rows_.row(j0 * r_), scratch.data(), cols);
      ProjectionBlock block;
      block.row_begin = row0;
      block.num_rows = rows;
      block.template_begin = j0;
      block.num_templates = nt;
      block.r = r_;
      block.values = scratch.data();
      block.stride = cols;
      block.input_sq_norms = need_sq_norms ? norms.data() : nullptr;
      block.per_element_norms = false;
      block.rows_complete = j0 + nt >= num_templates_;
      on_block(block);
    }
  }
}

void Projector::ForEachBlockOverInput(
    int64_t n, const float* x, bool need_sq_norms,
    absl::FunctionRef<void(const ProjectionBlock&)> on_block) const {
  const int64_t d = dim();
  const GroupAction& action = q_->action();
  std::vector<float> transformed(static_cast<size_t>(r_ * d));
  std::vector<float> scratch(static_cast<size_t>(num_templates_ * r_));
  std::vector<float> norms(static_cast<size_t>(r_));
  for (int64_t i = 0; i < n; ++i) {
    const float* xi = x + i * d;
    Rng rng = Rng::ForStream(seed_, HashRowBytes(xi, d));
    const std::vector<GroupElement> elements = q_->SampleFor(xi, r_, rng);
    for (int64_t k = 0; k < r_; ++k) {
      // A distribution returning fewer elements than asked reuses the identity.
      const GroupElement g = k < static_cast<int64_t>(elements.size())
                                 ? elements[static_cast<size_t>(k)]
                                 : action.Identity();
      action.Apply(g, 1, xi, transformed.data() + k * d);
      if (need_sq_norms) {
        norms[static_cast<size_t>(k)] =
            static_cast<float>(SquaredNorm(transformed.data() + k * d, d));
      }
    }
    // P (m × r) = T (m × d) · Yᵀ (d × r): entry j·r + k = ⟨t_j, g_k·x_i⟩.
    BatchIndependentDot(num_templates_, rows_.data(), d, r_, transformed.data(), scratch.data(),
                        r_);
    ProjectionBlock block;
    block.row_begin = i;
    block.num_rows = 1;
    block.template_begin = 0;
    block.num_templates = num_templates_;
    block.r = r_;
    block.values = scratch.data();
    block.stride = num_templates_ * r_;
    block.input_sq_norms = need_sq_norms ? norms.data() : nullptr;
    block.per_element_norms = true;
    block.rows_complete = true;
    on_block(block);
  }
}

}  // namespace invariant
