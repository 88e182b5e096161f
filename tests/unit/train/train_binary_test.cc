// The invariant-train binary as a user runs it: exit codes, output paths,
// shipped configs, Ctrl-C leaving no partial version behind, and a sharded
// run as an Indexed Job runs it (one process per index).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/run_options.h"
#include "tests/unit/train/train_test_util.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// Runs the binary with `args`; returns the wait status, stdout in *out.
int RunTrain(const std::vector<std::string>& args, std::string* out) {
  std::string cmd = INVARIANT_TRAIN_BINARY;
  for (const std::string& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, got);
  return pclose(p);
}

TEST(TrainBinaryTest, DefaultConfigTrainsAndPrintsTheVersionDirectory) {
  TempDir dir;
  std::string out;
  const int status = RunTrain(
      {std::string("--config=") + INVARIANT_SOURCE_DIR + "/train/configs/default.textproto",
       "--models=" + dir.path(), "--name=default"},
      &out);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_THAT(out, ::testing::HasSubstr(dir.path() + "/default/1"));
  EXPECT_TRUE(fs::exists(dir.path() + "/default/1/model.bundle"));
  // The last line is the test metric, e.g. "test accuracy=0.8712 on 2000 rows".
  std::string trimmed = out.substr(0, out.find_last_not_of('\n') + 1);
  const std::string last = trimmed.substr(trimmed.find_last_of('\n') + 1);
  EXPECT_THAT(last, ::testing::MatchesRegex("test accuracy=[0-9.e-]+ on [0-9]+ rows")) << out;
}

std::string DefaultConfig() {
  return std::string("--config=") + INVARIANT_SOURCE_DIR + "/train/configs/default.textproto";
}

// The shipped default config trained by 4 shard processes and a reduce
// process (`invariant-train job --index=i`, as train-sharded.yaml runs it)
// predicts what one unsharded run's model predicts, and the reduce removes
// the run's shard files.
TEST(TrainBinaryTest, IndexedJobOfFourShardsPredictsAsOneRun) {
  TempDir dir;
  std::string out;
  int status = RunTrain({DefaultConfig(), "--models=" + dir.path() + "/one", "--name=m"}, &out);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  const std::string shard_dir = dir.path() + "/shards/run-1";
  const std::vector<std::string> job = {"job",
                                        DefaultConfig(),
                                        "--models=" + dir.path() + "/sharded",
                                        "--name=m",
                                        "--shards=4",
                                        "--shard_dir=" + shard_dir,
                                        "--shard_wait_seconds=0"};
  for (int index = 0; index <= 4; ++index) {
    std::vector<std::string> args = job;
    args.push_back("--index=" + std::to_string(index));
    out.clear();
    status = RunTrain(args, &out);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "index " << index << ": " << out;
    if (index < 4)
      EXPECT_TRUE(fs::exists(shard_dir + "/shard-" + std::to_string(index) + "-of-4.gram"));
  }
  EXPECT_FALSE(fs::exists(shard_dir)) << "the reduce removes the shard files";
  auto one = testing::LoadVersion(dir.path() + "/one/m/1");
  auto sharded = testing::LoadVersion(dir.path() + "/sharded/m/1");
  ASSERT_TRUE(one != nullptr && sharded != nullptr);
  testing::ExpectSameHead(*one, *sharded);
  // Predictions on inputs neither run saw: one-hot blocks of the model's shape.
  const int64_t n = 64, d = one->input_dim();
  Rng rng(11);
  std::vector<float> x(static_cast<size_t>(n * d), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t b = 0; b < d / 8; ++b)
      x[static_cast<size_t>(i * d + b * 8) + rng.UniformInt(8)] = 1;
  }
  std::vector<float> a(static_cast<size_t>(n * one->output_dim())), b(a.size());
  one->Predict(n, x.data(), a.data());
  sharded->Predict(n, x.data(), b.data());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 1e-4) << "score " << k;
}

// A reduce whose shards are not all there waits no longer than it is told
// and names them; a shard whose estimated peak passes its memory limit
// exits 3 before featurizing, with the figures.
TEST(TrainBinaryTest, ReduceNamesMissingShardsAndAShardOverItsMemoryLimitExitsThree) {
  TempDir dir;
  std::string out;
  int status = RunTrain({"job", DefaultConfig(), "--models=" + dir.path(), "--name=m", "--shards=2",
                         "--index=2", "--shard_wait_seconds=0"},
                        &out);
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("shard files of shards 0, 1 of 2 still missing"));
  out.clear();
  status = RunTrain({"job", DefaultConfig(), "--models=" + dir.path(), "--name=m", "--shards=2",
                     "--index=0", "--memory_limit_bytes=1000000"},
                    &out);
  EXPECT_EQ(WEXITSTATUS(status), 3) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("RESOURCE_EXHAUSTED: shard 0 of 2 needs about"));
  EXPECT_THAT(out, ::testing::HasSubstr("1275 features"));
  EXPECT_FALSE(fs::exists(dir.path() + "/m/shards"));
}

// `plan` prints the run's figures as JSON without training.
TEST(TrainBinaryTest, PlanPrintsTheFeaturesAndPeakBytes) {
  std::string out;
  const int status = RunTrain({"plan", DefaultConfig(), "--shards=4"}, &out);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("\"feature_dim\": 1275"));
  EXPECT_THAT(out, ::testing::HasSubstr("\"solver\": \"band\""));
  EXPECT_THAT(out, ::testing::ContainsRegex("\"reduce_bytes\": [1-9][0-9]{7,}"));
}

TEST(TrainBinaryTest, HelpListsTheTrainingFlags) {
  std::string out;
  RunTrain({"--help"}, &out);
  EXPECT_THAT(out, ::testing::Not(::testing::HasSubstr("No flags matched")));
  for (const char* flag :
       {"--config", "--models", "--name", "--version", "--shard", "--shards", "--threads",
        "--shard_dir", "--index", "--memory_limit_bytes", "--shard_wait_seconds"}) {
    EXPECT_THAT(out, ::testing::HasSubstr(flag)) << out;
  }
}

TEST(TrainBinaryTest, AnExistingVersionIsRefusedBeforeTraining) {
  TempDir dir;
  fs::create_directories(dir.path() + "/default/1");
  std::string out;
  const int status = RunTrain(
      {std::string("--config=") + INVARIANT_SOURCE_DIR + "/train/configs/default.textproto",
       "--models=" + dir.path(), "--name=default", "--version=1"},
      &out);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_THAT(out, ::testing::HasSubstr("version 1 exists and is never overwritten"));
  EXPECT_THAT(out, ::testing::Not(::testing::HasSubstr("data: ")));  // no stage ran
  EXPECT_FALSE(fs::exists(dir.path() + "/default/1/model.bundle"));
}

TEST(TrainBinaryTest, UsageErrorsExitWithTwo) {
  std::string out;
  int status = RunTrain({"--models=/tmp", "--name=x"}, &out);
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_THAT(out, ::testing::HasSubstr("--config is required"));
  out.clear();
  status = RunTrain({"--config=x", "--models=/tmp", "--name=x", "--shard=3/2"}, &out);
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_THAT(out, ::testing::HasSubstr("--shard must be i/n"));
}

TEST(TrainBinaryTest, ConfigErrorExitsWithOneNamingTheField) {
  TempDir dir;
  const std::string cfg =
      dir.Write("bad.textproto", "data { xperm {} }\nlearner { kind: RIDGE }\n");
  std::string out;
  const int status = RunTrain({"--config=" + cfg, "--models=" + dir.path(), "--name=m"}, &out);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_THAT(out, ::testing::HasSubstr("encoder must set one of cdf"));
  EXPECT_FALSE(fs::exists(dir.path() + "/m/1"));
}

TEST(TrainBinaryTest, CertifyPrintsTheCertificateOfAnExistingModel) {
  TempDir dir;
  const std::string cfg = dir.Write("xperm.textproto", testing::kXpermConfig);
  std::string out;
  int status = RunTrain({"--config=" + cfg, "--models=" + dir.path(), "--name=m"}, &out);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  out.clear();
  status = RunTrain({"certify", "--config=" + cfg, "--model=" + dir.path() + "/m/1"}, &out);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("\"max_discrepancy\": 0,"));
  EXPECT_THAT(out, ::testing::HasSubstr("\"exhaustive\": true"));
  EXPECT_THAT(out, ::testing::HasSubstr("\"block_permutation\": {"));
  out.clear();
  status = RunTrain({"certify", "--config=" + cfg}, &out);
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_THAT(out, ::testing::HasSubstr("certify needs --model"));
}

TEST(TrainBinaryTest, InterruptLeavesNoVersionAndNoStagingDirectory) {
  TempDir dir;
  const std::string cfg = dir.Write("xperm.textproto", testing::kXpermConfig);
  int err[2];
  ASSERT_EQ(pipe(err), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(err[1], STDERR_FILENO);
    close(err[0]);
    close(err[1]);
    freopen("/dev/null", "w", stdout);
    execl(INVARIANT_TRAIN_BINARY, INVARIANT_TRAIN_BINARY, ("--config=" + cfg).c_str(),
          ("--models=" + dir.path()).c_str(), "--name=m", "--testonly_hold_before_publish",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(err[1]);
  // The trainer holds once its staged version is complete: read its stderr
  // until it says so (no clock involved), then interrupt it there.
  std::string log;
  char buf[4096];
  ssize_t got = 0;
  while (log.find("invariant-train: holding ") == std::string::npos &&
         (got = read(err[0], buf, sizeof(buf))) > 0) {
    log.append(buf, static_cast<size_t>(got));
  }
  ASSERT_NE(log.find("invariant-train: holding "), std::string::npos) << log;
  const size_t at = log.find("invariant-train: holding ") + 25;
  const std::string staged = log.substr(at, log.find('\n', at) - at);
  EXPECT_TRUE(fs::exists(fs::path(staged) / "model.bundle")) << staged;
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  close(err[0]);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_FALSE(fs::exists(staged));
  EXPECT_FALSE(fs::exists(dir.path() + "/m/1"));
  for (const auto& e : fs::directory_iterator(dir.path() + "/m")) {
    EXPECT_NE(e.path().filename().string().rfind(".tmp-", 0), 0u) << e.path();
  }
}

}  // namespace
}  // namespace invariant::train
