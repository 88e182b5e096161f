// byte_stream.h: sequential reading and writing of plain or gzip files.
//
// ByteReader opens a file and looks at its first two bytes: the gzip magic
// 0x1f 0x8b selects zlib decompression, anything else is read as is. Reads
// report how many bytes they got, so callers can name truncated files.
// ByteWriter writes plain or gzip output (used to write IDX files). Moved
// from train/data/ to core/io/, the home of reading rows.
// Neither is thread-safe.
#ifndef INVARIANT_CORE_IO_BYTE_STREAM_H_
#define INVARIANT_CORE_IO_BYTE_STREAM_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace invariant::io {

class ByteReader {
 public:
  // NOT_FOUND when the file cannot be opened (the message names the path).
  static absl::StatusOr<std::unique_ptr<ByteReader>> Open(const std::string& path);
  ~ByteReader();
  ByteReader(const ByteReader&) = delete;
  ByteReader& operator=(const ByteReader&) = delete;

  // Reads up to `n` bytes into `out`; returns the count (< n only at the end
  // of the data). DATA_LOSS names the file for corrupt gzip streams.
  absl::StatusOr<int64_t> Read(void* out, int64_t n);
  // True when the file started with the gzip magic.
  bool gzip() const { return gzip_; }
  const std::string& path() const { return path_; }

 private:
  ByteReader() = default;
  std::string path_;
  bool gzip_ = false;
  void* handle_ = nullptr;  // gzFile or FILE*
};

class ByteWriter {
 public:
  // Creates (truncates) `path`; gzip-compressed when `gzip`.
  static absl::StatusOr<std::unique_ptr<ByteWriter>> Create(const std::string& path, bool gzip);
  ~ByteWriter();
  ByteWriter(const ByteWriter&) = delete;
  ByteWriter& operator=(const ByteWriter&) = delete;

  absl::Status Write(const void* data, int64_t n);
  // Flushes and closes; errors name the file. Called by the destructor too,
  // which drops the error.
  absl::Status Close();

 private:
  ByteWriter() = default;
  std::string path_;
  bool gzip_ = false;
  void* handle_ = nullptr;
};

}  // namespace invariant::io

#endif  // INVARIANT_CORE_IO_BYTE_STREAM_H_
