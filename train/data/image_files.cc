#include "train/data/image_files.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/file.h"
#include "core/base/status_macros.h"
#include "core/base/thread_pool.h"
#include "core/image/front_end.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;

bool IsFolder(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(p, ec)) && !ec;
}

// The class folders of `root` (sorted by name) and the image files below
// each (sorted by path).
absl::Status AddClassFolders(const fs::path& root, bool test, const std::string& field,
                             std::vector<LabelledFile>& files) {
  std::error_code ec;
  std::vector<fs::path> classes;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (IsFolder(it->path())) classes.push_back(it->path());
  }
  if (ec)
    return absl::NotFoundError(
        absl::StrCat(field, ": cannot list ", root.string(), ": ", ec.message()));
  std::sort(classes.begin(), classes.end());
  for (const fs::path& folder : classes) {
    std::vector<std::string> paths;
    for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file() && IsImageFileName(it->path().filename().string())) {
        paths.push_back(it->path().string());
      }
    }
    if (ec) {
      return absl::NotFoundError(
          absl::StrCat(field, ": cannot list ", folder.string(), ": ", ec.message()));
    }
    std::sort(paths.begin(), paths.end());
    for (std::string& path : paths) {
      LabelledFile f;
      f.path = std::move(path);
      f.label = folder.filename().string();
      f.test = test;
      files.push_back(std::move(f));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<LabelledFile>> FilesInDir(const std::string& dir,
                                                     const std::string& field) {
  const fs::path root(dir);
  if (!IsFolder(root)) {
    return absl::NotFoundError(absl::StrCat(field, ".dir: '", dir, "' is not a folder"));
  }
  std::vector<LabelledFile> files;
  if (IsFolder(root / "train")) {
    RETURN_IF_ERROR(AddClassFolders(root / "train", false, field + ".dir", files));
    if (IsFolder(root / "test")) {
      RETURN_IF_ERROR(AddClassFolders(root / "test", true, field + ".dir", files));
    }
  } else {
    RETURN_IF_ERROR(AddClassFolders(root, false, field + ".dir", files));
  }
  return files;
}

// The class names: given, or (a folder) the train part's class folders in
// byte order, or (a manifest) ClassNamesOf's order.
absl::StatusOr<std::vector<std::string>> ClassNames(const v1::ImageFileSource& source,
                                                    const std::vector<LabelledFile>& files,
                                                    const std::string& field) {
  std::vector<std::string> given(source.class_names().begin(), source.class_names().end());
  if (!given.empty() || !source.manifest().empty()) return ClassNamesOf(given, files, field);
  std::set<std::string> train;
  for (const LabelledFile& f : files) {
    if (!f.test) train.insert(f.label);
  }
  for (const LabelledFile& f : files) {
    if (f.test && train.count(f.label) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(f.path, ": class folder '", f.label, "' of the test part is not a class of ",
                       field, ".dir's train part [", absl::StrJoin(train, ", "), "]"));
    }
  }
  return std::vector<std::string>(train.begin(), train.end());  // std::set: byte order
}

absl::Status Decode(const image::ImageFrontEnd& front_end, const std::vector<LabelledFile>& files,
                    Dataset& out) {
  const int64_t n = static_cast<int64_t>(files.size());
  const int64_t dim = front_end.output_dim();
  out.x = FloatMatrix::Zeros(n, dim);
  std::vector<absl::Status> status(static_cast<size_t>(n));
  float* x = out.x.mutable_data();
  ParallelFor(n, [&](int64_t i) {
    const LabelledFile& f = files[static_cast<size_t>(i)];
    absl::Status& s = status[static_cast<size_t>(i)];
    const std::optional<std::string> bytes = ReadWholeFile(f.path);
    s = bytes.has_value() ? front_end.Apply(*bytes, front_end.max_pixels(), x + i * dim, f.path)
                          : absl::NotFoundError(absl::StrCat(f.path, ": cannot read the file"));
  });
  for (const absl::Status& s : status) RETURN_IF_ERROR(s);
  return absl::OkStatus();
}

}  // namespace

bool IsImageFileName(const std::string& name) {
  const std::string lower = absl::AsciiStrToLower(name);
  return (lower.size() > 4 && (absl::EndsWith(lower, ".jpg") || absl::EndsWith(lower, ".png"))) ||
         (lower.size() > 5 && absl::EndsWith(lower, ".jpeg"));
}

absl::StatusOr<std::vector<LabelledFile>> ListImageFiles(const v1::ImageFileSource& source,
                                                         const std::string& field) {
  if (source.dir().empty() == source.manifest().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must set exactly one of dir and manifest"));
  }
  ASSIGN_OR_RETURN(std::vector<LabelledFile> files, source.dir().empty()
                                                        ? ReadFileManifest(source.manifest())
                                                        : FilesInDir(source.dir(), field));
  if (files.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": no image files (.jpg, .jpeg, .png) in ",
        source.dir().empty()
            ? source.manifest()
            : absl::StrCat(source.dir(),
                           " (expected DIR/CLASS/image.jpg, or DIR/train/CLASS/...)")));
  }
  for (size_t i = 0; i < files.size(); ++i) files[i].index = static_cast<int64_t>(i);
  return files;
}

absl::StatusOr<ImageFileData> LoadImageFiles(const v1::ImageFileSource& source,
                                             const std::string& field) {
  absl::StatusOr<std::unique_ptr<const image::ImageFrontEnd>> front_end =
      image::ImageFrontEnd::Create(source.front_end());
  if (!front_end.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".front_end: ", front_end.status().message()));
  }
  ASSIGN_OR_RETURN(std::vector<LabelledFile> files, ListImageFiles(source, field));
  ASSIGN_OR_RETURN(const std::vector<std::string> class_names, ClassNames(source, files, field));
  ASSIGN_OR_RETURN(FileParts split, SplitFileParts(std::move(files), class_names, field));
  const std::vector<LabelledFile>* parts[2] = {&split.train, &split.test};
  ImageFileData data;
  data.front_end = (*front_end)->spec();
  const v1::ImageFrontEnd& spec = data.front_end;
  const std::string name = source.dir().empty() ? source.manifest() : source.dir();
  Dataset* out[2] = {&data.train, &data.test};
  for (int p = 0; p < 2; ++p) {
    Dataset& d = *out[p];
    d.name = p == 0 ? name : absl::StrCat(name, " (test)");
    d.class_names = class_names;
    d.input_shape = {spec.height(), spec.width(), spec.channels()};
    for (const LabelledFile& f : *parts[p]) {
      d.labels.push_back(split.class_index.at(f.label));
      if (split.grouped) d.groups.push_back(f.group);
    }
    RETURN_IF_ERROR(Decode(**front_end, *parts[p], d));
  }
  return data;
}

}  // namespace invariant::train
