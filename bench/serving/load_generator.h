// load_generator.h: closed-loop load on invariant-server through invariant::Client.
//
// RunLoad starts `callers` threads; each sends batch-1 Predict calls back to
// back (closed loop) for `duration`, recording every call's latency. The
// result holds the call count, QPS, latency percentiles and failures.
#ifndef INVARIANT_BENCH_SERVING_LOAD_GENERATOR_H_
#define INVARIANT_BENCH_SERVING_LOAD_GENERATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "client/client.h"

namespace invariant::bench {

struct LoadResult {
  int64_t calls = 0;
  int64_t failures = 0;
  double seconds = 0;
  double qps = 0;
  double p50_us = 0;
  double p99_us = 0;
};

// The q-quantile (0..1) of `samples` (sorted in place); 0 when empty.
double Quantile(std::vector<double>& samples, double q);

// Runs the load. `rows` holds candidate input rows of `input_dim` floats;
// caller c sends them round-robin starting at row c.
LoadResult RunLoad(Client& client, const std::string& model, int callers,
                   const std::vector<float>& rows, int64_t input_dim, absl::Duration duration);

}  // namespace invariant::bench

#endif  // INVARIANT_BENCH_SERVING_LOAD_GENERATOR_H_
