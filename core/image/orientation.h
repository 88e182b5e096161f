// orientation.h: EXIF orientation (TIFF tag 0x0112): reading it from a JPEG's
// APP1 segment or a TIFF block, and applying it to pixels.
//
// Values 1..8 as the EXIF standard numbers them, applied as Pillow's
// ImageOps.exif_transpose does: 2 mirror left–right, 3 rotate 180°, 4 mirror
// top–bottom, 5 transpose (swap the axes), 6 rotate 90° clockwise, 7
// transverse, 8 rotate 90° counter-clockwise; 1 (and anything unreadable)
// leaves the image as it is. Reading never fails: a missing, truncated or
// malformed block reads as 1, every offset bounds-checked. Pure functions.
#ifndef INVARIANT_CORE_IMAGE_ORIENTATION_H_
#define INVARIANT_CORE_IMAGE_ORIENTATION_H_

#include <string_view>

#include "core/image/pixels.h"

namespace invariant::image {

// The orientation of a TIFF block ("II*\0" or "MM\0*", IFD0), 1 when absent.
int TiffOrientation(std::string_view tiff);

// The orientation in a JPEG file's first APP1 "Exif\0\0" segment before its
// first scan, 1 when absent.
int JpegOrientation(std::string_view jpeg);

// `in` turned upright for `orientation` (5..8 swap width and height).
Pixels ApplyOrientation(Pixels in, int orientation);

}  // namespace invariant::image

#endif  // INVARIANT_CORE_IMAGE_ORIENTATION_H_
