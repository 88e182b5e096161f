// crc32c.h: CRC-32C (Castagnoli), the checksum of every bundle section.
//
// CRC-32C uses the reflected polynomial 0x82F63B78 with initial value and final
// XOR 0xFFFFFFFF (the iSCSI / ext4 / LevelDB convention), so
// Crc32c("123456789") == 0xE3069283. On x86-64 CPUs with SSE4.2 (detected at
// run time) the hardware crc32 instruction is used (several GB/s); elsewhere a
// table-driven slicing-by-8 loop (about 1–2 GB/s). Both paths return identical values. All
// functions are pure and thread-safe.
#ifndef INVARIANT_CORE_BUNDLE_CRC32C_H_
#define INVARIANT_CORE_BUNDLE_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace invariant {

// CRC-32C of the `size` bytes at `data` (`data` may be null when size == 0).
uint32_t Crc32c(const void* data, size_t size);

// Continues a checksum: Crc32cExtend(Crc32c(a), b) == Crc32c(a ‖ b), and
// Crc32cExtend(0, b) == Crc32c(b).
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size);

// The portable slicing-by-8 implementation, exposed so tests can check that it
// agrees with the hardware path. Same contract as Crc32cExtend.
uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t size);

// True when Crc32cExtend uses the SSE4.2 crc32 instruction on this CPU.
bool Crc32cIsHardwareAccelerated();

}  // namespace invariant

#endif  // INVARIANT_CORE_BUNDLE_CRC32C_H_
