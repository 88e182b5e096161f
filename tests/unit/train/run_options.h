// run_options.h: TrainOptions for the in-process training tests (the ones
// that link invariant_train_pipeline; train_test_util.h stays free of it).
#ifndef INVARIANT_TESTS_UNIT_TRAIN_RUN_OPTIONS_H_
#define INVARIANT_TESTS_UNIT_TRAIN_RUN_OPTIONS_H_

#include <string>

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

}  // namespace invariant::testing

#endif  // INVARIANT_TESTS_UNIT_TRAIN_RUN_OPTIONS_H_
