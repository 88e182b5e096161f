#include "server/rest/rest_infer_data.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "server/handlers/validation.h"

namespace invariant::server::rest_internal {
namespace {

using google::protobuf::RepeatedField;

// Integers read as floats (data before the datatype) are exact up to 2^24.
constexpr float kExactFloatInteger = 16777216.0f;

}  // namespace

Sink SinkOf(absl::string_view datatype) {
  if (datatype == kFp32) return Sink::kFloat;
  if (datatype == "INT16" || datatype == "INT32") return Sink::kInt32;
  if (datatype == "INT64") return Sink::kInt64;
  return Sink::kNone;
}

void DataReader::Begin(inference::ModelInferRequest::InferInputTensor* tensor,
                       const std::string* field, bool has_datatype, bool has_shape) {
  state_ = State();
  tensor_ = tensor;
  field_ = field;
  has_datatype_ = has_datatype;
  if (has_datatype) state_.sink = SinkOf(tensor_->datatype());
  if (state_.sink == Sink::kNone) {
    stack_->Push(Frame::kSkip);  // passed on without contents
    return;
  }
  state_.shape_at_start = has_shape;
  floats_ = tensor_->mutable_contents()->mutable_fp32_contents();
  ints_ = tensor_->mutable_contents()->mutable_int_contents();
  int64s_ = tensor_->mutable_contents()->mutable_int64_contents();
  if (has_shape) {
    // Room for the floats the shape announces, but never more than the
    // JSON could hold (2 bytes a number), whatever the shapes say: one
    // budget for all the inputs, so many inputs cannot each reserve it.
    uint64_t count = 1;
    bool valid = true;
    for (int64_t dim : tensor_->shape()) {
      valid =
          valid && dim >= 0 && !__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count);
    }
    if (valid) {
      count = std::min<uint64_t>(
          {count, reserve_budget_, static_cast<uint64_t>(std::numeric_limits<int>::max())});
      reserve_budget_ -= count;
      if (state_.sink == Sink::kFloat) floats_->Reserve(static_cast<int>(count));
      if (state_.sink == Sink::kInt32) ints_->Reserve(static_cast<int>(count));
      if (state_.sink == Sink::kInt64) int64s_->Reserve(static_cast<int>(count));
    }
  }
  stack_->Push(Frame::kData);
  state_.deepest = 1;
}

bool DataReader::DatatypeIsRead() const {
  return has_datatype_ && SinkOf(tensor_->datatype()) != Sink::kNone;
}

// The path of the item `item` of the innermost open data array, or with
// item < 0 the path of the data array that just closed (popped already).
std::string DataReader::Path(int64_t item) const {
  std::string path = *field_ + ".data";
  const FrameStack& stack = *stack_;
  size_t first = stack.size();
  while (first > 0 && stack[first - 1].frame == Frame::kData) --first;
  for (size_t i = first; i < stack.size(); ++i) {
    const bool last = i + 1 == stack.size() && item >= 0;
    absl::StrAppend(&path, "[", last ? static_cast<size_t>(item) : stack[i].items - 1, "]");
  }
  return path;
}

std::string DataReader::NestingText() const {
  if (state_.shape_at_start) {
    return absl::StrCat("an array nested as the shape ", EchoShape(tensor_->shape()));
  }
  return "an array nested like the first item";
}

// An error in the data: returned when the datatype is known to be FP32,
// kept for Finish (and the rest of the data skipped) otherwise.
absl::Status DataReader::Error(absl::Status error) {
  if (DatatypeIsRead()) return error;
  state_.pending = std::move(error);
  state_.skipping = true;
  return absl::OkStatus();
}

absl::Status DataReader::Item(const Value& v) {
  Open& top = stack_->back();
  const size_t index = top.items++;
  if (state_.skipping) {
    if (v.kind == Kind::kArray) stack_->Push(Frame::kData);
    if (v.kind == Kind::kObject) stack_->Push(Frame::kSkip);
    return absl::OkStatus();
  }
  const size_t level = stack_->data_level();
  if (!state_.decided) {  // the first item of the outermost array
    state_.decided = true;
    state_.nested = v.kind == Kind::kArray;
    if (!state_.nested) {
      state_.rank = 1;
    } else if (state_.shape_at_start) {
      if (tensor_->shape().empty()) {
        stack_->Push(Frame::kData);
        return Error(Invalid(*field_ + ".data", "flat data for the shape []", "nested arrays"));
      }
      state_.rank = static_cast<size_t>(tensor_->shape_size());
    }
  }
  if (v.kind == Kind::kArray) {
    absl::Status error;
    if (!state_.nested || (state_.rank != 0 && level >= state_.rank)) {
      error = Invalid(Path(static_cast<int64_t>(index)), "a number", "an array");
    }
    stack_->Push(Frame::kData);  // also when the error is kept: its items are skipped
    state_.deepest = std::max(state_.deepest, level + 1);
    return error.ok() ? error : Error(std::move(error));
  }
  if (state_.nested && state_.rank == 0) state_.rank = level;  // the first number fixes the rank
  if (state_.nested && level < state_.rank) {
    absl::Status error =
        Invalid(Path(static_cast<int64_t>(index)), NestingText(), KindName(v.kind));
    if (v.kind == Kind::kObject) stack_->Push(Frame::kSkip);
    return Error(std::move(error));
  }
  if (v.kind != Kind::kNumber) {
    absl::Status error = Invalid(Path(static_cast<int64_t>(index)), "a number", KindName(v.kind));
    if (v.kind == Kind::kObject) stack_->Push(Frame::kSkip);
    return Error(std::move(error));
  }
  if (state_.sink != Sink::kFloat) {
    int64_t i;
    const bool int32 = state_.sink == Sink::kInt32;
    if (!JsonNumberToInt64(v.text, &i) || (int32 && (i < std::numeric_limits<int32_t>::min() ||
                                                     i > std::numeric_limits<int32_t>::max()))) {
      return Error(Invalid(Path(static_cast<int64_t>(index)),
                           int32 ? "a 32-bit integer" : "a 64-bit integer", EchoInput(v.text)));
    }
    if (int32) {
      ints_->Add(static_cast<int32_t>(i));
    } else {
      int64s_->Add(i);
    }
    return absl::OkStatus();
  }
  float f;
  if (!JsonNumberToFloat(v.text, &f)) {
    return Error(
        Invalid(Path(static_cast<int64_t>(index)), "a finite FP32 value", EchoInput(v.text)));
  }
  floats_->Add(f);
  return absl::OkStatus();
}

absl::Status DataReader::End(size_t items) {
  if (state_.skipping || !state_.nested) return absl::OkStatus();
  const size_t level = stack_->data_level() + 1;  // the level of the array that closed
  if (state_.lengths.size() < level) state_.lengths.resize(level, -1);
  int64_t& length = state_.lengths[level - 1];
  if (state_.shape_at_start) length = tensor_->shape(static_cast<int>(level - 1));
  if (length < 0) length = static_cast<int64_t>(items);  // learned from the first array
  if (static_cast<int64_t>(items) == length) return absl::OkStatus();
  const std::string expected =
      state_.shape_at_start ? absl::StrCat(length, " items (dimension ", level - 1,
                                           " of the shape ", EchoShape(tensor_->shape()), ")")
                            : absl::StrCat(length, " items (as the first array at this depth)");
  return Error(Invalid(Path(-1), expected, absl::StrCat(items)));
}

absl::Status DataReader::Finish() {
  const Sink sink = SinkOf(tensor_->datatype());
  if (sink == Sink::kNone) {
    tensor_->clear_contents();  // read before the datatype; refused by the shared validation
    return absl::OkStatus();
  }
  if (!state_.pending.ok()) return state_.pending;
  if (state_.nested && !state_.shape_at_start) RETURN_IF_ERROR(CheckLearnedNesting());
  if (sink != Sink::kFloat && state_.sink == Sink::kFloat) return FloatsToIntegers(sink);
  return absl::OkStatus();
}

// Nested data read before the shape: its dimensions must be the shape.
absl::Status DataReader::CheckLearnedNesting() const {
  const size_t rank = state_.rank != 0 ? state_.rank : state_.deepest;
  std::vector<int64_t> dims(state_.lengths.begin(),
                            state_.lengths.begin() + std::min(rank, state_.lengths.size()));
  const bool same = dims.size() == static_cast<size_t>(tensor_->shape_size()) &&
                    std::equal(dims.begin(), dims.end(), tensor_->shape().begin());
  if (same) return absl::OkStatus();
  return Invalid(*field_ + ".data",
                 absl::StrCat("an array nested as the shape ", EchoShape(tensor_->shape())),
                 absl::StrCat("one nested as ", EchoShape(dims)));
}

// Integers whose data came before the datatype were read as floats: moved
// into the integer contents when each is an integer the float holds exactly.
absl::Status DataReader::FloatsToIntegers(Sink sink) {
  inference::InferTensorContents* contents = tensor_->mutable_contents();
  const RepeatedField<float> floats = std::move(*contents->mutable_fp32_contents());
  contents->clear_fp32_contents();
  for (int i = 0; i < floats.size(); ++i) {
    const float f = floats[i];
    if (f != std::trunc(f) || std::fabs(f) > kExactFloatInteger) {
      return Invalid(absl::StrCat(*field_, ".data (item ", i, " in row-major order)"),
                     absl::StrCat("an integer for datatype ", EchoInput(tensor_->datatype()),
                                  " (of magnitude at most 2^24 when \"data\" comes before "
                                  "\"datatype\")"),
                     absl::StrCat(f));
    }
    if (sink == Sink::kInt64) {
      contents->add_int64_contents(static_cast<int64_t>(f));
    } else {
      contents->add_int_contents(static_cast<int32_t>(f));
    }
  }
  return absl::OkStatus();
}

}  // namespace invariant::server::rest_internal
