#include "train/pipeline/pair_certificate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/audio/front_end.h"
#include "core/audio/wav.h"
#include "core/base/status_macros.h"
#include "core/io/byte_stream.h"
#include "core/io/delimited.h"
#include "core/io/idx.h"
#include "core/model/repository.h"
#include "train/pipeline/discrepancy.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;

// Bytes a text row may take per value (a generous float), beyond which a
// file is refused before it is read in full.
constexpr int64_t kMaxTextBytesPerValue = 64;
constexpr int64_t kFileSlackBytes = 4096;

// The decompressed bytes of `path`, at most max_bytes.
absl::StatusOr<std::string> ReadBytes(const std::string& path, int64_t max_bytes) {
  ASSIGN_OR_RETURN(std::unique_ptr<io::ByteReader> reader, io::ByteReader::Open(path));
  std::string data;
  char buffer[1 << 16];
  while (true) {
    ASSIGN_OR_RETURN(int64_t got, reader->Read(buffer, sizeof(buffer)));
    if (got == 0) break;
    data.append(buffer, static_cast<size_t>(got));
    if (static_cast<int64_t>(data.size()) > max_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": more than ", max_bytes, " bytes, too large for one input row"));
    }
  }
  return data;
}

// One IDX image of exactly `dim` values.
absl::Status IdxRow(const std::string& path, std::string data, int64_t dim, float* row) {
  const int64_t size = static_cast<int64_t>(data.size());
  ASSIGN_OR_RETURN(std::unique_ptr<io::ByteReader> reader, io::ByteReader::FromString(data, path));
  ASSIGN_OR_RETURN(io::IdxHeader h, io::ReadIdxHeader(*reader, 0, path));
  int64_t values = 1;
  for (size_t i = 1; i < h.dims.size(); ++i) values *= h.dims[i];
  if (h.dims.size() < 2 || h.dims[0] != 1 || values != dim) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": an IDX file of dims [", absl::StrJoin(h.dims, ", "),
                     "], expected one image of ", dim, " values (dims [1, ...])"));
  }
  const int64_t want = h.header_bytes() + dim * h.element_bytes;
  if (size < want) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": truncated IDX data: expected ", want, " bytes, got ", size));
  }
  io::DecodeIdx(h.type, reinterpret_cast<const unsigned char*>(data.data()) + h.header_bytes(), dim,
                row);
  for (int64_t i = 0; i < dim; ++i) {
    if (!std::isfinite(row[i])) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": value ", i, " is not finite"));
    }
  }
  return absl::OkStatus();
}

// Exactly `dim` numbers separated by commas, blanks or line breaks.
absl::Status TextRow(const std::string& path, const std::string& data, int64_t dim, float* row) {
  int64_t count = 0;
  for (absl::string_view field : absl::StrSplit(data, absl::ByAnyChar(", \t\r\n"))) {
    if (field.empty()) continue;
    if (count == dim) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": more than the model's input_dim ", dim, " numbers"));
    }
    std::string error;
    if (!io::ParseNumber(field, &row[count], &error)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": value ", count + 1, ": ", error));
    }
    ++count;
  }
  if (count != dim) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", count, " numbers, expected the model's input_dim ", dim,
                     " (an IDX image file or a text row; no other image format is read)"));
  }
  return absl::OkStatus();
}

}  // namespace

InputReader ModelInputReader(const Model& model) {
  if (const audio::AudioFrontEnd* front_end = model.audio_front_end(); front_end != nullptr) {
    return [front_end](const std::string& path, float* row) -> absl::Status {
      ASSIGN_OR_RETURN(audio::Clip clip,
                       audio::ReadWavFile(path, front_end->MaxSamples(audio::kMaxSampleRate)));
      return front_end->Apply(clip.samples, clip.sample_rate, row, path);
    };
  }
  const int64_t dim = model.input_dim();
  return [dim](const std::string& path, float* row) -> absl::Status {
    ASSIGN_OR_RETURN(std::string data,
                     ReadBytes(path, kFileSlackBytes + kMaxTextBytesPerValue * dim));
    if (io::LooksLikeIdx(data)) return IdxRow(path, std::move(data), dim, row);
    return TextRow(path, data, dim, row);
  };
}

absl::StatusOr<PairRows> ReadPairs(const std::string& manifest, int64_t dim,
                                   const InputReader& read) {
  auto invalid = [&manifest](const absl::Status& s) {
    return absl::InvalidArgumentError(absl::StrCat("pairs manifest ", manifest, ": ", s.message()));
  };
  absl::StatusOr<std::unique_ptr<io::ByteReader>> bytes = io::ByteReader::Open(manifest);
  if (!bytes.ok()) return invalid(bytes.status());
  absl::StatusOr<std::unique_ptr<io::DelimitedReader>> opened =
      io::DelimitedReader::Open(*std::move(bytes), {',', io::HeaderMode::kPresent});
  if (!opened.ok()) return invalid(opened.status());
  io::DelimitedReader& reader = **opened;
  const std::vector<std::string> want = {"original", "transformed"};
  if (reader.num_fields() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(manifest, ": empty manifest, expected the header original,transformed"));
  }
  if (reader.header() != want) {
    return reader.Error(reader.header_line(),
                        absl::StrCat("the header must be original,transformed, got ",
                                     absl::StrJoin(reader.header(), ",")));
  }
  const fs::path folder = fs::path(manifest).parent_path();
  std::vector<std::vector<float>> rows[2];
  std::map<std::string, int64_t> seen;
  PairRows out;
  io::Record record;
  while (true) {
    absl::StatusOr<bool> any = reader.Next(&record);
    if (!any.ok()) return invalid(any.status());
    if (!*any) break;
    for (int side = 0; side < 2; ++side) {
      const std::string& name = record.fields[static_cast<size_t>(side)];
      const char* role = side == 0 ? "original" : "transformed";
      if (name.empty()) return reader.Error(record.line, absl::StrCat("empty ", role, " path"));
      const std::string path = fs::path(name).is_absolute() ? name : (folder / name).string();
      std::error_code ec;
      if (!fs::is_regular_file(path, ec)) {
        return reader.Error(
            record.line, absl::StrCat(role, " file '", path, "' does not exist or is not a file"));
      }
      std::vector<float> row(static_cast<size_t>(dim));
      if (absl::Status s = read(path, row.data()); !s.ok()) {
        return reader.Error(record.line, absl::StrCat(role, " file '", path, "': ", s.message()));
      }
      if (side == 0) {
        const int64_t pair = static_cast<int64_t>(rows[0].size());
        const std::string key = fs::weakly_canonical(path, ec).string();
        if (seen.emplace(ec ? path : key, pair).second) out.distinct.push_back(pair);
      }
      rows[side].push_back(std::move(row));
    }
  }
  const int64_t n = static_cast<int64_t>(rows[0].size());
  if (n == 0) {
    return absl::InvalidArgumentError(absl::StrCat(manifest, ": no (original, transformed) pairs"));
  }
  out.original = FloatMatrix::Zeros(n, dim);
  out.transformed = FloatMatrix::Zeros(n, dim);
  for (int64_t i = 0; i < n; ++i) {
    std::copy(rows[0][static_cast<size_t>(i)].begin(), rows[0][static_cast<size_t>(i)].end(),
              out.original.mutable_row(i));
    std::copy(rows[1][static_cast<size_t>(i)].begin(), rows[1][static_cast<size_t>(i)].end(),
              out.transformed.mutable_row(i));
  }
  return out;
}

absl::StatusOr<v1::InvarianceCertificate> CertifyPairs(const BatchFunction& f, int64_t num_outputs,
                                                       const PairRows& rows,
                                                       const std::string& manifest) {
  const int64_t n = rows.original.rows(), k = num_outputs;
  if (n <= 0 || rows.transformed.rows() != n) {
    return absl::InvalidArgumentError(absl::StrCat(manifest, ": no (original, transformed) pairs"));
  }
  std::vector<float> base(static_cast<size_t>(n * k)), moved(base.size());
  f(n, rows.original.data(), base.data());
  f(n, rows.transformed.data(), moved.data());
  Discrepancy d;
  d.Add(moved.data(), base.data(), n * k);
  double scale = 0;
  for (float v : base) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  // The spread over distinct originals only: a file listed with several
  // transformations would otherwise add pairs of a point with itself.
  std::vector<float> distinct;
  for (int64_t i : rows.distinct) {
    distinct.insert(distinct.end(), base.begin() + i * k, base.begin() + (i + 1) * k);
  }
  const int64_t m = static_cast<int64_t>(rows.distinct.size());
  v1::InvarianceCertificate c;
  SetDiscrepancyFigures(d, scale, MeanPairwiseDifference(distinct.data(), m, k), c);
  c.set_num_points(n);
  c.set_num_group_elements(0);
  c.set_exhaustive(false);
  c.set_method(absl::StrCat("pairs: ", n, " (original, transformed) files from ", manifest));
  return c;
}

absl::StatusOr<v1::InvarianceCertificate> CertifyModelOnPairs(const Model& model,
                                                              const std::string& manifest) {
  ASSIGN_OR_RETURN(PairRows rows, ReadPairs(manifest, model.input_dim(), ModelInputReader(model)));
  int64_t outputs = 0;
  const BatchFunction f = ModelOutputs(model, &outputs);
  return CertifyPairs(f, outputs, rows, manifest);
}

absl::Status AddPairsCertificate(const Model& model, const v1::CertificateConfig& config,
                                 v1::Manifest* manifest) {
  if (config.pairs().empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(*manifest->mutable_pairs_certificate(),
                   CertifyModelOnPairs(model, config.pairs()));
  return absl::OkStatus();
}

absl::StatusOr<v1::InvarianceCertificate> RunPairsCertify(const std::string& model_path,
                                                          const std::string& manifest) {
  ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, LoadModelAt(model_path));
  return CertifyModelOnPairs(*model, manifest);
}

}  // namespace invariant::train
