// run_options.h: TrainOptions for the in-process training tests, and what
// they check of the models those runs write (the tests that link
// invariant_train_pipeline; train_test_util.h stays free of it).
#ifndef INVARIANT_TESTS_UNIT_TRAIN_RUN_OPTIONS_H_
#define INVARIANT_TESTS_UNIT_TRAIN_RUN_OPTIONS_H_

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "core/model/model.h"
#include "core/model/repository.h"
#include "gtest/gtest.h"
#include "tests/unit/train/train_test_util.h"
#include "train/pipeline/trainer.h"

namespace invariant::testing {

// Options for a run of `config` (written to DIR/<name>.textproto) into
// DIR/models/<name>.
inline train::TrainOptions RunOptions(const TempDir& dir, const std::string& config,
                                      const std::string& name) {
  train::TrainOptions o;
  o.config_path = dir.Write(name + ".textproto", config);
  o.models_dir = dir.path() + "/models";
  o.name = name;
  return o;
}

// The model of a version directory a run wrote (null, with a failure, when
// it does not load).
inline std::shared_ptr<const Model> LoadVersion(const std::string& version_dir) {
  auto m = Model::Load(version_dir + "/" + kBundleFileName);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : nullptr;
}

// A sharded run's head equals the unsharded one's up to summation order
// (max |Δw| < 1e-6 · max |w|) and scores the same test accuracy.
inline void ExpectSameHead(const Model& single, const Model& reduced) {
  const FloatMatrix& ws = single.tensors().f32.at("head/weights");
  const FloatMatrix& wr = reduced.tensors().f32.at("head/weights");
  ASSERT_EQ(ws.size(), wr.size());
  double max_w = 0, max_diff = 0;
  for (int64_t i = 0; i < ws.size(); ++i) {
    max_w = std::max(max_w, std::fabs(static_cast<double>(ws.data()[i])));
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(ws.data()[i]) - wr.data()[i]));
  }
  EXPECT_LT(max_diff, 1e-6 * max_w) << "max |w_single - w_reduced| = " << max_diff;
  EXPECT_EQ(single.manifest().metrics().at("test_accuracy"),
            reduced.manifest().metrics().at("test_accuracy"));
}

}  // namespace invariant::testing

#endif  // INVARIANT_TESTS_UNIT_TRAIN_RUN_OPTIONS_H_
