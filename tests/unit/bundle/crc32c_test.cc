#include "core/bundle/crc32c.h"

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/random.h"
#include "gtest/gtest.h"

namespace invariant {
namespace {

TEST(Crc32cTest, KnownAnswers) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c(nullptr, 0), 0u);
  // RFC 3720 (iSCSI) appendix B.4.
  std::vector<uint8_t> bytes(32, 0x00);
  EXPECT_EQ(Crc32c(bytes.data(), bytes.size()), 0x8A9136AAu);
  bytes.assign(32, 0xFF);
  EXPECT_EQ(Crc32c(bytes.data(), bytes.size()), 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(Crc32c(bytes.data(), bytes.size()), 0x46DD794Eu);
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<uint8_t>(31 - i);
  EXPECT_EQ(Crc32c(bytes.data(), bytes.size()), 0x113FDB5Cu);
}

TEST(Crc32cTest, PortableMatchesKnownAnswer) {
  EXPECT_EQ(Crc32cExtendPortable(0, "123456789", 9), 0xE3069283u);
}

TEST(Crc32cTest, PortableAndDispatchedAgreeAtEveryLengthAndAlignment) {
  Rng rng(7);
  std::vector<uint8_t> buffer(600);
  for (uint8_t& b : buffer) b = static_cast<uint8_t>(rng.UniformInt(256));
  for (size_t start = 0; start < 8; ++start) {
    for (size_t length = 0; length + start <= 300; ++length) {
      ASSERT_EQ(Crc32c(buffer.data() + start, length),
                Crc32cExtendPortable(0, buffer.data() + start, length))
          << "start " << start << " length " << length;
    }
  }
}

TEST(Crc32cTest, ExtendEqualsWholeBufferAtEverySplit) {
  const std::string text = "The quick brown fox jumps over the lazy dog, twice over.";
  const uint32_t whole = Crc32c(text.data(), text.size());
  for (size_t split = 0; split <= text.size(); ++split) {
    const uint32_t head = Crc32c(text.data(), split);
    EXPECT_EQ(Crc32cExtend(head, text.data() + split, text.size() - split), whole) << split;
    EXPECT_EQ(Crc32cExtendPortable(Crc32cExtendPortable(0, text.data(), split), text.data() + split,
                                   text.size() - split),
              whole)
        << split;
  }
}

TEST(Crc32cTest, DetectsEverySingleBitFlip) {
  Rng rng(11);
  std::vector<uint8_t> buffer(97);
  for (uint8_t& b : buffer) b = static_cast<uint8_t>(rng.UniformInt(256));
  const uint32_t clean = Crc32c(buffer.data(), buffer.size());
  for (size_t i = 0; i < buffer.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      buffer[i] ^= static_cast<uint8_t>(1u << bit);
      EXPECT_NE(Crc32c(buffer.data(), buffer.size()), clean) << "byte " << i << " bit " << bit;
      buffer[i] ^= static_cast<uint8_t>(1u << bit);
    }
  }
}

TEST(Crc32cTest, LargeBufferMatchesPortable) {
  Rng rng(3);
  std::vector<uint64_t> words((size_t{8} << 20) / 8 + 3);
  for (uint64_t& w : words) w = rng.NextU64();
  const size_t bytes = words.size() * 8 - 5;
  EXPECT_EQ(Crc32c(words.data(), bytes), Crc32cExtendPortable(0, words.data(), bytes));
}

}  // namespace
}  // namespace invariant
