#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "core/base/random.h"
#include "gtest/gtest.h"
#include "train/data/coulomb.h"
#include "train/data/splits.h"
#include "train/data/torus.h"
#include "train/data/xperm.h"

namespace invariant::train {
namespace {

// ---- Xperm (Mroueh et al. 2015, Appendix D.1) ----

TEST(XpermTest, AllSequencesOneHotWithBruteForceLabels) {
  const XpermOptions options{/*seed=*/7, /*bag_of_words=*/false};
  const Dataset data = MakeXperm(options);
  ASSERT_EQ(data.rows(), 32768);
  ASSERT_EQ(data.dim(), 40);
  EXPECT_EQ(data.input_shape, (std::vector<int64_t>{5, 8}));
  const std::array<int, 2> targets = XpermTargetSymbols(7);
  ASSERT_NE(targets[0], targets[1]);
  ASSERT_GE(std::min(targets[0], targets[1]), 0);
  ASSERT_LT(std::max(targets[0], targets[1]), 8);

  std::set<std::vector<float>> distinct;
  int64_t positives = 0;
  for (int64_t i = 0; i < data.rows(); ++i) {
    const float* row = data.x.row(i);
    // Decode the symbols from the one-hot blocks, independently of the generator.
    bool has0 = false, has1 = false;
    float total = 0.0f;
    for (int p = 0; p < 5; ++p) {
      int ones = 0, symbol = -1;
      for (int c = 0; c < 8; ++c) {
        const float v = row[p * 8 + c];
        ASSERT_TRUE(v == 0.0f || v == 1.0f);
        if (v == 1.0f) {
          ++ones;
          symbol = c;
        }
        total += v;
      }
      ASSERT_EQ(ones, 1) << "row " << i << " block " << p;
      has0 |= symbol == targets[0];
      has1 |= symbol == targets[1];
    }
    EXPECT_EQ(total, 5.0f);
    EXPECT_EQ(data.labels[i], has0 && has1 ? 1 : 0) << "row " << i;
    positives += data.labels[i];
    distinct.insert(std::vector<float>(row, row + 40));
  }
  EXPECT_EQ(distinct.size(), 32768u);  // every sequence exactly once
  // Sequences containing both of two given symbols: 8^5 − 2·7^5 + 6^5 = 6,930.
  EXPECT_EQ(positives, 6930);
}

TEST(XpermTest, TargetSymbolsDependOnSeedOnly) {
  EXPECT_EQ(XpermTargetSymbols(3), XpermTargetSymbols(3));
  std::set<std::array<int, 2>> seen;
  for (uint64_t s = 0; s < 40; ++s) {
    const auto t = XpermTargetSymbols(s);
    EXPECT_NE(t[0], t[1]);
    seen.insert(t);
  }
  EXPECT_GT(seen.size(), 10u);
}

TEST(XpermTest, BagOfWordsCountsSumToFiveAndMatchTheSource) {
  const Dataset one_hot = MakeXperm({/*seed=*/2, /*bag_of_words=*/false});
  const Dataset bag = MakeXperm({/*seed=*/2, /*bag_of_words=*/true});
  ASSERT_EQ(bag.dim(), 8);
  ASSERT_EQ(bag.rows(), 32768);
  EXPECT_EQ(bag.labels, one_hot.labels);
  std::vector<float> counts(static_cast<size_t>(one_hot.rows()) * 8);
  XpermBagOfWords(one_hot.rows(), one_hot.x.data(), counts.data());
  for (int64_t i = 0; i < bag.rows(); ++i) {
    float sum = 0.0f;
    for (int c = 0; c < 8; ++c) {
      EXPECT_EQ(counts[i * 8 + c], bag.x.row(i)[c]);
      sum += bag.x.row(i)[c];
    }
    ASSERT_EQ(sum, 5.0f);
  }
  // Sequence 0 is "00000": all five counts on symbol 0.
  EXPECT_EQ(bag.x.row(0)[0], 5.0f);
}

TEST(XpermTest, BalancedTrainingSetAsInThePaper) {
  const Dataset data = MakeXperm({/*seed=*/1, false});
  auto split = SplitPerClass(data.labels, 2, 2000, 0, /*seed=*/11);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->train.size(), 4000u);
  EXPECT_EQ(split->test.size(), 28768u);
  int64_t positives = 0;
  for (int64_t i : split->train) positives += data.labels[i];
  EXPECT_EQ(positives, 2000);
}

// ---- Torus (Soleymani et al. 2025, §6) ----

TEST(TorusTest, TargetMatchesTheFormulaAndIsSignFlipInvariant) {
  TorusOptions options;
  options.dim = 10;
  options.num_points = 200;
  options.seed = 4;
  auto data = MakeTorus(options);
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->rows(), 200);
  ASSERT_EQ(data->num_targets(), 1);
  Rng flips(99);
  for (int64_t i = 0; i < data->rows(); ++i) {
    const float* x = data->x.row(i);
    double expected = 0.0;
    std::vector<float> flipped(x, x + 10);
    for (int j = 0; j < 10; ++j) {
      ASSERT_GE(x[j], -1.0f);
      ASSERT_LT(x[j], 1.0f);
      expected += (j + 1) * static_cast<double>(x[j]) * x[j];
      if (flips.UniformInt(2) == 1) flipped[j] = -flipped[j];
    }
    expected /= 10.0;
    EXPECT_NEAR(data->y.row(i)[0], expected, 1e-5);
    EXPECT_DOUBLE_EQ(TorusTarget(10, flipped.data()), TorusTarget(10, x));
  }
}

TEST(TorusTest, NoiseHasTheRequestedSpread) {
  TorusOptions options;
  options.dim = 3;
  options.num_points = 4000;
  options.noise_stddev = 0.5;
  auto data = MakeTorus(options);
  ASSERT_TRUE(data.ok());
  double sum = 0.0, sum2 = 0.0;
  for (int64_t i = 0; i < data->rows(); ++i) {
    const double e = data->y.row(i)[0] - TorusTarget(3, data->x.row(i));
    sum += e;
    sum2 += e * e;
  }
  const double mean = sum / data->rows();
  const double stddev = std::sqrt(sum2 / data->rows() - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(stddev, 0.5, 0.03);
}

TEST(TorusTest, RejectsBadOptions) {
  TorusOptions options;
  options.dim = 0;
  EXPECT_FALSE(MakeTorus(options).ok());
  options.dim = 2;
  options.noise_stddev = -1.0;
  EXPECT_FALSE(MakeTorus(options).ok());
}

// ---- Coulomb matrices ----

Molecule Permuted(const Molecule& m, const std::vector<int64_t>& order) {
  Molecule p;
  for (int64_t i : order) {
    p.positions.push_back(m.positions[i]);
    p.charges.push_back(m.charges[i]);
  }
  return p;
}

TEST(CoulombTest, MatricesAreSymmetricPaddedAndTargetIsTheEnergy) {
  CoulombOptions options;
  options.num_molecules = 50;
  options.max_atoms = 12;
  options.min_atoms = 3;
  options.seed = 5;
  auto data = MakeCoulomb(options);
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->rows(), 50);
  ASSERT_EQ(data->dim(), 144);
  for (int64_t r = 0; r < data->rows(); ++r) {
    const float* c = data->x.row(r);
    int atoms = 0;
    double upper = 0.0;
    for (int i = 0; i < 12; ++i) {
      if (c[i * 12 + i] != 0.0f) ++atoms;
      for (int j = 0; j < 12; ++j) {
        ASSERT_EQ(c[i * 12 + j], c[j * 12 + i]);
        if (j > i) upper += c[i * 12 + j];
      }
    }
    ASSERT_GE(atoms, 3);
    ASSERT_LE(atoms, 12);
    // Atoms fill the first rows; padding rows are all zero.
    for (int i = atoms; i < 12; ++i) {
      for (int j = 0; j < 12; ++j) ASSERT_EQ(c[i * 12 + j], 0.0f);
    }
    // Diagonal: 0.5·Z^2.4 for Z in {1, 6, 7, 8, 16}.
    for (int i = 0; i < atoms; ++i) {
      bool known = false;
      for (int32_t z : kCoulombCharges)
        known |= std::abs(c[i * 12 + i] - 0.5 * std::pow(z, 2.4)) < 1e-3;
      EXPECT_TRUE(known) << c[i * 12 + i];
    }
    EXPECT_NEAR(data->y.row(r)[0], upper, 1e-4 * std::max(1.0, upper));
  }
}

TEST(CoulombTest, TargetInvariantToAtomOrderAndSortedMatrixToo) {
  CoulombOptions options;
  options.max_atoms = 10;
  options.min_atoms = 6;
  Rng rng(21);
  for (int trial = 0; trial < 20; ++trial) {
    const Molecule m = RandomMolecule(options, rng);
    // Minimum distance holds.
    for (int64_t i = 0; i < m.size(); ++i) {
      for (int64_t j = i + 1; j < m.size(); ++j) {
        double d2 = 0.0;
        for (int k = 0; k < 3; ++k) d2 += std::pow(m.positions[i][k] - m.positions[j][k], 2);
        ASSERT_GE(std::sqrt(d2), options.min_distance);
      }
    }
    std::vector<int64_t> order(m.size());
    std::iota(order.begin(), order.end(), 0);
    ShuffleInPlace(order, rng);
    const Molecule p = Permuted(m, order);
    EXPECT_NEAR(CoulombEnergy(p), CoulombEnergy(m), 1e-9 * CoulombEnergy(m));

    std::vector<float> a(100), b(100), sa(100), sb(100);
    CoulombMatrix(m, 10, a.data());
    CoulombMatrix(p, 10, b.data());
    const bool identity = std::is_sorted(order.begin(), order.end());
    if (!identity) {
      EXPECT_NE(a, b);  // the raw representation depends on the order
    }
    SortedCoulomb(10, a.data(), sa.data());
    SortedCoulomb(10, b.data(), sb.data());
    EXPECT_EQ(sa, sb);
    // Row norms are non-increasing after sorting.
    double previous = 1e300;
    for (int i = 0; i < 10; ++i) {
      double norm = 0.0;
      for (int j = 0; j < 10; ++j) norm += sa[i * 10 + j] * sa[i * 10 + j];
      EXPECT_LE(norm, previous);
      previous = norm;
    }
  }
}

TEST(CoulombTest, SortedSourceEmitsSortedMatricesWithTheSameTargets) {
  CoulombOptions options;
  options.num_molecules = 10;
  options.max_atoms = 8;
  options.min_atoms = 2;
  auto raw = MakeCoulomb(options);
  options.sorted = true;
  auto sorted = MakeCoulomb(options);
  ASSERT_TRUE(raw.ok() && sorted.ok());
  std::vector<float> expected(64);
  for (int64_t r = 0; r < 10; ++r) {
    EXPECT_EQ(raw->y.row(r)[0], sorted->y.row(r)[0]);
    SortedCoulomb(8, raw->x.row(r), expected.data());
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), sorted->x.row(r)));
  }
}

TEST(CoulombTest, RejectsBadOptions) {
  CoulombOptions options;
  options.min_atoms = 30;
  options.max_atoms = 23;
  EXPECT_FALSE(MakeCoulomb(options).ok());
}

}  // namespace
}  // namespace invariant::train
