#include "core/io/byte_stream.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace invariant::io {

absl::StatusOr<std::unique_ptr<ByteReader>> ByteReader::Open(const std::string& path) {
  std::FILE* probe = std::fopen(path.c_str(), "rb");
  if (probe == nullptr) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  unsigned char magic[2] = {0, 0};
  const size_t got = std::fread(magic, 1, 2, probe);
  const bool is_gzip = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  std::unique_ptr<ByteReader> reader(new ByteReader());
  reader->path_ = path;
  reader->gzip_ = is_gzip;
  if (is_gzip) {
    std::fclose(probe);
    gzFile gz = gzopen(path.c_str(), "rb");
    if (gz == nullptr) {
      return absl::NotFoundError(absl::StrCat(path, ": cannot open as gzip"));
    }
    gzbuffer(gz, 1 << 17);
    reader->handle_ = gz;
  } else {
    std::rewind(probe);
    reader->handle_ = probe;
  }
  return reader;
}

ByteReader::~ByteReader() {
  if (handle_ == nullptr) return;
  if (gzip_) {
    gzclose(static_cast<gzFile>(handle_));
  } else {
    std::fclose(static_cast<std::FILE*>(handle_));
  }
}

absl::StatusOr<int64_t> ByteReader::Read(void* out, int64_t n) {
  if (!gzip_) {
    auto* f = static_cast<std::FILE*>(handle_);
    const size_t got = std::fread(out, 1, static_cast<size_t>(n), f);
    if (got < static_cast<size_t>(n) && std::ferror(f)) {
      return absl::DataLossError(absl::StrCat(path_, ": read error: ", std::strerror(errno)));
    }
    return static_cast<int64_t>(got);
  }
  auto* gz = static_cast<gzFile>(handle_);
  int64_t total = 0;
  char* dst = static_cast<char*>(out);
  while (total < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<int64_t>(n - total, INT_MAX / 2));
    const int got = gzread(gz, dst + total, chunk);
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(gz, &code);
      return absl::DataLossError(absl::StrCat(path_, ": corrupt gzip data: ", msg));
    }
    if (got == 0) {
      int code = 0;
      const char* msg = gzerror(gz, &code);
      if (code != Z_OK && code != Z_BUF_ERROR) {
        return absl::DataLossError(absl::StrCat(path_, ": corrupt gzip data: ", msg));
      }
      break;
    }
    total += got;
  }
  return total;
}

absl::StatusOr<std::unique_ptr<ByteWriter>> ByteWriter::Create(const std::string& path, bool gzip) {
  std::unique_ptr<ByteWriter> writer(new ByteWriter());
  writer->path_ = path;
  writer->gzip_ = gzip;
  if (gzip) {
    gzFile gz = gzopen(path.c_str(), "wb");
    if (gz == nullptr) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot create"));
    writer->handle_ = gz;
  } else {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) {
      return absl::PermissionDeniedError(
          absl::StrCat(path, ": cannot create: ", std::strerror(errno)));
    }
    writer->handle_ = f;
  }
  return writer;
}

ByteWriter::~ByteWriter() { Close().IgnoreError(); }

absl::Status ByteWriter::Write(const void* data, int64_t n) {
  if (handle_ == nullptr) return absl::FailedPreconditionError(path_ + ": already closed");
  if (gzip_) {
    const char* src = static_cast<const char*>(data);
    int64_t done = 0;
    while (done < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<int64_t>(n - done, INT_MAX / 2));
      const int wrote = gzwrite(static_cast<gzFile>(handle_), src + done, chunk);
      if (wrote <= 0) return absl::DataLossError(absl::StrCat(path_, ": gzip write failed"));
      done += wrote;
    }
    return absl::OkStatus();
  }
  if (std::fwrite(data, 1, static_cast<size_t>(n), static_cast<std::FILE*>(handle_)) !=
      static_cast<size_t>(n)) {
    return absl::DataLossError(absl::StrCat(path_, ": write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status ByteWriter::Close() {
  if (handle_ == nullptr) return absl::OkStatus();
  int rc = 0;
  if (gzip_) {
    rc = gzclose(static_cast<gzFile>(handle_)) == Z_OK ? 0 : -1;
  } else {
    rc = std::fclose(static_cast<std::FILE*>(handle_));
  }
  handle_ = nullptr;
  if (rc != 0) return absl::DataLossError(absl::StrCat(path_, ": close failed"));
  return absl::OkStatus();
}

}  // namespace invariant::io
