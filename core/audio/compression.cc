#include "core/audio/compression.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace invariant::audio {
namespace {

absl::Status InvalidCompression(const std::string& field, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat("audio.", field, ": ", message));
}

// A Pcen parameter: its default (for 0) and its range (0, high].
struct PcenParameter {
  const char* field;
  double (v1::Pcen::*get)() const;
  void (v1::Pcen::*set)(double);
  double fallback, high;
};

constexpr PcenParameter kPcenParameters[] = {
    {"time_constant_seconds", &v1::Pcen::time_constant_seconds,
     &v1::Pcen::set_time_constant_seconds, 0.4, 60},
    {"alpha", &v1::Pcen::alpha, &v1::Pcen::set_alpha, 0.98, 1},
    {"delta", &v1::Pcen::delta, &v1::Pcen::set_delta, 2, 1e3},
    {"power", &v1::Pcen::power, &v1::Pcen::set_power, 0.5, 1},
    {"epsilon", &v1::Pcen::epsilon, &v1::Pcen::set_epsilon, 1e-6, 1},
};

// librosa's smoothing coefficient for a time constant of `t` frames.
double Smoothing(double t) { return (std::sqrt(1 + 4 * t * t) - 1) / (2 * t * t); }

void Pcen(const v1::AudioFrontEnd& spec, int64_t frames, int64_t k0, int64_t k1, int64_t begin,
          int64_t end, float* row) {
  const v1::Pcen& p = spec.pcen();
  const double gain = spec.compression_gain();
  const double s = Smoothing(p.time_constant_seconds() * spec.sample_rate() / spec.hop_length());
  const double alpha = p.alpha(), delta = p.delta(), power = p.power(), eps = p.epsilon();
  const bool root = power == 0.5;
  const double floor = root ? std::sqrt(delta) : std::pow(delta, power);  // silence gives 0
  for (int64_t k = k0; k < k1; ++k) {
    float* bin = row + k * frames;
    double m = 0;
    for (int64_t t = begin; t < end; ++t) {
      const double e = gain * bin[t];
      m = t == begin ? e : (1 - s) * m + s * e;
      const double ratio = e / std::exp(alpha * std::log(eps + m)) + delta;
      bin[t] = static_cast<float>((root ? std::sqrt(ratio) : std::pow(ratio, power)) - floor);
    }
  }
}

}  // namespace

absl::Status CompleteCompression(v1::AudioFrontEnd* spec) {
  switch (spec->compression()) {
    case v1::AudioFrontEnd::COMPRESSION_LOG1P:
      if (spec->has_pcen()) {
        return InvalidCompression("pcen", "set, but compression is not COMPRESSION_PCEN");
      }
      return absl::OkStatus();
    case v1::AudioFrontEnd::COMPRESSION_PCEN:
      break;
    default:
      return InvalidCompression("compression", absl::StrCat("unknown value ", spec->compression()));
  }
  v1::Pcen* p = spec->mutable_pcen();
  for (const PcenParameter& q : kPcenParameters) {
    double v = (p->*q.get)();
    if (v == 0) v = q.fallback;
    if (!(v > 0) || !(v <= q.high)) {
      return InvalidCompression(absl::StrCat("pcen.", q.field),
                                absl::StrCat(v, " must be in (0, ", q.high, "]"));
    }
    (p->*q.set)(v);
  }
  return absl::OkStatus();
}

void Compress(const v1::AudioFrontEnd& spec, int64_t frames, int64_t k0, int64_t k1, int64_t begin,
              int64_t end, float* row) {
  if (spec.compression() == v1::AudioFrontEnd::COMPRESSION_PCEN) {
    Pcen(spec, frames, k0, k1, begin, end, row);
    return;
  }
  const float gain = static_cast<float>(spec.compression_gain());
  for (int64_t k = k0; k < k1; ++k) {
    for (int64_t t = begin; t < end; ++t) {
      row[k * frames + t] = std::log1p(gain * row[k * frames + t]);
    }
  }
}

}  // namespace invariant::audio
