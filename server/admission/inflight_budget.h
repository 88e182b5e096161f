// inflight_budget.h: admission by cost — a budget of something a request
// holds while it is in flight (bytes of memory, seconds of audio to decode),
// taken before the work starts and given back when it ends.
//
// A request asks for its whole estimated cost at once, before anything heavy
// runs (Envoy's overload manager and gRPC's ResourceQuota do the same for
// memory): Acquire either grants a Lease for all of it or refuses, so a
// budget never over-commits and nothing waits in an unbounded queue.
//
//   * The server-wide limit: the sum of the leases held never exceeds
//     `limit`. A request over the budget left is refused with
//     RESOURCE_EXHAUSTED, "retry later" in the message (HTTP 429 with
//     Retry-After); it is retryable because the budget frees as others end.
//   * A request whose cost alone exceeds `limit` could never be admitted: it
//     is refused with INVALID_ARGUMENT naming `field` and saying how to ask
//     for less (not retryable).
//   * The per-key share: the leases of one key (a gRPC peer, i.e. one
//     connection) never exceed `per_key_limit`, so one connection cannot take
//     the whole budget from the others. An empty key has no share of its own
//     (only the server-wide limit applies).
//
// The message of each refusal names the budget (`name`), the cost asked, the
// amount in flight and the limit, e.g. "server: 300000000 bytes asked with
// 900000000 of max_inflight_bytes=1073741824 in flight; retry later".
//
// Thread-safety: every method may be called from any thread. A Lease is
// movable, gives its units back once (on Release or destruction), and may
// outlive nothing: the budget must outlive its leases.
#ifndef INVARIANT_SERVER_ADMISSION_INFLIGHT_BUDGET_H_
#define INVARIANT_SERVER_ADMISSION_INFLIGHT_BUDGET_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace invariant::server {

class InflightBudget;

// Units of an InflightBudget held by one request.
class Lease {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() { Release(); }

  int64_t units() const { return units_; }
  // Gives the units back now (idempotent).
  void Release();

 private:
  friend class InflightBudget;
  Lease(InflightBudget* budget, std::string key, int64_t units)
      : budget_(budget), key_(std::move(key)), units_(units) {}

  InflightBudget* budget_ = nullptr;
  std::string key_;
  int64_t units_ = 0;
};

// Leases handed over by the handler when a call ends, for the front end to
// give back once it has encoded the answer (so a budget covers the answer's
// encoding too). Thread-safe.
class LeaseBag {
 public:
  void Add(Lease lease);
  // Gives every lease back now.
  void Clear();

 private:
  absl::Mutex mu_;
  std::vector<Lease> leases_ ABSL_GUARDED_BY(mu_);
};

struct InflightBudgetOptions {
  std::string name;            // the option that sets `limit`, e.g. "max_inflight_bytes"
  std::string unit = "bytes";  // what a unit is, for messages
  int64_t limit = 0;           // server-wide; <= 0: no limit (every Acquire succeeds)
  int64_t per_key_limit = 0;   // per key; <= 0: no per-key share
  // Called (outside the lock) with the reason of each refusal: "budget" (the
  // server-wide limit), "share" (the key's share) or "too_large" (over the
  // limit alone). May be empty.
  std::function<void(const char* reason)> on_refused;
  // Called with the units in flight after every grant and give-back, with
  // the budget's lock held (so the values arrive in order): must be quick
  // and must not call into the budget. May be empty.
  std::function<void(int64_t in_flight)> on_change;
};

class InflightBudget {
 public:
  explicit InflightBudget(InflightBudgetOptions options) : options_(std::move(options)) {}
  InflightBudget(const InflightBudget&) = delete;
  InflightBudget& operator=(const InflightBudget&) = delete;

  // A lease of `units` (>= 0) for `key`, or the refusal described above.
  // `field` names what the cost comes from ("inputs.clips") and `how_to_ask_less`
  // (called only for that refusal, so a grant builds no message)
  // ends the INVALID_ARGUMENT message ("send fewer clips per request").
  absl::StatusOr<Lease> Acquire(const std::string& key, int64_t units, const std::string& field,
                                absl::FunctionRef<std::string()> how_to_ask_less);

  int64_t in_flight() const;
  int64_t in_flight(const std::string& key) const;
  int64_t limit() const { return options_.limit; }
  const std::string& name() const { return options_.name; }

 private:
  friend class Lease;
  void Give(const std::string& key, int64_t units);

  const InflightBudgetOptions options_;
  mutable absl::Mutex mu_;
  int64_t total_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int64_t> by_key_ ABSL_GUARDED_BY(mu_);  // keys with units held only
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_ADMISSION_INFLIGHT_BUDGET_H_
