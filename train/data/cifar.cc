#include "train/data/cifar.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "core/base/unit_byte.h"
#include "core/io/byte_stream.h"

namespace invariant::train {
namespace {

constexpr int64_t kCifarClasses = 10;
constexpr int64_t kPlaneBytes = kCifarSide * kCifarSide;
// Records read at once while checking a file.
constexpr int64_t kScanRecords = 256;
constexpr int kMaxTrainBatches = 5;

// Reads up to `n` records of `path` (records first .. first + n − 1) into
// `bytes`, checking each label. Returns the number of whole records read,
// fewer than n only at the end of the file; a partial last record is an
// error.
absl::StatusOr<int64_t> ReadRecords(io::ByteReader& reader, const std::string& path, int64_t first,
                                    int64_t n, std::vector<uint8_t>& bytes) {
  bytes.resize(static_cast<size_t>(n * kCifarRecordBytes));
  ASSIGN_OR_RETURN(const int64_t got, reader.Read(bytes.data(), n * kCifarRecordBytes));
  const int64_t whole = got / kCifarRecordBytes;
  if (got % kCifarRecordBytes != 0) {
    return absl::DataLossError(
        absl::StrCat(path, ": truncated record ", first + whole, ": expected ", kCifarRecordBytes,
                     " bytes, the file ends after ", got % kCifarRecordBytes, " of them (",
                     (first + whole) * kCifarRecordBytes + got % kCifarRecordBytes,
                     " bytes in all, not a multiple of ", kCifarRecordBytes, ")"));
  }
  for (int64_t i = 0; i < whole; ++i) {
    const uint8_t label = bytes[static_cast<size_t>(i * kCifarRecordBytes)];
    if (label >= kCifarClasses) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": record ", first + i, ": label ", int{label}, ", expected 0-9"));
    }
  }
  return whole;
}

absl::StatusOr<std::unique_ptr<io::ByteReader>> OpenFile(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("CIFAR-10: empty file path");
  if (path == io::kStdinPath) {
    return absl::InvalidArgumentError(
        "CIFAR-10 data is read once per training pass: give files, not '-' (stdin)");
  }
  return io::ByteReader::Open(path);
}

// The number of records of `path`, every one checked.
absl::StatusOr<int64_t> CountRecords(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<io::ByteReader> reader, OpenFile(path));
  std::vector<uint8_t> bytes;
  int64_t count = 0;
  while (true) {
    ASSIGN_OR_RETURN(const int64_t got, ReadRecords(*reader, path, count, kScanRecords, bytes));
    count += got;
    if (got < kScanRecords) break;
  }
  if (count == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": empty file, expected records of ", kCifarRecordBytes, " bytes"));
  }
  return count;
}

class CifarSource : public RowSource {
 public:
  static absl::StatusOr<std::unique_ptr<CifarSource>> Open(const std::vector<std::string>& paths,
                                                           const std::string& name) {
    if (paths.empty()) return absl::InvalidArgumentError("CIFAR-10: no files given");
    std::unique_ptr<CifarSource> source(new CifarSource());
    source->paths_ = paths;
    int64_t total = 0;
    for (const std::string& path : paths) {
      ASSIGN_OR_RETURN(const int64_t count, CountRecords(path));
      source->counts_.push_back(count);
      total += count;
    }
    RowSchema& s = source->schema_;
    s.name = name.empty() ? paths[0] : name;
    s.dim = kCifarImageBytes;
    s.has_labels = true;
    s.class_names = Cifar10ClassNames();
    s.input_shape = {kCifarSide, kCifarSide, kCifarChannels};
    s.num_rows = total;
    s.unit_byte_scaled = true;
    return source;
  }

  const RowSchema& schema() const override { return schema_; }

  absl::Status Reset() override {
    file_ = 0;
    record_ = 0;
    reader_.reset();
    return absl::OkStatus();
  }

  absl::StatusOr<int64_t> Next(int64_t max_rows, float* x, int32_t* labels,
                               float* targets) override {
    if (max_rows <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("max_rows must be > 0, got ", max_rows));
    }
    int64_t written = 0;
    while (written < max_rows && file_ < paths_.size()) {
      const std::string& path = paths_[file_];
      const int64_t want = std::min(max_rows - written, counts_[file_] - record_);
      if (want == 0) {
        ++file_;
        record_ = 0;
        reader_.reset();
        continue;
      }
      if (reader_ == nullptr) {
        ASSIGN_OR_RETURN(reader_, OpenFile(path));
      }
      ASSIGN_OR_RETURN(const int64_t got, ReadRecords(*reader_, path, record_, want, bytes_));
      if (got < want) {
        return absl::DataLossError(absl::StrCat(path, ": the file ends after record ",
                                                record_ + got - 1, " but held ", counts_[file_],
                                                " records when opened"));
      }
      for (int64_t i = 0; i < got; ++i) {
        const uint8_t* record = bytes_.data() + i * kCifarRecordBytes;
        CifarImageToRow(record + 1, x + (written + i) * kCifarImageBytes);
        if (labels != nullptr) labels[written + i] = record[0];
      }
      written += got;
      record_ += got;
    }
    return written;
  }

 private:
  CifarSource() = default;

  RowSchema schema_;
  std::vector<std::string> paths_;
  std::vector<int64_t> counts_;             // records of every file, checked at open
  size_t file_ = 0;                         // the file read next
  int64_t record_ = 0;                      // the record of file_ read next
  std::unique_ptr<io::ByteReader> reader_;  // file_'s reader, once opened
  std::vector<uint8_t> bytes_;
};

// `dir`/NAME, or `dir`/NAME.gz when only that exists; empty when neither does.
std::string FindFile(const std::filesystem::path& dir, const std::string& name) {
  std::error_code ec;
  for (const std::string& leaf : {name, name + ".gz"}) {
    if (std::filesystem::is_regular_file(dir / leaf, ec)) return (dir / leaf).string();
  }
  return "";
}

}  // namespace

const std::vector<std::string>& Cifar10ClassNames() {
  static const auto* names = new std::vector<std::string>{
      "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"};
  return *names;
}

void CifarImageToRow(const uint8_t* image, float* row) {
  for (int64_t p = 0; p < kPlaneBytes; ++p) {  // p = r·32 + c
    for (int64_t ch = 0; ch < kCifarChannels; ++ch) {
      row[p * kCifarChannels + ch] = UnitByteToFloat(image[ch * kPlaneBytes + p]);
    }
  }
}

absl::StatusOr<std::unique_ptr<RowSource>> OpenCifarSource(const std::vector<std::string>& paths,
                                                           const std::string& name) {
  ASSIGN_OR_RETURN(std::unique_ptr<CifarSource> source, CifarSource::Open(paths, name));
  return std::unique_ptr<RowSource>(std::move(source));
}

absl::StatusOr<Dataset> LoadCifar(const std::vector<std::string>& paths, const std::string& name) {
  ASSIGN_OR_RETURN(std::unique_ptr<RowSource> source, OpenCifarSource(paths, name));
  return ReadAllRows(*source);
}

absl::StatusOr<CifarFiles> FindCifarFiles(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat(dir, ": not a folder"));
  }
  CifarFiles files;
  for (int i = 1; i <= kMaxTrainBatches; ++i) {
    std::string path = FindFile(dir, absl::StrCat("data_batch_", i, ".bin"));
    if (!path.empty()) files.train.push_back(std::move(path));
  }
  std::string test = FindFile(dir, "test_batch.bin");
  if (!test.empty()) files.test.push_back(std::move(test));
  if (files.train.empty()) {
    const std::filesystem::path inner = std::filesystem::path(dir) / "cifar-10-batches-bin";
    bool in_inner = false;
    for (int i = 1; i <= kMaxTrainBatches; ++i) {
      in_inner = in_inner || !FindFile(inner, absl::StrCat("data_batch_", i, ".bin")).empty();
    }
    return absl::NotFoundError(absl::StrCat(
        dir, " holds none of data_batch_1.bin .. data_batch_", kMaxTrainBatches,
        ".bin (plain or .gz)",
        in_inner ? absl::StrCat("; they are in ", inner.string(), ": give that folder") : ""));
  }
  return files;
}

}  // namespace invariant::train
