// bundle_reader.cc: Bundle::Open — read a bundle into memory the process owns
// and validate every byte.
//
// Order of checks (each before anything that depends on it): the file itself,
// its size against the fixed header, then from the 64 header bytes alone:
// magic, header CRC, version, reserved bytes, recorded file length, manifest
// bounds; then from the manifest's bytes alone: manifest CRC, manifest parse,
// the tensor table against the real file size; then the file's size against
// the memory it may take (OpenOptions); only then the whole file is read, and
// its padding and tensor CRCs checked. Nothing is allocated from a claimed
// size before it was checked against the real file size, and nothing the
// size of the file before the header and the manifest passed.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/base/error_text.h"
#include "core/base/memory_limit.h"
#include "core/base/status_macros.h"
#include "core/bundle/bundle.h"
#include "core/bundle/bundle_format.h"
#include "core/bundle/crc32c.h"

namespace invariant {
namespace bundle_internal {

// The private read-only copy of the whole file (an anonymous mapping);
// unmapped when the last Bundle or tensor view holding it goes away.
struct Mapping {
  const uint8_t* bytes = nullptr;
  size_t length = 0;
  ~Mapping() {
    if (bytes != nullptr) ::munmap(const_cast<uint8_t*>(bytes), length);
  }
};

}  // namespace bundle_internal

namespace {

namespace fmt = bundle_format;
using bundle_internal::Mapping;

std::string Hex32(uint32_t value) { return absl::StrCat("0x", absl::Hex(value, absl::kZeroPad8)); }

std::string DTypeLabel(v1::DType dtype) {
  const std::string& name = v1::DType_Name(dtype);
  return name.empty() ? absl::StrCat("unknown dtype ", static_cast<int>(dtype)) : name;
}

absl::Status DataLoss(const std::string& path, absl::string_view problem) {
  return absl::DataLossError(absl::StrCat(path, ": ", problem));
}

absl::Status Inconsistent(const std::string& path, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
}

// An open bundle file and its size; the descriptor closes with it.
struct OpenFile {
  int fd = -1;
  uint64_t size = 0;
  OpenFile() = default;
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
};

// Opens and stats `path`: a regular file at least the header size (a FIFO or
// a device is refused before a byte is read: O_NONBLOCK, so opening a FIFO
// never waits for a writer).
absl::Status OpenBundleFile(const std::string& path, OpenFile& file) {
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such bundle file"));
    return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot open bundle file"));
  }
  struct stat st;
  if (::fstat(file.fd, &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot stat bundle file"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, S_ISDIR(st.st_mode) ? ": is a directory" : ": is not a regular file",
                     ", expected a bundle file"));
  }
  file.size = static_cast<uint64_t>(st.st_size);
  if (file.size < fmt::kHeaderSize) {
    if (file.size == 0) {
      return DataLoss(path, absl::StrCat("file is empty (0 bytes); a bundle starts with a ",
                                         fmt::kHeaderSize, "-byte header"));
    }
    return DataLoss(path,
                    absl::StrCat("file is truncated: ", file.size, " bytes, shorter than the ",
                                 fmt::kHeaderSize, "-byte header"));
  }
  return absl::OkStatus();
}

// Reads `length` bytes at `offset` of `file` into `out`; DATA_LOSS when the
// file ends first (it shrank since it was stat'ed).
absl::Status ReadAt(const std::string& path, const OpenFile& file, uint64_t offset, uint64_t length,
                    uint8_t* out) {
  uint64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(file.fd, out + done, static_cast<size_t>(length - done),
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot read bundle file"));
    if (n == 0) {
      return DataLoss(path, absl::StrCat("file is truncated: it shrank from ", file.size, " to ",
                                         offset + done, " bytes while being read"));
    }
    done += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

// The file's size against what it may take in memory (OpenOptions), before
// the private copy is allocated.
absl::Status CheckFitsInMemory(const std::string& path, uint64_t file_size,
                               const OpenOptions& options) {
  if (options.max_file_bytes > 0 && file_size > options.max_file_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": bundle of ", file_size, " bytes exceeds the limit of ",
                     options.max_file_bytes, " bytes; it is not read"));
  }
  if (!options.check_available_memory) return absl::OkStatus();
  const uint64_t available = AvailableMemoryBytes();
  if (available > 0 && file_size > available) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": bundle of ", file_size, " bytes exceeds the ", available,
                     " bytes of memory available to this process; it is not read"));
  }
  return absl::OkStatus();
}

// Reads the whole file into a private anonymous mapping the process owns
// (then made read-only), so the bundle can neither change nor vanish under a
// loaded model: overwriting or truncating the file later never reaches these
// bytes (a shared file mapping would show the new bytes, or raise SIGBUS past
// a truncated end). Called only once the header and the manifest have been
// checked against the file's size; a file that changes is caught by the
// checksums.
absl::StatusOr<std::shared_ptr<Mapping>> ReadWhole(const std::string& path, const OpenFile& file) {
  void* base = ::mmap(nullptr, static_cast<size_t>(file.size), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat(path, ": cannot allocate ", file.size, " bytes to read"));
  }
  auto mapping = std::make_shared<Mapping>();
  mapping->bytes = static_cast<const uint8_t*>(base);
  mapping->length = static_cast<size_t>(file.size);
  RETURN_IF_ERROR(ReadAt(path, file, 0, file.size, static_cast<uint8_t*>(base)));
  if (::mprotect(base, static_cast<size_t>(file.size), PROT_READ) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot make the bundle read-only"));
  }
  return mapping;
}

// Magic, header CRC, version, reserved bytes and recorded length.
absl::StatusOr<fmt::Header> CheckHeader(const std::string& path, const uint8_t* bytes,
                                        uint64_t file_size) {
  if (std::memcmp(bytes, fmt::kMagic.data(), fmt::kMagic.size()) != 0) {
    return DataLoss(
        path, absl::StrCat("bad magic: expected \"INVBNDL\\000\", found \"",
                           absl::CHexEscape(absl::string_view(reinterpret_cast<const char*>(bytes),
                                                              fmt::kMagic.size())),
                           "\"; not an invariant bundle file"));
  }
  const uint32_t stored_crc = fmt::StoredHeaderCrc(bytes);
  const uint32_t computed_crc = fmt::ComputeHeaderCrc(bytes);
  if (stored_crc != computed_crc) {
    return DataLoss(
        path, absl::StrCat("header checksum mismatch (stored ", Hex32(stored_crc), ", computed ",
                           Hex32(computed_crc), "); the header is corrupt"));
  }
  const fmt::Header header = fmt::DecodeHeaderFields(bytes);
  if (header.format_version != kBundleFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": unsupported bundle format version ", header.format_version,
                     "; this build reads version ", kBundleFormatVersion));
  }
  for (size_t i = fmt::kReservedOffset; i < fmt::kHeaderCrcOffset; ++i) {
    if (bytes[i] != 0) {
      return DataLoss(path, absl::StrCat("reserved header byte ", i, " is ",
                                         static_cast<int>(bytes[i]), ", expected 0"));
    }
  }
  if (header.file_length > file_size) {
    return DataLoss(path, absl::StrCat("file is truncated: header records ", header.file_length,
                                       " bytes, file has ", file_size, " bytes"));
  }
  if (header.file_length < file_size) {
    return DataLoss(
        path, absl::StrCat("file has ", file_size, " bytes, header records ", header.file_length,
                           " (", file_size - header.file_length, " unexpected trailing bytes)"));
  }
  if (header.manifest_length > file_size - fmt::kHeaderSize) {
    return DataLoss(path, absl::StrCat("manifest length ", header.manifest_length,
                                       " extends past end of file (", fmt::kHeaderSize, " + ",
                                       header.manifest_length, " > file size ", file_size, ")"));
  }
  if (header.manifest_length > fmt::kMaxManifestLength) {
    return DataLoss(
        path, absl::StrCat("manifest length ", header.manifest_length, " exceeds the limit of ",
                           fmt::kMaxManifestLength, " bytes"));
  }
  const uint64_t data_start = *fmt::DataStart(header.manifest_length);
  if (data_start > file_size) {
    return DataLoss(path, absl::StrCat("file is truncated: the manifest padding ends at ",
                                       data_start, ", file size ", file_size));
  }
  return header;
}

// The tensors, sorted by offset, cover the file from `data_start` to its end
// but for alignment padding (under kBundleAlignment bytes before each tensor
// and after the last), as BundleWriter lays them out: so the file's size is
// accounted for by the manifest before the file is read (a large file whose
// small manifest declares little is refused from the manifest alone).
absl::Status CheckLayoutCoversFile(const std::string& path,
                                   const std::vector<const v1::TensorEntry*>& by_offset,
                                   uint64_t data_start, uint64_t file_size) {
  uint64_t covered = data_start;
  for (const v1::TensorEntry* entry : by_offset) {
    if (entry->offset() >= covered + kBundleAlignment) {
      return DataLoss(
          path, absl::StrCat(entry->offset() - covered, " bytes before tensor '", entry->name(),
                             "' (at offset ", entry->offset(), ") belong to no tensor"));
    }
    covered = entry->offset() + entry->size_bytes();
  }
  if (file_size >= covered + kBundleAlignment) {
    return DataLoss(
        path, absl::StrCat("file has ", file_size, " bytes, its tensors end at ", covered, " (",
                           file_size - covered, " bytes belong to no tensor)"));
  }
  return absl::OkStatus();
}

// Name, dtype, shape, size, alignment and bounds of every entry; overlaps.
// Fills the name index and the total tensor bytes.
absl::Status CheckTensorTable(const std::string& path, const v1::Manifest& manifest,
                              uint64_t data_start, uint64_t file_size,
                              absl::flat_hash_map<std::string, int>& index,
                              uint64_t& tensor_bytes) {
  tensor_bytes = 0;
  for (int i = 0; i < manifest.tensors_size(); ++i) {
    const v1::TensorEntry& entry = manifest.tensors(i);
    const std::string& name = entry.name();
    if (name.empty()) {
      return Inconsistent(path, absl::StrCat("tensor entry #", i, " has an empty name"));
    }
    if (!index.emplace(name, i).second) {
      return Inconsistent(path, absl::StrCat("tensor name '", name, "' appears more than once"));
    }
    const std::string what = absl::StrCat("tensor '", name, "'");
    const size_t element_size = DTypeSize(entry.dtype());
    if (element_size == 0) {
      return Inconsistent(path, absl::StrCat(what, " has ", DTypeLabel(entry.dtype()),
                                             "; expected DTYPE_FLOAT32, DTYPE_FLOAT64, "
                                             "DTYPE_INT32 or DTYPE_BFLOAT16"));
    }
    absl::StatusOr<uint64_t> expected_bytes = fmt::TensorSizeBytes(entry.shape(), element_size);
    if (!expected_bytes.ok()) {
      return Inconsistent(path, absl::StrCat(what, " ", expected_bytes.status().message()));
    }
    if (*expected_bytes != entry.size_bytes()) {
      return Inconsistent(
          path, absl::StrCat(what, " records size_bytes ", entry.size_bytes(), ", but shape ",
                             ShapeText(entry.shape()), " of ", DTypeLabel(entry.dtype()), " needs ",
                             *expected_bytes));
    }
    if (entry.offset() % kBundleAlignment != 0) {
      return Inconsistent(path, absl::StrCat(what, " offset ", entry.offset(),
                                             " is not a multiple of ", kBundleAlignment));
    }
    if (entry.offset() < data_start) {
      return Inconsistent(path, absl::StrCat(what, " at offset ", entry.offset(),
                                             " overlaps the header and manifest (data starts at ",
                                             data_start, ")"));
    }
    if (entry.offset() > file_size || entry.size_bytes() > file_size - entry.offset()) {
      return Inconsistent(
          path, absl::StrCat(what, " extends past end of file (offset ", entry.offset(), " + ",
                             entry.size_bytes(), " bytes > file size ", file_size, ")"));
    }
    tensor_bytes += entry.size_bytes();  // ≤ file size per tensor, no overlap: no overflow
  }
  std::vector<const v1::TensorEntry*> by_offset;
  for (const v1::TensorEntry& entry : manifest.tensors()) {
    if (entry.size_bytes() > 0) by_offset.push_back(&entry);
  }
  std::sort(
      by_offset.begin(), by_offset.end(),
      [](const v1::TensorEntry* a, const v1::TensorEntry* b) { return a->offset() < b->offset(); });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const v1::TensorEntry& a = *by_offset[i - 1];
    const v1::TensorEntry& b = *by_offset[i];
    if (a.offset() + a.size_bytes() > b.offset()) {
      return Inconsistent(
          path, absl::StrCat("tensors '", a.name(), "' [", a.offset(), ", ",
                             a.offset() + a.size_bytes(), ") and '", b.name(), "' [", b.offset(),
                             ", ", b.offset() + b.size_bytes(), ") overlap"));
    }
  }
  return CheckLayoutCoversFile(path, by_offset, data_start, file_size);
}

// Bytes in [begin, end) must be zero.
absl::Status CheckZeroPadding(const std::string& path, const uint8_t* bytes, uint64_t begin,
                              uint64_t end) {
  for (uint64_t i = begin; i < end; ++i) {
    if (bytes[i] != 0) {
      return DataLoss(path, absl::StrCat("padding byte at offset ", i, " is ",
                                         static_cast<int>(bytes[i]), ", expected 0"));
    }
  }
  return absl::OkStatus();
}

// Zero padding between the sections, then every tensor's CRC-32C.
absl::Status CheckTensorData(const std::string& path, const v1::Manifest& manifest,
                             const uint8_t* bytes, uint64_t manifest_end, uint64_t file_size) {
  std::vector<const v1::TensorEntry*> by_offset;
  for (const v1::TensorEntry& entry : manifest.tensors()) by_offset.push_back(&entry);
  std::sort(
      by_offset.begin(), by_offset.end(),
      [](const v1::TensorEntry* a, const v1::TensorEntry* b) { return a->offset() < b->offset(); });
  uint64_t covered = manifest_end;
  for (const v1::TensorEntry* entry : by_offset) {
    if (entry->offset() > covered) {
      RETURN_IF_ERROR(CheckZeroPadding(path, bytes, covered, entry->offset()));
    }
    covered = std::max(covered, entry->offset() + entry->size_bytes());
  }
  RETURN_IF_ERROR(CheckZeroPadding(path, bytes, covered, file_size));
  for (const v1::TensorEntry& entry : manifest.tensors()) {
    const uint32_t computed =
        Crc32c(bytes + entry.offset(), static_cast<size_t>(entry.size_bytes()));
    if (computed != entry.crc32c()) {
      return DataLoss(path, absl::StrCat("tensor '", entry.name(), "' checksum mismatch (stored ",
                                         Hex32(entry.crc32c()), ", computed ", Hex32(computed),
                                         "); the tensor data is corrupt"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

Bundle::~Bundle() = default;

absl::StatusOr<std::shared_ptr<const Bundle>> Bundle::Open(const std::string& path,
                                                           OpenOptions options) {
  OpenFile file;
  RETURN_IF_ERROR(OpenBundleFile(path, file));
  // The header and the manifest first, each read only once its size was
  // checked against the file: a file that is not a bundle, or whose manifest
  // is corrupt, costs 64 bytes (or the manifest), never the whole file.
  std::array<uint8_t, fmt::kHeaderSize> header_bytes;
  RETURN_IF_ERROR(ReadAt(path, file, 0, fmt::kHeaderSize, header_bytes.data()));
  ASSIGN_OR_RETURN(const fmt::Header header, CheckHeader(path, header_bytes.data(), file.size));
  std::string manifest_bytes(static_cast<size_t>(header.manifest_length), '\0');
  RETURN_IF_ERROR(ReadAt(path, file, fmt::kHeaderSize, header.manifest_length,
                         reinterpret_cast<uint8_t*>(manifest_bytes.data())));
  const uint32_t manifest_crc = Crc32c(manifest_bytes.data(), manifest_bytes.size());
  if (manifest_crc != header.manifest_crc32c) {
    return DataLoss(
        path, absl::StrCat("manifest checksum mismatch (stored ", Hex32(header.manifest_crc32c),
                           ", computed ", Hex32(manifest_crc), "); the manifest is corrupt"));
  }
  std::shared_ptr<Bundle> bundle(new Bundle());
  bundle->path_ = path;
  bundle->file_bytes_ = file.size;
  if (!bundle->manifest_.ParseFromString(manifest_bytes)) {
    return DataLoss(path, absl::StrCat("manifest (", header.manifest_length,
                                       " bytes) does not parse as invariant.v1.Manifest"));
  }
  if (bundle->manifest_.format_version() != header.format_version) {
    return Inconsistent(path,
                        absl::StrCat("manifest format_version ", bundle->manifest_.format_version(),
                                     " disagrees with header version ", header.format_version));
  }
  const uint64_t data_start = *fmt::DataStart(header.manifest_length);
  RETURN_IF_ERROR(CheckTensorTable(path, bundle->manifest_, data_start, file.size,
                                   bundle->index_by_name_, bundle->tensor_bytes_));
  // Then the whole file, once it is known to fit.
  if (options.admit) RETURN_IF_ERROR(options.admit(bundle->manifest_, file.size));
  RETURN_IF_ERROR(CheckFitsInMemory(path, file.size, options));
  ASSIGN_OR_RETURN(std::shared_ptr<Mapping> mapping, ReadWhole(path, file));
  if (std::memcmp(mapping->bytes, header_bytes.data(), header_bytes.size()) != 0 ||
      std::memcmp(mapping->bytes + fmt::kHeaderSize, manifest_bytes.data(),
                  manifest_bytes.size()) != 0) {
    return DataLoss(path, "the header or the manifest changed while the file was being read");
  }
  if (options.verify_tensor_checksums) {
    RETURN_IF_ERROR(CheckTensorData(path, bundle->manifest_, mapping->bytes,
                                    fmt::kHeaderSize + header.manifest_length, file.size));
  }
  bundle->mapping_ = std::move(mapping);
  return std::shared_ptr<const Bundle>(std::move(bundle));
}

bool Bundle::Has(absl::string_view name) const { return index_by_name_.contains(name); }

absl::StatusOr<const v1::TensorEntry*> Bundle::Entry(absl::string_view name) const {
  const auto it = index_by_name_.find(name);
  if (it == index_by_name_.end()) {
    std::vector<absl::string_view> names;
    for (const v1::TensorEntry& entry : manifest_.tensors()) names.push_back(entry.name());
    std::sort(names.begin(), names.end());
    return absl::NotFoundError(absl::StrCat(path_, ": no tensor named '", name,
                                            "' (bundle holds: ", absl::StrJoin(names, ", "), ")"));
  }
  return &manifest_.tensors(it->second);
}

absl::StatusOr<Bundle::View2D> Bundle::Locate(absl::string_view name, v1::DType dtype, int64_t rows,
                                              int64_t cols) const {
  ASSIGN_OR_RETURN(const v1::TensorEntry* entry, Entry(name));
  if (entry->dtype() != dtype) {
    return Inconsistent(path_,
                        absl::StrCat("tensor '", name, "' has dtype ", DTypeLabel(entry->dtype()),
                                     ", expected ", DTypeLabel(dtype)));
  }
  // Partial products fit in int64 (checked by TensorSizeBytes at Open).
  View2D view{mapping_->bytes + entry->offset(), 1, 1};
  const int rank = entry->shape_size();
  if (rank >= 1) view.cols = entry->shape(rank - 1);
  for (int axis = 0; axis + 1 < rank; ++axis) view.rows *= entry->shape(axis);
  if ((rows >= 0 && view.rows != rows) || (cols >= 0 && view.cols != cols)) {
    const auto extent = [](int64_t n) { return n >= 0 ? absl::StrCat(n) : std::string("any"); };
    return Inconsistent(
        path_,
        absl::StrCat("tensor '", name, "' has shape ", ShapeText(entry->shape()), " (", view.rows,
                     " × ", view.cols, "), expected ", extent(rows), " × ", extent(cols)));
  }
  return view;
}

template <typename T>
absl::StatusOr<Array2D<T>> Bundle::Typed(absl::string_view name, v1::DType dtype, int64_t rows,
                                         int64_t cols) const {
  ASSIGN_OR_RETURN(const View2D view, Locate(name, dtype, rows, cols));
  return Array2D<T>::View(static_cast<const T*>(view.data), view.rows, view.cols, mapping_);
}

absl::StatusOr<FloatMatrix> Bundle::Float(absl::string_view name) const {
  return Typed<float>(name, v1::DTYPE_FLOAT32, -1, -1);
}
absl::StatusOr<DoubleMatrix> Bundle::Double(absl::string_view name) const {
  return Typed<double>(name, v1::DTYPE_FLOAT64, -1, -1);
}
absl::StatusOr<IntMatrix> Bundle::Int32(absl::string_view name) const {
  return Typed<int32_t>(name, v1::DTYPE_INT32, -1, -1);
}
absl::StatusOr<Bf16Matrix> Bundle::Bf16(absl::string_view name) const {
  return Typed<uint16_t>(name, v1::DTYPE_BFLOAT16, -1, -1);
}
absl::StatusOr<FloatMatrix> Bundle::Float(absl::string_view name, int64_t rows,
                                          int64_t cols) const {
  return Typed<float>(name, v1::DTYPE_FLOAT32, rows, cols);
}
absl::StatusOr<DoubleMatrix> Bundle::Double(absl::string_view name, int64_t rows,
                                            int64_t cols) const {
  return Typed<double>(name, v1::DTYPE_FLOAT64, rows, cols);
}
absl::StatusOr<IntMatrix> Bundle::Int32(absl::string_view name, int64_t rows, int64_t cols) const {
  return Typed<int32_t>(name, v1::DTYPE_INT32, rows, cols);
}

}  // namespace invariant
