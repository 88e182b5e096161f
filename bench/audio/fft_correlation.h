// fft_correlation.h: the full correlation of m templates with a zero-padded
// one-channel image through KissFFT, the reference invariant-bench-audio
// times against the patch encoder's GEMM (tests/unit/encoders/
// fft_correlation_test.cc checks that both compute the same linear
// responses). A reference only: it lives in the bench, not in core/.
//
// The image is H × W (row-major), padded with pad_rows rows of zeros above
// and below and pad_cols columns left and right (the PatchGeometry of
// patch_encoder.h, channels = 1, stride 1): the plane is
// (H + 2·pad_rows) × (W + 2·pad_cols). For template j (k_h × k_w, row-major)
// and every position (a, b), a < P_y = rows − k_h + 1, b < P_x = cols − k_w + 1:
//
//   out[j][a·P_x + b] = Σ_{y < k_h, x < k_w} w_j[y·k_w + x] · plane[a + y][b + x]
//
// i.e. ⟨w_j, patch at (a, b)⟩, the encoder's linear response before any
// normalisation, bias or threshold. Computed as the circular correlation
// IFFT(FFT(plane) · conj(FFT(w_j))) on an N1 × N2 grid (N1 ≥ rows, N2 ≥ cols
// and even, both kiss_fft_next_fast_size): no position (a, b) above wraps
// around, so circular equals linear there.
//
// The 2-D real FFT is rows then columns: kiss_fftr of every row (N2 reals →
// C = N2/2 + 1 complex values; the rows of zeros are skipped), then a
// complex kiss_fft of N1 points down each of the C columns; the spectrum is
// stored column by column (C × N1). (Debian's kiss_fftndr_alloc refuses 2-D
// sizes above 52 × 52: kissfft issue #129.) The inverse runs the C column
// inverse FFTs, then kiss_fftri only for the P_y rows that hold positions
// (the rest of the circular map is never pooled). The plane's spectrum is
// computed once per image; each template costs one pointwise product of
// C·N1 complex values (its spectrum precomputed, conjugated and scaled by
// 1/(N1·N2)), C inverse column FFTs and P_y inverse row FFTs.
//
// Thread-safety: FftCorrelation is immutable after construction; a
// Workspace (KissFFT configurations and buffers) is used by one thread at a
// time.
#ifndef INVARIANT_BENCH_AUDIO_FFT_CORRELATION_H_
#define INVARIANT_BENCH_AUDIO_FFT_CORRELATION_H_

#include <kiss_fft.h>
#include <kiss_fftr.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

namespace invariant {
namespace bench_audio {

class FftCorrelation {
 public:
  struct Free {
    void operator()(void* cfg) const { kiss_fft_free(cfg); }
  };

  // KissFFT state and buffers for one thread.
  struct Workspace {
    std::unique_ptr<kiss_fftr_state, Free> row_forward, row_inverse;
    std::unique_ptr<kiss_fft_state, Free> column_forward, column_inverse;
    std::vector<float> real;                 // N2: one row
    std::vector<kiss_fft_cpx> rows;          // N1 × C: the row spectra
    std::vector<kiss_fft_cpx> product;       // C × N1
    std::vector<kiss_fft_cpx> columns;       // C × N1: after the inverse column FFTs
    std::vector<kiss_fft_cpx> row_spectrum;  // C
  };

  // `templates`: m rows of k_h·k_w values.
  FftCorrelation(int64_t height, int64_t width, int64_t pad_rows, int64_t pad_cols,
                 int64_t patch_height, int64_t patch_width, int64_t m, const float* templates)
      : height_(height),
        width_(width),
        pad_rows_(pad_rows),
        pad_cols_(pad_cols),
        kh_(patch_height),
        kw_(patch_width),
        m_(m),
        rows_(height + 2 * pad_rows),
        cols_(width + 2 * pad_cols),
        n1_(kiss_fft_next_fast_size(static_cast<int>(rows_))),
        n2_(EvenFastSize(cols_)),
        c_(n2_ / 2 + 1),
        spectra_(static_cast<size_t>(m * spectrum_size())) {
    std::unique_ptr<Workspace> ws = NewWorkspace();
    const float scale = 1.0f / static_cast<float>(n1_ * n2_);
    for (int64_t j = 0; j < m; ++j) {
      kiss_fft_cpx* s = spectra_.data() + j * spectrum_size();
      ForwardGrid(*ws, templates + j * kh_ * kw_, kh_, kw_, 0, 0, s);
      for (int64_t i = 0; i < spectrum_size(); ++i) {
        s[i].r *= scale;
        s[i].i *= -scale;  // conjugated: correlation, not convolution
      }
    }
  }

  int64_t positions_y() const { return rows_ - kh_ + 1; }
  int64_t positions_x() const { return cols_ - kw_ + 1; }
  int64_t num_positions() const { return positions_y() * positions_x(); }
  int64_t fft_rows() const { return n1_; }
  int64_t fft_cols() const { return n2_; }
  int64_t spectrum_size() const { return c_ * n1_; }
  int64_t num_templates() const { return m_; }

  std::unique_ptr<Workspace> NewWorkspace() const {
    auto ws = std::make_unique<Workspace>();
    const int n1 = static_cast<int>(n1_), n2 = static_cast<int>(n2_);
    ws->row_forward.reset(kiss_fftr_alloc(n2, 0, nullptr, nullptr));
    ws->row_inverse.reset(kiss_fftr_alloc(n2, 1, nullptr, nullptr));
    ws->column_forward.reset(kiss_fft_alloc(n1, 0, nullptr, nullptr));
    ws->column_inverse.reset(kiss_fft_alloc(n1, 1, nullptr, nullptr));
    if (!ws->row_forward || !ws->row_inverse || !ws->column_forward || !ws->column_inverse) {
      std::abort();
    }
    ws->real.assign(static_cast<size_t>(n2_), 0.0f);
    ws->rows.resize(static_cast<size_t>(n1_ * c_));
    ws->product.resize(static_cast<size_t>(spectrum_size()));
    ws->columns.resize(static_cast<size_t>(spectrum_size()));
    ws->row_spectrum.resize(static_cast<size_t>(c_));
    return ws;
  }

  // The spectrum (spectrum_size() values) of one H × W image, zero-padded.
  void Forward(Workspace& ws, const float* image, kiss_fft_cpx* spectrum) const {
    ForwardGrid(ws, image, height_, width_, pad_rows_, pad_cols_, spectrum);
  }

  // Templates [j0, j1) against an image's spectrum: out row j − j0 holds
  // the num_positions() responses of template j, row-major over (a, b).
  void Correlate(Workspace& ws, const kiss_fft_cpx* spectrum, int64_t j0, int64_t j1,
                 float* out) const {
    const int64_t py = positions_y(), px = positions_x();
    for (int64_t j = j0; j < j1; ++j) {
      const kiss_fft_cpx* w = spectra_.data() + j * spectrum_size();
      kiss_fft_cpx* p = ws.product.data();
      for (int64_t i = 0; i < spectrum_size(); ++i) {
        p[i].r = spectrum[i].r * w[i].r - spectrum[i].i * w[i].i;
        p[i].i = spectrum[i].r * w[i].i + spectrum[i].i * w[i].r;
      }
      for (int64_t k = 0; k < c_; ++k) {
        kiss_fft(ws.column_inverse.get(), p + k * n1_, ws.columns.data() + k * n1_);
      }
      float* dst = out + (j - j0) * py * px;
      for (int64_t a = 0; a < py; ++a) {
        for (int64_t k = 0; k < c_; ++k) ws.row_spectrum[k] = ws.columns[k * n1_ + a];
        kiss_fftri(ws.row_inverse.get(), ws.row_spectrum.data(), ws.real.data());
        std::copy_n(ws.real.data(), px, dst + a * px);
      }
    }
  }

 private:
  static int64_t EvenFastSize(int64_t n) {
    int size = kiss_fft_next_fast_size(static_cast<int>(n));
    while (size % 2 != 0) size = kiss_fft_next_fast_size(size + 1);
    return size;
  }

  // The spectrum (C × N1) of an h × w block placed at (top, left) of the
  // N1 × N2 grid of zeros.
  void ForwardGrid(Workspace& ws, const float* block, int64_t h, int64_t w, int64_t top,
                   int64_t left, kiss_fft_cpx* spectrum) const {
    std::fill(ws.rows.begin(), ws.rows.end(), kiss_fft_cpx{0.0f, 0.0f});
    std::fill(ws.real.begin(), ws.real.end(), 0.0f);
    for (int64_t y = 0; y < h; ++y) {
      std::copy_n(block + y * w, w, ws.real.data() + left);
      kiss_fftr(ws.row_forward.get(), ws.real.data(), ws.rows.data() + (top + y) * c_);
    }
    for (int64_t k = 0; k < c_; ++k) {
      kiss_fft_stride(ws.column_forward.get(), ws.rows.data() + k, spectrum + k * n1_,
                      static_cast<int>(c_));
    }
  }

  int64_t height_, width_, pad_rows_, pad_cols_, kh_, kw_, m_, rows_, cols_;
  int64_t n1_, n2_, c_;
  std::vector<kiss_fft_cpx> spectra_;  // m × (C × N1), conj(FFT(w_j)) / (N1·N2)
};

}  // namespace bench_audio
}  // namespace invariant

#endif  // INVARIANT_BENCH_AUDIO_FFT_CORRELATION_H_
