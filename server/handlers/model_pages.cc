#include "server/handlers/model_pages.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/base/error_text.h"
#include "core/base/markup.h"
#include "core/model/repository.h"
#include "server/handlers/inference_tensors.h"
#include "server/handlers/validation.h"

namespace invariant::server {
namespace {

constexpr char kStyle[] =
    "body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#222}"
    "table{border-collapse:collapse;width:100%}th,td{padding:.35em .6em;border-bottom:1px solid "
    "#ddd;text-align:left}th{background:#f4f4f4}.READY{color:#176117}.UNAVAILABLE{color:#9a1c1c}"
    ".LOADING{color:#8a6d00}td.num{text-align:right;font-variant-numeric:tabular-nums}";

// The certificate's one-line summary of a ready version ("" without one).
std::string CertificateCell(const Model& model) {
  if (!model.manifest().has_certificate()) return "none";
  const v1::InvarianceCertificate& c = model.manifest().certificate();
  return absl::StrFormat("%.3g relative mean (%d elements%s, %d points)",
                         c.relative_mean_discrepancy(), c.num_group_elements(),
                         c.exhaustive() ? ", exhaustive" : "", c.num_points());
}

// The reason shown on the data path: the registry's own words, never a load
// error (which names files and may quote their bytes: admin and log only).
std::string PublicReason(const RepositoryEntry& entry) {
  if (!entry.load_error) return EscapeXml(entry.reason);
  return "failed to load (the reason is in the server log and the repository index)";
}

absl::Status NoPage(const Registry::Handle& handle) {
  return absl::NotFoundError(absl::StrCat("model '", handle.name, "' version ", handle.version,
                                          " has no model page (its directory holds no ",
                                          kReportPageFileName, ")"));
}

// The page at `path`, read through one descriptor: opened without blocking
// (a FIFO put in its place never holds a handler thread waiting for a
// writer), then checked to be a regular file no larger than kMaxReportBytes
// from fstat of that descriptor (not a second look-up by name).
absl::StatusOr<std::string> ReadPage(const std::string& path, const Registry::Handle& handle) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return NoPage(handle);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return NoPage(handle);
  if (st.st_size > kMaxReportBytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("model '", handle.name, "' version ", handle.version, ": its model page is ",
                     st.st_size, " bytes, over ", kMaxReportBytes));
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::UnavailableError(absl::StrCat(
          "model '", handle.name, "' version ", handle.version, ": its model page cannot be read"));
    }
    if (n == 0) break;  // it shrank: what is there
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

}  // namespace

absl::StatusOr<std::string> ModelPages::ReportPage(const std::string& name,
                                                   const std::string& version) const {
  absl::StatusOr<v1::ModelSpec> spec = ModelSpecFromProtocol(name, version, "name", "version");
  if (!spec.ok()) return spec.status();
  if (absl::Status s =
          ValidateModelRef(spec->name(), spec->version(), {"name", "version", "version"});
      !s.ok()) {
    return s;
  }
  absl::StatusOr<Registry::Handle> handle = registry_->Lookup(
      spec->name(), spec->version(), spec->version_label(), {"name", "version", "version"});
  if (!handle.ok()) return handle.status();
  const std::string path = (std::filesystem::path(root_) / handle->name /
                            std::to_string(handle->version) / kReportPageFileName)
                               .string();
  absl::StatusOr<std::string> resolved = ResolveInsideRoot(root_, path);
  if (!resolved.ok()) return NoPage(*handle);
  return ReadPage(*resolved, *handle);
}

std::string ModelPages::IndexPage() const {
  std::string html = absl::StrCat(
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>invariant-server models</title><style>",
      kStyle,
      "</style></head><body><h1>Models</h1><table><thead><tr><th>model</th><th>version</th>"
      "<th>state</th><th>invariance certificate</th><th>page</th></tr></thead><tbody>");
  int rows = 0;
  for (const RepositoryEntry& entry : registry_->Index()) {
    ++rows;
    std::string certificate, page;
    if (entry.state == "READY") {
      absl::StatusOr<Registry::Handle> handle = registry_->Lookup(entry.name, entry.version);
      if (handle.ok()) certificate = CertificateCell(*handle->servable);
      // Names are directory names: percent-encoded as a path segment (a
      // model "p%41" is not "pA"), then escaped for the markup.
      page = absl::StrCat("<a href=\"/v2/models/", EscapeXml(PercentEncodePathSegment(entry.name)),
                          "/versions/", entry.version, "/report\">model page</a>");
    }
    absl::StrAppend(&html, "<tr><td>", EscapeXml(entry.name), "</td><td class=\"num\">",
                    entry.version > 0 ? absl::StrCat(entry.version) : "", "</td><td class=\"",
                    entry.state, "\">", entry.state,
                    entry.reason.empty() ? "" : absl::StrCat(": ", PublicReason(entry)),
                    "</td><td>", EscapeXml(certificate), "</td><td>", page, "</td></tr>");
  }
  if (rows == 0) html += "<tr><td colspan=\"5\">no model in the models directory</td></tr>";
  html += "</tbody></table></body></html>";
  return html;
}

}  // namespace invariant::server
