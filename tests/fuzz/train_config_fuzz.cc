// train_config_fuzz.cc: libFuzzer target for the training-config parser
// (train/pipeline/config.h).
//
// Input: the text of a config (invariant.v1.TrainConfig in protobuf text
// format). Every parse must return a status with a message (never crash);
// a config that parses and validates must validate again unchanged (the
// defaults validation fills are themselves valid), and its text form must
// parse back to the same config.
#include <cstdint>
#include <string>

#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "tests/fuzz/fuzz_util.h"
#include "train/pipeline/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using invariant::fuzz::Check;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto config = invariant::train::ParseTrainConfig(text, "fuzz.textproto");
  if (!config.ok()) {
    Check(!config.status().message().empty(), "a refused config has an error message");
    return 0;
  }
  invariant::v1::TrainConfig again = *config;
  Check(invariant::train::ValidateTrainConfig(again).ok(), "a validated config validates again");
  Check(google::protobuf::util::MessageDifferencer::Equals(again, *config),
        "validating a validated config changes nothing");
  std::string printed;
  Check(google::protobuf::TextFormat::PrintToString(*config, &printed), "a config prints");
  const auto reparsed = invariant::train::ParseTrainConfig(printed, "printed.textproto");
  Check(reparsed.ok(), "a printed valid config parses");
  Check(google::protobuf::util::MessageDifferencer::Equals(*reparsed, *config),
        "a printed config parses back to itself");
  return 0;
}
