// byte_stream.h: sequential reading of plain or gzip bytes from a file,
// stdin or memory, and writing of plain or gzip files. The one place the
// repository decompresses gzip.
//
// ByteReader looks at the first two bytes of its input: the gzip magic
// 0x1f 0x8b selects zlib decompression (concatenated gzip members are read
// one after the other), anything else is read as is. The path "-" reads
// stdin, named "<stdin>" in messages. Reads report how many bytes they got,
// so callers can name truncated files.
//
// Errors: NOT_FOUND when a file cannot be opened; DATA_LOSS for a read error
// or a corrupt or truncated gzip stream. Every message starts with the name
// (the path, "<stdin>", or the name given to FromString).
//
// ByteWriter writes plain or gzip output (used to write IDX files).
// Neither is thread-safe; use one per thread.
#ifndef INVARIANT_CORE_IO_BYTE_STREAM_H_
#define INVARIANT_CORE_IO_BYTE_STREAM_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace invariant::io {

// The path that means stdin, and its name in messages.
inline constexpr char kStdinPath[] = "-";
inline constexpr char kStdinName[] = "<stdin>";

// The name used in messages for `path`: "<stdin>" for "-", else the path.
std::string DisplayName(const std::string& path);

// True when `head` starts with the gzip magic 0x1f 0x8b.
bool IsGzip(absl::string_view head);

class ByteReader {
 public:
  // Opens `path` ("-" = stdin, which is not closed).
  static absl::StatusOr<std::unique_ptr<ByteReader>> Open(const std::string& path);
  // Reads `data` (plain or gzip), named `name` in messages.
  static absl::StatusOr<std::unique_ptr<ByteReader>> FromString(std::string data, std::string name);
  ~ByteReader();
  ByteReader(const ByteReader&) = delete;
  ByteReader& operator=(const ByteReader&) = delete;

  // Reads up to `n` bytes (decompressed) into `out`; returns the count (< n
  // only at the end of the data).
  absl::StatusOr<int64_t> Read(void* out, int64_t n);
  // True when the input started with the gzip magic.
  bool gzip() const { return gzip_; }
  // The name used in messages (the path, or "<stdin>").
  const std::string& path() const { return name_; }

 private:
  struct Inflater;
  ByteReader();
  absl::Status Start();
  // Refills the raw input buffer; false at the end of the raw input.
  absl::StatusOr<bool> Fill();
  absl::StatusOr<int64_t> ReadRaw(unsigned char* out, int64_t n);

  std::string name_;
  std::FILE* file_ = nullptr;
  bool owns_file_ = false;
  std::string data_;  // FromString's input
  size_t data_pos_ = 0;
  std::vector<unsigned char> buffer_;  // raw input not yet consumed: [begin_, end_)
  size_t begin_ = 0;
  size_t end_ = 0;
  bool gzip_ = false;
  bool member_done_ = false;  // the current gzip member has ended
  std::unique_ptr<Inflater> inflater_;
};

// Every remaining (decompressed) byte of `reader`.
absl::StatusOr<std::string> ReadAll(ByteReader& reader);

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
