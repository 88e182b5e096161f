// model_pages.h: the model pages the server shows to people, free of any
// transport: a loaded version's report.html (written by invariant-train
// beside its bundle, docs/model-page.md) and an index page listing every
// model version of the repository with its state and invariance certificate,
// each ready one linking to its page.
//
// ReportPage(name, version): the page of the version that (name, version)
// addresses as a lookup does ("" or "latest": the newest ready version; a
// number; a label); NOT_FOUND when that version is not ready, or when its
// directory holds no report.html (a bundle published without one); the file
// is read only inside the models root (a symlink out of it is refused, as
// for bundles) and only up to kMaxReportBytes. IndexPage(): one
// self-contained HTML page (inline style, no script, no network), every
// client-visible string escaped.
//
// Thread-safety: every method may be called from any thread.
#ifndef INVARIANT_SERVER_HANDLERS_MODEL_PAGES_H_
#define INVARIANT_SERVER_HANDLERS_MODEL_PAGES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "server/handlers/model_metadata.h"

namespace invariant::server {

inline constexpr char kReportPageFileName[] = "report.html";
inline constexpr int64_t kMaxReportBytes = int64_t{16} << 20;

class ModelPages {
 public:
  // `registry` must outlive the pages; `root` is the models directory.
  ModelPages(const Registry* registry, std::string root)
      : registry_(registry), root_(std::move(root)) {}

  absl::StatusOr<std::string> ReportPage(const std::string& name, const std::string& version) const;
  std::string IndexPage() const;

 private:
  const Registry* registry_;
  const std::string root_;
};

}  // namespace invariant::server

#endif  // INVARIANT_SERVER_HANDLERS_MODEL_PAGES_H_
