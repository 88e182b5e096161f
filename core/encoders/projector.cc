#include "core/encoders/projector.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/bf16.h"
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
  p.SetBank(bank.rows(), bank_dtype);
  return p;
}

absl::StatusOr<Projector> Projector::OverBf16Bank(Bf16Matrix rows16, int64_t num_templates,
                                                  int64_t num_group_elements) {
  if (num_templates <= 0 || num_group_elements <= 0 || rows16.cols() <= 0 ||
      rows16.rows() != num_templates * num_group_elements) {
    return absl::InvalidArgumentError(absl::StrCat(
        "projector: a bf16 bank of ", rows16.rows(), " × ", rows16.cols(), " does not hold ",
        num_templates, " templates × ", num_group_elements, " group elements"));
  }
  Projector p;
  p.placement_ = Placement::kTemplates;
  p.num_templates_ = num_templates;
  p.r_ = num_group_elements;
  p.rows16_ = std::move(rows16);
  p.packed_ = std::make_shared<const PackedBank>(PackedBank::Pack(p.rows16_));
  return p;
}

std::vector<float> Projector::BankRowSquaredNorms() const {
  if (rows16_.empty()) return RowSquaredNorms(rows_);
  std::vector<float> norms(static_cast<size_t>(rows16_.rows()));
  for (int64_t i = 0; i < rows16_.rows(); ++i) {
    double s = 0.0;
    const uint16_t* row = rows16_.row(i);
    for (int64_t k = 0; k < rows16_.cols(); ++k) {
      const double v = Bf16Value(row[k]);
      s += v * v;
    }
    norms[static_cast<size_t>(i)] = static_cast<float>(s);
  }
  return norms;
}

void Projector::SetBank(FloatMatrix rows, BankDtype dtype) {
  if (dtype == BankDtype::kBfloat16) {
    rows16_ = RoundToBf16(rows);
    rows_ = FloatMatrix();
    packed_ = std::make_shared<const PackedBank>(PackedBank::Pack(rows16_));
  } else {
    rows_ = std::move(rows);
    rows16_ = Bf16Matrix();
    packed_ = std::make_shared<const PackedBank>(PackedBank::Pack(rows_));
  }
}

absl::StatusOr<Projector> Projector::OverInput(FloatMatrix templates, int64_t r,
                                               std::shared_ptr<const GroupDistribution> q,
                                               uint64_t seed, BankDtype bank_dtype) {
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
  p.SetBank(std::move(templates), bank_dtype);
  p.q_ = std::move(q);
  p.seed_ = seed;
  return p;
}

absl::StatusOr<Projector> Projector::OverInputOrbit(FloatMatrix templates,
                                                    std::shared_ptr<const GroupDistribution> q,
                                                    const std::vector<GroupElement>& elements,
                                                    BankDtype bank_dtype) {
  if (q == nullptr) return absl::InvalidArgumentError("projector: input placement needs a group");
  if (templates.empty()) return absl::InvalidArgumentError("projector: no templates");
  if (templates.cols() != q->action().dim()) {
    return absl::InvalidArgumentError(absl::StrCat("projector: templates have dimension ",
                                                   templates.cols(), ", group ", q->name(),
                                                   " acts on dimension ", q->action().dim()));
  }
  absl::StatusOr<OrbitOperator> orbit = OrbitOperator::Build(q->action(), elements);
  if (!orbit.ok()) return orbit.status();
  Projector p;
  p.placement_ = Placement::kInput;
  p.num_templates_ = templates.rows();
  p.r_ = static_cast<int64_t>(elements.size());
  p.SetBank(std::move(templates), bank_dtype);
  p.q_ = std::move(q);
  p.orbit_ = std::make_shared<const OrbitOperator>(*std::move(orbit));
  return p;
}

void Projector::ForEachBlock(int64_t n, const float* x, bool need_sq_norms,
                             absl::FunctionRef<void(const ProjectionBlock&)> on_block) const {
  if (n <= 0) return;
  if (placement_ == Placement::kTemplates) {
    ForEachBlockOverBank(n, x, need_sq_norms, on_block);
  } else if (orbit_ != nullptr) {
    ForEachBlockOverOrbit(n, x, need_sq_norms, on_block);
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

void Projector::ForEachBlockOverOrbit(
    int64_t n, const float* x, bool need_sq_norms,
    absl::FunctionRef<void(const ProjectionBlock&)> on_block) const {
  const int64_t d = dim();
  const int64_t r = r_;
  const int64_t m = num_templates_;
  // Input rows per chunk, and per task (≤ kRowBlock transformed copies).
  const int64_t chunk = std::max<int64_t>(1, std::min(n, kOrbitChunkFloats / (r * d)));
  const int64_t rows_per_block = std::max<int64_t>(1, kRowBlock / r);
  std::vector<float> copies(static_cast<size_t>(std::min(n, chunk) * r * d));
  std::vector<float> norms(need_sq_norms ? static_cast<size_t>(std::min(n, chunk) * r) : 0);
  const int64_t want_tasks = 4 * static_cast<int64_t>(DefaultThreadCount());
  for (int64_t c0 = 0; c0 < n; c0 += chunk) {
    const int64_t rows = std::min(chunk, n - c0);
    // The r copies of every row (and their squared norms), split over
    // (row, element) pairs in groups of ≥ 8.
    const int64_t pairs = rows * r;
    const int64_t per_task = std::max<int64_t>(8, pairs / (4 * want_tasks));
    ParallelFor((pairs + per_task - 1) / per_task, [&](int64_t task) {
      const int64_t end = std::min(pairs, (task + 1) * per_task);
      for (int64_t p = task * per_task; p < end; ++p) {
        const int64_t i = p / r, k = p % r;
        float* y = copies.data() + p * d;
        orbit_->ApplyElement(k, x + (c0 + i) * d, y);
        if (need_sq_norms) norms[static_cast<size_t>(p)] = static_cast<float>(SquaredNorm(y, d));
      }
    });
    // Row blocks × template blocks (whole panels of templates), halved
    // while there are fewer than 4 tasks per thread.
    const int64_t row_blocks = (rows + rows_per_block - 1) / rows_per_block;
    int64_t templates_per_block = std::min<int64_t>(m, kBlockColumns / 2);
    while (templates_per_block > PackedBank::kPanelWidth &&
           row_blocks * ((m + templates_per_block - 1) / templates_per_block) < want_tasks) {
      templates_per_block = (templates_per_block + 1) / 2;
    }
    templates_per_block = std::min(m, (templates_per_block + PackedBank::kPanelWidth - 1) /
                                          PackedBank::kPanelWidth * PackedBank::kPanelWidth);
    const int64_t template_blocks = (m + templates_per_block - 1) / templates_per_block;
    ParallelFor(row_blocks * template_blocks, [&](int64_t task) {
      const int64_t i0 = (task / template_blocks) * rows_per_block;
      const int64_t nr = std::min(rows_per_block, rows - i0);
      const int64_t j0 = (task % template_blocks) * templates_per_block;
      const int64_t nt = std::min(templates_per_block, m - j0);
      thread_local std::vector<float> tile, regrouped;
      tile.resize(static_cast<size_t>(nr * r * nt));
      regrouped.resize(static_cast<size_t>(nr * nt * r));
      // tile[(i·r + k)·nt + j] = ⟨t_{j0+j}, g_k·x_i⟩ → regrouped[i·nt·r + j·r + k].
      PackedDot(*packed_, nr * r, copies.data() + i0 * r * d, d, j0, j0 + nt, tile.data(), nt);
      for (int64_t i = 0; i < nr; ++i) {
        for (int64_t k = 0; k < r; ++k) {
          const float* src = tile.data() + (i * r + k) * nt;
          float* dst = regrouped.data() + i * nt * r + k;
          for (int64_t j = 0; j < nt; ++j) dst[j * r] = src[j];
        }
      }
      ProjectionBlock block;
      block.row_begin = c0 + i0;
      block.num_rows = nr;
      block.template_begin = j0;
      block.num_templates = nt;
      block.r = r;
      block.values = regrouped.data();
      block.stride = nt * r;
      block.input_sq_norms = need_sq_norms ? norms.data() + i0 * r : nullptr;
      block.per_element_norms = true;
      on_block(block);
    });
  }
}

}  // namespace invariant
