// test_data.h: seeded random matrices shared by the rls tests.
#ifndef INVARIANT_TESTS_UNIT_RLS_TEST_DATA_H_
#define INVARIANT_TESTS_UNIT_RLS_TEST_DATA_H_

#include <cstdint>

#include "Eigen/Core"
#include "core/base/random.h"
#include "core/base/tensor.h"

namespace invariant::rls_test {

// rows × cols, entries N(mean, stddev²), from `rng`.
inline FloatMatrix RandomNormal(Rng& rng, int64_t rows, int64_t cols, double mean = 0.0,
                                double stddev = 1.0) {
  FloatMatrix m = FloatMatrix::Zeros(rows, cols);
  for (int64_t i = 0; i < m.size(); ++i) {
    m.mutable_data()[i] = static_cast<float>(rng.Normal(mean, stddev));
  }
  return m;
}

// Column-major double copy of a float matrix.
inline Eigen::MatrixXd ToDouble(const FloatMatrix& m) { return m.map().cast<double>(); }

// ‖a − b‖_F / ‖b‖_F.
inline double RelativeError(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).norm() / b.norm();
}

}  // namespace invariant::rls_test

#endif  // INVARIANT_TESTS_UNIT_RLS_TEST_DATA_H_
