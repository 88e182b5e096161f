#include "core/encoders/template_bank.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace invariant {

absl::StatusOr<std::vector<GroupElement>> DrawGroupElements(const GroupDistribution& q, int64_t r,
                                                            bool enumerate, Rng& rng) {
  if (enumerate) {
    if (!q.enumerable()) {
      return absl::InvalidArgumentError(absl::StrCat("bank: enumerate requested but distribution ",
                                                     q.name(), " is not enumerable"));
    }
    std::vector<GroupElement> all = q.Enumerate();
    if (all.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bank: distribution ", q.name(), " enumerated no elements"));
    }
    return all;
  }
  if (r <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bank: num_group_elements must be > 0, got ", r));
  }
  std::vector<GroupElement> drawn = q.Sample(r, rng);
  if (static_cast<int64_t>(drawn.size()) != r) {
    return absl::InternalError(absl::StrCat("bank: distribution ", q.name(), " returned ",
                                            drawn.size(), " elements, expected ", r));
  }
  return drawn;
}

absl::StatusOr<TemplateBank> TemplateBank::Build(const FloatMatrix& templates,
                                                 const GroupAction& action,
                                                 const std::vector<GroupElement>& elements) {
  if (templates.empty()) return absl::InvalidArgumentError("bank: no templates");
  if (elements.empty()) return absl::InvalidArgumentError("bank: no group elements");
  if (templates.cols() != action.dim()) {
    return absl::InvalidArgumentError(absl::StrCat("bank: templates have dimension ",
                                                   templates.cols(), ", action ", action.name(),
                                                   " expects ", action.dim()));
  }
  const int64_t m = templates.rows();
  const int64_t d = templates.cols();
  const int64_t r = static_cast<int64_t>(elements.size());
  TemplateBank bank;
  bank.num_templates_ = m;
  bank.num_group_elements_ = r;
  bank.rows_ = FloatMatrix::Zeros(m * r, d);
  FloatMatrix transformed = FloatMatrix::Zeros(m, d);
  for (int64_t k = 0; k < r; ++k) {
    const GroupElement inverse = action.Inverse(elements[static_cast<size_t>(k)]);
    action.Apply(inverse, m, templates.data(), transformed.mutable_data());
    for (int64_t j = 0; j < m; ++j) {
      std::copy(transformed.row(j), transformed.row(j) + d, bank.rows_.mutable_row(j * r + k));
    }
  }
  return bank;
}

absl::StatusOr<TemplateBank> TemplateBank::Sample(const FloatMatrix& templates,
                                                  const GroupDistribution& q, int64_t r,
                                                  bool enumerate, Rng& rng) {
  absl::StatusOr<std::vector<GroupElement>> elements = DrawGroupElements(q, r, enumerate, rng);
  if (!elements.ok()) return elements.status();
  return Build(templates, q.action(), *elements);
}

absl::StatusOr<TemplateBank> TemplateBank::FromRows(FloatMatrix rows, int64_t num_templates,
                                                    int64_t num_group_elements) {
  if (num_templates <= 0 || num_group_elements <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bank: num_templates and num_group_elements must be > 0, got ", num_templates,
                     " and ", num_group_elements));
  }
  if (rows.rows() != num_templates * num_group_elements) {
    return absl::InvalidArgumentError(
        absl::StrCat("bank: tensor must have m·r = ", num_templates * num_group_elements,
                     " rows, got ", rows.rows()));
  }
  if (rows.cols() <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bank: tensor must have > 0 columns, got ", rows.cols()));
  }
  TemplateBank bank;
  bank.rows_ = std::move(rows);
  bank.num_templates_ = num_templates;
  bank.num_group_elements_ = num_group_elements;
  return bank;
}

}  // namespace invariant
