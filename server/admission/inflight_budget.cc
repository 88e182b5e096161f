#include "server/admission/inflight_budget.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace invariant::server {

Lease::Lease(Lease&& other) noexcept
    : budget_(other.budget_), key_(std::move(other.key_)), units_(other.units_) {
  other.budget_ = nullptr;
  other.units_ = 0;
}

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = other.budget_;
    key_ = std::move(other.key_);
    units_ = other.units_;
    other.budget_ = nullptr;
    other.units_ = 0;
  }
  return *this;
}

void Lease::Release() {
  if (budget_ != nullptr && units_ > 0) budget_->Give(key_, units_);
  budget_ = nullptr;
  units_ = 0;
}

void LeaseBag::Add(Lease lease) {
  absl::MutexLock lock(&mu_);
  leases_.push_back(std::move(lease));
}

void LeaseBag::Clear() {
  std::vector<Lease> leases;
  {
    absl::MutexLock lock(&mu_);
    leases.swap(leases_);
  }
}

absl::StatusOr<Lease> InflightBudget::Acquire(const std::string& key, int64_t units,
                                              const std::string& field,
                                              absl::FunctionRef<std::string()> how_to_ask_less) {
  if (units < 0) units = 0;
  const int64_t limit = options_.limit;
  if (limit <= 0 || units == 0) return Lease(nullptr, key, 0);
  const char* refused = nullptr;
  absl::Status status;
  if (units > limit) {
    refused = "too_large";
    status = absl::InvalidArgumentError(
        absl::StrCat(field, ": the request costs ", units, " ", options_.unit, ", over ",
                     options_.name, "=", limit, " for one request; ", how_to_ask_less()));
  } else {
    absl::MutexLock lock(&mu_);
    const bool keyed = !key.empty() && options_.per_key_limit > 0;
    int64_t of_key = 0;
    if (keyed) {
      auto it = by_key_.find(key);
      if (it != by_key_.end()) of_key = it->second;
    }
    if (total_ + units > limit) {
      refused = "budget";
      status = absl::ResourceExhaustedError(
          absl::StrCat("server: ", units, " ", options_.unit, " asked with ", total_, " of ",
                       options_.name, "=", limit, " in flight; retry later"));
    } else if (keyed && of_key > 0 && of_key + units > options_.per_key_limit) {
      // A key's first request is admitted whatever its size (up to the
      // server-wide limit): the share bounds how much one connection adds.
      refused = "share";
      status = absl::ResourceExhaustedError(
          absl::StrCat("connection: ", units, " ", options_.unit, " asked with ", of_key,
                       " in flight on this connection, over its share of ", options_.name, " (",
                       options_.per_key_limit, "); retry later or spread the calls"));
    } else {
      total_ += units;
      if (keyed) by_key_[key] += units;
      if (options_.on_change) options_.on_change(total_);
      return Lease(this, keyed ? key : std::string(), units);
    }
  }
  if (options_.on_refused) options_.on_refused(refused);
  return status;
}

void InflightBudget::Give(const std::string& key, int64_t units) {
  absl::MutexLock lock(&mu_);
  total_ -= units;
  if (options_.on_change) options_.on_change(total_);
  if (key.empty()) return;
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return;
  it->second -= units;
  if (it->second <= 0) by_key_.erase(it);
}

int64_t InflightBudget::in_flight() const {
  absl::MutexLock lock(&mu_);
  return total_;
}

int64_t InflightBudget::in_flight(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = by_key_.find(key);
  return it == by_key_.end() ? 0 : it->second;
}

}  // namespace invariant::server
