#include "core/image/image_file.h"

#include <spng.h>
#include <turbojpeg.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/base/status_macros.h"
#include "core/image/orientation.h"

namespace invariant::image {
namespace {

constexpr unsigned char kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
// Ancillary chunks libspng may hold: at most 16 MiB each, 64 MiB in all.
constexpr size_t kMaxChunkBytes = size_t{1} << 24;
constexpr size_t kMaxChunkCacheBytes = size_t{1} << 26;

bool IsPng(std::string_view f) {
  return f.size() >= 8 && std::memcmp(f.data(), kPngSignature, 8) == 0;
}
bool IsJpeg(std::string_view f) {
  return f.size() >= 3 && static_cast<uint8_t>(f[0]) == 0xFF &&
         static_cast<uint8_t>(f[1]) == 0xD8 && static_cast<uint8_t>(f[2]) == 0xFF;
}

std::string LeadingBytes(std::string_view f) {
  std::string out;
  for (size_t i = 0; i < f.size() && i < 8; ++i) {
    absl::StrAppendFormat(&out, "%s%02x", i == 0 ? "" : " ", static_cast<uint8_t>(f[i]));
  }
  return out;
}

struct TjFree {
  void operator()(void* h) const { tjDestroy(h); }
};
using TjHandle = std::unique_ptr<void, TjFree>;

struct SpngFree {
  void operator()(spng_ctx* c) const { spng_ctx_free(c); }
};
using SpngContext = std::unique_ptr<spng_ctx, SpngFree>;

absl::Status CheckSides(int64_t width, int64_t height, const char* format,
                        const std::string& what) {
  if (width >= 1 && height >= 1 && width <= kMaxSide && height <= kMaxSide) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(what, ": the ", format, " declares ", width, " x ",
                                                 height, " pixels: expected sides of 1 to ",
                                                 kMaxSide));
}

// The JPEG's header, through a decompressor the caller may go on using.
absl::StatusOr<ImageHeader> JpegHeader(tjhandle tj, std::string_view f, const std::string& what) {
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(tj, reinterpret_cast<const unsigned char*>(f.data()),
                          static_cast<unsigned long>(f.size()), &width, &height, &subsampling,
                          &colorspace) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": a corrupt or truncated JPEG header: ", tjGetErrorStr2(tj)));
  }
  if (width <= 0 || height <= 0) {  // the file ends before its frame header
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": a corrupt or truncated JPEG header: no frame header (SOF)"));
  }
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": a ", colorspace == TJCS_CMYK ? "CMYK" : "YCCK",
        " JPEG (print colour): expected a greyscale or colour (YCbCr or RGB) JPEG; convert it to "
        "RGB first"));
  }
  RETURN_IF_ERROR(CheckSides(width, height, "JPEG", what));
  ImageHeader h;
  h.format = ImageFormat::kJpeg;
  h.width = width;
  h.height = height;
  h.channels = colorspace == TJCS_GRAY ? 1 : 3;
  return h;
}

absl::StatusOr<ImageHeader> PngHeader(spng_ctx* ctx, std::string_view f, const std::string& what) {
  spng_set_chunk_limits(ctx, kMaxChunkBytes, kMaxChunkCacheBytes);
  spng_set_image_limits(ctx, static_cast<uint32_t>(kMaxSide), static_cast<uint32_t>(kMaxSide));
  spng_set_png_buffer(ctx, f.data(), f.size());
  spng_ihdr ihdr{};
  if (int e = spng_get_ihdr(ctx, &ihdr); e != 0) {
    if (e == SPNG_EWIDTH || e == SPNG_EHEIGHT || e == SPNG_EUSER_WIDTH || e == SPNG_EUSER_HEIGHT) {
      // The header's sides, read again without libspng's checks.
      const auto side = [&](size_t at) {
        if (f.size() < at + 4) return int64_t{0};
        const auto* b = reinterpret_cast<const uint8_t*>(f.data()) + at;
        return (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | b[3];
      };
      return CheckSides(side(16), side(20), "PNG", what);
    }
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": a corrupt or truncated PNG header: ", spng_strerror(e)));
  }
  ImageHeader h;
  h.format = ImageFormat::kPng;
  h.width = ihdr.width;
  h.height = ihdr.height;
  RETURN_IF_ERROR(CheckSides(h.width, h.height, "PNG", what));
  switch (ihdr.color_type) {
    case SPNG_COLOR_TYPE_GRAYSCALE:
      h.channels = 1;
      break;
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA:
      h.channels = 2;
      break;
    case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA:
      h.channels = 4;
      break;
    default:
      h.channels = 3;
      break;  // truecolour, palette
  }
  return h;
}

absl::Status DecodeJpeg(std::string_view f, int64_t max_pixels, const std::string& what,
                        int* orientation, Pixels* out) {
  TjHandle tj(tjInitDecompress());
  if (tj == nullptr)
    return absl::ResourceExhaustedError(absl::StrCat(what, ": ", tjGetErrorStr2(nullptr)));
  ASSIGN_OR_RETURN(ImageHeader h, JpegHeader(tj.get(), f, what));
  RETURN_IF_ERROR(CheckImagePixels(h, max_pixels, what));
  out->Reshape(h.width, h.height, h.channels);
  const int format = h.channels == 1 ? TJPF_GRAY : TJPF_RGB;
  if (tjDecompress2(tj.get(), reinterpret_cast<const unsigned char*>(f.data()),
                    static_cast<unsigned long>(f.size()), out->data.data(),
                    static_cast<int>(h.width), 0, static_cast<int>(h.height), format,
                    TJFLAG_LIMITSCANS) != 0) {
    const std::string message = tjGetErrorStr2(tj.get());
    // A warning leaves a whole image, except at a premature end of the file.
    if (tjGetErrorCode(tj.get()) != TJERR_WARNING ||
        message.find("Premature end") != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": a corrupt or truncated JPEG: ", message));
    }
  }
  if (orientation != nullptr) *orientation = JpegOrientation(f);
  return absl::OkStatus();
}

absl::Status DecodePng(std::string_view f, int64_t max_pixels, const std::string& what,
                       int* orientation, Pixels* out) {
  SpngContext ctx(spng_ctx_new(0));
  if (ctx == nullptr) return absl::ResourceExhaustedError(absl::StrCat(what, ": no PNG decoder"));
  ASSIGN_OR_RETURN(ImageHeader h, PngHeader(ctx.get(), f, what));
  RETURN_IF_ERROR(CheckImagePixels(h, max_pixels, what));
  spng_trns trns{};
  const bool alpha = h.channels == 2 || h.channels == 4 || spng_get_trns(ctx.get(), &trns) == 0;
  const int format = alpha ? SPNG_FMT_RGBA8 : SPNG_FMT_RGB8;
  size_t bytes = 0;
  if (int e = spng_decoded_image_size(ctx.get(), format, &bytes); e != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": a corrupt PNG: ", spng_strerror(e)));
  }
  out->Reshape(h.width, h.height, alpha ? 4 : 3);
  if (bytes != out->data.size()) {
    return absl::InternalError(absl::StrCat(what, ": libspng sizes the image at ", bytes,
                                            " bytes, expected ", out->data.size()));
  }
  if (int e = spng_decode_image(ctx.get(), out->data.data(), bytes, format, SPNG_DECODE_TRNS);
      e != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": a corrupt or truncated PNG: ", spng_strerror(e)));
  }
  if (orientation != nullptr) {
    spng_exif exif{};
    *orientation = spng_get_exif(ctx.get(), &exif) == 0
                       ? TiffOrientation(std::string_view(exif.data, exif.length))
                       : 1;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckImagePixels(const ImageHeader& h, int64_t max_pixels, const std::string& what) {
  if (h.pixels() <= max_pixels) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": the ", FormatName(h.format), " declares ", h.width, " x ", h.height,
                   " = ", h.pixels(), " pixels, above the limit of ", max_pixels, " pixels"));
}

const char* FormatName(ImageFormat format) { return format == ImageFormat::kJpeg ? "JPEG" : "PNG"; }

absl::StatusOr<ImageHeader> ReadImageHeader(std::string_view file, const std::string& what) {
  if (file.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": expected a JPEG or PNG file, received 0 bytes"));
  }
  if (IsPng(file)) {
    SpngContext ctx(spng_ctx_new(0));
    if (ctx == nullptr) return absl::ResourceExhaustedError(absl::StrCat(what, ": no PNG decoder"));
    return PngHeader(ctx.get(), file, what);
  }
  if (IsJpeg(file)) {
    TjHandle tj(tjInitDecompress());
    if (tj == nullptr) return absl::ResourceExhaustedError(absl::StrCat(what, ": no JPEG decoder"));
    return JpegHeader(tj.get(), file, what);
  }
  return absl::InvalidArgumentError(absl::StrCat(what, ": expected a JPEG or PNG file, received ",
                                                 file.size(), " bytes starting ",
                                                 LeadingBytes(file)));
}

int64_t DecodedBytes(const ImageHeader& header) {
  // A PNG is decoded to 3 or 4 bytes a pixel (a tRNS chunk, not in the
  // header, may make an opaque colour type 4), and a grey JPEG turned RGB
  // takes 3: so 4 bounds every step.
  return header.pixels() * 4;
}

absl::Status DecodeImageInto(std::string_view file, int64_t max_pixels, const std::string& what,
                             Pixels* out, int* orientation) {
  if (IsPng(file)) return DecodePng(file, max_pixels, what, orientation, out);
  if (IsJpeg(file)) return DecodeJpeg(file, max_pixels, what, orientation, out);
  return ReadImageHeader(file, what).status();
}

absl::StatusOr<Pixels> DecodeImage(std::string_view file, int64_t max_pixels,
                                   const std::string& what, int* orientation) {
  Pixels out;
  RETURN_IF_ERROR(DecodeImageInto(file, max_pixels, what, &out, orientation));
  return out;
}

}  // namespace invariant::image
