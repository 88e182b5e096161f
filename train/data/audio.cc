#include "train/data/audio.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/audio/front_end.h"
#include "core/audio/wav.h"
#include "core/base/status_macros.h"
#include "core/base/thread_pool.h"
#include "core/io/byte_stream.h"
#include "core/io/delimited.h"
#include "train/data/audio_augment.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;

bool IsWavName(const std::string& name) {
  return name.size() > 4 && absl::AsciiStrToLower(name.substr(name.size() - 4)) == ".wav";
}

absl::StatusOr<std::vector<AudioClip>> ClipsInDir(const v1::AudioSource& source,
                                                  const std::string& field) {
  const std::string pattern_text =
      source.file_pattern().empty() ? kDefaultAudioFilePattern : source.file_pattern();
  ASSIGN_OR_RETURN(const FilePattern pattern,
                   FilePattern::Parse(pattern_text, absl::StrCat(field, ".file_pattern")));
  ASSIGN_OR_RETURN(const std::vector<std::string> paths,
                   ListWavFiles(source.dir(), absl::StrCat(field, ".dir")));
  std::vector<AudioClip> clips;
  for (const std::string& path : paths) {
    AudioClip clip;
    clip.path = path;
    // The files are listed by their extension in any case (x.WAV too), so
    // the pattern sees it as ".wav".
    std::string name = fs::path(path).filename().string();
    name.replace(name.size() - 4, 4, ".wav");
    if (!pattern.Match(name, &clip.label, &clip.group)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": the file name does not match ", field,
                                                     ".file_pattern \"", pattern_text, "\""));
    }
    clips.push_back(std::move(clip));
  }
  return clips;
}

// The rows of `clips` (decoded and featurized in parallel, in clip order),
// then with an augmenter every clip's copies: copy c of clip r is row
// n + r·copies + c (audio_augment.h). Every row depends on its clip (and
// copy) alone, so the rows are the same whatever the threads.
absl::Status Featurize(const audio::AudioFrontEnd& front_end, const std::vector<AudioClip>& clips,
                       const AudioAugmenter* augmenter, Dataset& out) {
  const int64_t n = static_cast<int64_t>(clips.size());
  const int copies = augmenter == nullptr ? 0 : augmenter->copies();
  const int64_t dim = front_end.output_dim();
  out.x = FloatMatrix::Zeros(n * (1 + copies), dim);
  std::vector<absl::Status> status(static_cast<size_t>(n));
  std::vector<char> no_speech(static_cast<size_t>(n), 0);
  const int64_t max_samples = front_end.MaxSamples(audio::kMaxSampleRate);
  float* x = out.x.mutable_data();
  ParallelFor(n, [&](int64_t i) {
    const AudioClip& clip = clips[static_cast<size_t>(i)];
    absl::Status& s = status[static_cast<size_t>(i)];
    absl::StatusOr<audio::Clip> wav = audio::ReadWavFile(clip.path, max_samples);
    if (!wav.ok()) {
      s = wav.status();
      return;
    }
    audio::ClipSpeech speech;
    s = front_end.Apply(wav->samples, wav->sample_rate, x + i * dim, clip.path, &speech);
    // A clip without speech found (a take too quiet or too steady to stand
    // above its own floor) keeps the row of the whole clip, as without voice
    // activity; it is counted and named below.
    if (s.ok() && !speech.found) no_speech[static_cast<size_t>(i)] = 1;
    for (int c = 0; c < copies && s.ok(); ++c) {
      const std::string what =
          absl::StrCat(clip.path, " (augmented copy ", c + 1, " of ", copies, ")");
      absl::StatusOr<AugmentedClip> copy = augmenter->Augment(*wav, clip.index, c, what);
      float* row = x + (n + i * copies + c) * dim;
      s = copy.ok()
              ? front_end.Apply(copy->clip.samples, copy->clip.sample_rate, row, what, &speech)
              : copy.status();
      // A copy whose word the noise hid (the server would give it no class)
      // teaches the original's row instead.
      if (s.ok() && !speech.found) std::copy_n(x + i * dim, dim, row);
    }
  });
  for (const absl::Status& s : status) RETURN_IF_ERROR(s);
  const auto first = std::find(no_speech.begin(), no_speech.end(), 1);
  if (first != no_speech.end()) {
    std::fprintf(stderr,
                 "data.audio: voice activity found no speech in %lld of %lld clips (first %s); "
                 "their rows are the whole clip\n",
                 static_cast<long long>(std::count(no_speech.begin(), no_speech.end(), 1)),
                 static_cast<long long>(n), clips[first - no_speech.begin()].path.c_str());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ListWavFiles(const std::string& dir,
                                                      const std::string& field) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat(field, ": ", dir, " is not a directory"));
  }
  std::vector<std::string> paths;
  fs::recursive_directory_iterator it(dir, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec) && IsWavName(it->path().filename().string())) {
      paths.push_back(it->path().string());
    }
  }
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": cannot list ", dir, ": ", ec.message()));
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

absl::StatusOr<FilePattern> FilePattern::Parse(const std::string& pattern,
                                               const std::string& field) {
  FilePattern p;
  int labels = 0, groups = 0;
  size_t i = 0;
  while (i < pattern.size()) {
    if (pattern[i] == '{') {
      const size_t close = pattern.find('}', i);
      if (close == std::string::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ": unclosed '{' in \"", pattern, "\""));
      }
      const std::string name = pattern.substr(i + 1, close - i - 1);
      if (name != "label" && name != "group" && name != "*") {
        return absl::InvalidArgumentError(absl::StrCat(field, ": unknown placeholder {", name,
                                                       "} in \"", pattern,
                                                       "\" (known: {label}, {group}, {*})"));
      }
      if (!p.tokens_.empty() && p.tokens_.back().placeholder) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": placeholders need literal text between them, got \"", pattern, "\""));
      }
      labels += name == "label";
      groups += name == "group";
      p.tokens_.push_back({true, name});
      i = close + 1;
    } else {
      const size_t next = std::min(pattern.find('{', i), pattern.size());
      p.tokens_.push_back({false, pattern.substr(i, next - i)});
      i = next;
    }
  }
  if (labels != 1 || groups > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": \"", pattern, "\" must hold {label} once and {group} at most once"));
  }
  p.has_group_ = groups == 1;
  return p;
}

bool FilePattern::Match(const std::string& name, std::string* label, std::string* group) const {
  size_t pos = 0;
  for (size_t t = 0; t < tokens_.size(); ++t) {
    const Token& token = tokens_[t];
    if (!token.placeholder) {
      if (name.compare(pos, token.text.size(), token.text) != 0) return false;
      pos += token.text.size();
      continue;
    }
    // One or more characters up to the next literal text (the end of the
    // name for the last token; the last literal text must end the name).
    size_t end;
    if (t + 1 == tokens_.size()) {
      end = name.size();
    } else if (t + 2 == tokens_.size()) {
      const std::string& tail = tokens_[t + 1].text;
      if (name.size() < tail.size() || name.compare(name.size() - tail.size(), tail.size(), tail))
        return false;
      end = name.size() - tail.size();
    } else {
      end = name.find(tokens_[t + 1].text, pos + 1);
      if (end == std::string::npos) return false;
    }
    if (end <= pos) return false;
    const std::string value = name.substr(pos, end - pos);
    if (token.text == "label") *label = value;
    if (token.text == "group" && group != nullptr) *group = value;
    pos = end;
  }
  return pos == name.size();
}

absl::StatusOr<std::vector<AudioClip>> ListAudioClips(const v1::AudioSource& source,
                                                      const std::string& field) {
  if (source.dir().empty() == source.manifest().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " must set exactly one of dir and manifest"));
  }
  if (!source.manifest().empty() && !source.file_pattern().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".file_pattern applies to dir only (a manifest names the labels)"));
  }
  ASSIGN_OR_RETURN(std::vector<AudioClip> clips, source.dir().empty()
                                                     ? ReadFileManifest(source.manifest())
                                                     : ClipsInDir(source, field));
  if (clips.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": no clips in ", source.dir().empty() ? source.manifest() : source.dir()));
  }
  for (size_t i = 0; i < clips.size(); ++i) clips[i].index = static_cast<int64_t>(i);
  return clips;
}

absl::StatusOr<FileParts> AudioParts(const v1::AudioSource& source, const std::string& field) {
  ASSIGN_OR_RETURN(std::vector<AudioClip> clips, ListAudioClips(source, field));
  ASSIGN_OR_RETURN(
      const std::vector<std::string> class_names,
      ClassNamesOf({source.class_names().begin(), source.class_names().end()}, clips, field));
  return SplitFileParts(std::move(clips), class_names, field);
}

absl::StatusOr<AudioData> LoadAudio(const v1::AudioSource& source, const std::string& field) {
  absl::StatusOr<v1::AudioFrontEnd> spec = audio::AudioFrontEnd::Complete(source.front_end());
  if (!spec.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".front_end: ", spec.status().message()));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<const audio::AudioFrontEnd> front_end,
                   audio::AudioFrontEnd::Create(*spec));
  std::unique_ptr<const AudioAugmenter> augmenter;
  if (source.has_augmentation()) {
    ASSIGN_OR_RETURN(augmenter, AudioAugmenter::Create(source.augmentation(), *spec,
                                                       absl::StrCat(field, ".augmentation")));
  }
  ASSIGN_OR_RETURN(FileParts split, AudioParts(source, field));
  const std::vector<std::string>& class_names = split.class_names;
  const std::vector<AudioClip>* parts[2] = {&split.train, &split.test};
  const bool grouped = split.grouped;
  const std::map<std::string, int32_t>& class_index = split.class_index;
  AudioData data;
  data.front_end = *spec;
  const std::string name = source.dir().empty() ? source.manifest() : source.dir();
  Dataset* out[2] = {&data.train, &data.test};
  for (int p = 0; p < 2; ++p) {
    Dataset& d = *out[p];
    d.name = p == 0 ? name : absl::StrCat(name, " (test)");
    d.class_names = class_names;
    d.input_shape = {front_end->frequency_bins(), front_end->frames(), 1};
    for (const AudioClip& clip : *parts[p]) {
      d.labels.push_back(class_index.at(clip.label));
      if (grouped) d.groups.push_back(clip.group);
    }
    // Only the train part is augmented; its copies follow its originals.
    const AudioAugmenter* augment = p == 0 ? augmenter.get() : nullptr;
    if (augment != nullptr) {
      const int64_t n = static_cast<int64_t>(parts[p]->size());
      data.copy_of.assign(static_cast<size_t>(n), -1);
      for (int64_t i = 0; i < n; ++i) {
        for (int c = 0; c < augment->copies(); ++c) {
          d.labels.push_back(d.labels[static_cast<size_t>(i)]);
          if (grouped) d.groups.push_back(d.groups[static_cast<size_t>(i)]);
          data.copy_of.push_back(i);
        }
      }
    }
    RETURN_IF_ERROR(Featurize(*front_end, *parts[p], augment, d));
  }
  return data;
}

absl::Status CheckAudioGroup(const RowSchema& schema, const v1::AudioTransformGroup& group,
                             const std::string& field) {
  if (!schema.audio.has_value()) {
    if (int64_t{group.frequency_bins()} * group.frames() != schema.dim) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, " acts on frequency_bins ", group.frequency_bins(), " x frames ", group.frames(),
          " values, but the rows of data set '", schema.name, "' have ", schema.dim));
    }
    return absl::OkStatus();
  }
  const v1::AudioFrontEnd& fe = *schema.audio;
  const auto mismatch = [&](const char* name, auto want, auto got) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".", name, " is ", got, ", but the audio front end's ", name, " is ",
                     want, ": the group must act on the front end's spectrogram"));
  };
  if (group.frequency_bins() != fe.frequency_bins()) {
    return mismatch("frequency_bins", fe.frequency_bins(), group.frequency_bins());
  }
  if (group.frames() != fe.frames()) return mismatch("frames", fe.frames(), group.frames());
  if (group.bins_per_octave() != fe.bins_per_octave()) {
    return mismatch("bins_per_octave", fe.bins_per_octave(), group.bins_per_octave());
  }
  return absl::OkStatus();
}

}  // namespace invariant::train
