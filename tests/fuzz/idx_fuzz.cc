// idx_fuzz.cc: libFuzzer target for the IDX image/label reader (train/data/idx.h).
//
// Input: one control byte, two bytes (little-endian) giving the length of the
// image file, the image file, then the label file; each file is plain or
// gzip (the reader detects the gzip magic). Control bit 0 names the ten
// Fashion-MNIST-style classes explicitly instead of letting LoadIdx number
// them. Both files live in memfds (tests/fuzz/fuzz_util.h). Every load must
// return a status with a message (never crash, never allocate for data the
// files do not hold); a data set that loads must satisfy ValidateDataset with
// finite pixels, in [0, 1] for unsigned-byte files (grey 0x803 or colour
// 0x804; float32 files 0xD03 / 0xD04 are taken as they are).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_util.h"
#include "train/data/dataset.h"
#include "train/data/idx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using invariant::fuzz::Check;
  if (size < 3) return 0;
  const uint8_t control = data[0];
  const size_t rest = size - 3;
  const size_t image_length = std::min<size_t>(rest, data[1] | (size_t{data[2]} << 8));
  const char* bytes = reinterpret_cast<const char*>(data + 3);
  const std::string images = invariant::fuzz::WriteMemFile(0, std::string(bytes, image_length));
  const std::string labels =
      invariant::fuzz::WriteMemFile(1, std::string(bytes + image_length, rest - image_length));
  invariant::train::IdxOptions options;
  options.name = "fuzz";
  if (control & 1) {
    for (int i = 0; i < 10; ++i) options.class_names.push_back("class" + std::to_string(i));
  }
  const auto loaded = invariant::train::LoadIdx(images, labels, options);
  if (!loaded.ok()) {
    Check(!loaded.status().message().empty(), "a refused file has an error message");
    return 0;
  }
  Check(invariant::train::ValidateDataset(*loaded).ok(), "a loaded IDX pair is a valid Dataset");
  Check(loaded->rows() == 0 || loaded->has_labels(), "IDX rows have labels");
  const auto source = invariant::train::OpenIdxSource(images, labels, options);
  Check(source.ok(), "a pair that loads opens as a source");
  const bool unit_byte = (*source)->schema().unit_byte_scaled;
  const float* x = loaded->x.data();
  for (int64_t i = 0; i < loaded->rows() * loaded->dim(); ++i) {
    Check(std::isfinite(x[i]), "pixels are finite");
    if (unit_byte) Check(x[i] >= 0.0f && x[i] <= 1.0f, "byte pixels lie in [0, 1]");
  }
  return 0;
}
