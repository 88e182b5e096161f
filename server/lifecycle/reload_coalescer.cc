#include "server/lifecycle/reload_coalescer.h"

namespace invariant::server {

ReloadCoalescer::~ReloadCoalescer() {
  std::thread worker;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    worker = std::move(worker_);
  }
  if (worker.joinable()) worker.join();
}

void ReloadCoalescer::Request(Done done) {
  size_t queued = 0;
  {
    absl::MutexLock lock(&mu_);
    queued_.push_back(std::move(done));
    queued = queued_.size();
    if (!worker_.joinable()) worker_ = std::thread([this] { Loop(); });
  }
  if (on_queued_) on_queued_(queued);
}

bool ReloadCoalescer::HasWork() const { return stopping_ || !queued_.empty(); }

int64_t ReloadCoalescer::runs() const {
  absl::MutexLock lock(&mu_);
  return runs_;
}

void ReloadCoalescer::Loop() {
  while (true) {
    std::vector<Done> batch;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &ReloadCoalescer::HasWork));
      if (queued_.empty()) return;  // stopping, nothing left to serve
      batch.swap(queued_);
    }
    const ScanReport report = reload_();
    {
      absl::MutexLock lock(&mu_);
      ++runs_;
    }
    for (Done& done : batch) done(report);
  }
}

}  // namespace invariant::server
