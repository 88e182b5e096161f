#include "client/cli/clips.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace invariant::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kStdinId[] = "<stdin>";

bool HasWavExtension(const std::string& name) { return absl::EndsWithIgnoreCase(name, ".wav"); }
bool HasImageExtension(const std::string& name) {
  return absl::EndsWithIgnoreCase(name, ".jpg") || absl::EndsWithIgnoreCase(name, ".jpeg") ||
         absl::EndsWithIgnoreCase(name, ".png");
}

// Every *.wav (or image) file directly in `dir`, sorted by file name.
absl::StatusOr<std::vector<ClipFile>> ListFolder(const std::string& dir, FileKind kind) {
  std::error_code ec;
  std::vector<std::string> names;
  const bool image = kind == FileKind::kImage;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    const bool wanted = image ? HasImageExtension(name) : HasWavExtension(name);
    if (wanted && it->is_regular_file(type_ec)) names.push_back(name);
  }
  if (ec) return absl::InvalidArgumentError(absl::StrCat(dir, ": cannot list: ", ec.message()));
  if (names.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, image ? ": no .jpg, .jpeg or .png files" : ": no .wav files",
                     " in this folder (subfolders are not searched)"));
  }
  std::sort(names.begin(), names.end());
  std::vector<ClipFile> files;
  for (const std::string& name : names) files.push_back({name, (fs::path(dir) / name).string()});
  return files;
}

}  // namespace

bool LooksLikeWav(std::string_view bytes) {
  if (bytes.size() < 12) return false;
  const std::string_view riff = bytes.substr(0, 4);
  return (riff == "RIFF" || riff == "RIFX" || riff == "RF64") && bytes.substr(8, 4) == "WAVE";
}

bool LooksLikeImage(std::string_view bytes) {
  constexpr std::string_view kJpeg("\xFF\xD8\xFF", 3), kPng("\x89PNG\r\n\x1a\n", 8);
  return bytes.substr(0, 3) == kJpeg || bytes.substr(0, 8) == kPng;
}

bool NamesClips(const std::string& input) {
  for (absl::string_view part : absl::StrSplit(input, ',', absl::SkipEmpty())) {
    const std::string path(absl::StripAsciiWhitespace(part));
    std::error_code ec;
    if (HasWavExtension(path) || HasImageExtension(path) || fs::is_directory(path, ec)) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<ClipFile>> ListClipFiles(const std::string& input, FileKind kind) {
  if (input == "-") return std::vector<ClipFile>{{kStdinId, "-"}};
  std::vector<ClipFile> files;
  for (absl::string_view part : absl::StrSplit(input, ',')) {
    const std::string path(absl::StripAsciiWhitespace(part));
    if (path.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input: an empty name in the list '", input, "'"));
    }
    if (path == "-") {
      return absl::InvalidArgumentError("--input: '-' (stdin) must be the only input");
    }
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status)) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    if (fs::is_directory(status)) {
      absl::StatusOr<std::vector<ClipFile>> in_folder = ListFolder(path, kind);
      if (!in_folder.ok()) return in_folder.status();
      files.insert(files.end(), in_folder->begin(), in_folder->end());
    } else {
      files.push_back({path, path});
    }
  }
  return files;
}

absl::StatusOr<std::string> ReadClipBytes(const ClipFile& file, FileKind kind) {
  std::string bytes;
  const bool image = kind == FileKind::kImage;
  if (file.path == "-") {
    if (isatty(STDIN_FILENO)) {
      return absl::InvalidArgumentError(absl::StrCat(
          file.id, image ? ": no image: pipe one JPEG or PNG file on stdin or give --input=FILE.jpg"
                         : ": no clip: pipe one WAV file on stdin or give --input=FILE.wav"));
    }
    bytes.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(file.path, std::ios::binary);
    if (!in) return absl::NotFoundError(absl::StrCat(file.id, ": cannot open"));
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) return absl::InvalidArgumentError(absl::StrCat(file.id, ": cannot read"));
  }
  if (image && !LooksLikeImage(bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.id, ": not a JPEG or PNG file (no JPEG or PNG signature)"));
  }
  if (!image && !LooksLikeWav(bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.id, ": not a WAV file (no RIFF/RIFX/RF64 header with WAVE)"));
  }
  return bytes;
}

int64_t ClipBatchEnd(const std::vector<int64_t>& sizes, int64_t first, int64_t max_clips,
                     int64_t max_bytes) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  int64_t end = first;
  int64_t bytes = 0;
  while (end < n && end - first < max_clips) {
    const int64_t size = sizes[static_cast<size_t>(end)];
    if (end > first && bytes + size > max_bytes) break;
    bytes += size;
    ++end;
  }
  return end;
}

std::optional<int64_t> ClipIndexInMessage(std::string_view message) {
  size_t at = message.find("clips[");
  size_t key = 6;
  if (const size_t images = message.find("images["); images < at) {
    at = images;
    key = 7;
  }
  if (at == std::string_view::npos) return std::nullopt;
  const size_t begin = at + key;
  const size_t close = message.find(']', begin);
  int64_t index = 0;
  if (close == std::string_view::npos ||
      !absl::SimpleAtoi(absl::string_view(message.data() + begin, close - begin), &index) ||
      index < 0) {
    return std::nullopt;
  }
  return index;
}

}  // namespace invariant::cli
