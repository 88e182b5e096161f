// invariance-figure: how far features move when an image is rotated.
//
// For the first --images Fashion-MNIST test images x and angles θ in
// [0°, 360°], prints the mean relative distance ‖φ(R_θ x) − φ(x)‖ / ‖φ(x)‖
// for raw pixels and for the feature maps of two model bundles (a plain
// random Fourier model and an invariant one), as CSV, and draws them as an
// SVG line chart (no plotting dependency).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "core/groups/image_transform.h"
#include "core/model/model.h"
#include "train/data/fashion_mnist.h"
#include "train/data/row_source.h"

ABSL_FLAG(std::string, raw_model, "", "Bundle of the non-invariant model.");
ABSL_FLAG(std::string, invariant_model, "", "Bundle of the invariant model.");
ABSL_FLAG(int, images, 20, "Test images averaged.");
ABSL_FLAG(std::string, svg, "invariance.svg", "SVG output.");
ABSL_FLAG(std::string, csv, "", "CSV output (default: stdout).");

namespace {

using invariant::Model;

std::vector<float> Features(const Model* m, const std::vector<float>& x, int64_t n) {
  if (m == nullptr) return x;
  std::vector<float> out(static_cast<size_t>(n * m->feature_dim()));
  m->Featurize(n, x.data(), out.data());
  return out;
}

// Mean over rows of ‖a_i − b_i‖ / ‖b_i‖.
double MeanRelativeDistance(const std::vector<float>& a, const std::vector<float>& b, int64_t n) {
  const size_t d = a.size() / static_cast<size_t>(n);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    double num = 0, den = 0;
    for (size_t j = 0; j < d; ++j) {
      const double u = a[i * d + j], v = b[i * d + j];
      num += (u - v) * (u - v);
      den += v * v;
    }
    total += den > 0 ? std::sqrt(num / den) : 0;
  }
  return total / static_cast<double>(n);
}

std::string Svg(const std::vector<double>& angles, const std::vector<std::vector<double>>& ys,
                const std::vector<std::string>& names, const std::vector<std::string>& colors) {
  const double w = 640, h = 360, l = 60, r = 170, t = 20, b = 50;
  double ymax = 0;
  for (const auto& y : ys) {
    for (double v : y) ymax = std::max(ymax, v);
  }
  ymax = std::ceil(ymax * 10) / 10;
  auto px = [&](double a) { return l + (w - l - r) * a / 360.0; };
  auto py = [&](double v) { return h - b - (h - t - b) * v / ymax; };
  std::string s = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
      "fill=\"white\"/>\n",
      w, h);
  s += absl::StrFormat("<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", l,
                       h - b, w - r, h - b);
  s += absl::StrFormat("<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", l, t,
                       l, h - b);
  for (int a = 0; a <= 360; a += 90) {
    s += absl::StrFormat("<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%d°</text>\n", px(a),
                         h - b + 16, a);
  }
  for (int k = 0; k <= 4; ++k) {
    const double v = ymax * k / 4;
    s += absl::StrFormat("<text x=\"%g\" y=\"%g\" text-anchor=\"end\">%.2f</text>\n", l - 6,
                         py(v) + 4, v);
  }
  s += absl::StrFormat("<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">rotation angle</text>\n",
                       (l + w - r) / 2, h - 12);
  s += absl::StrFormat(
      "<text x=\"14\" y=\"%g\" transform=\"rotate(-90 14 %g)\" text-anchor=\"middle\">"
      "‖φ(rotated) − φ(upright)‖ / ‖φ(upright)‖</text>\n",
      (t + h - b) / 2, (t + h - b) / 2);
  for (size_t c = 0; c < ys.size(); ++c) {
    std::string pts;
    for (size_t i = 0; i < angles.size(); ++i) {
      pts += absl::StrFormat("%.1f,%.1f ", px(angles[i]), py(ys[c][i]));
    }
    s += absl::StrFormat(
        "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n", colors[c],
        pts);
    s += absl::StrFormat(
        "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"3\"/>"
        "<text x=\"%g\" y=\"%g\">%s</text>\n",
        w - r + 10, t + 20 + 20 * c, w - r + 30, t + 20 + 20 * c, colors[c], w - r + 35,
        t + 24 + 20 * c, names[c]);
  }
  return s + "</svg>\n";
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  auto raw = Model::Load(absl::GetFlag(FLAGS_raw_model));
  auto inv = Model::Load(absl::GetFlag(FLAGS_invariant_model));
  if (!raw.ok() || !inv.ok()) {
    std::fprintf(stderr, "invariance-figure: %s\n",
                 (!raw.ok() ? raw.status() : inv.status()).ToString().c_str());
    return 1;
  }
  auto source = invariant::train::OpenFashionMnist(invariant::train::FashionMnistPart::kTest);
  if (!source.ok()) {
    std::fprintf(stderr, "invariance-figure: %s\n", source.status().ToString().c_str());
    return 1;
  }
  const int64_t n = absl::GetFlag(FLAGS_images), d = 28 * 28;
  std::vector<float> x(static_cast<size_t>(n * d));
  auto got = (*source)->Next(n, x.data(), nullptr, nullptr);
  if (!got.ok() || *got != n) {
    std::fprintf(stderr, "invariance-figure: cannot read %lld test images\n",
                 static_cast<long long>(n));
    return 1;
  }
  const invariant::ImageTransform rotate(28, 28, 1);
  const std::vector<const Model*> models = {nullptr, raw->get(), inv->get()};
  std::vector<std::vector<float>> base;
  for (const Model* m : models) base.push_back(Features(m, x, n));
  std::vector<double> angles;
  std::vector<std::vector<double>> ys(models.size());
  std::string csv = "angle_degrees,pixels,raw_random_fourier,invariant\n";
  std::vector<float> gx(x.size());
  for (int a = 0; a <= 360; a += 5) {
    rotate.Apply(invariant::ImageTransform::Similarity(a * M_PI / 180, 0, 0, 1), n, x.data(),
                 gx.data());
    angles.push_back(a);
    csv += std::to_string(a);
    for (size_t k = 0; k < models.size(); ++k) {
      ys[k].push_back(MeanRelativeDistance(Features(models[k], gx, n), base[k], n));
      csv += absl::StrFormat(",%.6f", ys[k].back());
    }
    csv += "\n";
  }
  std::ofstream(absl::GetFlag(FLAGS_svg))
      << Svg(angles, ys, {"pixels", "random Fourier", "LGIKA-RF (invariant)"},
             {"#bbbbbb", "#555555", "#1f6fd1"});
  if (absl::GetFlag(FLAGS_csv).empty()) {
    std::fputs(csv.c_str(), stdout);
  } else {
    std::ofstream(absl::GetFlag(FLAGS_csv)) << csv;
  }
  return 0;
}
