// bundle_fuzz.cc: libFuzzer target for Bundle::Open on arbitrary file bytes.
//
// Input: one control byte, then the file. Control bit 0 re-seals the header
// and manifest CRCs (when the claimed manifest length fits), so mutations get
// past the checksums into the manifest parser and the tensor-table checks;
// bit 1 skips tensor checksums. Every open must return a status (never crash,
// never read outside the file), and every tensor of an accepted bundle must be
// readable through its accessor. The file lives in a memfd, not on disk.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/bundle/bundle.h"
#include "core/bundle/bundle_format.h"
#include "core/bundle/crc32c.h"

namespace {

namespace fmt = invariant::bundle_format;

int MemFile() {
  static const int fd = ::memfd_create("bundle_fuzz", 0);
  if (fd < 0) std::abort();
  return fd;
}

void Reseal(std::string& file) {
  if (file.size() < fmt::kHeaderSize) return;
  uint8_t* bytes = reinterpret_cast<uint8_t*>(file.data());
  const fmt::Header header = fmt::DecodeHeaderFields(bytes);
  if (header.manifest_length <= file.size() - fmt::kHeaderSize) {
    const uint32_t crc =
        invariant::Crc32c(bytes + fmt::kHeaderSize, static_cast<size_t>(header.manifest_length));
    std::memcpy(bytes + fmt::kManifestCrcOffset, &crc, sizeof(crc));
  }
  const uint64_t length = file.size();
  std::memcpy(bytes + fmt::kFileLengthOffset, &length, sizeof(length));
  const uint32_t header_crc = fmt::ComputeHeaderCrc(bytes);
  std::memcpy(bytes + fmt::kHeaderCrcOffset, &header_crc, sizeof(header_crc));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  std::string file(reinterpret_cast<const char*>(data + 1), size - 1);
  if (control & 1) Reseal(file);
  const int fd = MemFile();
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, file.data(), file.size(), 0) != static_cast<ssize_t>(file.size())) {
    std::abort();
  }
  invariant::OpenOptions options;
  options.verify_tensor_checksums = (control & 2) == 0;
  const auto bundle = invariant::Bundle::Open("/proc/self/fd/" + std::to_string(fd), options);
  if (!bundle.ok()) {
    if (bundle.status().message().empty()) std::abort();
    return 0;
  }
  volatile double sink = 0;
  for (const invariant::v1::TensorEntry& entry : (*bundle)->manifest().tensors()) {
    switch (entry.dtype()) {
      case invariant::v1::DTYPE_FLOAT32: {
        auto m = (*bundle)->Float(entry.name());
        if (!m.ok()) std::abort();
        if (!m->empty()) sink = sink + m->data()[m->size() - 1] + m->data()[0];
        break;
      }
      case invariant::v1::DTYPE_FLOAT64: {
        auto m = (*bundle)->Double(entry.name());
        if (!m.ok()) std::abort();
        if (!m->empty()) sink = sink + m->data()[m->size() - 1] + m->data()[0];
        break;
      }
      case invariant::v1::DTYPE_INT32: {
        auto m = (*bundle)->Int32(entry.name());
        if (!m.ok()) std::abort();
        if (!m->empty()) sink = sink + m->data()[m->size() - 1] + m->data()[0];
        break;
      }
      default:
        std::abort();  // Open must have rejected an unknown dtype
    }
  }
  return 0;
}
