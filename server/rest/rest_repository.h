// rest_repository.h: the model repository extension's REST binding
// (Triton's): POST /v2/repository/index with an optional body {"ready":
// bool} answers the index as a JSON array of {"name", "version", "state",
// "reason"}; POST /v2/repository/models/{name}/load and .../unload with an
// optional body {"parameters": {...}} answer 200 and an empty object.
// The admin token is checked before (rest_service.h Admit); the request
// logic is RepositoryHandler's (repository_handler.h).
//
// Errors: INVALID_ARGUMENT naming the body's member ("ready: expected a
// boolean, received a string"; syntax errors name the byte), and
// RepositoryHandler's. Thread-safe.
#ifndef INVARIANT_SERVER_REST_REST_REPOSITORY_H_
#define INVARIANT_SERVER_REST_REST_REPOSITORY_H_

#include <string>

#include "absl/status/status.h"
#include "server/handlers/repository_handler.h"

namespace invariant::server {

// The index's JSON answer for `body` (may be empty).
absl::Status RestRepositoryIndex(const RepositoryHandler& repository, const std::string& body,
                                 std::string* answer);
// Loads (`load`) or unloads `model` for `body` (may be empty); `done` gets
// the outcome once (the answer is "{}" when OK), from the calling thread for
// a body refused by its checks, else from the repository's threads.
void RestRepositoryLoad(const RepositoryHandler& repository, const std::string& model, bool load,
                        const std::string& body, RepositoryHandler::DoneFn done);

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_REST_REST_REPOSITORY_H_
