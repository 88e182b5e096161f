// bundle_writer.cc: WriteBundle — lay out, checksum and atomically write a bundle.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/base/error_text.h"
#include "core/base/status_macros.h"
#include "core/bundle/bundle.h"
#include "core/bundle/bundle_format.h"
#include "core/bundle/crc32c.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace invariant {
namespace {

namespace fmt = bundle_format;

// A temporary file next to the destination; removed unless Commit succeeds.
class TempFile {
 public:
  explicit TempFile(std::string final_path) : final_path_(std::move(final_path)) {}
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  absl::Status Create() {
    const size_t slash = final_path_.rfind('/');
    dir_ = slash == std::string::npos ? "." : (slash == 0 ? "/" : final_path_.substr(0, slash));
    const std::string base =
        slash == std::string::npos ? final_path_ : final_path_.substr(slash + 1);
    std::string name = absl::StrCat(dir_, "/.", base, ".tmp-XXXXXX");
    const int fd = ::mkstemp(name.data());
    if (fd < 0) {
      return absl::ErrnoToStatus(
          errno, absl::StrCat(final_path_, ": cannot create a temporary file in ", dir_));
    }
    fd_ = fd;
    temp_path_ = name;
    if (::fchmod(fd_, 0644) != 0) return Error("cannot set permissions of");
    return absl::OkStatus();
  }

  absl::Status Write(const void* data, uint64_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(size, uint64_t{1} << 30));
      const ssize_t written = ::write(fd_, p, chunk);
      if (written < 0) {
        if (errno == EINTR) continue;
        return Error("cannot write");
      }
      p += written;
      size -= static_cast<uint64_t>(written);
    }
    return absl::OkStatus();
  }

  absl::Status WriteZeros(uint64_t size) {
    static const char kZeros[kBundleAlignment] = {};
    while (size > 0) {
      const uint64_t chunk = std::min<uint64_t>(size, sizeof(kZeros));
      RETURN_IF_ERROR(Write(kZeros, chunk));
      size -= chunk;
    }
    return absl::OkStatus();
  }

  // fsync, close, rename over the destination, fsync the directory.
  absl::Status Commit() {
    if (::fsync(fd_) != 0) return Error("cannot fsync");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return Error("cannot close");
    if (::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
      return absl::ErrnoToStatus(
          errno, absl::StrCat(final_path_, ": cannot rename ", temp_path_, " over it"));
    }
    temp_path_.clear();  // now the destination: nothing to remove
    const int dir_fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) {
      return absl::ErrnoToStatus(
          errno, absl::StrCat(final_path_, ": cannot open directory ", dir_, " to fsync it"));
    }
    const int rc = ::fsync(dir_fd);
    const int fsync_errno = errno;
    ::close(dir_fd);
    if (rc != 0) {
      return absl::ErrnoToStatus(fsync_errno,
                                 absl::StrCat(final_path_, ": cannot fsync directory ", dir_));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::ErrnoToStatus(
        errno, absl::StrCat(final_path_, ": ", what, " temporary file ", temp_path_));
  }

  std::string final_path_;
  std::string dir_;
  std::string temp_path_;
  int fd_ = -1;
};

// Checks every tensor and appends its entry (without offset) to `manifest`.
absl::Status AddTensorEntries(const std::string& path, const std::vector<TensorRef>& tensors,
                              v1::Manifest& manifest) {
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorRef& t = tensors[i];
    if (t.name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor #", i, " has an empty name; every tensor needs one"));
    }
    if (!names.insert(t.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor name '", t.name, "' appears more than once"));
    }
    const size_t element_size = DTypeSize(t.dtype);
    if (element_size == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": tensor '", t.name, "' has unknown dtype ", static_cast<int>(t.dtype),
          "; expected DTYPE_FLOAT32, DTYPE_FLOAT64, DTYPE_INT32 or DTYPE_BFLOAT16"));
    }
    absl::StatusOr<uint64_t> size_bytes = fmt::TensorSizeBytes(t.shape, element_size);
    if (!size_bytes.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": tensor '", t.name, "' ", size_bytes.status().message()));
    }
    if (t.data == nullptr && *size_bytes > 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor '", t.name, "' of shape ",
                                                     ShapeText(t.shape), " has null data"));
    }
    v1::TensorEntry* entry = manifest.add_tensors();
    entry->set_name(t.name);
    entry->set_dtype(t.dtype);
    for (int64_t dim : t.shape) entry->add_shape(dim);
    entry->set_size_bytes(*size_bytes);
    entry->set_crc32c(Crc32c(t.data, static_cast<size_t>(*size_bytes)));
  }
  return absl::OkStatus();
}

// Assigns tensor offsets from `data_start`; returns the end of the file.
absl::StatusOr<uint64_t> AssignOffsets(const std::string& path, uint64_t data_start,
                                       v1::Manifest& manifest) {
  uint64_t end = data_start;
  for (v1::TensorEntry& entry : *manifest.mutable_tensors()) {
    const std::optional<uint64_t> offset = fmt::RoundUpToAlignment(end);
    if (!offset || *offset > UINT64_MAX - entry.size_bytes()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": the tensors' total size overflows 64 bits at '", entry.name(), "'"));
    }
    entry.set_offset(*offset);
    end = *offset + entry.size_bytes();
  }
  return end;
}

// Deterministic serialization (map fields sorted), so equal inputs give
// byte-identical bundles.
std::string SerializeDeterministically(const v1::Manifest& manifest) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    manifest.SerializeToCodedStream(&coded);
  }
  return bytes;
}

}  // namespace

size_t DTypeSize(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_FLOAT32:
      return sizeof(float);
    case v1::DTYPE_FLOAT64:
      return sizeof(double);
    case v1::DTYPE_INT32:
      return sizeof(int32_t);
    case v1::DTYPE_BFLOAT16:
      return sizeof(uint16_t);
    default:
      return 0;
  }
}

absl::Status WriteBundle(const std::string& path, v1::Manifest manifest,
                         const std::vector<TensorRef>& tensors) {
  manifest.set_format_version(kBundleFormatVersion);
  manifest.clear_tensors();
  RETURN_IF_ERROR(AddTensorEntries(path, tensors, manifest));

  // Offsets are stored in the manifest, whose length decides where the data
  // starts: iterate to the fixed point (offsets only grow, so this converges,
  // in practice after one or two rounds).
  uint64_t data_start = *fmt::DataStart(0);
  uint64_t file_length = 0;
  size_t manifest_length = 0;
  for (int round = 0;; ++round) {
    ASSIGN_OR_RETURN(file_length, AssignOffsets(path, data_start, manifest));
    manifest_length = manifest.ByteSizeLong();
    if (manifest_length > fmt::kMaxManifestLength) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": manifest is ", manifest_length,
                                                     " bytes; the limit is ",
                                                     fmt::kMaxManifestLength));
    }
    const uint64_t needed_start = *fmt::DataStart(manifest_length);
    if (needed_start == data_start) break;
    if (round >= 16) {
      return absl::InternalError(absl::StrCat(path, ": tensor layout did not converge"));
    }
    data_start = needed_start;
  }
  const std::string manifest_bytes = SerializeDeterministically(manifest);
  if (manifest_bytes.size() != manifest_length) {
    return absl::InternalError(absl::StrCat(path, ": manifest serialized to ",
                                            manifest_bytes.size(), " bytes, expected ",
                                            manifest_length));
  }

  fmt::Header header;
  header.format_version = kBundleFormatVersion;
  header.manifest_crc32c = Crc32c(manifest_bytes.data(), manifest_bytes.size());
  header.manifest_length = manifest_length;
  header.file_length = file_length;
  const std::array<uint8_t, fmt::kHeaderSize> header_bytes = fmt::EncodeHeader(header);

  TempFile file(path);
  RETURN_IF_ERROR(file.Create());
  RETURN_IF_ERROR(file.Write(header_bytes.data(), header_bytes.size()));
  RETURN_IF_ERROR(file.Write(manifest_bytes.data(), manifest_bytes.size()));
  uint64_t position = fmt::kHeaderSize + manifest_length;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const v1::TensorEntry& entry = manifest.tensors(static_cast<int>(i));
    RETURN_IF_ERROR(file.WriteZeros(entry.offset() - position));
    RETURN_IF_ERROR(file.Write(tensors[i].data, entry.size_bytes()));
    position = entry.offset() + entry.size_bytes();
  }
  RETURN_IF_ERROR(file.WriteZeros(file_length - position));
  return file.Commit();
}

}  // namespace invariant
