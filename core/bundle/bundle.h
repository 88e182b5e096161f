// bundle.h: the bundle file — one model version on disk.
//
// A bundle is one file: a fixed 64-byte header, the serialized
// `invariant.v1.Manifest`, then the tensors, each at a 64-byte-aligned offset.
// Every byte is covered by a check: the header and the manifest by their own
// CRC-32C, each tensor by the CRC-32C in its TensorEntry, and the padding must
// be zero. All integers are little-endian; big-endian hosts are refused at
// compile time.
//
// Byte layout (format version 1):
//
//   offset  size  field
//   0       8     magic "INVBNDL\0"
//   8       4     uint32 format_version (= kBundleFormatVersion = 1)
//   12      4     uint32 CRC-32C of the manifest bytes
//   16      8     uint64 manifest_length M (bytes of the serialized manifest)
//   24      8     uint64 file_length (total bytes of the file, for truncation)
//   32      28    reserved, zero
//   60      4     uint32 CRC-32C of header bytes [0, 60)
//   64      M     serialized invariant.v1.Manifest (proto3 wire format)
//   64+M    ..    zero padding up to D = RoundUp64(64 + M), the data start
//   D       ..    tensors, in the order of Manifest.tensors: tensor i lies at
//                 TensorEntry.offset (a multiple of 64, ≥ D) and spans
//                 TensorEntry.size_bytes = product(shape) · sizeof(dtype)
//                 bytes of row-major little-endian values; the gaps between
//                 tensors are zero padding; the file ends at the end of the
//                 last tensor (or at D when there is none).
//
// The magic, version, and header CRC positions are fixed for every future
// version, so a reader can always tell "not a bundle" (bad magic), "corrupt"
// (bad checksum) and "newer format" (valid header, other version) apart.
//
// Reading copies the file once into memory the process owns (an anonymous
// mapping, made read-only after the copy) and validates that copy; tensors are
// served as views into it, never copied again, and each view keeps it alive.
// A loaded bundle is immutable: overwriting, truncating or deleting the file
// afterwards cannot change or invalidate it (a shared file mapping would show
// the new bytes, or raise SIGBUS past a truncated end). Writers replace
// bundles atomically (temporary file + fsync + rename); a reader that wants
// the new bits opens the file again.
#ifndef INVARIANT_CORE_BUNDLE_BUNDLE_H_
#define INVARIANT_CORE_BUNDLE_BUNDLE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/base/tensor.h"
#include "invariant/v1/bundle.pb.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "invariant bundles store little-endian tensors; big-endian hosts are not supported"
#endif

namespace invariant {

namespace bundle_internal {
struct Mapping;  // the private read-only copy of one file (bundle_reader.cc)
}  // namespace bundle_internal

// The bundle format version this build writes and reads.
inline constexpr uint32_t kBundleFormatVersion = 1;
// Alignment of the data start and of every tensor offset, in bytes.
inline constexpr uint64_t kBundleAlignment = 64;

// One tensor to write: `data` points at product(shape) values of `dtype`,
// row-major, and must stay valid during WriteBundle. A tensor with a zero
// dimension has no bytes and `data` may be null.
struct TensorRef {
  std::string name;  // unique within the bundle, e.g. "encoder/bank"
  v1::DType dtype = v1::DTYPE_UNSPECIFIED;
  std::vector<int64_t> shape;  // row-major; empty = scalar (one value)
  const void* data = nullptr;
};

// Size in bytes of one value of `dtype`, or 0 for an unknown dtype.
size_t DTypeSize(v1::DType dtype);

// Writes a bundle holding `manifest` and `tensors` to `path`, atomically: a
// temporary file in the same directory is written, fsync'ed and renamed over
// `path`, then the directory is fsync'ed; on failure `path` is untouched and
// the temporary file removed. Sets manifest.format_version to
// kBundleFormatVersion and replaces manifest.tensors with one entry per
// tensor (dtype, shape, offset, size_bytes, crc32c), in the given order.
// Errors: INVALID_ARGUMENT for a tensor with an empty or duplicate name, an
// unknown dtype, a negative dimension, a size that overflows 64 bits, or null
// data with a non-zero size (the message names the tensor); the errno-derived
// code (NOT_FOUND, PERMISSION_DENIED, RESOURCE_EXHAUSTED, ...) for I/O
// failures, naming the path.
absl::Status WriteBundle(const std::string& path, v1::Manifest manifest,
                         const std::vector<TensorRef>& tensors);

// How Bundle::Open checks a file.
struct OpenOptions {
  // Verify every tensor CRC-32C and that padding is zero (one more pass over
  // the copy). The header and the manifest are always verified. Turn off
  // only in tests and benchmarks that measure reading alone.
  bool verify_tensor_checksums = true;
  // > 0: a file larger than this is refused (RESOURCE_EXHAUSTED) once its
  // header and manifest are checked, before it is read.
  uint64_t max_file_bytes = 0;
  // Refuse (RESOURCE_EXHAUSTED) a file larger than the memory the process
  // can still get (MemAvailable, and a cgroup's memory.max less its
  // memory.current): the copy would be an OOM kill.
  bool check_available_memory = true;
  // Called once the header, the manifest and the tensor table are checked,
  // before the file is read: its error (e.g. a memory budget's refusal) is
  // Open's, and the file is never read. May be empty.
  std::function<absl::Status(const v1::Manifest& manifest, uint64_t file_bytes)> admit;
};

// A bundle file read into private read-only memory. Immutable and thread-safe after Open;
// shared as std::shared_ptr<const Bundle>. Tensor views returned by the
// accessors keep the mapping alive on their own, so they stay valid after the
// last Bundle handle is dropped.
class Bundle {
 public:
  // Reads and validates the bundle at `path`. Every error message starts with
  // "<path>: " and names the problem, the expected and the found value.
  // Codes:
  //   NOT_FOUND            the file does not exist
  //   FAILED_PRECONDITION  `path` is a directory or not a regular file, or the
  //                        header is intact but its format version is not
  //                        kBundleFormatVersion
  //   DATA_LOSS            empty, truncated or over-long file, bad magic,
  //                        header or manifest or tensor checksum mismatch,
  //                        manifest that does not parse, nonzero padding
  //   INVALID_ARGUMENT     tensor table inconsistent with itself or the file:
  //                        empty/duplicate name, unknown dtype, negative
  //                        dimension, shape·sizeof overflowing or differing
  //                        from size_bytes, unaligned offset, tensor
  //                        overlapping the manifest, another tensor or the
  //                        end of file; manifest format_version disagreeing
  //                        with the header
  //   RESOURCE_EXHAUSTED   the file is larger than OpenOptions allow, or
  //                        than the memory available (checked before it is read)
  //   other                errno-derived codes from open/fstat/read/mmap
  // Claimed sizes are checked against the real file size before anything is
  // allocated or parsed; the header and the manifest are read and checked
  // before the rest of the file (a 3 GiB file that is not a bundle costs 64
  // bytes); no input makes Open crash.
  static absl::StatusOr<std::shared_ptr<const Bundle>> Open(const std::string& path,
                                                            OpenOptions options = {});

  ~Bundle();
  Bundle(const Bundle&) = delete;
  Bundle& operator=(const Bundle&) = delete;

  const std::string& path() const { return path_; }
  // The parsed manifest, including the tensor table.
  const v1::Manifest& manifest() const { return manifest_; }
  // Size of the bundle file in bytes.
  uint64_t file_bytes() const { return file_bytes_; }
  // Sum of size_bytes over all tensors.
  uint64_t tensor_bytes() const { return tensor_bytes_; }

  // True when the bundle holds a tensor called `name`.
  bool Has(absl::string_view name) const;
  // The table entry of tensor `name`; NOT_FOUND naming the tensor otherwise.
  absl::StatusOr<const v1::TensorEntry*> Entry(absl::string_view name) const;

  // 2-D read-only views over the bundle's memory. Rank 2 tensors keep their shape;
  // rank 1 [n] is 1 × n; rank 0 is 1 × 1; rank k > 2 is
  // product(shape[0..k-1)) × shape[k-1]. Errors: NOT_FOUND (no such tensor),
  // INVALID_ARGUMENT (the tensor has another dtype), both naming the tensor.
  absl::StatusOr<FloatMatrix> Float(absl::string_view name) const;
  absl::StatusOr<DoubleMatrix> Double(absl::string_view name) const;
  absl::StatusOr<IntMatrix> Int32(absl::string_view name) const;
  // DTYPE_BFLOAT16: the raw bfloat16 bits (Bf16Value in core/base/bf16.h widens).
  absl::StatusOr<Bf16Matrix> Bf16(absl::string_view name) const;

  // As above, and the 2-D view must be rows × cols (a negative value accepts
  // any extent); otherwise INVALID_ARGUMENT naming the tensor, the expected
  // and the found shape.
  absl::StatusOr<FloatMatrix> Float(absl::string_view name, int64_t rows, int64_t cols) const;
  absl::StatusOr<DoubleMatrix> Double(absl::string_view name, int64_t rows, int64_t cols) const;
  absl::StatusOr<IntMatrix> Int32(absl::string_view name, int64_t rows, int64_t cols) const;

 private:
  Bundle() = default;

  // Finds `name`, checks its dtype and the expected extents; returns the
  // entry and its 2-D extents.
  struct View2D {
    const void* data;
    int64_t rows;
    int64_t cols;
  };
  absl::StatusOr<View2D> Locate(absl::string_view name, v1::DType dtype, int64_t rows,
                                int64_t cols) const;
  template <typename T>
  absl::StatusOr<Array2D<T>> Typed(absl::string_view name, v1::DType dtype, int64_t rows,
                                   int64_t cols) const;

  std::string path_;
  v1::Manifest manifest_;
  uint64_t file_bytes_ = 0;
  uint64_t tensor_bytes_ = 0;
  std::shared_ptr<const bundle_internal::Mapping> mapping_;
  absl::flat_hash_map<std::string, int> index_by_name_;
};

}  // namespace invariant

#endif  // INVARIANT_CORE_BUNDLE_BUNDLE_H_
