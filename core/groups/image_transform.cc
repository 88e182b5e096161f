#include "core/groups/image_transform.h"

#include <array>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/math_constants.h"
#include "core/groups/snap.h"

namespace invariant {
namespace {

double WrapAngle(double theta) { return std::remainder(theta, kTwoPi); }

// The four bilinear taps of one output pixel: source pixel indices (−1 when
// outside the image) and weights that already include the 1/a factor.
struct PixelTaps {
  std::array<int64_t, 4> pixel;
  std::array<float, 4> weight;
};

}  // namespace

GroupElement ImageTransform::Similarity(double angle, double tx, double ty, double scale) {
  return GroupElement{{angle, tx, ty, scale}};
}

std::string ImageTransform::name() const {
  return absl::StrCat("image_transform(", height_, "x", width_, "x", channels_, ")");
}

GroupElement ImageTransform::Inverse(const GroupElement& g) const {
  const double theta = g.params[0], tx = g.params[1], ty = g.params[2], a = g.params[3];
  const double c = std::cos(theta), s = std::sin(theta);
  // −(1/a)·R(−θ)·t with R(−θ) = [[c, s], [−s, c]].
  return Similarity(WrapAngle(-theta), -(c * tx + s * ty) / a, -(-s * tx + c * ty) / a, 1.0 / a);
}

GroupElement ImageTransform::Compose(const GroupElement& a, const GroupElement& b) const {
  const double ta = a.params[0], sa = a.params[3];
  const double c = std::cos(ta), s = std::sin(ta);
  const double bx = b.params[1], by = b.params[2];
  return Similarity(WrapAngle(ta + b.params[0]), a.params[1] + sa * (c * bx - s * by),
                    a.params[2] + sa * (s * bx + c * by), sa * b.params[3]);
}

void ImageTransform::Apply(const GroupElement& g, int64_t n, const float* x, float* out) const {
  const GroupElement inv = Inverse(g);
  const double theta = inv.params[0], tx = inv.params[1], ty = inv.params[2], ai = inv.params[3];
  const double c = std::cos(theta), s = std::sin(theta);
  const double cx = 0.5 * static_cast<double>(width_ - 1);
  const double cy = 0.5 * static_cast<double>(height_ - 1);
  const float intensity = static_cast<float>(1.0 / g.params[3]);

  const int64_t num_pixels = height_ * width_;
  std::vector<PixelTaps> taps(static_cast<size_t>(num_pixels));
  for (int64_t row = 0; row < height_; ++row) {
    for (int64_t col = 0; col < width_; ++col) {
      const double ux = static_cast<double>(col) - cx;
      const double uy = static_cast<double>(row) - cy;
      const double px = Snap(ai * (c * ux - s * uy) + cx + tx);
      const double py = Snap(ai * (s * ux + c * uy) + cy + ty);
      const double x0 = std::floor(px), y0 = std::floor(py);
      const double fx = px - x0, fy = py - y0;
      const double wx[2] = {1.0 - fx, fx};
      const double wy[2] = {1.0 - fy, fy};
      PixelTaps& t = taps[static_cast<size_t>(row * width_ + col)];
      for (int k = 0; k < 4; ++k) {
        const int dx = k & 1, dy = k >> 1;
        const double sx = x0 + dx, sy = y0 + dy;
        const double w = wx[dx] * wy[dy];
        const bool inside = w != 0.0 && sx >= 0.0 && sx < static_cast<double>(width_) &&
                            sy >= 0.0 && sy < static_cast<double>(height_);
        t.pixel[k] = inside ? static_cast<int64_t>(sy) * width_ + static_cast<int64_t>(sx) : -1;
        t.weight[k] = inside ? static_cast<float>(w) * intensity : 0.0f;
      }
    }
  }

  const int64_t d = dim();
  for (int64_t img = 0; img < n; ++img) {
    const float* src = x + img * d;
    float* dst = out + img * d;
    for (int64_t p = 0; p < num_pixels; ++p) {
      const PixelTaps& t = taps[static_cast<size_t>(p)];
      float* o = dst + p * channels_;
      for (int64_t ch = 0; ch < channels_; ++ch) o[ch] = 0.0f;
      for (int k = 0; k < 4; ++k) {
        if (t.pixel[k] < 0) continue;
        const float* v = src + t.pixel[k] * channels_;
        const float w = t.weight[k];
        for (int64_t ch = 0; ch < channels_; ++ch) o[ch] += w * v[ch];
      }
    }
  }
}

}  // namespace invariant
