#include "server/handlers/repository_handler.h"

#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "core/base/error_text.h"
#include "server/handlers/validation.h"

namespace invariant::server {
namespace {

absl::Status CheckRepositoryName(const std::string& repository_name) {
  if (repository_name.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "repository_name: expected '' (the server serves one models directory), received '",
      EchoInput(repository_name), "'"));
}

template <typename Parameters>
absl::Status CheckNoParameters(const Parameters& parameters) {
  if (parameters.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "parameters.", EchoInput(parameters.begin()->first),
      ": expected no parameters (a model is loaded from its bundle under the models directory; "
      "configs and files sent in the request are not supported)"));
}

// The request's repository, model name and parameters.
template <typename Request>
absl::Status CheckModelRequest(const Request& request) {
  if (absl::Status s = CheckRepositoryName(request.repository_name()); !s.ok()) return s;
  if (absl::Status s =
          ValidateModelRef(request.model_name(), 0, {"model_name", "model_version", ""});
      !s.ok()) {
    return s;
  }
  return CheckNoParameters(request.parameters());
}

}  // namespace

absl::Status RepositoryHandler::Index(const inference::RepositoryIndexRequest& request,
                                      inference::RepositoryIndexResponse* response) const {
  if (absl::Status s = CheckRepositoryName(request.repository_name()); !s.ok()) return s;
  for (const RepositoryEntry& entry : registry_->Index(request.ready())) {
    inference::RepositoryIndexResponse::ModelIndex* model = response->add_models();
    model->set_name(entry.name);
    if (entry.version > 0) model->set_version(absl::StrCat(entry.version));
    model->set_state(entry.state);
    model->set_reason(entry.reason);
  }
  return absl::OkStatus();
}

// The worker that runs loads and unloads in order, and the drain thread
// that answers unloads once their calls in flight have ended.
class RepositoryWork {
 public:
  using DoneFn = RepositoryHandler::DoneFn;

  RepositoryWork() {
    worker_ = std::thread([this] { WorkLoop(); });
    drainer_ = std::thread([this] { DrainLoop(); });
  }
  ~RepositoryWork() {
    Stop();
    worker_.join();  // runs the tasks still queued first
    drainer_.join();
  }

  // Queues `task` for the worker; false (not queued) once stopped.
  bool Post(std::function<void()> task) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (stopping_) return false;
    tasks_.push_back(std::move(task));
    return true;
  }

  // Calls `done` with OK once no bit of `in_use` is alive, at `deadline`, or
  // at Stop, whichever comes first.
  void Drain(std::vector<std::weak_ptr<const void>> in_use, absl::Time deadline, DoneFn done)
      ABSL_LOCKS_EXCLUDED(mu_) {
    {
      absl::MutexLock lock(&mu_);
      if (!stopping_) {
        drains_.push_back({std::move(in_use), deadline, std::move(done)});
        return;
      }
    }
    done(absl::OkStatus());
  }

  void Stop() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }

 private:
  struct Waiting {
    std::vector<std::weak_ptr<const void>> in_use;
    absl::Time deadline;
    DoneFn done;
  };

  static bool Drained(const Waiting& waiting, absl::Time now) {
    if (now >= waiting.deadline) return true;
    for (const auto& bits : waiting.in_use) {
      if (!bits.expired()) return false;
    }
    return true;
  }

  void WorkLoop() ABSL_LOCKS_EXCLUDED(mu_) {
    while (true) {
      std::function<void()> task;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](RepositoryWork* w)
                 ABSL_NO_THREAD_SAFETY_ANALYSIS { return w->stopping_ || !w->tasks_.empty(); },
            this));
        if (tasks_.empty()) return;  // stopping, nothing left
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  void DrainLoop() ABSL_LOCKS_EXCLUDED(mu_) {
    while (true) {
      std::vector<DoneFn> answered;
      bool stop = false;
      {
        absl::MutexLock lock(&mu_);
        if (drains_.empty()) {
          mu_.Await(absl::Condition(
              +[](RepositoryWork* w)
                   ABSL_NO_THREAD_SAFETY_ANALYSIS { return w->stopping_ || !w->drains_.empty(); },
              this));
        } else {
          mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::Milliseconds(5));
        }
        const absl::Time now = absl::Now();
        for (auto it = drains_.begin(); it != drains_.end();) {
          if (stopping_ || Drained(*it, now)) {
            answered.push_back(std::move(it->done));
            it = drains_.erase(it);
          } else {
            ++it;
          }
        }
        stop = stopping_ && drains_.empty();
      }
      for (DoneFn& done : answered) done(absl::OkStatus());
      if (stop) return;
    }
  }

  absl::Mutex mu_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  std::vector<Waiting> drains_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread worker_;
  std::thread drainer_;
};

namespace {

absl::Status Stopping() {
  return absl::UnavailableError("server: stopping; models are no longer loaded or unloaded");
}

}  // namespace

RepositoryHandler::RepositoryHandler(Registry* registry, std::function<void()> on_change,
                                     absl::Duration drain_timeout)
    : registry_(registry),
      on_change_(std::move(on_change)),
      drain_timeout_(drain_timeout),
      work_(std::make_unique<RepositoryWork>()) {}

RepositoryHandler::~RepositoryHandler() = default;

void RepositoryHandler::Stop() const { work_->Stop(); }

void RepositoryHandler::Load(const inference::RepositoryModelLoadRequest& request,
                             DoneFn done) const {
  if (absl::Status s = CheckModelRequest(request); !s.ok()) return done(s);
  auto task = [this, name = request.model_name(), done]() {
    absl::Status status = registry_->LoadModel(name);
    if (on_change_) on_change_();
    done(status);
  };
  if (!work_->Post(std::move(task))) done(Stopping());
}

void RepositoryHandler::Unload(const inference::RepositoryModelUnloadRequest& request,
                               DoneFn done) const {
  if (absl::Status s = CheckModelRequest(request); !s.ok()) return done(s);
  auto task = [this, name = request.model_name(), done]() {
    std::vector<std::weak_ptr<const void>> in_use;
    absl::Status status = registry_->UnloadModel(name, &in_use);
    if (on_change_) on_change_();
    // Drain: the calls in flight hold the bits; answer once they have ended.
    if (!status.ok() || in_use.empty()) return done(status);
    work_->Drain(std::move(in_use), absl::Now() + drain_timeout_, done);
  };
  if (!work_->Post(std::move(task))) done(Stopping());
}

}  // namespace invariant::server
