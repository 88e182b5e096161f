#include "bench/serving/load_generator.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/time/clock.h"

namespace invariant::bench {

double Quantile(std::vector<double>& samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t index =
      std::min(samples.size() - 1, static_cast<size_t>(q * static_cast<double>(samples.size())));
  return samples[index];
}

LoadResult RunLoad(Client& client, const std::string& model, int callers,
                   const std::vector<float>& rows, int64_t input_dim, absl::Duration duration) {
  const int64_t num_rows = static_cast<int64_t>(rows.size()) / input_dim;
  std::vector<std::vector<double>> latencies(static_cast<size_t>(callers));
  std::atomic<int64_t> failures{0};
  const absl::Time start = absl::Now();
  const absl::Time stop = start + duration;
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c) {
    threads.emplace_back([&, c] {
      v1::PredictRequest request;
      request.mutable_model()->set_name(model);
      v1::PredictResponse response;
      for (int64_t i = c; absl::Now() < stop; i += callers) {
        const float* row = rows.data() + (i % num_rows) * input_dim;
        request.mutable_inputs()->mutable_values()->Assign(row, row + input_dim);
        const absl::Time t0 = absl::Now();
        const grpc::Status status = client.Predict(request, &response);
        latencies[static_cast<size_t>(c)].push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
        if (!status.ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  LoadResult result;
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  result.calls = static_cast<int64_t>(all.size());
  result.failures = failures.load();
  result.qps = static_cast<double>(result.calls) / result.seconds;
  result.p50_us = Quantile(all, 0.50);
  result.p99_us = Quantile(all, 0.99);
  return result;
}

}  // namespace invariant::bench
