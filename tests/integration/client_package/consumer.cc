// Uses the installed client library: builds requests, creates a Client and
// calls a target where nothing listens. Exit 0 when every call fails with a
// transport status (UNAVAILABLE or DEADLINE_EXCEEDED) and the API behaves;
// non-zero otherwise.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "client/client.h"

int main(int argc, char** argv) {
  const std::string target = argc > 1 ? argv[1] : "127.0.0.1:1";
  invariant::ClientOptions options;
  options.deadline = std::chrono::milliseconds(2000);
  options.service_config_json = invariant::DefaultRetryServiceConfig();
  auto client = invariant::Client::Create(target, options);
  if (client == nullptr || client->channel() == nullptr) return 2;
  std::vector<float> scores;
  const grpc::Status predict = client->Predict("any", 1, std::vector<float>(4, 0.5f), &scores);
  bool serving = true;
  const grpc::Status health = client->Health("", &serving);
  const auto transport = [](const grpc::Status& s) {
    return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
           s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
  };
  std::printf("predict: %d %s\nhealth: %d %s\n", predict.error_code(),
              predict.error_message().c_str(), health.error_code(), health.error_message().c_str());
  return transport(predict) && transport(health) && !serving ? 0 : 1;
}
