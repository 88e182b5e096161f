// fake_servable.h: the stand-in servable of the registry tests: a bundle file
// holding an integer loads as a FakeModel with that payload; one holding
// "corrupt" fails with DATA_LOSS naming the file.
#ifndef INVARIANT_TESTS_UNIT_SERVER_TESTING_FAKE_SERVABLE_H_
#define INVARIANT_TESTS_UNIT_SERVER_TESTING_FAKE_SERVABLE_H_

#include <fstream>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace invariant::server {

struct FakeModel {
  int payload = 0;
};

inline absl::StatusOr<std::shared_ptr<const FakeModel>> LoadFake(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  in >> text;
  if (text == "corrupt") return absl::DataLossError("checksum mismatch in " + path);
  auto model = std::make_shared<FakeModel>();
  model->payload = std::stoi(text);
  return std::shared_ptr<const FakeModel>(model);
}

}  // namespace invariant::server

#endif  // INVARIANT_TESTS_UNIT_SERVER_TESTING_FAKE_SERVABLE_H_
