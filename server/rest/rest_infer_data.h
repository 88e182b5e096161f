// rest_infer_data.h: the "data" member of one input of a REST infer request
// body, its numbers read straight into the contents of the datatype.
//
// Contract: "data" holds the tensor's elements, flat (row-major) or nested
// exactly as "shape". For datatype FP32 each element is a JSON number read
// once to the nearest float (JsonNumberToFloat) into fp32_contents; for
// INT16 and INT32 each is a JSON integer within int32, into int_contents;
// for INT64 within int64, into int64_contents. Data that comes before its
// "datatype" member is read as floats and, for an integer datatype, moved
// into the integer contents at Finish when every value is an integer of
// magnitude at most 2^24. Other datatypes' data is skipped (no contents), so
// the shared validation names the datatype. Nested data read before "shape"
// learns its dimensions from the first array at each depth; Finish checks
// them against the shape. Memory: the contents are reserved ahead from the
// shape when it came first, within one budget of JSON bytes / 2 elements for
// all the inputs of the body (so many inputs cannot each reserve it).
//
// Errors: INVALID_ARGUMENT naming the item, the first in document order
// ("inputs[0].data[3]: expected a number, received a string",
// "inputs[0].data[1]: expected 3 items (dimension 1 of the shape [2, 3]),
// received 2", "... expected a finite FP32 value", "... expected a 32-bit
// integer"). While the datatype is unknown an error is kept, the rest of the
// data skipped, and Finish returns it (the datatype may yet skip the data).
//
// Thread-safety: a DataReader belongs to one request's reader.
#ifndef INVARIANT_SERVER_REST_REST_INFER_DATA_H_
#define INVARIANT_SERVER_REST_REST_INFER_DATA_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/base/json.h"
#include "inference/grpc_service.pb.h"
#include "server/rest/rest_infer_events.h"

namespace invariant::server::rest_internal {

// Where the numbers of an input's "data" go: FP32 → fp32_contents, INT16 and
// INT32 → int_contents, INT64 → int64_contents (the typed contents of the
// gRPC binding). Other datatypes' data is skipped.
enum class Sink { kNone, kFloat, kInt32, kInt64 };

Sink SinkOf(absl::string_view datatype);

class DataReader {
 public:
  // `stack`: the reader's frames, which the data arrays are pushed on.
  // `json_size`: the JSON's bytes, the budget of elements reserved ahead.
  DataReader(FrameStack* stack, size_t json_size)
      : stack_(stack), reserve_budget_(json_size / 2 + 1) {}

  // The "data" array of `tensor` opened (the input `field`, "inputs[i]",
  // which must outlive the data). `has_datatype` / `has_shape`: those
  // members came before it. Pushes its frame: Frame::kData, or Frame::kSkip
  // when the datatype keeps no data.
  void Begin(inference::ModelInferRequest::InferInputTensor* tensor, const std::string* field,
             bool has_datatype, bool has_shape);

  // The hot path: a number where the numbers of an FP32 input go, added to
  // fp32_contents. False (nothing done) when Item must see it.
  bool TakeFloat(absl::string_view literal) {
    float f;
    if (stack_->data_level() != 0 && stack_->back().frame == Frame::kData && state_.decided &&
        !state_.skipping && state_.sink == Sink::kFloat &&
        (!state_.nested || state_.rank == stack_->data_level()) && JsonNumberToFloat(literal, &f)) {
      ++stack_->back().items;
      floats_->Add(f);
      return true;
    }
    return false;
  }

  // A value inside the innermost open data array.
  absl::Status Item(const Value& v);

  // A data array of `items` items closed (already popped from the stack).
  absl::Status End(size_t items);

  // The input closed after its data: the kept error, the learned nesting
  // against the shape, floats read before an integer datatype converted.
  absl::Status Finish();

 private:
  struct State {
    bool shape_at_start = false;  // the shape was read before the data
    bool skipping = false;        // no numbers kept, or after the first (pending) error
    Sink sink = Sink::kFloat;     // where the numbers go (kFloat while the datatype is unknown)
    bool decided = false;         // flat or nested is known (from the first item)
    bool nested = false;
    size_t rank = 0;               // nesting levels; 0 until known
    size_t deepest = 0;            // the deepest level opened
    std::vector<int64_t> lengths;  // per level: the length every array there must have; -1 unknown
    absl::Status pending;          // the first error, while the datatype is still unknown
  };

  // The datatype is known and its numbers are kept.
  bool DatatypeIsRead() const;
  std::string Path(int64_t item) const;
  std::string NestingText() const;
  absl::Status Error(absl::Status error);
  absl::Status CheckLearnedNesting() const;
  absl::Status FloatsToIntegers(Sink sink);

  FrameStack* stack_;
  uint64_t reserve_budget_;  // elements all the inputs may still reserve ahead
  State state_;
  inference::ModelInferRequest::InferInputTensor* tensor_ = nullptr;
  const std::string* field_ = nullptr;
  bool has_datatype_ = false;
  google::protobuf::RepeatedField<float>* floats_ = nullptr;    // fp32_contents
  google::protobuf::RepeatedField<int32_t>* ints_ = nullptr;    // int_contents (INT16, INT32)
  google::protobuf::RepeatedField<int64_t>* int64s_ = nullptr;  // int64_contents (INT64)
};

}  // namespace invariant::server::rest_internal

#endif  // INVARIANT_SERVER_REST_REST_INFER_DATA_H_
