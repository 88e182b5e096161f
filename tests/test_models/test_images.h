// test_images.h: image files made by the tests themselves (nothing
// committed): JPEGs through TurboJPEG's compressor, PNGs through libspng's
// encoder, and the hand-made files the decoder tests need (a header that
// declares a huge image, an EXIF orientation segment).
//
// Every function is deterministic (seeded noise where there is noise) and
// aborts the test binary with a message on a library error (these are
// fixtures: a failure is a broken test machine, not a case under test).
#ifndef INVARIANT_TESTS_TEST_MODELS_TEST_IMAGES_H_
#define INVARIANT_TESTS_TEST_MODELS_TEST_IMAGES_H_

#include <cstdint>
#include <string>

#include "core/image/pixels.h"

namespace invariant::testing_images {

// width × height × channels bytes of seeded noise, smoothed over `blur`
// pixels (so a JPEG keeps them within a few levels).
image::Pixels Noise(int64_t width, int64_t height, int channels, uint64_t seed, int blur = 0);

// A JPEG of `pixels` (1 or 3 channels) at `quality` (4:4:4), progressive when asked.
std::string EncodeJpeg(const image::Pixels& pixels, int quality = 95, bool progressive = false);
// A YCCK JPEG (TurboJPEG's CMYK compression) of 4-channel CMYK `pixels`.
std::string EncodeCmykJpeg(const image::Pixels& pixels);

// PNG colour types as the spec numbers them.
enum PngColour { kGrey = 0, kRgb = 2, kPalette = 3, kGreyAlpha = 4, kRgba = 6 };
// A PNG of `pixels` in its own layout (1 grey, 2 grey+alpha, 3 RGB, 4 RGBA)
// at 8 bits, or at 16 when `sixteen_bit` (each byte b written as b·257),
// Adam7-interlaced when asked. With `exif` set: an eXIf chunk holding it.
std::string EncodePng(const image::Pixels& pixels, bool sixteen_bit = false,
                      bool interlaced = false, const std::string& exif = "");
// A palette PNG of 1-channel `indices` with palette entry i = (i, 255 − i, 3·i mod 256).
std::string EncodePalettePng(const image::Pixels& indices);

// A tiny PNG whose IHDR declares width × height (grey, 8 bits), with a
// valid CRC and one empty IDAT: a decompression bomb's header.
std::string PngDeclaring(uint32_t width, uint32_t height);
// `jpeg` with its frame header's (SOF) height and width replaced.
std::string JpegDeclaring(const std::string& jpeg, uint16_t width, uint16_t height);

// A TIFF block ("MM" or "II") holding one IFD0 entry, orientation `value`.
std::string ExifOrientation(int value, bool big_endian = true);
// `jpeg` with an APP1 "Exif\0\0" segment holding `tiff` right after SOI.
std::string WithExif(const std::string& jpeg, const std::string& tiff);

// Writes `bytes` to `path` (aborting on failure).
void WriteFile(const std::string& path, const std::string& bytes);

}  // namespace invariant::testing_images

#endif  // INVARIANT_TESTS_TEST_MODELS_TEST_IMAGES_H_
