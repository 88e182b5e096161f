#include "train/pipeline/publish.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "core/base/status_macros.h"
#include "train/pipeline/report_html.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;

// Writes `text` to `path`; the error names the path, what failed and why
// (errno: "No space left on device", "Permission denied", ...).
absl::Status WriteText(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot create"));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return absl::ErrnoToStatus(
          error, absl::StrCat(path, ": write failed after ", done, " of ", text.size(), " bytes"));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": close failed"));
  return absl::OkStatus();
}

}  // namespace

// An explicit --version that exists is refused before any data is read (the
// publish step checks again, for a writer that appears meanwhile).
absl::Status CheckVersionFree(const std::string& model_dir, int64_t version) {
  if (version <= 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<int64_t> versions, ListVersionDirs(model_dir));
  if (std::find(versions.begin(), versions.end(), version) != versions.end()) {
    return absl::AlreadyExistsError(
        absl::StrCat((fs::path(model_dir) / std::to_string(version)).string(), ": version ",
                     version, " exists and is never overwritten"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ChooseVersion(const std::string& model_dir, int64_t version) {
  if (version > 0) return version;
  return NextVersion(model_dir);
}

absl::StatusOr<StagedVersion> StageVersion(const std::string& model_dir, int64_t version,
                                           const Model* model, const v1::Manifest& manifest) {
  ASSIGN_OR_RETURN(StagedVersion staged, StagedVersion::Create(model_dir, version));
  if (model != nullptr) {
    RETURN_IF_ERROR(
        model->SaveWithRecords((fs::path(staged.path()) / kBundleFileName).string(), manifest));
  }
  return staged;
}

absl::StatusOr<std::string> PublishVersion(StagedVersion& staged, const TrainReport& report,
                                           bool hold_before_publish) {
  RETURN_IF_ERROR(
      WriteText((fs::path(staged.path()) / "report.json").string(), ReportToJson(report)));
  RETURN_IF_ERROR(
      WriteText((fs::path(staged.path()) / "report.md").string(), ReportToMarkdown(report)));
  RETURN_IF_ERROR(
      WriteText((fs::path(staged.path()) / "report.html").string(), ReportToHtml(report)));
  if (hold_before_publish) {
    std::fprintf(stderr, "invariant-train: holding %s\n", staged.path().c_str());
    std::fflush(stderr);
    absl::Notification never;
    never.WaitForNotification();  // until a signal ends the process
  }
  RETURN_IF_ERROR(staged.Publish());
  return staged.final_path();
}

}  // namespace invariant::train
