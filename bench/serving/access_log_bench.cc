// invariant-bench-access-log: what the request log adds to one call, piece
// by piece (server/access_log/): a trace context, a record, its line, and
// Close into a file (the writer thread's write included, amortized). What
// they cost a served call is bench/serving/access_log_cost.sh's ratio.
//
//   build/bin/invariant-bench-access-log --benchmark_min_time=0.5
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "server/access_log/access_log.h"

namespace invariant::server {
namespace {

constexpr char kTraceparent[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

std::shared_ptr<RequestRecord> Opened() {
  auto record = std::make_shared<RequestRecord>();
  record->trace = NewTraceContext(kTraceparent, "");
  record->protocol = "http";
  record->method = "POST /v2/models/default/infer";
  record->peer = "ipv4:127.0.0.1:50412";
  record->SetModel("default", 1);
  record->SetAdmission("admitted");
  record->rows = 1;
  return record;
}

void BM_TraceContext(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(NewTraceContext(kTraceparent, ""));
}
BENCHMARK(BM_TraceContext);

void BM_OpenRecord(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Opened());
}
BENCHMARK(BM_OpenRecord);

void BM_Line(benchmark::State& state) {
  const std::shared_ptr<RequestRecord> record = Opened();
  const CallOutcome outcome;
  for (auto _ : state) benchmark::DoNotOptimize(AccessLogLine(*record, outcome));
}
BENCHMARK(BM_Line);

void BM_OpenAndClose(benchmark::State& state) {
  AccessLogOptions options;
  options.mode = AccessLogMode::kAll;
  options.path = "/tmp/invariant-bench-access-log." + std::to_string(::getpid());
  options.max_queued_lines = 1 << 20;
  std::unique_ptr<AccessLog> log = *AccessLog::Open(options);
  for (auto _ : state) log->Close(*Opened(), CallOutcome());
  log.reset();  // the writer's last batch, timed
  ::unlink(options.path.c_str());
}
BENCHMARK(BM_OpenAndClose)->UseRealTime();

}  // namespace
}  // namespace invariant::server

BENCHMARK_MAIN();
