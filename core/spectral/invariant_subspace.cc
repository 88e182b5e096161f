#include "core/spectral/invariant_subspace.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "Eigen/Eigenvalues"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/base/math_constants.h"

namespace invariant {
namespace {

// Expansion terms smaller than this are rounding noise of cos/sin at exact
// multiples of π/2 and are dropped.
constexpr double kDropBelow = 1e-15;

using IndexMap = absl::flat_hash_map<std::vector<int32_t>, int64_t>;

IndexMap BuildIndexMap(const IntMatrix& signed_indices) {
  IndexMap map;
  map.reserve(signed_indices.rows());
  const int64_t dim = signed_indices.cols();
  for (int64_t j = 0; j < signed_indices.rows(); ++j) {
    const int32_t* row = signed_indices.row(j);
    map.emplace(std::vector<int32_t>(row, row + dim), j);
  }
  return map;
}

// Expands φ_s(g·x) into signed multi-indices with coefficients.
void ExpandImage(const int32_t* s, int32_t dim, const TorusGeneratorSpec& g,
                 std::vector<std::pair<std::vector<int32_t>, double>>& terms) {
  terms.clear();
  std::vector<int32_t> base(s, s + dim);
  switch (g.kind) {
    case TorusGeneratorKind::kSignFlip: {
      double v = 1.0;
      for (int32_t c : g.coords) {
        if (base[c] < 0) v = -v;  // sin is odd, cos and 1 are even
      }
      terms.emplace_back(base, v);
      return;
    }
    case TorusGeneratorKind::kPermutation: {
      // φ_s(x∘σ) = Π_i f_{s_i}(x_{σ(i)}): the factor of coordinate σ(i) is s_i.
      std::vector<int32_t> image(dim);
      for (int32_t i = 0; i < dim; ++i) image[g.permutation[i]] = base[i];
      terms.emplace_back(std::move(image), 1.0);
      return;
    }
    case TorusGeneratorKind::kShift: {
      // cos(πk(x + a)) = cosθ·cos − sinθ·sin;  sin(πk(x + a)) = cosθ·sin + sinθ·cos,
      // θ = πk·2/p. Multiply out over the shifted coordinates.
      terms.emplace_back(base, 1.0);
      for (int32_t c : g.coords) {
        const int32_t sc = base[c];
        if (sc == 0) continue;
        const int32_t k = std::abs(sc);
        const double theta = kPi * k * 2.0 / g.p;
        const double ct = std::cos(theta);
        const double st = std::sin(theta);
        std::vector<std::pair<std::vector<int32_t>, double>> next;
        for (auto& [idx, v] : terms) {
          auto same = idx;
          auto other = idx;
          other[c] = -idx[c];
          // idx[c] > 0: cos → ct·cos − st·sin; idx[c] < 0: sin → ct·sin + st·cos.
          const double v_same = v * ct;
          const double v_other = idx[c] > 0 ? -v * st : v * st;
          if (std::abs(v_same) > kDropBelow) next.emplace_back(std::move(same), v_same);
          if (std::abs(v_other) > kDropBelow) next.emplace_back(std::move(other), v_other);
        }
        terms.swap(next);
      }
      return;
    }
  }
}

absl::StatusOr<std::vector<GeneratorImage>> ImagesWithMap(const IntMatrix& signed_indices,
                                                          const IndexMap& map,
                                                          const TorusGeneratorSpec& g) {
  const int32_t dim = static_cast<int32_t>(signed_indices.cols());
  std::vector<GeneratorImage> images(signed_indices.rows());
  std::vector<std::pair<std::vector<int32_t>, double>> terms;
  for (int64_t j = 0; j < signed_indices.rows(); ++j) {
    ExpandImage(signed_indices.row(j), dim, g, terms);
    for (auto& [idx, v] : terms) {
      auto it = map.find(idx);
      if (it == map.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "generator image of basis function ", j,
            " lies outside the given function set; the set must be closed under the group"));
      }
      images[j].index.push_back(it->second);
      images[j].value.push_back(v);
    }
  }
  return images;
}

int64_t Find(std::vector<int64_t>& parent, int64_t a) {
  while (parent[a] != a) {
    parent[a] = parent[parent[a]];
    a = parent[a];
  }
  return a;
}

bool IsMonomial(const std::vector<std::vector<GeneratorImage>>& images,
                const std::vector<int64_t>& component) {
  for (const auto& per_gen : images) {
    for (int64_t j : component) {
      const GeneratorImage& im = per_gen[j];
      if (im.index.size() != 1 || std::abs(std::abs(im.value[0]) - 1.0) > 1e-12) return false;
    }
  }
  return true;
}

// Null space of a monomial component: c_{π(j)} = v·c_j along every edge.
// Returns an empty matrix when the signs conflict.
Eigen::MatrixXd MonomialNullSpace(const std::vector<std::vector<GeneratorImage>>& images,
                                  const std::vector<int64_t>& component,
                                  const absl::flat_hash_map<int64_t, int64_t>& local) {
  const int64_t m = static_cast<int64_t>(component.size());
  // Undirected signed adjacency.
  std::vector<std::vector<std::pair<int64_t, double>>> adj(m);
  for (const auto& per_gen : images) {
    for (int64_t a = 0; a < m; ++a) {
      const GeneratorImage& im = per_gen[component[a]];
      const int64_t b = local.at(im.index[0]);
      const double v = im.value[0] > 0 ? 1.0 : -1.0;
      adj[a].emplace_back(b, v);
      adj[b].emplace_back(a, v);
    }
  }
  std::vector<double> c(m, 0.0);
  c[0] = 1.0;
  std::vector<int64_t> stack{0};
  while (!stack.empty()) {
    const int64_t a = stack.back();
    stack.pop_back();
    for (const auto& [b, v] : adj[a]) {
      const double want = v * c[a];
      if (c[b] == 0.0) {
        c[b] = want;
        stack.push_back(b);
      } else if (c[b] != want) {
        return Eigen::MatrixXd(m, 0);
      }
    }
  }
  Eigen::MatrixXd u(m, 1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(m));
  for (int64_t a = 0; a < m; ++a) u(a, 0) = c[a] * scale;
  return u;
}

Eigen::MatrixXd DenseNullSpace(const std::vector<std::vector<GeneratorImage>>& images,
                               const std::vector<int64_t>& component,
                               const absl::flat_hash_map<int64_t, int64_t>& local,
                               double tolerance) {
  const int64_t m = static_cast<int64_t>(component.size());
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(m, m);
  Eigen::MatrixXd b(m, m);
  for (const auto& per_gen : images) {
    b.setZero();
    for (int64_t a = 0; a < m; ++a) {
      const GeneratorImage& im = per_gen[component[a]];
      for (size_t t = 0; t < im.index.size(); ++t) b(a, local.at(im.index[t])) += im.value[t];
      b(a, a) -= 1.0;
    }
    gram.noalias() += b.transpose() * b;
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(gram);
  const Eigen::VectorXd& ev = eig.eigenvalues();  // ascending
  int64_t keep = 0;
  while (keep < m && ev(keep) <= tolerance * tolerance) ++keep;
  return eig.eigenvectors().leftCols(keep);
}

}  // namespace

absl::StatusOr<std::vector<GeneratorImage>> ComputeGeneratorImages(const IntMatrix& signed_indices,
                                                                   const TorusGeneratorSpec& g) {
  const absl::Status st = ValidateTorusGenerator(g, static_cast<int32_t>(signed_indices.cols()), 0);
  if (!st.ok()) return st;
  return ImagesWithMap(signed_indices, BuildIndexMap(signed_indices), g);
}

absl::StatusOr<Eigen::MatrixXd> GeneratorMatrixOnEigenspace(const TorusBasis& basis, int space,
                                                            const TorusGeneratorSpec& g) {
  if (space < 0 || space >= static_cast<int>(basis.eigenspaces.size())) {
    return absl::InvalidArgumentError(absl::StrCat("eigenspace index: expected [0, ",
                                                   basis.eigenspaces.size(), "), got ", space));
  }
  const TorusEigenspace& e = basis.eigenspaces[space];
  IntMatrix rows = IntMatrix::Zeros(e.size(), basis.dim);
  std::copy(basis.signed_indices.row(e.begin), basis.signed_indices.row(e.begin) + rows.size(),
            rows.mutable_data());
  auto images = ComputeGeneratorImages(rows, g);
  if (!images.ok()) return images.status();
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(e.size(), e.size());
  for (int64_t j = 0; j < e.size(); ++j) {
    for (size_t t = 0; t < (*images)[j].index.size(); ++t) {
      d(j, (*images)[j].index[t]) += (*images)[j].value[t];
    }
  }
  return d;
}

absl::StatusOr<InvariantSubspaces> ComputeInvariantSubspaces(
    const TorusBasis& basis, const std::vector<TorusGeneratorSpec>& generators,
    const InvariantSubspaceOptions& options) {
  for (size_t k = 0; k < generators.size(); ++k) {
    const absl::Status st = ValidateTorusGenerator(generators[k], basis.dim, static_cast<int>(k));
    if (!st.ok()) return st;
  }
  const int64_t num = basis.num_functions();
  const IndexMap map = BuildIndexMap(basis.signed_indices);
  std::vector<std::vector<GeneratorImage>> images;
  for (const TorusGeneratorSpec& g : generators) {
    auto im = ImagesWithMap(basis.signed_indices, map, g);
    if (!im.ok()) return im.status();
    images.push_back(*std::move(im));
  }
  // Components of the union of the generators' sparsity patterns.
  std::vector<int64_t> parent(num);
  std::iota(parent.begin(), parent.end(), 0);
  for (const auto& per_gen : images) {
    for (int64_t j = 0; j < num; ++j) {
      for (int64_t t : per_gen[j].index) {
        const int64_t a = Find(parent, j);
        const int64_t b = Find(parent, t);
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
      }
    }
  }
  InvariantSubspaces out;
  SparseCombination& u = out.combination;
  u.num_basis = num;
  out.feature_begin.push_back(0);
  for (const TorusEigenspace& space : basis.eigenspaces) {
    // Components in order of their smallest member (members ascending).
    std::vector<std::vector<int64_t>> components;
    absl::flat_hash_map<int64_t, int64_t> root_to_component;
    for (int64_t j = space.begin; j < space.end; ++j) {
      const int64_t r = Find(parent, j);
      auto [it, inserted] = root_to_component.emplace(r, components.size());
      if (inserted) components.emplace_back();
      components[it->second].push_back(j);
    }
    for (const std::vector<int64_t>& component : components) {
      absl::flat_hash_map<int64_t, int64_t> local;
      for (size_t a = 0; a < component.size(); ++a) local.emplace(component[a], a);
      const Eigen::MatrixXd null =
          (options.monomial_fast_path && IsMonomial(images, component))
              ? MonomialNullSpace(images, component, local)
              : DenseNullSpace(images, component, local, options.tolerance);
      for (int64_t c = 0; c < null.cols(); ++c) {
        // Every member is kept (even exact zeros) so the stored functions of
        // a component stay closed under the generators.
        for (int64_t a = 0; a < null.rows(); ++a) {
          u.basis_index.push_back(component[a]);
          u.feature_index.push_back(u.num_features);
          u.value.push_back(null(a, c));
        }
        ++u.num_features;
      }
    }
    out.feature_begin.push_back(u.num_features);
  }
  return out;
}

Eigen::VectorXd ProjectToInvariant(const InvariantSubspaces& subspaces,
                                   const Eigen::VectorXd& coefficients) {
  const SparseCombination& u = subspaces.combination;
  Eigen::VectorXd invariant = Eigen::VectorXd::Zero(u.num_features);
  for (size_t t = 0; t < u.value.size(); ++t) {
    invariant(u.feature_index[t]) += u.value[t] * coefficients(u.basis_index[t]);
  }
  Eigen::VectorXd projected = Eigen::VectorXd::Zero(coefficients.size());
  for (size_t t = 0; t < u.value.size(); ++t) {
    projected(u.basis_index[t]) += u.value[t] * invariant(u.feature_index[t]);
  }
  return projected;
}

absl::StatusOr<double> GeneratorResidual(const IntMatrix& signed_indices,
                                         const std::vector<TorusGeneratorSpec>& generators,
                                         const Eigen::VectorXd& coefficients) {
  if (coefficients.size() != signed_indices.rows()) {
    return absl::InvalidArgumentError(absl::StrCat("generator residual: expected ",
                                                   signed_indices.rows(), " coefficients, got ",
                                                   coefficients.size()));
  }
  const IndexMap map = BuildIndexMap(signed_indices);
  double worst = 0.0;
  for (size_t k = 0; k < generators.size(); ++k) {
    const absl::Status st = ValidateTorusGenerator(
        generators[k], static_cast<int32_t>(signed_indices.cols()), static_cast<int>(k));
    if (!st.ok()) return st;
    auto images = ImagesWithMap(signed_indices, map, generators[k]);
    if (!images.ok()) return images.status();
    double sq = 0.0;
    for (int64_t j = 0; j < signed_indices.rows(); ++j) {
      double dj = -coefficients(j);
      for (size_t t = 0; t < (*images)[j].index.size(); ++t) {
        dj += (*images)[j].value[t] * coefficients((*images)[j].index[t]);
      }
      sq += dj * dj;
    }
    worst = std::max(worst, std::sqrt(sq));
  }
  return worst;
}

}  // namespace invariant
