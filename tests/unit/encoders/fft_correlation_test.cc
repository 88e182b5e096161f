// fft_correlation_test: the FFT correlation that invariant-bench-audio
// times (bench/audio/fft_correlation.h) computes the same linear responses
// as the patch encoder's GEMM path: for a random plane and random
// templates, ⟨w_j, patch at (a, b)⟩ from PatchEncoder::EncodePatches on
// ExtractPatches (normalize_patches false, bias 0, threshold response with
// α = 0, so u = max(0, u) − max(0, −u)) equals the FFT correlation at the
// same offset, to 1e-4 of the largest |response| of the template's map.
#include "bench/audio/fft_correlation.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/base/random.h"
#include "core/base/tensor.h"
#include "core/encoders/patch_encoder.h"
#include "core/encoders/projector.h"
#include "core/encoders/template_bank.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

struct Shape {
  int64_t height, width, pad_rows, pad_cols, kh, kw, m;
};

FloatMatrix Gaussian(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  FloatMatrix x = FloatMatrix::Zeros(rows, cols);
  for (int64_t i = 0; i < x.size(); ++i) x.mutable_data()[i] = static_cast<float>(rng.Normal());
  return x;
}

void ExpectFftMatchesGemm(const Shape& s, uint64_t seed) {
  PatchOptions o;
  o.geometry.height = s.height;
  o.geometry.width = s.width;
  o.geometry.channels = 1;
  o.geometry.patch_height = s.kh;
  o.geometry.patch_width = s.kw;
  o.geometry.pad_rows = s.pad_rows;
  o.geometry.pad_cols = s.pad_cols;
  o.response = PatchResponse::kThreshold;
  o.threshold = 0.0;
  o.normalize_patches = false;
  const int64_t d = s.kh * s.kw;
  const FloatMatrix templates = Gaussian(s.m, d, seed);
  const FloatMatrix image = Gaussian(1, s.height * s.width, seed + 1);

  auto bank = TemplateBank::FromRows(templates, s.m, 1);
  ASSERT_TRUE(bank.ok()) << bank.status();
  auto encoder = PatchEncoder::Create(o, Projector::OverBank(*std::move(bank)),
                                      std::vector<float>(static_cast<size_t>(s.m), 0.0f));
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  const PatchGeometry& g = o.geometry;
  const int64_t positions = g.num_positions();
  FloatMatrix patches = FloatMatrix::Zeros(positions, d);
  ExtractPatches(g, image.data(), patches.mutable_data());
  FloatMatrix responses = FloatMatrix::Zeros(positions, (*encoder)->patch_features());
  (*encoder)->EncodePatches(positions, patches.data(), responses.mutable_data());

  bench_audio::FftCorrelation fft(s.height, s.width, s.pad_rows, s.pad_cols, s.kh, s.kw, s.m,
                                  templates.data());
  ASSERT_EQ(fft.positions_y(), g.positions_y());
  ASSERT_EQ(fft.positions_x(), g.positions_x());
  ASSERT_GE(fft.fft_rows(), s.height + 2 * s.pad_rows);
  ASSERT_GE(fft.fft_cols(), s.width + 2 * s.pad_cols);
  std::unique_ptr<bench_audio::FftCorrelation::Workspace> ws = fft.NewWorkspace();
  std::vector<kiss_fft_cpx> spectrum(static_cast<size_t>(fft.spectrum_size()));
  fft.Forward(*ws, image.data(), spectrum.data());
  std::vector<float> maps(static_cast<size_t>(s.m * positions));
  // Two calls over halves of the templates: [j0, j1) lands in the rows it names.
  fft.Correlate(*ws, spectrum.data(), 0, s.m / 2, maps.data());
  fft.Correlate(*ws, spectrum.data(), s.m / 2, s.m, maps.data() + (s.m / 2) * positions);

  for (int64_t j = 0; j < s.m; ++j) {
    double largest = 0;
    std::vector<double> gemm(static_cast<size_t>(positions));
    for (int64_t q = 0; q < positions; ++q) {
      const float* row = responses.row(q);
      gemm[static_cast<size_t>(q)] = double{row[j]} - double{row[s.m + j]};
      largest = std::max(largest, std::abs(gemm[static_cast<size_t>(q)]));
    }
    ASSERT_GT(largest, 0.0);
    for (int64_t q = 0; q < positions; ++q) {
      const double from_fft = maps[static_cast<size_t>(j * positions + q)];
      ASSERT_NEAR(from_fft, gemm[static_cast<size_t>(q)], 1e-4 * largest)
          << "template " << j << ", position (" << q / g.positions_x() << ", "
          << q % g.positions_x() << ")";
    }
  }
}

// The spoken-digit shapes: 64 × 62 spectrogram; 56 × 8 patches with 8 rows
// of zeros above and below (research/repro/spoken_digits.sh's tf_patch and
// tf_patch_cq), 48 × 8 patches without padding (tf_patch_cqt), and 32 × 8
// patches with 4 rows of zeros (the shipped
// train/configs/spoken_digits.textproto; the last two read every second
// position).
TEST(FftCorrelationTest, SpokenDigitShapes) {
  ExpectFftMatchesGemm({64, 62, 8, 0, 56, 8, 24}, 1);
  ExpectFftMatchesGemm({64, 62, 0, 0, 48, 8, 24}, 4);
  ExpectFftMatchesGemm({64, 62, 4, 0, 32, 8, 24}, 5);
}

// Padding along both axes, odd plane widths (the FFT grid is rounded up to
// an even fast size), a template as tall as the padded plane allows.
TEST(FftCorrelationTest, PaddedBothAxesOddSizes) {
  ExpectFftMatchesGemm({13, 9, 2, 1, 5, 3, 7}, 2);
  ExpectFftMatchesGemm({7, 11, 3, 2, 13, 4, 5}, 3);
}

}  // namespace
}  // namespace invariant
