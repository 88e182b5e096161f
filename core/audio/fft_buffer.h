// fft_buffer.h: the arrays the FFTs of fft.h run on.
//
// Contract: FftBuffer<T>(n) holds n values of T (float or
// std::complex<float>), zeroed, at a 64-byte aligned address: the alignment
// FFTW's plans are made for (and more than its SIMD codelets need, up to
// AVX-512); KissFFT needs none and gets the same, so the type does not
// depend on the FFT library (this header is outside the library's
// namespace, fft.h). Movable, not copyable.
//
// Errors: allocation failure throws std::bad_alloc, as operator new does.
//
// Thread-safety: a buffer is a plain array; distinct buffers may be used by
// distinct threads at once.
#ifndef INVARIANT_CORE_AUDIO_FFT_BUFFER_H_
#define INVARIANT_CORE_AUDIO_FFT_BUFFER_H_

#include <algorithm>
#include <complex>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

namespace invariant::audio {

template <typename T>
class FftBuffer {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>);

 public:
  static constexpr std::align_val_t kAlignment{64};

  FftBuffer() = default;
  explicit FftBuffer(size_t n)
      : data_(static_cast<T*>(::operator new(std::max<size_t>(n, 1) * sizeof(T), kAlignment))) {
    std::uninitialized_fill_n(data_.get(), n, T{});
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  struct Free {
    void operator()(T* p) const { ::operator delete(p, kAlignment); }
  };
  std::unique_ptr<T[], Free> data_;
};

}  // namespace invariant::audio

#endif  // INVARIANT_CORE_AUDIO_FFT_BUFFER_H_
