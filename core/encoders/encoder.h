// encoder.h: the one batch interface every feature map implements.
//
// Like faiss::Index: dimensions are fields, the memory layout is stated once,
// and the kernels behind it are free functions. Every input and output buffer
// is row-major float32: `x` is n × d_in, `out` is n × d_out, no padding.
//
// Contract: Encode is const and thread-safe (many request threads call it on
// one shared encoder); it never reads outside the n × d_in input nor writes
// outside the n × d_out output, and its result for a row does not depend on
// the other rows of the batch (so batching never changes an answer).
#ifndef INVARIANT_CORE_ENCODERS_ENCODER_H_
#define INVARIANT_CORE_ENCODERS_ENCODER_H_

#include <cstdint>
#include <string>

namespace invariant {

class Encoder {
 public:
  virtual ~Encoder() = default;

  int64_t d_in() const { return d_in_; }
  int64_t d_out() const { return d_out_; }

  // Maps n rows of x (n × d_in) to n rows of features in out (n × d_out).
  // n may be 0. x and out must not overlap.
  virtual void Encode(int64_t n, const float* x, float* out) const = 0;

  // A short stable name of the feature map: "cdf", "random_fourier",
  // "nystrom", "spectral", "patch" (the kinds of core/model/encoder_kinds.h),
  // "second_layer", "preprocess"; a chain or an orbit average answers with
  // its last stage's or its inner encoder's name.
  virtual std::string kind() const = 0;

  // Bytes of read-only parameters (banks, landmarks) that Encode streams.
  virtual size_t parameter_bytes() const { return 0; }

 protected:
  Encoder(int64_t d_in, int64_t d_out) : d_in_(d_in), d_out_(d_out) {}

 private:
  int64_t d_in_;
  int64_t d_out_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_ENCODERS_ENCODER_H_
