#include "server/rest/rest_repository.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/json.h"

namespace invariant::server {
namespace {

// The body as a JSON object (empty body: an empty object).
absl::StatusOr<JsonValue> BodyObject(const std::string& body) {
  if (body.empty()) return JsonValue::Object({});
  absl::StatusOr<JsonValue> json = ParseJson(body);
  if (!json.ok()) return absl::InvalidArgumentError(absl::StrCat("body ", json.status().message()));
  if (!json->is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("body: expected a JSON object, received ", json->TypeName()));
  }
  return json;
}

// The request's "parameters" member into `out` (each kept as a string: the
// handler refuses every parameter by name).
template <typename Parameters>
absl::Status ReadParameters(const JsonValue& body, Parameters* out) {
  for (const auto& [key, value] : body.members()) {
    if (key != "parameters") {
      return absl::InvalidArgumentError(
          absl::StrCat(key.substr(0, 64), ": expected only \"parameters\" in the body"));
    }
    if (!value.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameters: expected an object, received ", value.TypeName()));
    }
    for (const auto& [name, parameter] : value.members()) {
      (*out)[name].set_string_param(std::string(parameter.TypeName()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RestRepositoryIndex(const RepositoryHandler& repository, const std::string& body,
                                 std::string* answer) {
  absl::StatusOr<JsonValue> json = BodyObject(body);
  if (!json.ok()) return json.status();
  inference::RepositoryIndexRequest request;
  for (const auto& [key, value] : json->members()) {
    if (key == "ready") {
      if (!value.is_bool()) {
        return absl::InvalidArgumentError(
            absl::StrCat("ready: expected a boolean, received ", value.TypeName()));
      }
      request.set_ready(value.bool_value());
    } else if (key == "repository_name" && value.is_string()) {
      request.set_repository_name(value.text());
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          key.substr(0, 64), ": expected only \"ready\" (and \"repository_name\") in the body"));
    }
  }
  inference::RepositoryIndexResponse index;
  if (absl::Status s = repository.Index(request, &index); !s.ok()) return s;
  std::string out = "[";
  for (int i = 0; i < index.models_size(); ++i) {
    const auto& model = index.models(i);
    if (i > 0) out += ',';
    absl::StrAppend(&out, "{\"name\":", JsonString(model.name()));
    if (!model.version().empty())
      absl::StrAppend(&out, ",\"version\":", JsonString(model.version()));
    absl::StrAppend(&out, ",\"state\":", JsonString(model.state()),
                    ",\"reason\":", JsonString(model.reason()), "}");
  }
  out += ']';
  *answer = std::move(out);
  return absl::OkStatus();
}

void RestRepositoryLoad(const RepositoryHandler& repository, const std::string& model, bool load,
                        const std::string& body, RepositoryHandler::DoneFn done) {
  absl::StatusOr<JsonValue> json = BodyObject(body);
  if (!json.ok()) return done(json.status());
  if (load) {
    inference::RepositoryModelLoadRequest request;
    request.set_model_name(model);
    if (absl::Status s = ReadParameters(*json, request.mutable_parameters()); !s.ok()) {
      return done(s);
    }
    return repository.Load(request, std::move(done));
  }
  inference::RepositoryModelUnloadRequest request;
  request.set_model_name(model);
  if (absl::Status s = ReadParameters(*json, request.mutable_parameters()); !s.ok()) {
    return done(s);
  }
  repository.Unload(request, std::move(done));
}

}  // namespace invariant::server
