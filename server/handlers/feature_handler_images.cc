// FeatureHandler's path for models of image files (feature_handler.h):
// check and price the files from their headers on the calling thread, decode
// them on the decoding workers.
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/handlers/feature_handler.h"
#include "server/handlers/image_files.h"

namespace invariant::server {

void FeatureHandler::RunImages(std::shared_ptr<const InferRequest> request,
                               const Registry::Handle& handle, Method method, absl::Time deadline,
                               DoneFn done, const std::shared_ptr<CancelToken>& cancel,
                               const CallContext& call) const {
  const Model& model = *handle.servable;
  const image::ImageFrontEnd& front_end = *model.image_front_end();
  const InferFieldNames& names = request->fields;
  const int64_t images = static_cast<int64_t>(request->images.size());
  if (request->has_rows() || !request->clips.empty()) {
    const std::string& field = !request->clips.empty()       ? names.clips
                               : request->raw_values.empty() ? names.values
                                                             : names.raw_values;
    return done(absl::InvalidArgumentError(absl::StrCat(
        field, ": expected image files in ", names.images,
        " (the model is a model of image files: its rows of input_dim=", model.input_dim(),
        " come from its image front end), received ", request->clips.empty() ? "rows" : "clips")));
  }
  if (method.record != nullptr) method.record->inputs += images;
  if (absl::Status s = CheckDecodedCount(*request, model, images, names.images, "images", "image");
      !s.ok()) {
    return done(s);
  }
  const int64_t max_pixels = EffectiveMaxImagePixels(front_end, max_image_pixels_);
  absl::StatusOr<ImageBatchCost> cost =
      PlanImageBatch(*request, front_end, max_request_rows_, max_pixels);
  if (!cost.ok()) return done(cost.status());
  absl::StatusOr<std::shared_ptr<Lease>> memory =
      AdmitMemory(images, model, method, names.images, call);
  if (!memory.ok()) return done(memory.status());
  const auto ask_less = [] {
    return std::string(
        "send fewer or smaller images per request (each costs the pixels its "
        "header declares)");
  };
  // Held until the decoding ends: the pixels, and the bytes decoding holds.
  auto decoding = std::make_shared<std::vector<Lease>>();
  if (admission_.images != nullptr) {
    absl::StatusOr<Lease> granted =
        admission_.images->Acquire(call.peer, cost->pixels, names.images, ask_less);
    if (!granted.ok()) {
      return done(NoteRefusal(granted.status(), *admission_.images, method.record.get()));
    }
    decoding->push_back(*std::move(granted));
  }
  if (admission_.memory != nullptr) {
    absl::StatusOr<Lease> granted =
        admission_.memory->Acquire(call.peer, cost->peak_bytes, names.images, ask_less);
    if (!granted.ok()) {
      return done(NoteRefusal(granted.status(), *admission_.memory, method.record.get()));
    }
    decoding->push_back(*std::move(granted));
  }
  auto decode = [this, request, handle, method = std::move(method), memory = *std::move(memory),
                 decoding = std::move(decoding), deadline, done = std::move(done), cancel,
                 max_pixels]() mutable {
    DecodeImagesAndSubmit(std::move(request), handle, std::move(method), std::move(memory),
                          std::move(decoding), deadline, std::move(done), cancel, max_pixels);
  };
  if (admission_.decoders == nullptr) return decode();
  admission_.decoders->Post(std::move(decode));
}

void FeatureHandler::DecodeImagesAndSubmit(std::shared_ptr<const InferRequest> request,
                                           const Registry::Handle& handle, Method method,
                                           std::shared_ptr<Lease> memory,
                                           std::shared_ptr<std::vector<Lease>> decoding,
                                           absl::Time deadline, DoneFn done,
                                           const std::shared_ptr<CancelToken>& cancel,
                                           int64_t max_pixels) const {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<DecodedRows> rows =
      DecodeImageBatch(*request, *handle.servable->image_front_end(), max_request_rows_, max_pixels,
                       KeepGoing(cancel, deadline, "images"));
  decoding->clear();  // the pixels and the decoding bytes given back
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!RecordDecoding(rows, handle, seconds, method.record.get())) {
    memory.reset();
    return done(rows.status());
  }
  Submit(std::make_shared<DecodedRows>(*std::move(rows)), std::move(request), handle,
         std::move(method), std::move(memory), deadline, std::move(done), cancel);
}

}  // namespace invariant::server
