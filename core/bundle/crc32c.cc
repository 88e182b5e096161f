// crc32c.cc: slicing-by-8 tables and the SSE4.2 path, chosen once at run time.
#include "core/bundle/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define INVARIANT_CRC32C_HAVE_SSE42_PATH 1
#else
#define INVARIANT_CRC32C_HAVE_SSE42_PATH 0
#endif

namespace invariant {
namespace {

constexpr uint32_t kCastagnoliReflected = 0x82F63B78u;

// tables[k][b]: the CRC register after byte b followed by k zero bytes.
using SliceTables = std::array<std::array<uint32_t, 256>, 8>;

constexpr SliceTables MakeSliceTables() {
  SliceTables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kCastagnoliReflected : 0u);
    tables[0][b] = crc;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      const uint32_t prev = tables[k - 1][b];
      tables[k][b] = (prev >> 8) ^ tables[0][prev & 0xFFu];
    }
  }
  return tables;
}

constexpr SliceTables kTables = MakeSliceTables();

// `crc` is the raw register (already inverted by the caller).
uint32_t UpdatePortable(uint32_t crc, const uint8_t* p, size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0) {
    crc = kTables[0][(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
    --n;
  }
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // little-endian host (bundle.h refuses others)
    const uint32_t lo = static_cast<uint32_t>(word) ^ crc;
    const uint32_t hi = static_cast<uint32_t>(word >> 32);
    crc = kTables[7][lo & 0xFFu] ^ kTables[6][(lo >> 8) & 0xFFu] ^ kTables[5][(lo >> 16) & 0xFFu] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xFFu] ^ kTables[2][(hi >> 8) & 0xFFu] ^
          kTables[1][(hi >> 16) & 0xFFu] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    crc = kTables[0][(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
    --n;
  }
  return crc;
}

#if INVARIANT_CRC32C_HAVE_SSE42_PATH
__attribute__((target("sse4.2"))) uint32_t UpdateSse42(uint32_t crc, const uint8_t* p, size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0) {
    crc = _mm_crc32_u8(crc, *p++);
    --n;
  }
  uint64_t crc64 = crc;
  while (n >= 32) {
    uint64_t w[4];
    std::memcpy(w, p, 32);
    crc64 = _mm_crc32_u64(crc64, w[0]);
    crc64 = _mm_crc32_u64(crc64, w[1]);
    crc64 = _mm_crc32_u64(crc64, w[2]);
    crc64 = _mm_crc32_u64(crc64, w[3]);
    p += 32;
    n -= 32;
  }
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    crc64 = _mm_crc32_u64(crc64, w);
    p += 8;
    n -= 8;
  }
  crc = static_cast<uint32_t>(crc64);
  while (n > 0) {
    crc = _mm_crc32_u8(crc, *p++);
    --n;
  }
  return crc;
}
#endif

bool DetectSse42() {
#if INVARIANT_CRC32C_HAVE_SSE42_PATH
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

}  // namespace

bool Crc32cIsHardwareAccelerated() {
  static const bool has_sse42 = DetectSse42();
  return has_sse42;
}

uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t size) {
  if (size == 0) return crc;
  return ~UpdatePortable(~crc, static_cast<const uint8_t*>(data), size);
}

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size) {
  if (size == 0) return crc;
#if INVARIANT_CRC32C_HAVE_SSE42_PATH
  if (Crc32cIsHardwareAccelerated()) {
    return ~UpdateSse42(~crc, static_cast<const uint8_t*>(data), size);
  }
#endif
  return ~UpdatePortable(~crc, static_cast<const uint8_t*>(data), size);
}

uint32_t Crc32c(const void* data, size_t size) { return Crc32cExtend(0, data, size); }

}  // namespace invariant
