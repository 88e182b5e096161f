// reload_coalescer.h: one model rescan at a time, shared by every caller.
//
// ModelAdmin.ReloadModels used to start a thread per call (3,000 concurrent
// calls made 210 threads). A ReloadCoalescer owns ONE worker thread (started
// by the first request) that runs `reload` for every request queued since the
// previous run began: a request arriving while a rescan runs joins the next
// rescan (which therefore sees every change made before the request), and any
// number of requests waiting together cost one rescan. Each request's `done`
// is called once, on the worker thread, with the report of the rescan it
// joined. The destructor serves the requests still queued and joins the
// worker. Thread-safe.
#ifndef INVARIANT_SERVER_LIFECYCLE_RELOAD_COALESCER_H_
#define INVARIANT_SERVER_LIFECYCLE_RELOAD_COALESCER_H_

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/lifecycle/registry.h"

namespace invariant::server {

class ReloadCoalescer {
 public:
  using Done = std::function<void(const ScanReport&)>;

  // `on_queued` (optional, a test hook) is called after each Request with the
  // number of requests waiting for the next rescan.
  explicit ReloadCoalescer(std::function<ScanReport()> reload,
                           std::function<void(size_t queued)> on_queued = nullptr)
      : reload_(std::move(reload)), on_queued_(std::move(on_queued)) {}
  ~ReloadCoalescer();
  ReloadCoalescer(const ReloadCoalescer&) = delete;
  ReloadCoalescer& operator=(const ReloadCoalescer&) = delete;

  // Queues a request for the next rescan; never blocks on a rescan.
  void Request(Done done) ABSL_LOCKS_EXCLUDED(mu_);

  // Rescans run so far.
  int64_t runs() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::function<ScanReport()> reload_;
  const std::function<void(size_t)> on_queued_;
  mutable absl::Mutex mu_;
  std::vector<Done> queued_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t runs_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread worker_ ABSL_GUARDED_BY(mu_);
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_LIFECYCLE_RELOAD_COALESCER_H_
