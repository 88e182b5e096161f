#include "tests/fuzz/fuzz_util.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/bundle/bundle_format.h"
#include "core/bundle/crc32c.h"

namespace invariant::fuzz {
namespace {

constexpr int kSlots = 4;

int MemFile(int slot) {
  static int fds[kSlots] = {-1, -1, -1, -1};
  if (slot < 0 || slot >= kSlots) std::abort();
  if (fds[slot] < 0) fds[slot] = ::memfd_create("invariant_fuzz", 0);
  if (fds[slot] < 0) std::abort();
  return fds[slot];
}

}  // namespace

std::string WriteMemFile(int slot, const std::string& bytes) {
  const int fd = MemFile(slot);
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
    std::abort();
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

void ResealBundle(std::string& file) {
  namespace fmt = bundle_format;
  if (file.size() < fmt::kHeaderSize) return;
  uint8_t* bytes = reinterpret_cast<uint8_t*>(file.data());
  const fmt::Header header = fmt::DecodeHeaderFields(bytes);
  if (header.manifest_length <= file.size() - fmt::kHeaderSize) {
    const uint32_t crc =
        Crc32c(bytes + fmt::kHeaderSize, static_cast<size_t>(header.manifest_length));
    std::memcpy(bytes + fmt::kManifestCrcOffset, &crc, sizeof(crc));
  }
  const uint64_t length = file.size();
  std::memcpy(bytes + fmt::kFileLengthOffset, &length, sizeof(length));
  const uint32_t header_crc = fmt::ComputeHeaderCrc(bytes);
  std::memcpy(bytes + fmt::kHeaderCrcOffset, &header_crc, sizeof(header_crc));
}

void Check(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz property violated: %s\n", what);
  std::abort();
}

}  // namespace invariant::fuzz
