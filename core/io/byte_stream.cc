#include "core/io/byte_stream.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"

namespace invariant::io {
namespace {

constexpr size_t kBufferBytes = size_t{1} << 17;

}  // namespace

std::string DisplayName(const std::string& path) {
  return path == kStdinPath ? std::string(kStdinName) : path;
}

bool IsGzip(absl::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
         static_cast<unsigned char>(head[1]) == 0x8b;
}

struct ByteReader::Inflater {
  z_stream z;
  Inflater() { std::memset(&z, 0, sizeof(z)); }
  ~Inflater() { inflateEnd(&z); }
};

ByteReader::ByteReader() = default;

ByteReader::~ByteReader() {
  if (file_ != nullptr && owns_file_) std::fclose(file_);
}

absl::StatusOr<std::unique_ptr<ByteReader>> ByteReader::Open(const std::string& path) {
  std::unique_ptr<ByteReader> reader(new ByteReader());
  reader->name_ = DisplayName(path);
  if (path == kStdinPath) {
    reader->file_ = stdin;
  } else {
    reader->file_ = std::fopen(path.c_str(), "rb");
    if (reader->file_ == nullptr) {
      return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
    }
    reader->owns_file_ = true;
  }
  RETURN_IF_ERROR(reader->Start());
  return reader;
}

absl::StatusOr<std::unique_ptr<ByteReader>> ByteReader::FromString(std::string data,
                                                                   std::string name) {
  std::unique_ptr<ByteReader> reader(new ByteReader());
  reader->name_ = std::move(name);
  reader->data_ = std::move(data);
  RETURN_IF_ERROR(reader->Start());
  return reader;
}

// Reads the first bytes to look for the gzip magic.
absl::Status ByteReader::Start() {
  buffer_.resize(kBufferBytes);
  ASSIGN_OR_RETURN(const bool any, Fill());
  (void)any;
  gzip_ = IsGzip(absl::string_view(reinterpret_cast<const char*>(buffer_.data()), end_));
  if (gzip_) {
    inflater_ = std::make_unique<Inflater>();
    if (inflateInit2(&inflater_->z, 16 + MAX_WBITS) != Z_OK) {
      inflater_.reset();
      return absl::InternalError(absl::StrCat(name_, ": zlib init failed"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ByteReader::ReadRaw(unsigned char* out, int64_t n) {
  if (file_ == nullptr) {
    const size_t got = std::min(static_cast<size_t>(n), data_.size() - data_pos_);
    std::memcpy(out, data_.data() + data_pos_, got);
    data_pos_ += got;
    return static_cast<int64_t>(got);
  }
  const size_t got = std::fread(out, 1, static_cast<size_t>(n), file_);
  if (got < static_cast<size_t>(n) && std::ferror(file_)) {
    return absl::DataLossError(absl::StrCat(name_, ": read error: ", std::strerror(errno)));
  }
  return static_cast<int64_t>(got);
}

absl::StatusOr<bool> ByteReader::Fill() {
  ASSIGN_OR_RETURN(const int64_t got,
                   ReadRaw(buffer_.data(), static_cast<int64_t>(buffer_.size())));
  begin_ = 0;
  end_ = static_cast<size_t>(got);
  return got > 0;
}

absl::StatusOr<int64_t> ByteReader::Read(void* out, int64_t n) {
  auto* dst = static_cast<unsigned char*>(out);
  int64_t total = 0;
  if (!gzip_) {
    const int64_t buffered = std::min<int64_t>(n, static_cast<int64_t>(end_ - begin_));
    std::memcpy(dst, buffer_.data() + begin_, static_cast<size_t>(buffered));
    begin_ += static_cast<size_t>(buffered);
    total = buffered;
    if (total < n) {
      ASSIGN_OR_RETURN(const int64_t got, ReadRaw(dst + total, n - total));
      total += got;
    }
    return total;
  }
  z_stream& z = inflater_->z;
  while (total < n) {
    if (begin_ == end_) {
      ASSIGN_OR_RETURN(const bool more, Fill());
      if (!more) {
        if (!member_done_) {
          return absl::DataLossError(
              absl::StrCat(name_, ": truncated gzip data: the stream ends early"));
        }
        break;
      }
    }
    if (member_done_) {  // another gzip member follows
      inflateReset(&z);
      member_done_ = false;
    }
    z.next_in = buffer_.data() + begin_;
    z.avail_in = static_cast<uInt>(end_ - begin_);
    z.next_out = dst + total;
    z.avail_out = static_cast<uInt>(std::min<int64_t>(n - total, INT_MAX / 2));
    const uInt wanted = z.avail_out;
    const int rc = inflate(&z, Z_NO_FLUSH);
    begin_ = end_ - z.avail_in;
    total += wanted - z.avail_out;
    if (rc == Z_STREAM_END) {
      member_done_ = true;
    } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && z.avail_in == 0)) {
      return absl::DataLossError(absl::StrCat(
          name_, ": corrupt gzip data: ", z.msg != nullptr ? z.msg : "", " (zlib code ", rc, ")"));
    }
  }
  return total;
}

absl::StatusOr<std::string> ReadAll(ByteReader& reader) {
  std::string out;
  std::string chunk(kBufferBytes, '\0');
  while (true) {
    ASSIGN_OR_RETURN(const int64_t got,
                     reader.Read(chunk.data(), static_cast<int64_t>(chunk.size())));
    out.append(chunk.data(), static_cast<size_t>(got));
    if (got < static_cast<int64_t>(chunk.size())) return out;
  }
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
