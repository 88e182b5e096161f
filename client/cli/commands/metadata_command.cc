// metadata: the model's shapes, input columns and scaling, audio front end
// (models of sound only), encoder, head, metrics and certificate, as
// field,value lines (CSV) or one JSON object.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands/commands.h"
#include "client/cli/commands/enum_text.h"
#include "client/cli/commands/output.h"
#include "client/cli/format.h"

namespace invariant::cli {
namespace {

// "classification", "regression"; "none" when unspecified.
std::string TaskText(v1::Task task) {
  return EnumText(v1::Task_Name(task), "TASK_", LetterCase::kLower, "none");
}

// "none" (values as read), "unit_byte" (unsigned bytes / 255); "unknown" when
// unspecified (a model written before the field).
std::string ScalingText(v1::InputScaling scaling) {
  return EnumText(v1::InputScaling_Name(scaling), "INPUT_SCALING_", LetterCase::kLower, "unknown");
}

// The audio front end as (name, text, is_number) fields, in proto order; the
// CSV rows are "audio.<name>", the JSON object "audio".
struct AudioField {
  const char* name;
  std::string text;  // CSV text; JSON: a number, a boolean or a string
  enum Kind { kNumber, kBool, kString } kind;
};

std::vector<AudioField> AudioFields(const v1::AudioFrontEndInfo& a) {
  auto number = [](const char* name, double v) {
    return AudioField{name, FormatDouble(v), AudioField::kNumber};
  };
  auto integer = [](const char* name, int64_t v) {
    return AudioField{name, absl::StrCat(v), AudioField::kNumber};
  };
  auto boolean = [](const char* name, bool v) {
    return AudioField{name, v ? "true" : "false", AudioField::kBool};
  };
  return {integer("sample_rate", a.sample_rate()),
          number("clip_seconds", a.clip_seconds()),
          {"clip_policy", a.clip_policy(), AudioField::kString},
          number("max_clip_seconds", a.max_clip_seconds()),
          boolean("trim_silence", a.trim_silence()),
          number("trim_db", a.trim_db()),
          {"normalisation", a.normalisation(), AudioField::kString},
          integer("frame_length", a.frame_length()),
          integer("hop_length", a.hop_length()),
          integer("fft_length", a.fft_length()),
          number("min_frequency", a.min_frequency()),
          number("bins_per_octave", a.bins_per_octave()),
          integer("frequency_bins", a.frequency_bins()),
          integer("frames", a.frames()),
          number("compression_gain", a.compression_gain()),
          {"compression", a.compression(), AudioField::kString},
          boolean("subtract_frequency_mean", a.subtract_frequency_mean()),
          {"filterbank", a.filterbank(), AudioField::kString},
          number("bandwidth_octaves", a.bandwidth_octaves()),
          boolean("align_frequency", a.align_frequency()),
          number("align_bin", a.align_bin()),
          {"align_statistic", a.align_statistic(), AudioField::kString},
          boolean("align_time", a.align_time())};
}

// ",\"audio\":{...}" for an audio model, "" otherwise.
std::string AudioJson(const v1::GetModelMetadataResponse& m) {
  if (!m.has_audio()) return "";
  std::vector<std::string> items;
  for (const AudioField& f : AudioFields(m.audio())) {
    items.push_back(JsonString(f.name) + ":" +
                    (f.kind == AudioField::kString ? JsonString(f.text) : f.text));
  }
  return absl::StrCat(",\"audio\":{", absl::StrJoin(items, ","), "}");
}

}  // namespace

int RunMetadata(Client& client, const CommandContext& context) {
  v1::GetModelMetadataResponse m;
  const grpc::Status status = client.GetModelMetadata(context.model, &m);
  if (!status.ok()) return ReportServerError("metadata", status);
  std::vector<std::string> shape;
  for (int64_t d : m.input_shape()) shape.push_back(absl::StrCat(d));
  const v1::HeadInfo& head = m.head();
  const bool has_head = m.output_dim() > 0;
  std::map<std::string, double> metrics(m.metrics().begin(), m.metrics().end());
  Output out;
  if (context.jsonl) {
    auto strings = [](const auto& list) {
      std::vector<std::string> quoted;
      for (const std::string& s : list) quoted.push_back(JsonString(s));
      return absl::StrCat("[", absl::StrJoin(quoted, ","), "]");
    };
    std::vector<std::string> metric_items;
    for (const auto& [k, v] : metrics) metric_items.push_back(JsonString(k) + ":" + JsonNumber(v));
    const v1::CertificateInfo& c = m.certificate();
    out.Line(absl::StrCat(
        "{\"model_name\":", JsonString(m.model_name()), ",\"model_version\":", m.model_version(),
        ",\"input_shape\":[", absl::StrJoin(shape, ","), "],\"input_dim\":", m.input_dim(),
        ",\"feature_dim\":", m.feature_dim(), ",\"output_dim\":", m.output_dim(),
        ",\"encoder_kind\":", JsonString(m.encoder_kind()),
        ",\"task\":", JsonString(has_head ? TaskText(head.task()) : "none"), ",\"class_names\":",
        strings(head.class_names()), ",\"target_names\":", strings(head.target_names()),
        ",\"input_columns\":", strings(m.input_columns()),
        ",\"input_scaling\":", JsonString(ScalingText(m.input_scaling())), AudioJson(m),
        ",\"model_bytes\":", m.model_bytes(), ",\"metrics\":{", absl::StrJoin(metric_items, ","),
        "}", ",\"certificate\":{\"max_discrepancy\":", JsonNumber(c.max_discrepancy()),
        ",\"mean_discrepancy\":", JsonNumber(c.mean_discrepancy()),
        ",\"relative_mean_discrepancy\":", JsonNumber(c.relative_mean_discrepancy()),
        ",\"mean_pairwise_difference\":", JsonNumber(c.mean_pairwise_difference()),
        ",\"method\":", JsonString(c.method()), ",\"num_points\":", c.num_points(),
        ",\"exhaustive\":", c.exhaustive() ? "true" : "false", "}}"));
    return out.Finish();
  }
  auto row = [&out](const std::string& key, const std::string& value) {
    out.Line(CsvField(key) + "," + CsvField(value));
  };
  out.Line("field,value");
  row("model_name", m.model_name());
  row("model_version", absl::StrCat(m.model_version()));
  row("input_shape", absl::StrJoin(shape, "x"));
  row("input_dim", absl::StrCat(m.input_dim()));
  row("feature_dim", absl::StrCat(m.feature_dim()));
  row("output_dim", absl::StrCat(m.output_dim()));
  row("encoder_kind", m.encoder_kind());
  row("task", has_head ? TaskText(head.task()) : "none");
  row("class_names", absl::StrJoin(head.class_names(), ";"));
  row("target_names", absl::StrJoin(head.target_names(), ";"));
  row("input_columns", absl::StrJoin(m.input_columns(), ";"));
  row("input_scaling", ScalingText(m.input_scaling()));
  if (m.has_audio()) {
    for (const AudioField& f : AudioFields(m.audio())) row(absl::StrCat("audio.", f.name), f.text);
  }
  row("model_bytes", absl::StrCat(m.model_bytes()));
  for (const auto& [k, v] : metrics) row("metric." + k, FormatDouble(v));
  row("certificate.max_discrepancy", FormatDouble(m.certificate().max_discrepancy()));
  row("certificate.mean_discrepancy", FormatDouble(m.certificate().mean_discrepancy()));
  row("certificate.relative_mean_discrepancy",
      FormatDouble(m.certificate().relative_mean_discrepancy()));
  row("certificate.mean_pairwise_difference",
      FormatDouble(m.certificate().mean_pairwise_difference()));
  row("certificate.method", m.certificate().method());
  row("certificate.num_points", absl::StrCat(m.certificate().num_points()));
  row("certificate.exhaustive", m.certificate().exhaustive() ? "true" : "false");
  return out.Finish();
}

}  // namespace invariant::cli
