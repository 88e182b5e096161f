#include "core/encoders/projector.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/random.h"
#include "core/base/thread_pool.h"

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

Projector Projector::OverBank(TemplateBank bank, BankDtype bank_dtype) {
  Projector p;
  p.placement_ = Placement::kTemplates;
  p.num_templates_ = bank.num_templates();
  p.r_ = bank.num_group_elements();
  p.rows_ = bank.rows();
  p.packed_ = std::make_shared<const PackedBank>(PackedBank::Pack(p.rows_, bank_dtype));
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
  p.packed_ = std::make_shared<const PackedBank>(PackedBank::Pack(p.rows_));
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
  std::vector<float> norms;
  if (need_sq_norms) {
    norms.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      norms[static_cast<size_t>(i)] = static_cast<float>(SquaredNorm(x + i * d, d));
    }
  }
  // The task grid. Block sizes never change a value, only what is computed
  // together: row blocks of equal size ≤ kRowBlock; template blocks of
  // ~kBlockColumns columns, smaller while there are fewer than 4 tasks per
  // thread (batch 1 and small batches split over templates).
  const int64_t row_blocks = (n + kRowBlock - 1) / kRowBlock;
  const int64_t row_block = (n + row_blocks - 1) / row_blocks;
  const int64_t want_tasks = 4 * static_cast<int64_t>(DefaultThreadCount());
  int64_t templates_per_block =
      std::min(num_templates_, std::max<int64_t>(1, (kBlockColumns + r_ - 1) / r_));
  while (templates_per_block > 1 &&
         row_blocks * ((num_templates_ + templates_per_block - 1) / templates_per_block) <
             want_tasks) {
    templates_per_block = (templates_per_block + 1) / 2;
  }
  const int64_t template_blocks = (num_templates_ + templates_per_block - 1) / templates_per_block;
  ParallelFor(row_blocks * template_blocks, [&](int64_t task) {
    const int64_t row0 = (task / template_blocks) * row_block;
    const int64_t rows = std::min(row_block, n - row0);
    const int64_t j0 = (task % template_blocks) * templates_per_block;
    const int64_t nt = std::min(templates_per_block, num_templates_ - j0);
    if (rows <= 0) return;
    const int64_t cols = nt * r_;
    thread_local std::vector<float> scratch;
    scratch.resize(static_cast<size_t>(rows * cols));
    PackedDot(*packed_, rows, x + row0 * d, d, j0 * r_, j0 * r_ + cols, scratch.data(), cols);
    ProjectionBlock block;
    block.row_begin = row0;
    block.num_rows = rows;
    block.template_begin = j0;
    block.num_templates = nt;
    block.r = r_;
    block.values = scratch.data();
    block.stride = cols;
    block.input_sq_norms = need_sq_norms ? norms.data() + row0 : nullptr;
    block.per_element_norms = false;
    on_block(block);
  });
}

void Projector::ForEachBlockOverInput(
    int64_t n, const float* x, bool need_sq_norms,
    absl::FunctionRef<void(const ProjectionBlock&)> on_block) const {
  const int64_t d = dim();
  const GroupAction& action = q_->action();
  ParallelFor(n, [&](int64_t i) {
    thread_local std::vector<float> transformed, by_element, scratch, norms;
    transformed.resize(static_cast<size_t>(r_ * d));
    by_element.resize(static_cast<size_t>(r_ * num_templates_));
    scratch.resize(static_cast<size_t>(num_templates_ * r_));
    norms.resize(static_cast<size_t>(r_));
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
    // (r × m) = Y (r × d) · Tᵀ, then transposed: entry j·r + k = ⟨t_j, g_k·x_i⟩.
    PackedDot(*packed_, r_, transformed.data(), by_element.data(), num_templates_);
    for (int64_t k = 0; k < r_; ++k) {
      for (int64_t j = 0; j < num_templates_; ++j) {
        scratch[static_cast<size_t>(j * r_ + k)] =
            by_element[static_cast<size_t>(k * num_templates_ + j)];
      }
    }
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
    on_block(block);
  });
}

}  // namespace invariant
