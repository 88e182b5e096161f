// cli_test.cc: the REAL invariant-client binary against the REAL
// invariant-server on 127.0.0.1 — every subcommand, both output formats,
// every exit code, and bad input rows reported with their line numbers.
// Outputs are checked against the client library's answers for the same rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/base/unit_byte.h"
#include "tests/cli/cli_test_support.h"
#include "tests/integration/integration_env.h"

namespace invariant::cli_test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kDim = 16;
constexpr int kClasses = 3;

class CliTest : public testing_server::ServerTestBase {
 protected:
  void SetUp() override {
    ServerTestBase::SetUp();
    testing_models::TestModelSpec rf;  // rf: input 16, features 16, 3 classes
    rf.name = "rf";
    rf.version = 1;
    rf.seed = 1;
    WriteModel(rf);
    rf.version = 2;
    rf.seed = 2;
    WriteModel(rf);
    WriteFile(models() + "/rf/labels.txt", "stable 1\n");
    testing_models::TestModelSpec feat;  // featurize-only: no head
    feat.name = "feat";
    feat.num_classes = 0;
    WriteModel(feat);
    StartServer({"--version_policy=all"});
    target_ = "--target=" + server_->target();
  }

  ToolResult Cli(std::vector<std::string> args, const std::string& stdin_path = "") {
    return RunTool(INVARIANT_CLIENT_BINARY, args, dir_.string(), stdin_path);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // n seeded rows as text lines joined by `delimiter`.
  static std::vector<std::string> TextRows(const std::vector<float>& x, int64_t d,
                                           const std::string& delimiter) {
    std::vector<std::string> lines;
    for (size_t i = 0; i < x.size(); i += static_cast<size_t>(d)) {
      std::vector<std::string> fields;
      for (int64_t j = 0; j < d; ++j) fields.push_back(absl::StrCat(x[i + static_cast<size_t>(j)]));
      lines.push_back(absl::StrJoin(fields, delimiter));
    }
    return lines;
  }
  static std::string Header(int64_t d) {
    std::vector<std::string> names;
    for (int64_t j = 0; j < d; ++j) names.push_back(absl::StrCat("x", j));
    return absl::StrJoin(names, ",");
  }
  // The floats of a CSV data line.
  static std::vector<float> Floats(const std::string& line) {
    std::vector<float> values;
    for (absl::string_view f : absl::StrSplit(line, ',')) {
      float v = 0;
      EXPECT_TRUE(absl::SimpleAtof(f, &v)) << f;
      values.push_back(v);
    }
    return values;
  }
  // Rows re-read from their text form, as the CLI sends them.
  static std::vector<float> AsSent(const std::vector<float>& x) {
    std::vector<float> out;
    for (float v : x) {
      float parsed = 0;
      EXPECT_TRUE(absl::SimpleAtof(absl::StrCat(v), &parsed));
      out.push_back(parsed);
    }
    return out;
  }

  std::string target_;
};

TEST_F(CliTest, HealthReportsServingAndExitsZero) {
  ToolResult r = Cli({"health", target_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "SERVING\n");

  r = Cli({"health", target_, "--service=invariant.v1.FeatureService", "--format=jsonl"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  google::protobuf::Struct json;
  ASSERT_TRUE(ParseJson(r.out, &json)) << r.out;
  EXPECT_EQ(json.fields().at("status").string_value(), "SERVING");
  EXPECT_EQ(json.fields().at("service").string_value(), "invariant.v1.FeatureService");
}

TEST_F(CliTest, HealthOfUnknownServiceExitsThreeWithTheCode) {
  const ToolResult r = Cli({"health", target_, "--service=no.such.Service"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND"));
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, HealthOfUnreachableServerExitsThree) {
  const int port = testing_server::FreePort();
  const ToolResult r = Cli({"health", absl::StrCat("--target=127.0.0.1:", port), "--timeout=5"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("health: UNAVAILABLE: "));
}

TEST_F(CliTest, StatsListsEveryLoadedVersionOrTheOneAskedFor) {
  const std::vector<float> x = testing_server::ServerTestBase::RandomRows(3, kDim, 4);
  std::vector<float> scores;
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(client_->Predict("rf", 3, x, &scores).ok());  // v2
  ToolResult r = Cli({"stats", target_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;  // header, feat 1, rf 1, rf 2
  EXPECT_THAT(lines[0], StartsWith("model,version,last_inference,inference_count,execution_count,"
                                   "success_count,success_ns,fail_count,fail_ns,queue_count"));
  EXPECT_THAT(lines[1], StartsWith("feat,1,0,0,0,0,0,"));
  EXPECT_THAT(lines[2], StartsWith("rf,1,0,0,0,"));
  const std::vector<std::string> v2 = absl::StrSplit(lines[3], ',');
  ASSERT_EQ(v2.size(), 17u) << lines[3];
  EXPECT_EQ(v2[1], "2");
  EXPECT_EQ(v2[3], "6");  // rows
  EXPECT_EQ(v2[4], "2");  // batches
  EXPECT_EQ(v2[5], "2");  // successful requests

  r = Cli({"stats", "rf", "--version=2", "--format=jsonl", target_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  google::protobuf::Struct json;
  ASSERT_TRUE(ParseJson(lines[0], &json)) << lines[0];
  EXPECT_EQ(json.fields().at("inference_count").number_value(), 6);
  EXPECT_EQ(json.fields().at("batch_stats").list_value().values_size(), 1);
  EXPECT_EQ(Lines(Cli({"stats", "rf", "--version_label=stable", target_}).out).size(), 2u);

  r = Cli({"stats", "nope", target_});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND"));
}

TEST_F(CliTest, ModelsListsEveryVersionWithLabels) {
  ToolResult r = Cli({"models", target_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0], "model,version,encoder_kind,has_head,labels");
  EXPECT_THAT(lines, ::testing::Contains("rf,2,random_fourier,true,"));
  EXPECT_THAT(lines, ::testing::Contains("rf,1,random_fourier,true,stable"));
  EXPECT_THAT(lines, ::testing::Contains("feat,1,random_fourier,false,"));

  r = Cli({"models", target_, "--format=jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  int with_label = 0;
  for (const std::string& line : lines) {
    google::protobuf::Struct json;
    ASSERT_TRUE(ParseJson(line, &json)) << line;
    const auto& f = json.fields();
    EXPECT_EQ(f.at("has_head").bool_value(), f.at("model").string_value() == "rf") << line;
    if (f.at("labels").list_value().values_size() == 1) {
      ++with_label;
      EXPECT_EQ(f.at("labels").list_value().values(0).string_value(), "stable");
      EXPECT_EQ(f.at("version").number_value(), 1);
    }
  }
  EXPECT_EQ(with_label, 1);
}

TEST_F(CliTest, MetadataInCsvAndJsonlAndVersionSelection) {
  ToolResult r = Cli({"metadata", "rf", target_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  EXPECT_EQ(lines[0], "field,value");
  EXPECT_THAT(lines, ::testing::Contains("model_name,rf"));
  EXPECT_THAT(lines, ::testing::Contains("model_version,2"));  // newest
  EXPECT_THAT(lines, ::testing::Contains("input_dim,16"));
  EXPECT_THAT(lines, ::testing::Contains("feature_dim,16"));
  EXPECT_THAT(lines, ::testing::Contains("output_dim,3"));
  EXPECT_THAT(lines, ::testing::Contains("task,classification"));
  // The certificate's scale-free figure beside the absolute ones.
  EXPECT_THAT(lines,
              ::testing::Contains(::testing::StartsWith("certificate.relative_mean_discrepancy,")));
  EXPECT_THAT(lines,
              ::testing::Contains(::testing::StartsWith("certificate.mean_pairwise_difference,")));

  r = Cli({"metadata", "rf", target_, "--version=1", "--format=jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  google::protobuf::Struct json;
  ASSERT_TRUE(ParseJson(r.out, &json)) << r.out;
  EXPECT_EQ(json.fields().at("model_version").number_value(), 1);
  EXPECT_EQ(json.fields().at("input_dim").number_value(), kDim);
  EXPECT_EQ(json.fields().at("class_names").list_value().values_size(), kClasses);
  EXPECT_TRUE(json.fields()
                  .at("certificate")
                  .struct_value()
                  .fields()
                  .contains("relative_mean_discrepancy"));

  r = Cli({"metadata", "rf", target_, "--version_label=stable"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ::testing::Contains("model_version,1"));

  r = Cli({"metadata", "feat", target_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ::testing::Contains("task,none"));
  EXPECT_THAT(Lines(r.out), ::testing::Contains("output_dim,0"));
}

TEST_F(CliTest, MetadataOfUnknownModelExitsThree) {
  const ToolResult r = Cli({"metadata", "nope", target_});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("metadata: NOT_FOUND: "));
  EXPECT_THAT(r.err, HasSubstr("nope"));
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, FeaturizeCsvFileWithHeaderAndCommentsMatchesTheLibrary) {
  const std::vector<float> x = RandomRows(5, kDim, 11);
  std::vector<std::string> lines = TextRows(x, kDim, ",");
  lines.insert(lines.begin(), "# five rows");
  lines.insert(lines.begin() + 1, Header(kDim));
  lines.insert(lines.begin() + 3, "");
  WriteFile(Path("rows.csv"), absl::StrJoin(lines, "\r\n") + "\r\n");
  const ToolResult r = Cli({"featurize", "rf", target_, "--input=" + Path("rows.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<float> expected;
  ASSERT_TRUE(client_->Featurize("rf", 5, AsSent(x), &expected).ok());
  const std::vector<std::string> out = Lines(r.out);
  ASSERT_EQ(out.size(), 6u) << r.out;
  EXPECT_THAT(out[0], StartsWith("f_0,f_1,"));
  const size_t k = expected.size() / 5;
  for (size_t i = 0; i < 5; ++i) {
    const std::vector<float> got = Floats(out[i + 1]);
    ASSERT_EQ(got.size(), k);
    for (size_t j = 0; j < k; ++j) EXPECT_EQ(got[j], expected[i * k + j]) << i << "," << j;
  }
}

TEST_F(CliTest, FeaturizeTsvFromStdinAsJsonLines) {
  const std::vector<float> x = RandomRows(4, kDim, 12);
  WriteFile(Path("rows.txt"), absl::StrJoin(TextRows(x, kDim, "\t"), "\n") + "\n");
  const ToolResult r =
      Cli({"featurize", "rf", target_, "--delimiter=tab", "--format=jsonl", "--version=1"},
          Path("rows.txt"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  v1::FeaturizeRequest request;
  request.mutable_model()->set_name("rf");
  request.mutable_model()->set_version(1);
  request.mutable_inputs()->set_num_rows(4);
  const std::vector<float> sent = AsSent(x);
  request.mutable_inputs()->mutable_values()->Assign(sent.begin(), sent.end());
  v1::FeaturizeResponse expected;
  ASSERT_TRUE(client_->Featurize(request, &expected).ok());
  const std::vector<std::string> out = Lines(r.out);
  ASSERT_EQ(out.size(), 4u) << r.out;
  const int k = static_cast<int>(expected.feature_dim());
  for (int i = 0; i < 4; ++i) {
    google::protobuf::Struct json;
    ASSERT_TRUE(ParseJson(out[static_cast<size_t>(i)], &json)) << out[static_cast<size_t>(i)];
    EXPECT_EQ(json.fields().at("row").number_value(), i);
    EXPECT_EQ(json.fields().at("version").number_value(), 1);
    EXPECT_EQ(json.fields().at("model").string_value(), "rf");
    const auto& features = json.fields().at("features").list_value();
    ASSERT_EQ(features.values_size(), k);
    for (int j = 0; j < k; ++j) {
      EXPECT_EQ(static_cast<float>(features.values(j).number_value()),
                expected.features(i * k + j));
    }
  }
}

TEST_F(CliTest, FeaturizeIdxFileScalesBytesLikeTraining) {
  // 3 images of 4x4 unsigned bytes: row i = the 16 bytes of image i.
  std::string idx = {0, 0, 0x08, 3, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 4};
  std::vector<float> x;
  for (int i = 0; i < 3 * 16; ++i) {
    const auto b = static_cast<unsigned char>((i * 37 + 11) % 256);
    idx.push_back(static_cast<char>(b));
    // invariant-train's IDX reader (train/data/idx.cc) scales with the same
    // function; b / 255.0f would differ in the last bit for about half the bytes.
    x.push_back(UnitByteToFloat(b));
  }
  WriteFile(Path("images.idx"), idx);
  const ToolResult r = Cli({"featurize", "rf", target_, "--input=" + Path("images.idx")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<float> expected;
  ASSERT_TRUE(client_->Featurize("rf", 3, x, &expected).ok());
  const std::vector<std::string> out = Lines(r.out);
  ASSERT_EQ(out.size(), 4u) << r.out;
  const size_t k = expected.size() / 3;
  for (size_t i = 0; i < 3; ++i) {
    const std::vector<float> got = Floats(out[i + 1]);
    ASSERT_EQ(got.size(), k);
    for (size_t j = 0; j < k; ++j) EXPECT_EQ(got[j], expected[i * k + j]);
  }
}

TEST_F(CliTest, PredictCsvAndJsonlMatchTheLibrary) {
  const std::vector<float> x = RandomRows(6, kDim, 13);
  WriteFile(Path("rows.csv"), absl::StrJoin(TextRows(x, kDim, ","), "\n"));  // no final newline
  std::vector<float> scores;
  std::vector<std::string> classes;
  ASSERT_TRUE(client_->Predict("rf", 6, AsSent(x), &scores, &classes).ok());

  ToolResult r = Cli({"predict", "rf", target_, "--input=" + Path("rows.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> out = Lines(r.out);
  ASSERT_EQ(out.size(), 7u) << r.out;
  // Score columns are named by class.
  EXPECT_EQ(out[0], "predicted_class,predicted_index,score_class_0,score_class_1,score_class_2");
  for (size_t i = 0; i < 6; ++i) {
    const std::vector<std::string> fields = absl::StrSplit(out[i + 1], ',');
    ASSERT_EQ(fields.size(), 2u + kClasses);
    EXPECT_EQ(fields[0], classes[i]);
    for (size_t j = 0; j < kClasses; ++j) {
      float v = 0;
      ASSERT_TRUE(absl::SimpleAtof(fields[2 + j], &v));
      EXPECT_EQ(v, scores[i * kClasses + j]);
    }
  }

  r = Cli({"predict", "rf", target_, "--input=" + Path("rows.csv"), "--format=jsonl",
           "--batch_size=4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  out = Lines(r.out);
  ASSERT_EQ(out.size(), 6u) << r.out;
  for (size_t i = 0; i < 6; ++i) {
    google::protobuf::Struct json;
    ASSERT_TRUE(ParseJson(out[i], &json)) << out[i];
    EXPECT_EQ(json.fields().at("row").number_value(), static_cast<double>(i));
    EXPECT_EQ(json.fields().at("predicted_class").string_value(), classes[i]);
    const auto& s = json.fields().at("scores").list_value();
    ASSERT_EQ(s.values_size(), kClasses);
    for (int j = 0; j < kClasses; ++j) {
      EXPECT_EQ(static_cast<float>(s.values(j).number_value()),
                scores[i * kClasses + static_cast<size_t>(j)]);
    }
  }
}

TEST_F(CliTest, PredictRandomRowsAcrossSeveralRequestsKeepsOrder) {
  const ToolResult r = Cli({"predict", "rf", target_, "--random_rows=7", "--batch_size=3",
                            "--seed=5", "--version_label=stable", "--format=jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> out = Lines(r.out);
  ASSERT_EQ(out.size(), 7u) << r.out;
  for (size_t i = 0; i < out.size(); ++i) {
    google::protobuf::Struct json;
    ASSERT_TRUE(ParseJson(out[i], &json)) << out[i];
    EXPECT_EQ(json.fields().at("row").number_value(), static_cast<double>(i));
    EXPECT_EQ(json.fields().at("version").number_value(), 1);  // the "stable" label
  }
  // Seeded: the same flags give the same output.
  EXPECT_EQ(Cli({"predict", "rf", target_, "--random_rows=7", "--batch_size=3", "--seed=5",
                 "--version_label=stable", "--format=jsonl"})
                .out,
            r.out);
}

TEST_F(CliTest, RaggedRowIsReportedWithItsLineNumber) {
  const std::vector<float> x = RandomRows(3, kDim, 14);
  std::vector<std::string> lines = TextRows(x, kDim, ",");
  lines[2] = lines[2].substr(0, lines[2].rfind(','));  // 15 fields
  lines.insert(lines.begin(), Header(kDim));           // line 1
  lines.insert(lines.begin() + 2, "");                 // line 3 blank
  lines.insert(lines.begin() + 3, "# comment");        // line 4
  // lines: 1 header, 2 row, 3 blank, 4 comment, 5 row, 6 ragged row
  WriteFile(Path("ragged.csv"), absl::StrJoin(lines, "\n") + "\n");
  const ToolResult r = Cli({"predict", "rf", target_, "--input=" + Path("ragged.csv")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("ragged.csv:6: ragged row: expected 16 fields as on line 1, got 15"));
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, NonNumericAndNonFiniteFieldsAreReportedWithTheirLineNumbers) {
  const std::vector<float> x = RandomRows(3, kDim, 15);
  std::vector<std::string> lines = TextRows(x, kDim, ",");
  std::vector<std::string> fields = absl::StrSplit(lines[1], ',');
  fields[6] = "abc";
  lines[1] = absl::StrJoin(fields, ",");
  WriteFile(Path("bad.csv"), absl::StrJoin(lines, "\n") + "\n");
  ToolResult r = Cli({"featurize", "rf", target_, "--input=" + Path("bad.csv")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("bad.csv:2: field 7: expected a number, got 'abc'"));
  EXPECT_EQ(r.out, "");

  // With a header the column is named; stdin is called <stdin>.
  fields[6] = "nan";
  lines[1] = absl::StrJoin(fields, ",");
  lines.insert(lines.begin(), Header(kDim));
  WriteFile(Path("nan.csv"), absl::StrJoin(lines, "\n") + "\n");
  r = Cli({"featurize", "rf", target_}, Path("nan.csv"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("<stdin>:3: field 7 ('x6'): expected a finite number"));
}

TEST_F(CliTest, IgnoredLabelColumnLetsTrainingCsvsBePredicted) {
  const std::vector<float> x = RandomRows(2, kDim, 16);
  std::vector<std::string> lines = TextRows(x, kDim, ",");
  for (std::string& line : lines) line = "cat," + line;
  lines.insert(lines.begin(), "label," + Header(kDim));
  WriteFile(Path("train.csv"), absl::StrJoin(lines, "\n") + "\n");
  ToolResult r =
      Cli({"predict", "rf", target_, "--input=" + Path("train.csv"), "--ignore_columns=label"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 3u);
  r = Cli({"predict", "rf", target_, "--input=" + Path("train.csv"), "--ignore_columns=nope"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("train.csv:1: ignored column 'nope' not in the header"));
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"bogus"},
      {"health", "--bogus_flag=1"},
      {"health", "--timeout=abc"},
      {"health", "--timeout=-1"},
      {"health", "--batch_size=0"},
      {"metadata"},
      {"featurize", "rf", "extra"},
      {"models", "--format=xml"},
      {"predict", "rf", "--input=" + (dir_ / "missing.csv").string()},
      {"predict", "rf", "--header=maybe"},
      {"health", "--tls_cert=" + (dir_ / "c.pem").string()},
      {"health", "--token_file=" + (dir_ / "missing.token").string()},
      {"health", "--target"},
  };
  for (const auto& args : cases) {
    std::vector<std::string> full = args;
    full.push_back(target_);
    if (!args.empty() && args.back() == "--target") full = args;  // flag without a value
    const ToolResult r = Cli(full);
    EXPECT_EQ(r.exit_code, 2) << absl::StrJoin(full, " ") << "\n" << r.err;
    EXPECT_THAT(r.err, StartsWith("invariant-client: ")) << absl::StrJoin(full, " ");
    EXPECT_EQ(r.out, "") << absl::StrJoin(full, " ");
  }
  const ToolResult help = Cli({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("usage: invariant-client"));
}

TEST_F(CliTest, ServerErrorsExitThreeWithCodeAndMessage) {
  ToolResult r = Cli({"predict", "feat", target_, "--random_rows=2"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("FAILED_PRECONDITION: "));

  WriteFile(Path("short.csv"), "1,2,3,4,5\n6,7,8,9,10\n");
  r = Cli({"featurize", "nope", target_, "--input=" + Path("short.csv")});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND: "));

  r = Cli({"predict", "rf", target_, "--random_rows=1", "--version=9"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND"));
}

TEST_F(CliTest, WrongRowWidthIsBadInputCaughtBeforeTheCall) {
  WriteFile(Path("short.csv"), "1,2,3,4,5\n6,7,8,9,10\n");
  const ToolResult r = Cli({"featurize", "rf", target_, "--input=" + Path("short.csv")});
  EXPECT_EQ(r.exit_code, 2) << r.err;  // the input's fault, not the server's
  EXPECT_THAT(r.err, HasSubstr("input rows have 5 values each, but model 'rf' version 2 takes "
                               "input_dim=16 values per row"));
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, ReloadAndStatusUseTheAdminToken) {
  WriteFile(Path("admin.token"), "adm1n\n");
  StartServer(
      {"--version_policy=all", "--poll_seconds=0", "--admin_token_file=" + Path("admin.token")});
  target_ = "--target=" + server_->target();
  const std::string admin = "--admin_token_file=" + Path("admin.token");

  ToolResult r = Cli({"status", target_});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("status: UNAUTHENTICATED: "));
  r = Cli({"status", target_, admin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ::testing::ElementsAre("model,version,state,error", "feat,1,READY,",
                                                   "rf,2,READY,", "rf,1,READY,"));
  r = Cli({"status", "rf", target_, admin, "--format=jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(Lines(r.out).size(), 2u) << r.out;
  google::protobuf::Struct json;
  ASSERT_TRUE(ParseJson(Lines(r.out)[0], &json)) << r.out;
  EXPECT_EQ(json.fields().at("model").string_value(), "rf");
  EXPECT_EQ(json.fields().at("version").number_value(), 2);
  EXPECT_EQ(json.fields().at("state").string_value(), "READY");
  r = Cli({"status", "nope", target_, admin});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND"));

  testing_models::TestModelSpec rf;
  rf.name = "rf";
  rf.version = 3;
  WriteModel(rf);
  r = Cli({"reload", target_, admin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out),
              ::testing::ElementsAre("versions_loaded,versions_failed,versions_unloaded", "1,0,0"));
  r = Cli({"status", "rf", target_, admin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ::testing::Contains("rf,3,READY,"));
  r = Cli({"reload", target_, "--admin_token_file=" + Path("missing.token")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("admin_token_file"));
}

TEST_F(CliTest, RepositoryIndexLoadAndUnloadUseTheAdminToken) {
  WriteFile(Path("admin.token"), "adm1n\n");
  StartServer({"--version_policy=all", "--poll_seconds=0", "--model_control=explicit",
               "--load_model=feat", "--admin_token_file=" + Path("admin.token")});
  target_ = "--target=" + server_->target();
  const std::string admin = "--admin_token_file=" + Path("admin.token");

  ToolResult r = Cli({"repository", "index", target_});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("repository index: UNAUTHENTICATED: "));
  r = Cli({"repository", "index", target_, admin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out),
              ::testing::ElementsAre(
                  "model,version,state,reason", "feat,1,READY,",
                  "rf,2,UNAVAILABLE,not loaded (--model_control=explicit: load it by request)",
                  "rf,1,UNAVAILABLE,not loaded (--model_control=explicit: load it by request)"));
  r = Cli({"repository", "load", "rf", target_, admin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out),
              ::testing::ElementsAre("model,version,state,reason", "rf,2,READY,", "rf,1,READY,"));
  r = Cli({"repository", "unload", "rf", target_, admin, "--format=jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(R"("state":"UNAVAILABLE","reason":"unloaded by request")"));
  r = Cli({"repository", "load", "nope", target_, admin});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND: model_name: no model named 'nope'"));
  r = Cli({"repository", "load", target_, admin});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("repository load: missing MODEL"));
  r = Cli({"repository", "drop", "rf", target_, admin});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("expected index, load MODEL or unload MODEL"));
}

TEST_F(CliTest, HelpOfEveryToolListsItsOwnFlags) {
  const ToolResult client = Cli({"--help"});
  EXPECT_EQ(client.exit_code, 0);
  for (const char* text :
       {"reload", "status [MODEL]", "--id_column", "--admin_token_file", "--ignore_columns",
        "1-BASED", "--token_file", "--tls_ca", "--timeout", "--random_rows", "unit_byte"}) {
    EXPECT_THAT(client.out, HasSubstr(text));
  }
  const ToolResult loadgen = RunTool(INVARIANT_LOADGEN_BINARY, {"--help"}, dir_.string());
  EXPECT_EQ(loadgen.exit_code, 0);
  for (const char* flag : {"--concurrency", "--json_out", "--token_file", "--timeout"}) {
    EXPECT_THAT(loadgen.out, HasSubstr(flag));
  }
  const ToolResult server = RunTool(INVARIANT_SERVER_BINARY, {"--help"}, dir_.string());
  const std::string text = server.out + server.err;
  EXPECT_THAT(text, ::testing::Not(HasSubstr("No flags matched")));
  for (const char* flag : {"--models", "--port", "--admin_token_file", "--version_policy"}) {
    EXPECT_THAT(text, HasSubstr(flag));
  }
}

TEST_F(CliTest, IdColumnIsCarriedToTheOutput) {
  const std::vector<float> x = RandomRows(3, kDim, 21);
  std::vector<std::string> lines = TextRows(x, kDim, ",");
  for (size_t i = 0; i < lines.size(); ++i) lines[i] = absl::StrCat("row-", i, ",", lines[i]);
  lines.insert(lines.begin(), "key," + Header(kDim));
  WriteFile(Path("ids.csv"), absl::StrJoin(lines, "\n") + "\n");
  std::vector<float> scores;
  std::vector<std::string> classes;
  ASSERT_TRUE(client_->Predict("rf", 3, AsSent(x), &scores, &classes).ok());

  ToolResult r = Cli({"predict", "rf", target_, "--input=" + Path("ids.csv"), "--id_column=key"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> out = Lines(r.out);
  ASSERT_EQ(out.size(), 4u) << r.out;
  EXPECT_THAT(out[0], StartsWith("key,predicted_class,predicted_index,score_class_0"));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_THAT(out[i + 1], StartsWith(absl::StrCat("row-", i, ",", classes[i], ",")));
  }
  r = Cli({"featurize", "rf", target_, "--input=" + Path("ids.csv"), "--id_column=1",
           "--format=jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  out = Lines(r.out);
  ASSERT_EQ(out.size(), 3u) << r.out;
  google::protobuf::Struct json;
  ASSERT_TRUE(ParseJson(out[2], &json)) << out[2];
  EXPECT_EQ(json.fields().at("id").string_value(), "row-2");
  r = Cli({"featurize", "rf", target_, "--random_rows=2", "--id_column=key"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(CliTest, PandasIndexColumnAndTsvOnStdinAreReadWithoutFlags) {
  const std::vector<float> x = RandomRows(3, kDim, 22);
  std::vector<float> expected;
  ASSERT_TRUE(client_->Featurize("rf", 3, AsSent(x), &expected).ok());
  auto check = [&](const ToolResult& r) {
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<std::string> out = Lines(r.out);
    ASSERT_EQ(out.size(), 4u) << r.out;
    const size_t k = expected.size() / 3;
    for (size_t i = 0; i < 3; ++i) {
      const std::vector<float> got = Floats(out[i + 1]);
      ASSERT_EQ(got.size(), k);
      for (size_t j = 0; j < k; ++j) EXPECT_EQ(got[j], expected[i * k + j]);
    }
  };
  // DataFrame.to_csv(): an unnamed index column first.
  std::vector<std::string> lines = TextRows(x, kDim, ",");
  for (size_t i = 0; i < lines.size(); ++i) lines[i] = absl::StrCat(i, ",", lines[i]);
  lines.insert(lines.begin(), "," + Header(kDim));
  WriteFile(Path("pandas.csv"), absl::StrJoin(lines, "\n") + "\n");
  check(Cli({"featurize", "rf", target_, "--input=" + Path("pandas.csv")}));
  // TSV on stdin: the delimiter comes from the first line.
  WriteFile(Path("rows.txt"), absl::StrJoin(TextRows(x, kDim, "\t"), "\n") + "\n");
  check(Cli({"featurize", "rf", target_}, Path("rows.txt")));
}

TEST_F(CliTest, HeaderColumnsAreCheckedAgainstTheModelsTrainingColumns) {
  testing_models::TestModelSpec named;  // regression, trained on columns x0..x15
  named.name = "named";
  named.regression = true;
  named.num_classes = 2;
  for (int64_t j = 0; j < kDim; ++j) named.input_columns.push_back(absl::StrCat("x", j));
  WriteModel(named);
  StartServer({"--version_policy=all"});
  target_ = "--target=" + server_->target();

  ToolResult r = Cli({"metadata", "named", target_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out),
              ::testing::Contains("input_columns," + absl::StrJoin(named.input_columns, ";")));
  EXPECT_THAT(Lines(r.out), ::testing::Contains("input_scaling,none"));

  const std::vector<float> x = RandomRows(2, kDim, 23);
  std::vector<std::string> rows = TextRows(x, kDim, ",");
  auto write = [&](const std::string& name, const std::string& header) {
    std::vector<std::string> lines = rows;
    lines.insert(lines.begin(), header);
    WriteFile(Path(name), absl::StrJoin(lines, "\n") + "\n");
    return "--input=" + Path(name);
  };
  r = Cli({"predict", "named", target_, write("ok.csv", Header(kDim))});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out)[0], StartsWith("score_target_0,score_target_1"));  // by target name

  std::vector<std::string> swapped = named.input_columns;
  std::swap(swapped[0], swapped[1]);
  r = Cli({"predict", "named", target_, write("swapped.csv", absl::StrJoin(swapped, ","))});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the header has the columns of model 'named' version 1 in another "
                               "order: expected x0,x1,x2"));
  EXPECT_THAT(r.err, HasSubstr("got x1,x0,x2"));
  EXPECT_EQ(r.out, "");

  std::vector<std::string> renamed = named.input_columns;
  renamed[15] = "label";
  r = Cli({"predict", "named", target_, write("renamed.csv", absl::StrJoin(renamed, ","))});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing x15; not inputs of the model: label (skip them with "
                               "--ignore_columns=label)"));
}

TEST_F(CliTest, TokenFileIsAccepted) {
  WriteFile(Path("token"), "secret-token\n");
  const ToolResult r = Cli({"models", target_, "--token_file=" + Path("token")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 4u);
}

// TLS: the server requires client certificates (mTLS) signed by a test CA.
class CliTlsTest : public testing_server::ServerTestBase {
 protected:
  void SetUp() override {
    ServerTestBase::SetUp();
    certs_ = dir_ / "certs";
    std::filesystem::create_directories(certs_);
    Openssl(
        "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key "
        "-out ca.pem -days 2 -subj /CN=ca");
    for (const auto& [name, ext] : std::vector<std::pair<std::string, std::string>>{
             {"server", "subjectAltName=DNS:localhost,IP:127.0.0.1\n"},
             {"client", "extendedKeyUsage=clientAuth\n"}}) {
      WriteFile((certs_ / (name + ".ext")).string(), ext);
      Openssl(absl::StrCat("req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ",
                           name, ".key -out ", name, ".csr -subj /CN=", name));
      Openssl(absl::StrCat("x509 -req -in ", name, ".csr -CA ca.pem -CAkey ca.key ",
                           "-CAcreateserial -out ", name, ".pem -days 2 -extfile ", name, ".ext"));
    }
    testing_models::TestModelSpec spec;
    spec.name = "rf";
    WriteModel(spec);
    ClientOptions options;
    options.tls = true;
    options.tls_root_certs_pem = ReadFile(Cert("ca.pem"));
    options.tls_client_cert_pem = ReadFile(Cert("client.pem"));
    options.tls_client_key_pem = ReadFile(Cert("client.key"));
    options.tls_server_name_override = "localhost";
    StartServer({"--tls_cert=" + Cert("server.pem"), "--tls_key=" + Cert("server.key"),
                 "--tls_client_ca=" + Cert("ca.pem")},
                options);
  }
  void Openssl(const std::string& args) {
    const std::string command =
        absl::StrCat("cd '", certs_.string(), "' && openssl ", args, " >> openssl.log 2>&1");
    ASSERT_EQ(std::system(command.c_str()), 0) << args;
  }
  std::string Cert(const std::string& file) const { return (certs_ / file).string(); }
  ToolResult Cli(std::vector<std::string> args) {
    args.push_back("--target=" + server_->target());
    return RunTool(INVARIANT_CLIENT_BINARY, args, dir_.string());
  }
  std::filesystem::path certs_;
};

TEST_F(CliTlsTest, MutualTlsFlagsReachTheServer) {
  const std::vector<std::string> tls = {
      "--tls_ca=" + Cert("ca.pem"), "--tls_cert=" + Cert("client.pem"),
      "--tls_key=" + Cert("client.key"), "--tls_server_name=localhost", "--timeout=5"};
  std::vector<std::string> args = {"health"};
  args.insert(args.end(), tls.begin(), tls.end());
  ToolResult r = Cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "SERVING\n");

  args = {"predict", "rf", "--random_rows=2"};
  args.insert(args.end(), tls.begin(), tls.end());
  r = Cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 3u);

  // Without a client certificate, or without TLS, the call fails: exit 3.
  r = Cli({"health", "--tls_ca=" + Cert("ca.pem"), "--tls_server_name=localhost", "--timeout=5"});
  EXPECT_EQ(r.exit_code, 3);
  r = Cli({"health", "--timeout=5"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE"));
}

// A server requiring a data token (--data_token_file): --token_file sends it
// on every data call the CLI makes, unary and through its own stub.
class CliDataTokenTest : public testing_server::ServerTestBase {
 protected:
  void SetUp() override {
    ServerTestBase::SetUp();
    testing_models::TestModelSpec spec;
    spec.name = "rf";
    WriteModel(spec);
    WriteFile(models() + "/rf/labels.txt", "stable 1\n");
    token_file_ = (dir_ / "token").string();
    WriteFile(token_file_, "cli-secret\n");
    StartServer({"--data_token_file=" + token_file_});
  }
  ToolResult Cli(std::vector<std::string> args) {
    args.push_back("--target=" + server_->target());
    return RunTool(INVARIANT_CLIENT_BINARY, args, dir_.string());
  }
  std::string token_file_;
};

TEST_F(CliDataTokenTest, TokenFileIsSentOnDataCalls) {
  ToolResult r = Cli({"predict", "rf", "--random_rows=2", "--token_file=" + token_file_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 3u);
  r = Cli({"metadata", "rf", "--version_label=stable", "--token_file=" + token_file_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Cli({"models", "--token_file=" + token_file_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Without the token: exit 3 with the code; health needs none.
  r = Cli({"predict", "rf", "--random_rows=2"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("UNAUTHENTICATED"));
  r = Cli({"health"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace invariant::cli_test
