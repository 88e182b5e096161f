#include "server/common/model_statistics.h"

#include "absl/strings/str_cat.h"

namespace invariant::server {
namespace {

// Nanoseconds of `d`, 0 for a negative one (a clock step).
uint64_t Nanos(absl::Duration d) {
  const int64_t ns = absl::ToInt64Nanoseconds(d);
  return ns > 0 ? static_cast<uint64_t>(ns) : 0;
}

}  // namespace

void ModelStatisticsTable::Duration::Add(absl::Duration d) {
  ++count;
  ns += Nanos(d);
}

ModelStatisticsTable::Entry* ModelStatisticsTable::At(const std::string& model, int64_t version) {
  if (forgotten_.count({model, version}) != 0) return nullptr;
  return &entries_[{model, version}];
}

void ModelStatisticsTable::RecordBatch(const std::string& model, int64_t version, int64_t rows,
                                       absl::Duration compute) {
  absl::MutexLock lock(&mu_);
  Entry* found = At(model, version);
  if (found == nullptr) return;
  Entry& entry = *found;
  entry.inference_count += rows > 0 ? static_cast<uint64_t>(rows) : 0;
  ++entry.execution_count;
  entry.compute_infer.Add(compute);
  auto it = entry.batch_compute.find(rows);
  if (it == entry.batch_compute.end()) {
    if (entry.batch_compute.size() >= kMaxBatchSizes) return;
    it = entry.batch_compute.emplace(rows, Duration()).first;
  }
  it->second.Add(compute);
}

void ModelStatisticsTable::RecordQueue(const std::string& model, int64_t version,
                                       absl::Duration queued) {
  absl::MutexLock lock(&mu_);
  if (Entry* entry = At(model, version)) entry->queue.Add(queued);
}

void ModelStatisticsTable::RecordRequest(const std::string& model, int64_t version, bool ok,
                                         absl::Duration elapsed, absl::Time end) {
  absl::MutexLock lock(&mu_);
  Entry* found = At(model, version);
  if (found == nullptr) return;
  Entry& entry = *found;
  (ok ? entry.success : entry.fail).Add(elapsed);
  const int64_t ms = absl::ToUnixMillis(end);
  entry.last_inference_ms = ms > 0 ? static_cast<uint64_t>(ms) : 0;
}

void ModelStatisticsTable::RecordInput(const std::string& model, int64_t version,
                                       absl::Duration decoding) {
  absl::MutexLock lock(&mu_);
  if (Entry* entry = At(model, version)) entry->compute_input.Add(decoding);
}

void ModelStatisticsTable::RecordOutput(const std::string& model, int64_t version,
                                        absl::Duration writing) {
  absl::MutexLock lock(&mu_);
  if (Entry* entry = At(model, version)) entry->compute_output.Add(writing);
}

void ModelStatisticsTable::Forget(const std::string& model, int64_t version) {
  absl::MutexLock lock(&mu_);
  entries_.erase({model, version});
  forgotten_.insert({model, version});
}

void ModelStatisticsTable::Loaded(const std::string& model, int64_t version) {
  absl::MutexLock lock(&mu_);
  entries_.erase({model, version});
  forgotten_.erase({model, version});
}

void ModelStatisticsTable::Fill(const std::string& model, int64_t version,
                                inference::ModelStatistics* out) const {
  out->Clear();
  out->set_name(model);
  out->set_version(absl::StrCat(version));
  inference::InferStatistics* stats = out->mutable_inference_stats();
  const auto set = [](const Duration& from, inference::StatisticDuration* to) {
    to->set_count(from.count);
    to->set_ns(from.ns);
  };
  // Every duration present (zeros included), as Triton answers.
  for (inference::StatisticDuration* d :
       {stats->mutable_success(), stats->mutable_fail(), stats->mutable_queue(),
        stats->mutable_compute_input(), stats->mutable_compute_infer(),
        stats->mutable_compute_output(), stats->mutable_cache_hit(), stats->mutable_cache_miss()}) {
    d->Clear();
  }
  absl::MutexLock lock(&mu_);
  auto it = entries_.find({model, version});
  if (it == entries_.end()) return;
  const Entry& entry = it->second;
  out->set_last_inference(entry.last_inference_ms);
  out->set_inference_count(entry.inference_count);
  out->set_execution_count(entry.execution_count);
  set(entry.success, stats->mutable_success());
  set(entry.fail, stats->mutable_fail());
  set(entry.queue, stats->mutable_queue());
  set(entry.compute_input, stats->mutable_compute_input());
  set(entry.compute_infer, stats->mutable_compute_infer());
  set(entry.compute_output, stats->mutable_compute_output());
  for (const auto& [size, compute] : entry.batch_compute) {
    inference::InferBatchStatistics* batch = out->add_batch_stats();
    batch->set_batch_size(static_cast<uint64_t>(size));
    batch->mutable_compute_input();
    set(compute, batch->mutable_compute_infer());
    batch->mutable_compute_output();
  }
}

}  // namespace invariant::server
