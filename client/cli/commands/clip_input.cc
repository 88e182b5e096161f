#include "client/cli/commands/clip_input.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/cli/commands/output.h"
#include "client/cli/format.h"
#include "core/base/random.h"

namespace invariant::cli {
namespace {

std::string ModelText(const v1::GetModelMetadataResponse& m) {
  return absl::StrCat("model '", m.model_name(), "' version ", m.model_version());
}

// "model 'M' version V takes audio clips: --input=FILE.wav or a folder of .wav".
std::string TakesClips(const v1::GetModelMetadataResponse& m) {
  return absl::StrCat(ModelText(m),
                      " takes audio clips: --input=FILE.wav, a folder of .wav files, a "
                      "comma-separated list of them, or - for one WAV on stdin");
}

// "model 'M' version V takes image files: --input=FILE.jpg ...".
std::string TakesImages(const v1::GetModelMetadataResponse& m) {
  return absl::StrCat(ModelText(m),
                      " takes image files: --input=FILE.jpg or FILE.png, a folder of them, a "
                      "comma-separated list of them, or - for one image on stdin");
}

int ReportInputError(const std::string& message) {
  std::cerr << "invariant-client: " << message << std::endl;
  return kExitUsage;
}

// The flags that only rows have; the first one set, or "".
std::string RowOnlyFlag(const RowSourceFlags& flags) {
  if (!flags.id_column.empty()) return "--id_column (a clip's id is its file name)";
  if (!flags.ignore_columns.empty()) return "--ignore_columns";
  if (!flags.delimiter.empty()) return "--delimiter";
  if (flags.header != "auto") return "--header";
  if (flags.input_format != "auto") return "--input_format";
  return "";
}

// The first 12 bytes of `path` (fewer for a shorter file).
std::string FileHead(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[12] = {};
  in.read(head, sizeof(head));
  return std::string(head, static_cast<size_t>(in.gcount()));
}

v1::AudioClip NoiseClip(const ClipInput& clips, int64_t i) {
  Rng rng = Rng::ForStream(clips.seed, static_cast<uint64_t>(i));
  std::string bytes(static_cast<size_t>(clips.noise_samples) * 4, '\0');
  for (int64_t k = 0; k < clips.noise_samples; ++k) {
    const float x = static_cast<float>(rng.Uniform(-0.5, 0.5));
    uint32_t bits = 0;
    std::memcpy(&bits, &x, sizeof(bits));
    for (int b = 0; b < 4; ++b)
      bytes[static_cast<size_t>(4 * k + b)] = static_cast<char>(bits >> (8 * b));
  }
  v1::AudioClip clip;
  clip.set_float32_le(std::move(bytes));
  clip.set_sample_rate(clips.sample_rate);
  return clip;
}

}  // namespace

int PrepareClips(const RowSourceFlags& flags, const v1::GetModelMetadataResponse& m,
                 ClipInput* clips) {
  const bool image = m.has_image();
  clips->kind = image ? FileKind::kImage : FileKind::kWav;
  const std::string takes = image ? TakesImages(m) : TakesClips(m);
  if (const std::string flag = RowOnlyFlag(flags); !flag.empty()) {
    return ReportUsageError(absl::StrCat(flag, " applies to input rows, but ", takes));
  }
  if (image && flags.random_rows != 0) {
    return ReportUsageError(absl::StrCat("--random_rows applies to rows and clips, but ", takes));
  }
  const int64_t random_rows = flags.random_rows;
  if (random_rows < 0 || random_rows > 1000000) {
    return ReportUsageError(absl::StrCat("--random_rows: expected 0..1000000, got ", random_rows));
  }
  if (random_rows > 0) {
    const v1::AudioFrontEndInfo& audio = m.audio();
    double seconds = 1.0;
    if (audio.max_clip_seconds() > 0) seconds = std::min(seconds, audio.max_clip_seconds());
    clips->noise_clips = random_rows;
    clips->sample_rate = audio.sample_rate();
    clips->noise_samples =
        std::max<int64_t>(1, static_cast<int64_t>(std::floor(seconds * audio.sample_rate())));
    clips->seed = flags.seed;
    clips->sizes.assign(static_cast<size_t>(random_rows), clips->noise_samples * 4);
    return kExitOk;
  }
  absl::StatusOr<std::vector<ClipFile>> files = ListClipFiles(flags.input, clips->kind);
  if (!files.ok()) return ReportInputError(std::string(files.status().message()));
  clips->files = *std::move(files);
  for (const ClipFile& file : clips->files) {
    std::string head;
    if (file.path == "-") {
      absl::StatusOr<std::string> bytes = ReadClipBytes(file, clips->kind);
      if (!bytes.ok()) {
        return ReportInputError(absl::StrCat(bytes.status().message(), "; ", takes));
      }
      clips->stdin_bytes = *std::move(bytes);
      clips->sizes.push_back(static_cast<int64_t>(clips->stdin_bytes.size()));
      continue;
    }
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(file.path, ec);
    if (ec) return ReportInputError(absl::StrCat(file.id, ": cannot read: ", ec.message()));
    if (image && !LooksLikeImage(FileHead(file.path))) {
      return ReportInputError(
          absl::StrCat(file.id, ": not a JPEG or PNG file (no JPEG or PNG signature); ", takes));
    }
    if (!image && !LooksLikeWav(FileHead(file.path))) {
      return ReportInputError(
          absl::StrCat(file.id, ": not a WAV file (no RIFF/RIFX/RF64 header with WAVE); ", takes));
    }
    clips->sizes.push_back(static_cast<int64_t>(size));
  }
  return kExitOk;
}

int64_t ClipBatchEndAt(const ClipInput& clips, int64_t first, int64_t max_clips) {
  return ClipBatchEnd(clips.sizes, first, max_clips, kMaxClipBatchBytes);
}

int FillClipBatch(const ClipInput& clips, int64_t first, int64_t end, v1::InputBatch* batch) {
  batch->set_num_rows(end - first);
  for (int64_t i = first; i < end; ++i) {
    if (clips.noise_clips > 0) {
      *batch->add_clips() = NoiseClip(clips, i);
      continue;
    }
    const ClipFile& file = clips.files[static_cast<size_t>(i)];
    const bool image = clips.kind == FileKind::kImage;
    if (file.path == "-") {
      if (image) {
        batch->add_images(clips.stdin_bytes);
      } else {
        batch->add_clips()->set_wav(clips.stdin_bytes);
      }
      continue;
    }
    absl::StatusOr<std::string> bytes = ReadClipBytes(file, clips.kind);
    if (!bytes.ok()) return ReportInputError(std::string(bytes.status().message()));
    if (image) {
      batch->add_images(*std::move(bytes));
    } else {
      batch->add_clips()->set_wav(*std::move(bytes));
    }
  }
  return kExitOk;
}

}  // namespace invariant::cli
