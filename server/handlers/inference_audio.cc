#include "server/handlers/inference_audio.h"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/audio/wav.h"
#include "core/base/error_text.h"
#include "core/base/status_macros.h"
#include "server/handlers/inference_input_tensor.h"
#include "server/handlers/inference_tensors.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "raw tensor contents are little-endian: a little-endian host is needed"
#endif

namespace invariant::server {
namespace {

constexpr const char* kInputName = kInferenceInputName;

// The valid samples of each of the n rows of L samples.
absl::StatusOr<std::vector<int64_t>> Lengths(const TensorData* lengths, int64_t n, int64_t length) {
  std::vector<int64_t> out(static_cast<size_t>(n), length);
  if (lengths == nullptr) return out;
  const Tensor& t = *lengths->tensor;
  const std::string base = absl::StrCat("inputs[", lengths->index, "]");
  const bool int64 = t.datatype() == "INT64";
  if (!int64 && t.datatype() != "INT32") {
    return Invalid(base + ".datatype", "INT32 or INT64 for input_lengths",
                   absl::StrCat("'", EchoInput(t.datatype()), "'"));
  }
  if (t.shape_size() != 1 || t.shape(0) != n) {
    return Invalid(base + ".shape", absl::StrCat("[", n, "] (one length per row of input)"),
                   EchoShape(t.shape()));
  }
  if (absl::Status s = CheckContentsField(*lengths, int64 ? "int64_contents" : "int_contents");
      !s.ok()) {
    return s;
  }
  std::string field;
  if (lengths->raw != nullptr) {
    field = lengths->field();
    const size_t width = int64 ? 8 : 4;
    if (lengths->raw->size() != static_cast<size_t>(n) * width) {
      return Invalid(field,
                     absl::StrCat(n * static_cast<int64_t>(width), " bytes (", n, " little-endian ",
                                  t.datatype(), " lengths)"),
                     absl::StrCat(lengths->raw->size()));
    }
    for (int64_t i = 0; i < n; ++i) {
      if (int64) {
        std::memcpy(&out[i], lengths->raw->data() + 8 * i, 8);
      } else {
        int32_t v;
        std::memcpy(&v, lengths->raw->data() + 4 * i, 4);
        out[i] = v;
      }
    }
  } else {
    field = lengths->typed_field(int64 ? "int64_contents" : "int_contents");
    const int count = int64 ? t.contents().int64_contents_size() : t.contents().int_contents_size();
    if (count != n) return Invalid(field, absl::StrCat(n, " lengths"), absl::StrCat(count));
    for (int64_t i = 0; i < n; ++i) {
      out[i] = int64 ? t.contents().int64_contents(i) : t.contents().int_contents(i);
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (out[i] < 1 || out[i] > length) {
      return Invalid(absl::StrCat(field, "[", i, "]"),
                     absl::StrCat("a length in [1, ", length, "] samples (the rows of input)"),
                     absl::StrCat(out[i]));
    }
  }
  return out;
}

// BYTES [n]: one WAV file per element.
absl::Status WavClips(const TensorData& input, int64_t n, InferRequest* out) {
  std::vector<std::string_view> files;
  RETURN_IF_ERROR(BytesElements(input, n, "WAV files", &files));
  for (std::string_view bytes : files) {
    ClipView clip;
    clip.format = ClipView::Format::kWav;
    clip.bytes = bytes;
    out->clips.push_back(clip);
  }
  return absl::OkStatus();
}

// FP32 / INT16 [n, L] with lengths: one clip of samples per row.
absl::Status SampleClips(const TensorData& input, int64_t n, int64_t length,
                         const std::vector<int64_t>& lengths, int sample_rate, InferRequest* out) {
  const auto add = [out, sample_rate](bool f32, std::string_view bytes) {
    ClipView clip;
    clip.format = f32 ? ClipView::Format::kFloat32 : ClipView::Format::kInt16;
    clip.bytes = bytes;
    clip.sample_rate = sample_rate;
    out->clips.push_back(clip);
  };
  const bool fp32 = input.tensor->datatype() == "FP32";
  const size_t width = fp32 ? sizeof(float) : sizeof(int16_t);
  const std::string shape = EchoShape(input.tensor->shape());
  if (absl::Status s = CheckContentsField(input, fp32 ? "fp32_contents" : "int_contents");
      !s.ok()) {
    return s;
  }
  const int64_t count = n * length;
  if (input.raw != nullptr) {
    const std::string& raw = *input.raw;
    if (static_cast<int64_t>(raw.size()) != count * static_cast<int64_t>(width)) {
      return Invalid(
          input.field(),
          absl::StrCat(count * static_cast<int64_t>(width), " bytes (", count, " little-endian ",
                       input.tensor->datatype(), " samples for shape ", shape, ")"),
          absl::StrCat(raw.size()));
    }
    for (int64_t i = 0; i < n; ++i) {
      add(fp32, std::string_view(raw).substr(static_cast<size_t>(i * length) * width,
                                             static_cast<size_t>(lengths[i]) * width));
    }
    return absl::OkStatus();
  }
  const std::string field = input.typed_field(fp32 ? "fp32_contents" : "int_contents");
  const auto& contents = input.tensor->contents();
  const int have = fp32 ? contents.fp32_contents_size() : contents.int_contents_size();
  if (have != count) {
    return Invalid(field, absl::StrCat(count, " samples for shape ", shape), absl::StrCat(have));
  }
  for (int64_t i = 0; i < n; ++i) {
    if (fp32) {
      // The typed floats are the little-endian bytes: viewed, not copied.
      add(true, std::string_view(
                    reinterpret_cast<const char*>(contents.fp32_contents().data() + i * length),
                    static_cast<size_t>(lengths[i]) * width));
    } else {
      // INT16 samples come as int32 contents: narrowed into the request's storage.
      std::string& bytes = out->storage.emplace_back(static_cast<size_t>(lengths[i]) * width, '\0');
      for (int64_t j = 0; j < lengths[i]; ++j) {
        const int32_t v = contents.int_contents(static_cast<int>(i * length + j));
        if (v < std::numeric_limits<int16_t>::min() || v > std::numeric_limits<int16_t>::max()) {
          return Invalid(absl::StrCat(field, "[", i * length + j, "]"),
                         "an INT16 sample in [-32768, 32767]", absl::StrCat(v));
        }
        const int16_t s = static_cast<int16_t>(v);
        std::memcpy(bytes.data() + 2 * j, &s, 2);
      }
      add(false, bytes);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> SampleRate(const inference::ModelInferRequest& request) {
  auto it = request.parameters().find(kSampleRateParameter);
  if (it == request.parameters().end()) return 0;
  const inference::InferParameter& p = it->second;
  const bool integer = p.parameter_choice_case() == inference::InferParameter::kInt64Param;
  if (!integer || p.int64_param() < audio::kMinSampleRate ||
      p.int64_param() > audio::kMaxSampleRate) {
    return Invalid(absl::StrCat("parameters.", kSampleRateParameter),
                   absl::StrCat("an integer rate in [", audio::kMinSampleRate, ", ",
                                audio::kMaxSampleRate, "] Hz (or none: the model's rate)"),
                   integer ? absl::StrCat(p.int64_param()) : "another type");
  }
  return static_cast<int>(p.int64_param());
}

}  // namespace

absl::Status DecodeAudioInferInput(const inference::ModelInferRequest& request, int64_t max_rows,
                                   InferRequest* out, bool json) {
  const int inputs = request.inputs_size();
  if (inputs < 1 || inputs > 2) {
    return Invalid("inputs",
                   absl::StrCat("the input tensor '", kInputName, "' and optionally '",
                                kInputLengthsName, "' (a model of sound)"),
                   absl::StrCat(inputs, " tensors"));
  }
  const bool raw_input = request.raw_input_contents_size() > 0;
  if (raw_input && request.raw_input_contents_size() != inputs) {
    return Invalid("raw_input_contents", absl::StrCat(inputs, " entries (one per input tensor)"),
                   absl::StrCat(request.raw_input_contents_size()));
  }
  TensorData input, lengths;
  bool has_input = false, has_lengths = false;
  for (int i = 0; i < inputs; ++i) {
    const Tensor& t = request.inputs(i);
    TensorData data{&t, i, raw_input ? &request.raw_input_contents(i) : nullptr, json};
    if (t.name() == kInputName && !has_input) {
      input = data;
      has_input = true;
    } else if (t.name() == kInputLengthsName && !has_lengths) {
      lengths = data;
      has_lengths = true;
    } else {
      return Invalid(absl::StrCat("inputs[", i, "].name"),
                     absl::StrCat("'", kInputName, "' or '", kInputLengthsName, "', each once"),
                     absl::StrCat("'", EchoInput(t.name()), "'"));
    }
  }
  if (!has_input) {
    return Invalid("inputs", absl::StrCat("an input tensor named '", kInputName, "'"),
                   absl::StrCat("only '", kInputLengthsName, "'"));
  }
  const Tensor& t = *input.tensor;
  const std::string base = absl::StrCat("inputs[", input.index, "]");
  const std::string& datatype = t.datatype();
  const bool wav = datatype == "BYTES";
  if (!wav && datatype != "FP32" && datatype != "INT16") {
    return Invalid(base + ".datatype",
                   "FP32 or INT16 (samples) or BYTES (WAV files) for a model of sound",
                   absl::StrCat("'", EchoInput(datatype), "'"));
  }
  const auto& shape = t.shape();
  const bool shape_ok = wav ? (shape.size() == 1 && shape[0] >= 1)
                            : (shape.size() == 2 && shape[0] >= 1 && shape[1] >= 1);
  if (!shape_ok) {
    return Invalid(base + ".shape",
                   wav ? "[n] (n >= 1 WAV files)" : "[n, L] (n >= 1 clips of L >= 1 samples)",
                   EchoShape(shape));
  }
  const int64_t n = shape[0];
  if (n > max_rows) {
    return Invalid(base + ".shape", absl::StrCat("at most ", max_rows, " rows per request"),
                   EchoShape(shape));
  }
  out->fields = ProtocolFieldNames(raw_input, input.index, json);
  out->raw = raw_input;
  out->declared_rows = n;
  out->clips.reserve(static_cast<size_t>(n));
  if (wav) {
    if (has_lengths) {
      return Invalid(absl::StrCat("inputs[", lengths.index, "]"),
                     "no input_lengths with BYTES (WAV files) input", "input_lengths");
    }
    return WavClips(input, n, out);
  }
  const int64_t length = shape[1];
  // Only reachable with a limit beyond what the byte count can hold.
  if (length > std::numeric_limits<int64_t>::max() / 4 / n) {
    return Invalid(base + ".shape", "a shape whose byte count fits in 64 bits", EchoShape(shape));
  }
  absl::StatusOr<int> rate = SampleRate(request);
  if (!rate.ok()) return rate.status();
  absl::StatusOr<std::vector<int64_t>> valid = Lengths(has_lengths ? &lengths : nullptr, n, length);
  if (!valid.ok()) return valid.status();
  return SampleClips(input, n, length, *valid, *rate, out);
}

}  // namespace invariant::server
