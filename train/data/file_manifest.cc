#include "train/data/file_manifest.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/status_macros.h"
#include "core/io/byte_stream.h"
#include "core/io/delimited.h"

namespace invariant::train {
namespace {
namespace fs = std::filesystem;
}  // namespace

absl::StatusOr<std::vector<LabelledFile>> ReadFileManifest(const std::string& manifest) {
  ASSIGN_OR_RETURN(std::unique_ptr<io::ByteReader> bytes, io::ByteReader::Open(manifest));
  ASSIGN_OR_RETURN(std::unique_ptr<io::DelimitedReader> reader,
                   io::DelimitedReader::Open(std::move(bytes), {0, io::HeaderMode::kPresent}));
  if (reader->num_fields() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(manifest, ": empty manifest, expected a header with path and label"));
  }
  std::map<std::string, int> column;
  const std::vector<std::string>& header = reader->header();
  for (int i = reader->index_column() ? 1 : 0; i < static_cast<int>(header.size()); ++i) {
    const std::string& name = header[static_cast<size_t>(i)];
    if (name != "path" && name != "label" && name != "group" && name != "split") {
      return reader->Error(reader->header_line(),
                           absl::StrCat("unknown column '", name,
                                        "': a manifest has path, label, and optionally group "
                                        "and split"));
    }
    if (!column.emplace(name, i).second) {
      return reader->Error(reader->header_line(), absl::StrCat("column '", name, "' twice"));
    }
  }
  for (const char* required : {"path", "label"}) {
    if (column.count(required) == 0) {
      return reader->Error(reader->header_line(),
                           absl::StrCat("no '", required, "' column in the header [",
                                        absl::StrJoin(header, ", "), "]"));
    }
  }
  const auto optional_column = [&column](const char* name) {
    auto it = column.find(name);
    return it == column.end() ? -1 : it->second;
  };
  const int group_column = optional_column("group"), split_column = optional_column("split");
  const fs::path folder = fs::path(manifest).parent_path();
  std::vector<LabelledFile> clips;
  io::Record record;
  while (true) {
    ASSIGN_OR_RETURN(const bool any, reader->Next(&record));
    if (!any) break;
    const auto field_of = [&record](int c) -> const std::string& {
      return record.fields[static_cast<size_t>(c)];
    };
    LabelledFile clip;
    const std::string& path = field_of(column["path"]);
    clip.label = field_of(column["label"]);
    if (path.empty() || clip.label.empty()) {
      return reader->Error(record.line, "empty path or label");
    }
    clip.path = fs::path(path).is_absolute() ? path : (folder / path).string();
    if (group_column >= 0) {
      clip.group = field_of(group_column);
      if (clip.group.empty()) return reader->Error(record.line, "empty group");
    }
    if (split_column >= 0) {
      const std::string& split = field_of(split_column);
      if (split != "train" && split != "test") {
        return reader->Error(
            record.line, absl::StrCat("split must be \"train\" or \"test\", got '", split, "'"));
      }
      clip.test = split == "test";
    }
    clips.push_back(std::move(clip));
  }
  return clips;
}

absl::StatusOr<FileParts> SplitFileParts(std::vector<LabelledFile> files,
                                         const std::vector<std::string>& class_names,
                                         const std::string& field) {
  FileParts parts;
  parts.class_names = class_names;
  for (size_t c = 0; c < class_names.size(); ++c) {
    parts.class_index[class_names[c]] = static_cast<int32_t>(c);
  }
  parts.grouped = !files.empty() && !files.front().group.empty();
  for (LabelledFile& f : files) (f.test ? parts.test : parts.train).push_back(std::move(f));
  if (parts.train.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": every file is in the test part; none is left to train on"));
  }
  return parts;
}

absl::StatusOr<std::vector<std::string>> ClassNamesOf(const std::vector<std::string>& given,
                                                      const std::vector<LabelledFile>& clips,
                                                      const std::string& field) {
  std::vector<std::string> names = given;
  if (!names.empty()) {
    const std::set<std::string> given(names.begin(), names.end());
    if (given.size() != names.size()) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".class_names: a name appears twice"));
    }
    for (const LabelledFile& clip : clips) {
      if (given.count(clip.label) == 0) {
        return absl::InvalidArgumentError(absl::StrCat(clip.path, ": label '", clip.label,
                                                       "' is not in ", field, ".class_names [",
                                                       absl::StrJoin(names, ", "), "]"));
      }
    }
    return names;
  }
  std::set<std::string> distinct;
  for (const LabelledFile& clip : clips) distinct.insert(clip.label);
  names.assign(distinct.begin(), distinct.end());
  const bool all_integers = std::all_of(names.begin(), names.end(), [](const std::string& s) {
    int64_t v;
    return absl::SimpleAtoi(s, &v);
  });
  if (all_integers) {
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      int64_t va = 0, vb = 0;
      (void)absl::SimpleAtoi(a, &va);
      (void)absl::SimpleAtoi(b, &vb);
      return va < vb;
    });
  }
  return names;
}

}  // namespace invariant::train
