// random.h: the one seeded random generator every draw in invariant-serve uses.
//
// Reproducibility needs the same stream on every
// platform and standard library, so the distributions are implemented here
// instead of taken from <random> (whose normal_distribution is
// implementation-defined). The engine is xoshiro256**, seeded by splitmix64.
#ifndef INVARIANT_CORE_BASE_RANDOM_H_
#define INVARIANT_CORE_BASE_RANDOM_H_

#include <cstdint>

namespace invariant {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  // A generator for an independent stream: same (seed, stream) → same draws.
  static Rng ForStream(uint64_t seed, uint64_t stream);

  uint64_t NextU64();
  // Uniform in [0, 1).
  double Uniform();
  // Uniform in [a, b).
  double Uniform(double a, double b) { return a + (b - a) * Uniform(); }
  // Uniform integer in [0, n), n > 0, without modulo bias.
  uint64_t UniformInt(uint64_t n);
  // Standard normal (Marsaglia polar method).
  double Normal();
  double Normal(double mean, double stddev) { return mean + stddev * Normal(); }
  // von Mises on (-pi, pi] with mean mu and concentration kappa >= 0
  // (Best & Fisher 1979); kappa = 0 is uniform.
  double VonMises(double mu, double kappa);

 private:
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_RANDOM_H_
