// invariant-train: turns data and a TrainConfig into a served model.
//
//   invariant-train --config=FILE.textproto --models=DIR --name=NAME [--version=N]
//       writes DIR/NAME/N/{model.bundle, report.json, report.md}
//   invariant-train --config=... --models=DIR --name=NAME --shard=i/n [--shard_dir=D]
//       featurizes shard i of n and writes its partial sums
//   invariant-train reduce --config=... --models=DIR --name=NAME --shards=n [--shard_dir=D]
//       merges the n shards, solves, evaluates, writes the version
//   invariant-train plan --config=... [--shards=n]
//       prints as JSON the features, targets, solver and the estimated peak
//       bytes of a shard and of the reduce and each shard file's bytes
//       (train/pipeline/training_memory.h): what a pod's memory limit needs
//   invariant-train job --config=... --models=DIR --name=NAME --shards=n --index=i
//       one Indexed Job for the whole sharded run: index i < n is shard i,
//       index n the reduce, which waits for the shard files
//       (--shard_wait_seconds, default 7200 here) and removes them once the
//       version is written (deploy/k8s/train-sharded.yaml)
//   invariant-train certify --config=FILE --model=DIR
//       certifies an existing model on the config's test rows against its
//       certificate.group (default: the model's own group); prints the
//       certificate as JSON (every field, proto field names) and writes nothing
//   invariant-train certify --model=DIR --pairs=MANIFEST [--config=FILE]
//       the empirical certificate over the (original, transformed) input files
//       of MANIFEST (train/pipeline/pair_certificate.h), printed the same way;
//       with --config also the group certificate above, and then the output
//       is {"certificate": {...}, "pairs_certificate": {...}}
// --threads=N sizes the thread pool the encoders featurize on (0: all cores).
//
// On success stdout holds the version directory written and, as its last
// line, the test metrics ("test accuracy=0.8712 on 2000 rows"); progress goes
// to stderr. An explicit --version that exists is refused before training.
//
// A shard or reduce whose estimated peak passes the memory limit
// (--memory_limit_bytes, default the cgroup's memory.max) stops before
// featurizing.
//
// Exit codes: 0 done, 1 training failed (the message names the cause),
// 2 usage error, 3 the memory limit is too small for the run (retrying will
// not help: deploy/k8s/train-sharded.yaml fails the index at once), 130
// interrupted (no partial version is left behind).

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/base/signal_waiter.h"
#include "core/base/thread_pool.h"
#include "core/model/repository.h"
#include "google/protobuf/util/json_util.h"
#include "train/pipeline/certificate.h"
#include "train/pipeline/fold_metrics.h"
#include "train/pipeline/pair_certificate.h"
#include "train/pipeline/trainer.h"

ABSL_FLAG(std::string, config, "", "Training config (protobuf text, invariant.v1.TrainConfig).");
ABSL_FLAG(std::string, models, "", "Model repository: versions go to <models>/<name>/<version>/.");
ABSL_FLAG(std::string, name, "", "Model name.");
ABSL_FLAG(int64_t, version, 0, "Version to write; 0 = one above the highest existing.");
ABSL_FLAG(std::string, shard, "", "i/n: featurize only shard i of n and write its partial sums.");
ABSL_FLAG(int, shards, 0, "reduce: the number of shards to merge.");
ABSL_FLAG(int, index, -1, "job: this pod's index; 0..shards-1 featurize, shards reduces.");
ABSL_FLAG(uint64_t, memory_limit_bytes, 0,
          "Refuse a shard or reduce whose estimated peak passes this; 0 = the cgroup's limit.");
ABSL_FLAG(int64_t, shard_wait_seconds, -1,
          "reduce: wait this long for the shard files (default 0; job: 7200).");
ABSL_FLAG(int, threads, 0, "Threads for featurizing (the process thread pool); 0 = all cores.");
ABSL_FLAG(std::string, shard_dir, "", "Where shard files go (default <models>/<name>/shards).");
ABSL_FLAG(std::string, model, "", "certify: the version directory (or model.bundle) to certify.");
ABSL_FLAG(std::string, pairs, "",
          "certify: a CSV manifest 'original,transformed' of input files (WAV clips for a sound "
          "model) to certify the model on.");
ABSL_FLAG(bool, testonly_hold_before_publish, false,
          "Tests only: print 'holding <staged dir>' and wait for a signal instead of publishing.");

namespace {

// SIGINT and SIGTERM reach one thread through core/base/signal_waiter.h, so
// the cleanup runs in ordinary thread context (it takes a mutex and removes
// directories: neither is async-signal-safe) whichever thread the kernel
// picked, OpenBLAS's pool threads included. The signal is then raised again
// with its default action so the process still dies by it.
void RemoveStagedVersionsOnInterrupt(invariant::SignalWaiter* signals) {
  const int signal = signals->Wait();
  invariant::RemoveStagedVersions();
  invariant::SignalWaiter::RaiseDefault(signal);
}

// "test accuracy=0.8712 on 2000 rows": the last line of a finished run. A
// k-fold run says what its numbers are: "test rmse: mean=15.3394 std=8.71
// (sample, K-1) over 5 folds, pooled=17.2 over 7165 rows; mae: …".
std::string SummaryLine(const invariant::train::TrainSummary& summary) {
  std::vector<std::string> items;
  for (const auto& [name, value] : summary.test_metrics) {
    if (summary.k_fold > 0) {
      items.push_back(absl::StrCat(
          name, ": mean=", absl::SixDigits(value),
          " std=", absl::SixDigits(invariant::train::MetricOrZero(summary.test_metrics_std, name)),
          " (sample, K-1) over ", summary.k_fold, " folds, pooled=",
          absl::SixDigits(invariant::train::MetricOrZero(summary.test_metrics_pooled, name)),
          " over ", summary.test_rows, " rows"));
    } else {
      items.push_back(absl::StrCat(name, "=", absl::SixDigits(value)));
    }
  }
  if (summary.k_fold > 0) return absl::StrCat("test ", absl::StrJoin(items, "; "));
  return absl::StrCat("test ", absl::StrJoin(items, " "), " on ", summary.test_rows, " rows");
}

// A certificate as JSON: every field, proto field names.
bool CertificateJson(const invariant::v1::InvarianceCertificate& c, std::string* text) {
  google::protobuf::util::JsonPrintOptions json;
  json.add_whitespace = true;
  json.always_print_primitive_fields = true;
  json.preserve_proto_field_names = true;
  return google::protobuf::util::MessageToJsonString(c, text, json).ok();
}

// The reduce of `invariant-train job` waits up to two hours for its shards.
constexpr int64_t kJobShardWaitSeconds = 7200;

// Exit code 3 for a memory limit too small for the run, else 1.
int Failed(const absl::Status& status) {
  std::fprintf(stderr, "invariant-train: %s\n", status.ToString().c_str());
  return status.code() == absl::StatusCode::kResourceExhausted ? 3 : 1;
}

// `invariant-train plan`: the run's shape and estimated peaks as JSON.
int PrintPlan(const invariant::train::TrainOptions& o) {
  absl::StatusOr<invariant::train::TrainingPlan> plan = invariant::train::PlanTraining(o);
  if (!plan.ok()) return Failed(plan.status());
  const invariant::train::TrainingShape& s = plan->shape;
  const invariant::train::TrainingMemory& m = plan->memory;
  std::printf(
      "{\"feature_dim\": %lld, \"target_dim\": %lld, \"train_rows\": %lld, "
      "\"solver\": \"%s\", \"shard_bytes\": %lld, \"reduce_bytes\": %lld, "
      "\"shard_file_bytes\": %lld, \"prepared_bytes\": %lld}\n",
      static_cast<long long>(s.feature_dim), static_cast<long long>(s.target_dim),
      static_cast<long long>(plan->train_rows), invariant::train::HeadSolverName(s.solver),
      static_cast<long long>(m.shard_bytes), static_cast<long long>(m.reduce_bytes),
      static_cast<long long>(m.shard_file_bytes), static_cast<long long>(s.prepared_bytes));
  return 0;
}

int Usage(const std::string& message) {
  std::fprintf(stderr, "invariant-train: %s\n%s\n", message.c_str(),
               absl::ProgramUsageMessage().data());
  return 2;
}

// The usage message, and --help listing the flags of this file (absl's
// default looks for a file named after the binary and finds none: "No flags
// matched").
void SetUpUsage() {
  absl::SetProgramUsageMessage(
      "invariant-train --config=FILE --models=DIR --name=NAME [--version=N] [--shard=i/n]\n"
      "       invariant-train reduce --config=FILE --models=DIR --name=NAME --shards=N\n"
      "       invariant-train job --config=FILE --models=DIR --name=NAME --shards=N --index=I\n"
      "       invariant-train plan --config=FILE [--shards=N]\n"
      "       invariant-train certify --config=FILE --model=VERSION_DIR\n"
      "       invariant-train certify --model=VERSION_DIR --pairs=MANIFEST [--config=FILE]");
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "train/main.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
}

// `invariant-train certify`: the group certificate (with a config), the
// pairs certificate (with --pairs), or both, printed as JSON.
int Certify(const std::string& config, const std::string& model, const std::string& pairs) {
  if (model.empty()) return Usage("certify needs --model=VERSION_DIR");
  std::string group_text, pairs_text;
  if (!config.empty()) {
    absl::StatusOr<invariant::v1::InvarianceCertificate> c =
        invariant::train::CertifySavedModel(config, model);
    if (!c.ok()) return Failed(c.status());
    if (!CertificateJson(*c, &group_text)) return 1;
  }
  if (!pairs.empty()) {
    absl::StatusOr<invariant::v1::InvarianceCertificate> c =
        invariant::train::RunPairsCertify(model, pairs);
    if (!c.ok()) return Failed(c.status());
    if (!CertificateJson(*c, &pairs_text)) return 1;
  }
  if (!group_text.empty() && !pairs_text.empty()) {
    std::printf("{\n\"certificate\": %s,\n\"pairs_certificate\": %s\n}\n",
                std::string(absl::StripTrailingAsciiWhitespace(group_text)).c_str(),
                std::string(absl::StripTrailingAsciiWhitespace(pairs_text)).c_str());
  } else {
    std::printf("%s", group_text.empty() ? pairs_text.c_str() : group_text.c_str());
  }
  return 0;
}

// Which run a training command is.
enum class RunKind { kWhole, kShard, kReduce };

// --shard, --shards, --index and the shard files' flags of `command` ("",
// "reduce" or "job") into `o` and `kind`; the usage error, or "" when they
// are right.
std::string ParseShardFlags(const std::string& command, invariant::train::TrainOptions* o,
                            RunKind* kind) {
  const bool job = command == "job";
  *kind = command == "reduce" ? RunKind::kReduce : RunKind::kWhole;
  const std::string shard = absl::GetFlag(FLAGS_shard);
  if (!shard.empty()) {
    std::vector<std::string> parts = absl::StrSplit(shard, '/');
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &o->shard) ||
        !absl::SimpleAtoi(parts[1], &o->num_shards) || o->num_shards < 1 || o->shard < 0 ||
        o->shard >= o->num_shards) {
      return "--shard must be i/n with 0 <= i < n, got '" + shard + "'";
    }
    if (*kind == RunKind::kWhole) *kind = RunKind::kShard;
  }
  if (*kind == RunKind::kReduce || job) {
    o->num_shards = absl::GetFlag(FLAGS_shards);
    if (o->num_shards < 1) return command + " needs --shards=N with N >= 1";
  }
  if (job) {
    if (!shard.empty()) return "job takes --index, not --shard";
    const int index = absl::GetFlag(FLAGS_index);
    if (index < 0 || index > o->num_shards) {
      return "job needs --index=i with 0 <= i <= --shards (i = --shards reduces)";
    }
    *kind = index == o->num_shards ? RunKind::kReduce : RunKind::kShard;
    o->shard = *kind == RunKind::kReduce ? 0 : index;
    o->remove_shards = *kind == RunKind::kReduce;
  }
  const int64_t wait = absl::GetFlag(FLAGS_shard_wait_seconds);
  o->shard_wait_seconds = wait >= 0 ? wait : job ? kJobShardWaitSeconds : 0;
  o->memory_limit_bytes = absl::GetFlag(FLAGS_memory_limit_bytes);
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  auto interrupts = invariant::SignalWaiter::Install({SIGINT, SIGTERM});
  if (!interrupts.ok()) {
    std::fprintf(stderr, "invariant-train: %s\n", interrupts.status().ToString().c_str());
    return 1;
  }
  SetUpUsage();
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  invariant::train::TrainOptions o;
  o.config_path = absl::GetFlag(FLAGS_config);
  o.models_dir = absl::GetFlag(FLAGS_models);
  o.name = absl::GetFlag(FLAGS_name);
  o.version = absl::GetFlag(FLAGS_version);
  o.shard_dir = absl::GetFlag(FLAGS_shard_dir);
  o.testonly_hold_before_publish = absl::GetFlag(FLAGS_testonly_hold_before_publish);
  const std::string command = args.size() == 2 ? args[1] : "";
  const bool certify = command == "certify";
  if (args.size() > 2 || (args.size() == 2 && !certify && command != "reduce" &&
                          command != "plan" && command != "job")) {
    return Usage("unknown argument '" + std::string(args[args.size() > 2 ? 2 : 1]) + "'");
  }
  const std::string pairs = absl::GetFlag(FLAGS_pairs);
  if (!pairs.empty() && !certify) return Usage("--pairs applies to certify only");
  if (o.config_path.empty() && !(certify && !pairs.empty())) {
    return Usage("--config is required");
  }
  if (certify) return Certify(o.config_path, absl::GetFlag(FLAGS_model), pairs);
  if (command == "plan") {
    o.num_shards = std::max(1, absl::GetFlag(FLAGS_shards));
    return PrintPlan(o);
  }
  if (o.models_dir.empty()) return Usage("--models is required");
  if (o.name.empty() || o.name.find('/') != std::string::npos || o.name[0] == '.') {
    return Usage("--name must be a non-empty name without '/' and not starting with '.'");
  }
  if (o.version < 0) return Usage("--version must be >= 0");
  RunKind kind = RunKind::kWhole;
  if (const std::string error = ParseShardFlags(command, &o, &kind); !error.empty()) {
    return Usage(error);
  }
  if (const int threads = absl::GetFlag(FLAGS_threads); threads != 0) {
    if (absl::Status s = invariant::SetDefaultThreadCount(threads); !s.ok()) {
      return Usage("--threads: " + std::string(s.message()));
    }
  }
  // The waiter lives as long as the process: the thread blocks in it until exit.
  std::thread(RemoveStagedVersionsOnInterrupt, interrupts->release()).detach();
  invariant::train::TrainSummary summary;
  absl::StatusOr<std::string> result =
      kind == RunKind::kReduce  ? invariant::train::RunReduce(o, &summary)
      : kind == RunKind::kShard ? invariant::train::RunShard(o)
                                : invariant::train::RunTraining(o, &summary);
  if (!result.ok()) return Failed(result.status());
  std::printf("%s\n", result->c_str());
  if (!summary.test_metrics.empty()) std::printf("%s\n", SummaryLine(summary).c_str());
  return 0;
}
