#include "tests/test_models/test_images.h"

#include <spng.h>
#include <turbojpeg.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/base/random.h"

namespace invariant::testing_images {
namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "test_images: %s\n", what.c_str());
  std::abort();
}

void PutU32(std::string& s, uint32_t v) {
  for (int i = 3; i >= 0; --i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void PutChunk(std::string& png, const char* type, const std::string& data) {
  PutU32(png, static_cast<uint32_t>(data.size()));
  const std::string body = std::string(type, 4) + data;
  png += body;
  PutU32(png, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()),
                                          static_cast<uInt>(body.size()))));
}

std::string Compress(const unsigned char* data, int width, int height, int format, int subsampling,
                     int quality, int flags) {
  tjhandle tj = tjInitCompress();
  if (tj == nullptr) Die("tjInitCompress");
  unsigned char* out = nullptr;
  unsigned long size = 0;
  if (tjCompress2(tj, data, width, 0, height, format, &out, &size, subsampling, quality, flags) !=
      0) {
    Die(std::string("tjCompress2: ") + tjGetErrorStr2(tj));
  }
  std::string jpeg(reinterpret_cast<const char*>(out), size);
  tjFree(out);
  tjDestroy(tj);
  return jpeg;
}

std::string EncodeWith(const spng_ihdr& ihdr, const std::vector<uint8_t>& data,
                       const spng_plte* plte, const std::string& exif) {
  spng_ctx* enc = spng_ctx_new(SPNG_CTX_ENCODER);
  spng_set_option(enc, SPNG_ENCODE_TO_BUFFER, 1);
  spng_ihdr h = ihdr;
  if (int e = spng_set_ihdr(enc, &h); e != 0)
    Die(std::string("spng_set_ihdr: ") + spng_strerror(e));
  if (plte != nullptr) {
    spng_plte p = *plte;
    spng_set_plte(enc, &p);
  }
  if (!exif.empty()) {
    spng_exif x{};
    x.length = exif.size();
    x.data = const_cast<char*>(exif.data());
    if (int e = spng_set_exif(enc, &x); e != 0)
      Die(std::string("spng_set_exif: ") + spng_strerror(e));
  }
  if (int e = spng_encode_image(enc, data.data(), data.size(), SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
      e != 0) {
    Die(std::string("spng_encode_image: ") + spng_strerror(e));
  }
  size_t size = 0;
  int error = 0;
  void* buffer = spng_get_png_buffer(enc, &size, &error);
  if (buffer == nullptr) Die(std::string("spng_get_png_buffer: ") + spng_strerror(error));
  std::string png(static_cast<const char*>(buffer), size);
  std::free(buffer);
  spng_ctx_free(enc);
  return png;
}

}  // namespace

image::Pixels Noise(int64_t width, int64_t height, int channels, uint64_t seed, int blur) {
  Rng rng(seed);
  image::Pixels p = image::Pixels::Zeros(width, height, channels);
  for (uint8_t& v : p.data) v = static_cast<uint8_t>(rng.NextU64() & 0xFF);
  for (int pass = 0; pass < blur; ++pass) {
    image::Pixels q = p;
    for (int64_t r = 0; r < height; ++r) {
      for (int64_t c = 0; c < width; ++c) {
        for (int ch = 0; ch < channels; ++ch) {
          int sum = 0, n = 0;
          for (int64_t dr = -1; dr <= 1; ++dr) {
            for (int64_t dc = -1; dc <= 1; ++dc) {
              const int64_t rr = r + dr, cc = c + dc;
              if (rr < 0 || cc < 0 || rr >= height || cc >= width) continue;
              sum += p.row(rr)[cc * channels + ch];
              ++n;
            }
          }
          q.row(r)[c * channels + ch] = static_cast<uint8_t>(sum / n);
        }
      }
    }
    p = std::move(q);
  }
  return p;
}

std::string EncodeJpeg(const image::Pixels& pixels, int quality, bool progressive) {
  const int format = pixels.channels == 1 ? TJPF_GRAY : TJPF_RGB;
  const int subsampling = pixels.channels == 1 ? TJSAMP_GRAY : TJSAMP_444;
  return Compress(pixels.data.data(), static_cast<int>(pixels.width),
                  static_cast<int>(pixels.height), format, subsampling, quality,
                  TJFLAG_ACCURATEDCT | (progressive ? TJFLAG_PROGRESSIVE : 0));
}

std::string EncodeCmykJpeg(const image::Pixels& pixels) {
  if (pixels.channels != 4) Die("EncodeCmykJpeg: expected 4 channels");
  return Compress(pixels.data.data(), static_cast<int>(pixels.width),
                  static_cast<int>(pixels.height), TJPF_CMYK, TJSAMP_444, 90, 0);
}

std::string EncodePng(const image::Pixels& pixels, bool sixteen_bit, bool interlaced,
                      const std::string& exif) {
  static constexpr uint8_t kTypes[] = {0, kGrey, kGreyAlpha, kRgb, kRgba};
  spng_ihdr ihdr{};
  ihdr.width = static_cast<uint32_t>(pixels.width);
  ihdr.height = static_cast<uint32_t>(pixels.height);
  ihdr.bit_depth = sixteen_bit ? 16 : 8;
  ihdr.color_type = kTypes[pixels.channels];
  ihdr.interlace_method = interlaced ? 1 : 0;
  std::vector<uint8_t> data;
  if (sixteen_bit) {
    for (uint8_t b : pixels.data) {
      data.push_back(b);  // big-endian b·257: the high and the low byte are both b
      data.push_back(b);
    }
  } else {
    data = pixels.data;
  }
  return EncodeWith(ihdr, data, nullptr, exif);
}

std::string EncodePalettePng(const image::Pixels& indices) {
  spng_ihdr ihdr{};
  ihdr.width = static_cast<uint32_t>(indices.width);
  ihdr.height = static_cast<uint32_t>(indices.height);
  ihdr.bit_depth = 8;
  ihdr.color_type = kPalette;
  spng_plte plte{};
  plte.n_entries = 256;
  for (int i = 0; i < 256; ++i) {
    plte.entries[i].red = static_cast<uint8_t>(i);
    plte.entries[i].green = static_cast<uint8_t>(255 - i);
    plte.entries[i].blue = static_cast<uint8_t>((3 * i) % 256);
  }
  return EncodeWith(ihdr, indices.data, &plte, "");
}

std::string PngDeclaring(uint32_t width, uint32_t height) {
  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  PutU32(ihdr, width);
  PutU32(ihdr, height);
  ihdr += std::string("\x08\x00\x00\x00\x00", 5);  // 8-bit grey, deflate, no filter, no interlace
  PutChunk(png, "IHDR", ihdr);
  PutChunk(png, "IDAT", std::string("\x78\x9c\x03\x00\x00\x00\x00\x01", 8));  // empty zlib stream
  PutChunk(png, "IEND", "");
  return png;
}

std::string JpegDeclaring(const std::string& jpeg, uint16_t width, uint16_t height) {
  std::string out = jpeg;
  for (size_t i = 2; i + 9 < out.size();) {
    if (static_cast<uint8_t>(out[i]) != 0xFF) Die("JpegDeclaring: no marker");
    const uint8_t marker = static_cast<uint8_t>(out[i + 1]);
    const size_t length =
        (static_cast<uint8_t>(out[i + 2]) << 8) | static_cast<uint8_t>(out[i + 3]);
    if (marker >= 0xC0 && marker <= 0xC2) {  // SOF0..2: length, precision, height, width
      out[i + 5] = static_cast<char>(height >> 8);
      out[i + 6] = static_cast<char>(height & 0xFF);
      out[i + 7] = static_cast<char>(width >> 8);
      out[i + 8] = static_cast<char>(width & 0xFF);
      return out;
    }
    i += 2 + length;
  }
  Die("JpegDeclaring: no frame header");
}

std::string ExifOrientation(int value, bool big_endian) {
  std::string t;
  const auto put16 = [&](uint16_t v) {
    if (big_endian) {
      t.push_back(static_cast<char>(v >> 8));
      t.push_back(static_cast<char>(v & 0xFF));
    } else {
      t.push_back(static_cast<char>(v & 0xFF));
      t.push_back(static_cast<char>(v >> 8));
    }
  };
  const auto put32 = [&](uint32_t v) {
    if (big_endian) {
      put16(static_cast<uint16_t>(v >> 16));
      put16(static_cast<uint16_t>(v & 0xFFFF));
    } else {
      put16(static_cast<uint16_t>(v & 0xFFFF));
      put16(static_cast<uint16_t>(v >> 16));
    }
  };
  t += big_endian ? std::string("MM\0*", 4) : std::string("II*\0", 4);
  put32(8);       // IFD0 at 8
  put16(1);       // one entry
  put16(0x0112);  // orientation
  put16(3);       // SHORT
  put32(1);       // count
  put16(static_cast<uint16_t>(value));
  put16(0);
  put32(0);  // no next IFD
  return t;
}

std::string WithExif(const std::string& jpeg, const std::string& tiff) {
  const std::string body = std::string("Exif\0\0", 6) + tiff;
  const size_t length = body.size() + 2;
  std::string segment = "\xFF\xE1";
  segment.push_back(static_cast<char>(length >> 8));
  segment.push_back(static_cast<char>(length & 0xFF));
  return jpeg.substr(0, 2) + segment + body + jpeg.substr(2);
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) Die("cannot write " + path);
}

}  // namespace invariant::testing_images
