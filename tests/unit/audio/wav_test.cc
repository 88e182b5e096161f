#include "core/audio/wav.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/audio/wav_test_files.h"

namespace invariant::audio {
namespace {

using ::testing::HasSubstr;

std::string Pcm16(std::initializer_list<int16_t> values) {
  std::string out;
  for (const int16_t v : values) PutLe(out, static_cast<uint16_t>(v), 2);
  return out;
}

void ExpectRefused(const std::string& bytes, const std::string& words, int64_t max_samples = 1000) {
  const auto clip = DecodeWav(bytes, max_samples, "clips[2].wav");
  ASSERT_FALSE(clip.ok()) << words;
  EXPECT_EQ(clip.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(clip.status().message(), HasSubstr("clips[2].wav: "));
  EXPECT_THAT(clip.status().message(), HasSubstr(words));
}

TEST(WavTest, Encode16RoundTripsExactlyAtMultiplesOfOneOver32768) {
  Clip clip;
  clip.sample_rate = 16000;
  for (int i = 0; i < 1000; ++i) clip.samples.push_back(((i * 37) % 65536 - 32768) / 32768.0f);
  const std::string bytes = EncodeWav16(clip);
  EXPECT_EQ(bytes.size(), 44u + 2 * 1000);
  const auto decoded = DecodeWav(bytes, 1000, "x");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->sample_rate, 16000);
  EXPECT_EQ(decoded->samples, clip.samples);
}

TEST(WavTest, Encode16ClipsToTheInt16Range) {
  Clip clip{8000, {2.0f, -2.0f, 1.0f, std::numeric_limits<float>::quiet_NaN()}};
  const auto decoded = DecodeWav(EncodeWav16(clip), 10, "x");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->samples, (std::vector<float>{32767 / 32768.0f, -1.0f, 32767 / 32768.0f, 0}));
}

TEST(WavTest, AveragesChannels) {
  const std::string bytes = WavBytes(1, 2, 8000, 16, Pcm16({1000, 3000, -4000, 0}));
  const auto clip = DecodeWav(bytes, 10, "x");
  ASSERT_TRUE(clip.ok()) << clip.status();
  EXPECT_EQ(clip->samples, (std::vector<float>{2000 / 32768.0f, -2000 / 32768.0f}));
}

TEST(WavTest, DecodesUnsigned8Bit) {
  const std::string data = {'\x80', '\x00', '\xFF', '\xC0'};
  const auto clip = DecodeWav(WavBytes(1, 1, 8000, 8, data), 10, "x");
  ASSERT_TRUE(clip.ok()) << clip.status();
  EXPECT_EQ(clip->samples, (std::vector<float>{0.0f, -1.0f, 127 / 128.0f, 0.5f}));
}

TEST(WavTest, Decodes24Bit) {
  std::string data;
  for (const int32_t v : {1, -1, 8388607, -8388608, 4194304})
    PutLe(data, static_cast<uint32_t>(v), 3);
  const auto clip = DecodeWav(WavBytes(1, 1, 44100, 24, data), 10, "x");
  ASSERT_TRUE(clip.ok()) << clip.status();
  const float s = 1.0f / 8388608.0f;
  EXPECT_EQ(clip->samples, (std::vector<float>{s, -s, 8388607 * s, -1.0f, 0.5f}));
}

TEST(WavTest, DecodesFloatAsItIs) {
  const auto clip = DecodeWav(WavBytes(3, 1, 22050, 32, FloatBytes({0.25f, -1.5f, 3.0f})), 10, "x");
  ASSERT_TRUE(clip.ok()) << clip.status();
  EXPECT_EQ(clip->sample_rate, 22050);
  EXPECT_EQ(clip->samples, (std::vector<float>{0.25f, -1.5f, 3.0f}));
}

TEST(WavTest, RefusesWhatIsNotAWav) {
  ExpectRefused("hello, this is not a sound file at all", "not a WAV file");
  ExpectRefused(std::string("OggS\0\0\0\0\0\0\0\0\0\0\0\0", 16), "not a WAV file");
  ExpectRefused(std::string("RIFF\x10\0\0\0AVI LIST\0\0\0\0", 20), "not a WAV file");
  ExpectRefused("", "not a WAV file");
}

TEST(WavTest, RefusesATruncatedHeader) {
  ExpectRefused("RIFF", "truncated WAV header");
  ExpectRefused(std::string("RIFF\x24\0\0\0WA", 10), "truncated WAV header");
  const std::string whole = WavBytes(1, 1, 8000, 16, Pcm16({1, 2, 3}));
  ExpectRefused(whole.substr(0, 20), "truncated or malformed WAV header");
}

TEST(WavTest, RefusesTruncatedData) {
  const std::string bytes = WavBytes(1, 1, 8000, 16, Pcm16({1, 2, 3, 4}), 2 * 100);
  ExpectRefused(bytes, "truncated: the header says 100 samples, the file holds 4");
}

TEST(WavTest, RefusesCompressedFormats) {
  // IMA ADPCM (0x11): 4 bits a sample, 256-byte blocks of 505 samples.
  std::string extra;
  PutLe(extra, 2, 2);    // cbSize
  PutLe(extra, 505, 2);  // samples per block
  const std::string bytes =
      WavBytes(0x11, 1, 8000, 4, std::string(256, '\0'), std::nullopt, extra, /*block_align=*/256);
  ExpectRefused(bytes, "unsupported sample format");
}

TEST(WavTest, AStreamedDataSizeMeansToTheEndOfTheFile) {
  const auto clip =
      DecodeWav(WavBytes(1, 1, 8000, 16, Pcm16({16384, -16384, 0}), 0xFFFFFFFFu), 10, "x");
  ASSERT_TRUE(clip.ok()) << clip.status();
  EXPECT_EQ(clip->samples, (std::vector<float>{0.5f, -0.5f, 0.0f}));
}

// An RF64 file: the sizes are in the ds64 chunk, the data chunk says 0xFFFFFFFF.
std::string Rf64(const std::string& data, uint64_t declared_data) {
  const std::string riff = WavBytes(1, 1, 8000, 16, data);
  std::string out = "RF64";
  PutLe(out, 0xFFFFFFFFu, 4);
  out += "WAVEds64";
  PutLe(out, 28, 4);
  PutLe(out, 4 + 36 + 24 + 8 + data.size(), 8);  // RIFF size
  PutLe(out, declared_data, 8);                  // data size
  PutLe(out, declared_data / 2, 8);              // sample count
  PutLe(out, 0, 4);                              // table length
  out += riff.substr(12, 24);                    // the fmt chunk
  out += "data";
  PutLe(out, 0xFFFFFFFFu, 4);
  return out + data;
}

TEST(WavTest, ReadsRf64AndChecksItsDs64Size) {
  const std::string data = Pcm16({16384, -8192});
  const auto clip = DecodeWav(Rf64(data, 4), 10, "x");
  ASSERT_TRUE(clip.ok()) << clip.status();
  EXPECT_EQ(clip->samples, (std::vector<float>{0.5f, -0.25f}));
  ExpectRefused(Rf64(data, 2000), "truncated: the header says 1000 samples, the file holds 2");
}

TEST(WavTest, RefusesZeroSamples) { ExpectRefused(WavBytes(1, 1, 8000, 16, ""), "zero samples"); }

TEST(WavTest, RefusesMoreSamplesThanAllowedBeforeReadingThem) {
  // The header claims 2^30 bytes: refused for its length, not as truncated,
  // and nothing of that size is allocated.
  ExpectRefused(WavBytes(1, 1, 8000, 16, Pcm16({1, 2}), 1u << 30),
                "too many samples: the header says 536870912 per channel, at most 1000");
  ExpectRefused(WavBytes(1, 1, 8000, 16, Pcm16({1, 2, 3})), "at most 2", /*max_samples=*/2);
  EXPECT_TRUE(DecodeWav(WavBytes(1, 1, 8000, 16, Pcm16({1, 2, 3})), 3, "x").ok());
}

TEST(WavTest, RefusesNonFiniteSamples) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  ExpectRefused(WavBytes(3, 1, 8000, 32, FloatBytes({0.5f, nan})), "sample 1 is NaN or infinite");
  ExpectRefused(WavBytes(3, 1, 8000, 32, FloatBytes({-inf, 0.5f})), "sample 0 is NaN");
}

TEST(WavTest, RefusesRatesOutsideTheRange) {
  ExpectRefused(WavBytes(1, 1, 500, 16, Pcm16({1, 2})),
                "sample rate 500 Hz outside [1000, 384000]");
  ExpectRefused(WavBytes(1, 1, 400000, 16, Pcm16({1, 2})), "sample rate 400000 Hz");
}

TEST(WavTest, ReadsFilesAndSaysWhichOneIsMissing) {
  const std::string path = ::testing::TempDir() + "/wav_test_read.wav";
  {
    std::ofstream out(path, std::ios::binary);
    out << EncodeWav16(Clip{8000, {0.5f, -0.25f}});
  }
  const auto clip = ReadWavFile(path, 10);
  ASSERT_TRUE(clip.ok()) << clip.status();
  EXPECT_EQ(clip->samples, (std::vector<float>{0.5f, -0.25f}));
  const auto missing = ReadWavFile(path + ".missing", 10);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr(path + ".missing"));
  const auto refused = ReadWavFile(path, 1);
  EXPECT_THAT(refused.status().message(), HasSubstr(path + ": too many samples"));
}

}  // namespace
}  // namespace invariant::audio
