// rest_infer_events.h: what the pieces of the REST infer request reader
// (rest_infer_request.h) share: the JSON events as they see them (a value's
// kind and text), the stack of the body's open objects and arrays, and the
// error text. Helpers of invariant::server::rest_internal; nothing here is
// an API of the server.
//
// The reader is one pass of json.h's ParseJsonEvents driven by a small state
// machine over the schema: rest_infer_request.cc dispatches each event on
// the innermost open frame to the piece that owns it: parameters
// (rest_infer_params.h), an input tensor (rest_infer_tensor.h), its "data"
// arrays (rest_infer_data.h), the binary part after the JSON
// (rest_infer_binary.h). All of them push and pop the one FrameStack.
//
// Errors: Invalid builds every schema error of the reader, INVALID_ARGUMENT
// "<field>: expected <expected>, received <received>"; Quoted quotes client
// text cut by EchoInput (validation.h).
//
// Thread-safety: a FrameStack belongs to one reader (one request, one
// thread); the functions are pure.
#ifndef INVARIANT_SERVER_REST_REST_INFER_EVENTS_H_
#define INVARIANT_SERVER_REST_REST_INFER_EVENTS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace invariant::server::rest_internal {

constexpr char kFp32[] = "FP32";

// Inputs or requested outputs one body may name (a model has one input and
// a few outputs; the shared validation says which are right).
constexpr size_t kMaxTensors = 64;

enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

// "null", "a boolean", "a number", ... (the "received" of an error).
absl::string_view KindName(Kind kind);

// A value event: its kind and, for a number or a string, its text.
struct Value {
  Kind kind;
  absl::string_view text;
  bool boolean = false;
};

// What an open object or array of the body is.
enum class Frame { kRoot, kParams, kInputs, kInput, kShape, kOutputs, kOutput, kData, kSkip };
// The member whose value comes next, in the root, an input or an output.
enum class Member { kNone, kId, kParameters, kInputs, kOutputs, kName, kShape, kDatatype, kData };

struct Open {
  Frame frame;
  Member member = Member::kNone;
  size_t items = 0;  // of an array: the items begun so far
};

// The open objects and arrays of the body, innermost last. The kData frames
// (the arrays of an input's "data") are on top and contiguous while data is
// read; data_level() counts them (1 inside the outermost).
class FrameStack {
 public:
  bool empty() const { return frames_.empty(); }
  size_t size() const { return frames_.size(); }
  Open& back() { return frames_.back(); }
  const Open& back() const { return frames_.back(); }
  const Open& operator[](size_t i) const { return frames_[i]; }
  size_t data_level() const { return data_level_; }

  void Push(Frame frame) {
    frames_.push_back({frame});
    if (frame == Frame::kData) ++data_level_;
  }
  // Removes the innermost frame and returns it.
  Open Pop() {
    const Open closed = frames_.back();
    frames_.pop_back();
    if (closed.frame == Frame::kData) --data_level_;
    return closed;
  }

 private:
  std::vector<Open> frames_;
  size_t data_level_ = 0;
};

// INVALID_ARGUMENT "<field>: expected <expected>, received <received>".
absl::Status Invalid(absl::string_view field, absl::string_view expected,
                     absl::string_view received);

// `text` cut by EchoInput, in double quotes.
std::string Quoted(absl::string_view text);

}  // namespace invariant::server::rest_internal

#endif  // INVARIANT_SERVER_REST_REST_INFER_EVENTS_H_
